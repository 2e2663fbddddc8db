"""Exercise 4, hidden tests: the same rule (revoke exactly the handles whose note left the
roots, at once) in other folders than the public tests: each varies the inputs of a kind of
mistake a public test shows. Feedback says only how many handles went wrong, and how
(grader/checks/ej4.py, `hidden=True`); a handle left alive outside the roots is the serious
mistake (`severe=True`). Each ends with the legitimate action on its server."""

from grader.checks import ej4
from grader.checks.ej4 import SEVERE
from grader.checks.grading import graded


def scenario(lab, grade, notes, before, steps, survivors, layout=None):
    ej4.require_main(lab, grade)
    played = ej4.play(lab, notes, before, steps, survivors, layout=layout)
    ej4.verdict(grade, played.handles, "", hidden=True)
    ej4.still_reads(grade, played)


@graded("ejercicio4", 1, "con varias roots, al quitar una, las demás conservan sus handles",
        hidden=True, severe=SEVERE, must_not=True)
def test_several_roots_remain(lab, grade):
    scenario(lab, grade, [("Salon", "s.md", "n-salon"), ("Garaje", "g.md", "n-garaje"),
                          ("Viajes", "v.md", "n-viajes"), ("Viajes/2024", "w.md", "n-viejo")],
             ["Salon", "Garaje", "Viajes"], [["Salon", "Viajes"]],
             {"n-salon", "n-viajes", "n-viejo"})


@graded("ejercicio4", 1, "una root se cambia por una subcarpeta suya", hidden=True,
        severe=SEVERE, must_not=True)
def test_root_narrowed_to_a_subfolder(lab, grade):
    scenario(lab, grade, [("Desvan", "d.md", "n-desvan"), ("Desvan/cajas", "r.md", "n-caja")],
             ["Desvan"], [["Desvan/cajas"]], {"n-caja"})


@graded("ejercicio4", 1, "otras carpetas de root movidas y sustituidas, y otra root por un "
        "enlace con ..", hidden=True, severe=SEVERE, must_not=True)
def test_other_roots_moved_replaced_or_reached_through_links(lab, grade):
    def replace(tree):
        tree.move("Huerto", "Huerto-antiguo")
        tree.add("Huerto", "nueva.md", "n-nueva", "Nota nueva")
        return {"n-huerto": "Huerto-antiguo"}

    scenario(lab, grade, [("Huerto", "h.md", "n-huerto"), ("Granja", "g.md", "n-granja"),
                          ("Bosque/Granja", "b.md", "n-bosque"), ("Bosque/Claro", "x.md", "n-x"),
                          ("Viajes", "v.md", "n-viajes")],
             ["Huerto", "Granja", "Bosque/Granja", "Senda->Bosque/Claro", "Viajes"],
             [["Huerto", "Viajes", "Senda/../Granja"]], {"n-viajes", "n-bosque"},
             layout=replace)
