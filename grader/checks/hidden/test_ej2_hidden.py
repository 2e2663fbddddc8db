"""Exercise 2, hidden tests: the same contract as the statement, in situations the public tests
do not show. Every test first requires the positive scenario (grader/checks/ej2.py); feedback
says what went wrong without naming the notes, titles or folders used here."""

from grader.checks import ej2
from grader.checks.ej2 import SEVERE_ROOTS, accept
from grader.checks.grading import graded
from shared.protocol import LATEST_HANDSHAKE, REVISIONS


@graded("ejercicio2", 2, "si las roots cambian mientras el formulario está abierto, no archiva "
        "una nota que quedó fuera", hidden=True, revisions=(LATEST_HANDSHAKE,), severe=SEVERE_ROOTS,
        must_not=True)
def test_roots_change_while_the_form_is_open(lab, grade, revision):
    tree = lab.folders(("Cajon", "acta-1.md", "n-acta-1", "Acta semanal"),
                       ("Cajon", "acta-3.md", "n-acta-3", "Acta semanal"),
                       ("Baul", "acta-2.md", "n-acta-2", "Acta semanal"))
    holder = {}

    def user(params):  # while the form is open, the user stops sharing Baul, then answers
        run = holder["run"]
        run.client.roots = [tree.uri("Cajon")]
        run.client.notify("notifications/roots/list_changed")
        return accept("n-acta-2")

    run = ej2.start(lab, grade, revision, tree, user, accept("n-acta-2"),
                    folders=("Cajon", "Baul"))
    holder["run"] = run
    before = tree.snapshot()
    call = run.call(ej2.TOOL, {"title": "Acta semanal"})
    grade.require(call.forms(), "con varias notas con el mismo título en dos roots, "
                  "notes_archive no envió ningún formulario")
    after = tree.snapshot()
    untouched = after.get("Baul/acta-2.md") == before["Baul/acta-2.md"] \
        and "Baul/.archive/acta-2.md" not in after
    grade.check(untouched, "la nota elegida, cuya root dejó de compartirse con el formulario "
                "abierto, no se toca" if untouched else "se archivó (o se tocó) la nota "
                "elegida aunque su root dejó de estar compartida mientras el formulario estaba "
                "abierto: después de la respuesta hay que volver a comprobar las roots",
                severe=True)
    others = all(after.get(name) == before[name] for name in ("Cajon/acta-1.md",
                                                               "Cajon/acta-3.md"))
    grade.check(others, "las otras notas no se tocan" if others else
                "se tocó una nota que nadie eligió", severe=True)
    grade.check(len(call.forms()) == 1, "el formulario abierto no se cambió por otro"
                if len(call.forms()) == 1 else "con el formulario abierto cambiaron las roots "
                "y llegó otro formulario distinto: decide las coincidencias una vez por "
                "llamada (ctx.memo)")
    ej2.still_archives(grade, run, tree, ("n-acta-1", "Acta semanal"),
                       ("n-acta-3", "Acta semanal"))


@graded("ejercicio2", 1, "una nota de una subcarpeta va a la .archive de su root", hidden=True,
        revisions=REVISIONS)
def test_note_in_a_subfolder_goes_to_its_roots_archive(lab, grade, revision):
    tree = ej2.notes(lab, ("Otros/2023/marzo", "viaje.md", "n-viaje", "Diario de viaje"))
    run = ej2.start(lab, grade, revision, tree, accept("n-viaje"))
    before = tree.snapshot()
    run.call(ej2.TOOL, {"title": "Diario de viaje"})
    after = tree.snapshot()
    content = before["Otros/2023/marzo/viaje.md"][0]
    landed = [path for path, (digest, _) in after.items() if digest == content]
    grade.check(landed == ["Otros/.archive/viaje.md"],
                "la nota de la subcarpeta acabó en la carpeta .archive de su root"
                if landed == ["Otros/.archive/viaje.md"] else
                "la nota elegida estaba en una subcarpeta de su root y no acabó en la carpeta "
                ".archive de esa root (la de la root, no la de la subcarpeta)")
