"""Exercise 4, hidden tests: the same rule (revoke exactly the handles whose note left the
roots, at once) in situations the public tests do not show. Feedback says only how many handles
went wrong, and how (grader/checks/ej4.py, `hidden=True`); a handle left alive outside the roots
is the serious mistake (`severe=True`)."""

from grader.checks import ej4
from grader.checks.ej4 import SEVERE
from grader.checks.grading import graded


def scenario(lab, grade, notes, before, steps, survivors, layout=None):
    ej4.require_main(lab, grade)
    facts, _ = ej4.play(lab, notes, before, steps, survivors, layout=layout)
    ej4.verdict(grade, facts, "", hidden=True)


@graded("ejercicio4", 1, "con varias roots, al quitar una, las demás conservan sus handles",
        hidden=True, severe=SEVERE)
def test_several_roots_remain(lab, grade):
    scenario(lab, grade, [("Casa", "c.md", "n-casa"), ("Club", "k.md", "n-club"),
                          ("Viajes", "v.md", "n-viajes"), ("Viajes/2024", "w.md", "n-viejo")],
             ["Casa", "Club", "Viajes"], [["Casa", "Viajes"]], {"n-casa", "n-viajes", "n-viejo"})


@graded("ejercicio4", 1, "si se quitan todas las roots, ningún handle sobrevive", hidden=True,
        severe=SEVERE)
def test_every_root_removed(lab, grade):
    scenario(lab, grade, [("Casa", "c.md", "n-casa"), ("Club/actas", "k.md", "n-club")],
             ["Casa", "Club"], [[], ["Casa", "Club"]], set())


@graded("ejercicio4", 1, "una root compartida a través de un enlace simbólico", hidden=True,
        severe=SEVERE)
def test_root_through_a_symlinked_folder(lab, grade):
    scenario(lab, grade, [("Archivo", "r.md", "n-real"), ("Club", "k.md", "n-club")],
             ["Atajo->Archivo", "Club"], [["Atajo->Archivo"]], {"n-real"})


@graded("ejercicio4", 1, "una root se cambia por una subcarpeta suya", hidden=True,
        severe=SEVERE)
def test_root_narrowed_to_a_subfolder(lab, grade):
    scenario(lab, grade, [("Casa", "c.md", "n-casa"), ("Casa/cocina", "r.md", "n-receta")],
             ["Casa"], [["Casa/cocina"]], {"n-receta"})


@graded("ejercicio4", 1, "la carpeta de una root se mueve con handles abiertos y otra ocupa su "
        "nombre", hidden=True, severe=SEVERE)
def test_a_root_folder_moved_away_and_replaced(lab, grade):
    def replace(tree):
        tree.move("Huerto", "Huerto-antiguo")
        tree.add("Huerto", "nueva.md", "n-nueva", "Nota nueva")
        return {"n-huerto": "Huerto-antiguo"}

    scenario(lab, grade, [("Huerto", "h.md", "n-huerto"), ("Club", "k.md", "n-club"),
                          ("Viajes", "v.md", "n-viajes")],
             ["Huerto", "Club", "Viajes"], [["Huerto", "Viajes"]], {"n-viajes"}, layout=replace)


@graded("ejercicio4", 1, "una root nueva cuya URI lleva .. a través de un enlace", hidden=True,
        severe=SEVERE)
def test_a_root_uri_with_dot_dot_through_a_link(lab, grade):
    scenario(lab, grade, [("Granja", "g.md", "n-granja"), ("Club", "k.md", "n-club"),
                          ("Bosque/Granja", "b.md", "n-bosque"), ("Bosque/Claro", "x.md", "n-x")],
             ["Granja", "Club", "Bosque/Granja", "Senda->Bosque/Claro"],
             [["Senda/../Granja"]], {"n-bosque"})
