"""Exercise 3B's optional part, hidden test: at 2026-07-28 too, another person's browser does
not complete your flow (the consent is yours, the page is opened elsewhere)."""

from grader.checks.ej3 import (
    ACCEPT,
    STATELESS_VERSION,
    Browser,
    ask,
    browser_of,
    legitimate,
    not_authorized,
    scene,
)
from grader.checks.grading import graded


@graded("ejercicio3b_2026", 1, "en 2026-07-28, el navegador de otra persona no completa tu "
        "flujo", hidden=True, severe="que un flujo solo lo complete y lo use quien lo empezó",
        must_not=True)
def test_another_persons_browser_cannot_complete_the_flow_in_2026(lab, grade):
    run = scene(lab, grade, STATELESS_VERSION, answers=[ACCEPT])
    run.user.browser = Browser(browser_of(run, peer=True), ("allow", None))
    first = ask(run)
    grade.require(first.shape, "notes_backup no pidió el modo URL")
    not_authorized(grade, run, "cuando otra persona abrió tu enlace y autorizó en su navegador")
    legitimate(grade, run, STATELESS_VERSION)
