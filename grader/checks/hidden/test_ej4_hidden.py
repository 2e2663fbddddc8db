"""Exercise 4, hidden tests: the same rule (revoke exactly the handles whose note left the
roots, at once) in situations the public tests do not show. Feedback says only how many handles
went wrong, and how (grader/checks/ej4.py, `hidden=True`)."""

from grader.checks import ej4
from grader.checks.grading import graded


def scenario(lab, grade, notes, before, steps, survivors):
    ej4.require_main(lab, grade)
    facts, _ = ej4.play(lab, notes, before, steps, survivors)
    ej4.verdict(grade, facts, "", hidden=True)


@graded("ejercicio4", 1, "con varias roots, al quitar una, las demás conservan sus handles",
        hidden=True)
def test_several_roots_remain(lab, grade):
    scenario(lab, grade, [("Casa", "c.md", "n-casa"), ("Club", "k.md", "n-club"),
                          ("Viajes", "v.md", "n-viajes"), ("Viajes/2024", "w.md", "n-viejo")],
             ["Casa", "Club", "Viajes"], [["Casa", "Viajes"]], {"n-casa", "n-viajes", "n-viejo"})


@graded("ejercicio4", 1, "si se quitan todas las roots, ningún handle sobrevive", hidden=True)
def test_every_root_removed(lab, grade):
    scenario(lab, grade, [("Casa", "c.md", "n-casa"), ("Club/actas", "k.md", "n-club")],
             ["Casa", "Club"], [[], ["Casa", "Club"]], set())


@graded("ejercicio4", 1, "una root compartida a través de un enlace simbólico", hidden=True)
def test_root_through_a_symlinked_folder(lab, grade):
    scenario(lab, grade, [("Archivo", "r.md", "n-real"), ("Club", "k.md", "n-club")],
             ["Atajo->Archivo", "Club"], [["Atajo->Archivo"]], {"n-real"})


@graded("ejercicio4", 1, "una root se cambia por una subcarpeta suya", hidden=True)
def test_root_narrowed_to_a_subfolder(lab, grade):
    scenario(lab, grade, [("Casa", "c.md", "n-casa"), ("Casa/cocina", "r.md", "n-receta")],
             ["Casa"], [["Casa/cocina"]], {"n-receta"})
