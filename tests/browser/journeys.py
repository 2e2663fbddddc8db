"""What the browser journeys share: a learner's clicks, the lessons' journeys, and how a run
is read and checked (used by test_every_notebook.py and, in the instructors' source,
test_reference_every_notebook.py).

One JupyterLab serves a private copy of the course; every notebook gets its own workspace,
kernel (shut down afterwards) and practice folder. Screenshots: tests/artifacts/notebook-*.png.

Every step waits for the state it needs, bounded as tests/waits.py says: a dialog whose buttons
are enabled, its answer echoed, the setup page's answer (all the steps from the consent click
to it share the call's setup_wait: after it the call ends pending), the completion notification
in the call's cell, the call's last line. A step is looked for in the cell of the dialog it
answers (`cell_of`), so an earlier or later call's output cannot stand in for it.
"""


from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from lab import (
    OPEN_DIALOG,
    REPO,
    clear_all_outputs,
    copy_course,
    notebook_cells,
    open_notebook,
    screenshot,
    start_run_all,
    type_in_solutions,
    wait_until_all_ran,
    write_starter_solutions,
)
from waits import PATIENCE, SETUP_WAIT, Deadline, deliberate_waits, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

WIDGET = "application/vnd.jupyter.widget-view+json"
# A form or consent dialog that still waits for an answer: its buttons are enabled.


# -- what a learner does ------------------------------------------------------------------
def open_dialog(page, kind: str):
    """The one dialog the run is paused on; `kind` is a phrase of its header. Waits as long
    as the page's default timeout (run_with_clicks adds the notebook's deliberate waits)."""
    dialog = page.locator(OPEN_DIALOG)
    dialog.first.wait_for()
    expect(dialog).to_have_count(1)
    expect(dialog).to_contain_text(kind)
    return dialog


def cell_of(page, dialog):
    """The code cell showing `dialog`, pinned by its place in the notebook (an answered dialog
    no longer matches OPEN_DIALOG; the cells stay where they are)."""
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    index = cells.evaluate_all("(cells, node) => cells.findIndex(c => c.contains(node))",
                               dialog.element_handle())
    assert index >= 0, "the dialog is in no code cell"
    return cells.nth(index)


def choose_note_and_accept(page, note_id: str, confirm: str = "Sí, bórrala") -> None:
    """Elige la nota, marca la confirmación («Sí, bórrala») y pulsa Aceptar."""
    form = open_dialog(page, "te pregunta")
    cell = cell_of(page, form)
    form = cell.locator(OPEN_DIALOG)  # pinned: the clicks land where the checks look
    form.locator(".widget-radio-box label").filter(
        has_text=re.compile(rf"· {re.escape(note_id)}$")).locator("input").check()
    form.locator(".widget-checkbox", has_text=confirm).locator("input").check()
    form.get_by_role("button", name="Aceptar", exact=True).click()
    sent = f'Enviaste Aceptar (accept): {{"note_id":"{note_id}","confirm":true}}'
    expect(cell.get_by_text(sent, exact=True)).to_be_visible()


def consent_and_authorize(page, then_done: bool = False, shot: str = ""):
    """Acepto abrir la página → abre el enlace en una pestaña nueva → Autorizar → vuelve
    (and at 2026-07-28, «Ya terminé en la página»); returns the call's cell once the call's
    answer is there (`call_ended`). `shot`: a screenshot of the setup page.

    The call waits SETUP_WAIT seconds for the page after the consent, then ends pending: every
    step from the consent click to the page's answer shares that deadline. At 2025-11-25 the
    completion notification then arrives in the call's cell; at 2026-07-28 there is none, and
    the call goes on once «Ya terminé en la página» is clicked.
    """
    dialog = open_dialog(page, "quiere que abras una página")
    cell = cell_of(page, dialog)
    dialog = cell.locator(OPEN_DIALOG)  # pinned: the clicks land where the checks look
    expect(dialog.locator("mark")).to_contain_text("127.0.0.1")
    expect(dialog).to_contain_text("127.0.0.1: esta misma máquina (loopback)")
    expect(cell.locator("a.mcp-open-page")).to_have_count(0)  # nothing to open before consent
    dialog.get_by_role("button", name="Acepto abrir la página").click()
    with Deadline(SETUP_WAIT, "the setup page was not answered within the call's setup_wait "
                  "after the consent, so the call ends pending") as setup_wait:
        link = cell.locator("a.mcp-open-page:visible")
        expect(link).to_have_count(1, timeout=setup_wait.ms())
        with page.context.expect_page(timeout=setup_wait.ms()) as opened:
            link.click(timeout=setup_wait.ms())
        setup = opened.value
        setup.wait_for_load_state(timeout=setup_wait.ms())
        assert setup.url.startswith("http://127.0.0.1:"), setup.url
        assert "/connect?elicitation=" in setup.url, setup.url
        expect(setup.locator("h1")).to_have_text("Autorizar Notas Sync",
                                                 timeout=setup_wait.ms())
        setup.locator("#allow").click(timeout=setup_wait.ms())
        expect(setup.locator("#result")).to_contain_text("Notas Sync quedó autorizado",
                                                         timeout=setup_wait.ms())
        setup_wait.left()
    if shot:
        assert screenshot(setup, shot).stat().st_size > 0
    setup.close()
    back_from_the_page(page, cell, then_done)
    return call_ended(cell, "Sincronización configurada")


def back_from_the_page(page, cell, then_done: bool) -> None:
    """Back in the notebook: at 2026-07-28 press «Ya terminé en la página» (no completion
    notice there); at 2025-11-25 the notice arrives in the call's cell."""
    page.bring_to_front()
    if then_done:
        done = cell.get_by_role("button", name="Ya terminé en la página")
        expect(done).to_be_enabled()
        done.click()
        expect(done).to_be_disabled()
    else:
        expect(cell.get_by_text("Llegó notifications/elicitation/complete")).to_be_visible()


def authorize_backup(page, then_done: bool = False):
    """Exercise 3B's own flow (`lab.try_backup`): Acepto abrir la página → the link in a new
    tab → the learner's connect page sends it on to Nube de Copias → Autorizar → the learner's
    callback answers «Listo» → at 2025-11-25 the completion notice comes and the client calls
    again; at 2026-07-28, «Ya terminé en la página». Ends when the copy is made."""
    dialog = open_dialog(page, "quiere que abras una página")
    cell = cell_of(page, dialog)
    dialog = cell.locator(OPEN_DIALOG)  # pinned: the clicks land where the checks look
    dialog.get_by_role("button", name="Acepto abrir la página").click()
    link = cell.locator("a.mcp-open-page:visible")
    expect(link).to_have_count(1)
    with page.context.expect_page() as opened:
        link.click()
    provider = opened.value
    provider.wait_for_load_state()
    assert "/nube-copias/autorizar?" in provider.url, provider.url  # followed the redirect
    expect(provider.locator("h1")).to_have_text("Autorizar Nube de Copias")
    provider.locator("#allow").click()
    expect(provider.locator("#result")).to_contain_text("Nube de Copias quedó autorizado")
    provider.close()
    back_from_the_page(page, cell, then_done)
    expect(cell.get_by_text(re.compile(r"« ✓ Copia hecha: \d+ nota"))).to_be_visible()
    return cell


# The call's answer: the first `« ✓`/`« ✗` line printed after its panel (the widget output
# holding its dialogs); an earlier call of the same cell printed its own before it.
ANSWER_AFTER_PANEL = ".jp-OutputArea-child:has(.widget-vbox) ~ .jp-OutputArea-child"
ANSWER_LINE = re.compile(r"^« [✓✗] ", re.M)


def call_ended(cell, outcome: str):
    """Wait for the answer of the call whose dialogs the cell shows, and check it says
    `outcome`; returns the cell."""
    answer = cell.locator(ANSWER_AFTER_PANEL).filter(has_text=ANSWER_LINE).first
    expect(answer).to_be_visible()
    text = answer.inner_text()
    assert outcome in text, f"the call ended otherwise: {text[:300]!r}"
    return cell


def decline_consent(page, outcome: str = "No se") -> None:
    """Rechazar: the dialog is answered, the call ends saying nothing was done, and no link
    to the page appeared."""
    dialog = open_dialog(page, "quiere que abras una página")
    cell = cell_of(page, dialog)
    dialog = cell.locator(OPEN_DIALOG)  # pinned: the clicks land where the checks look
    dialog.get_by_role("button", name="Rechazar", exact=True).click()
    expect(cell.get_by_text("Enviaste Rechazar (decline)")).to_be_visible()
    expect(cell.locator(OPEN_DIALOG)).to_have_count(0)  # answered: its buttons are disabled
    call_ended(cell, outcome)
    expect(cell.locator("a.mcp-open-page")).to_have_count(0)


def learner_02(page) -> None:
    # «Prueba antes a pulsar Aceptar sin elegir nada: el formulario no envía respuestas
    # incompletas.»
    form = open_dialog(page, "Hay 3 notas")
    form.get_by_role("button", name="Aceptar", exact=True).click()
    expect(form).to_contain_text("No se envió nada: falta «Nota» (obligatorio)")
    choose_note_and_accept(page, "note-7")  # «Elige la nota de 2024»


def learner_03(page) -> None:
    consent_and_authorize(page)  # the other dialogs of notebook 03 go to a simulated user


def learner_05(page) -> None:
    for note in ("note-7", "note-14", "note-31"):  # legacy, 2026-07-28, MCPServer in memory
        choose_note_and_accept(page, note)


def learner_06(page) -> None:
    choose_note_and_accept(page, "note-14")  # «elige note-14 y confirma» (2026-07-28)
    consent_and_authorize(page, then_done=True)


def quiz_of(notebook: str) -> list[tuple]:
    """The notebook's closing quiz, as the UI package keeps it (`ui.quiz("NN")` names it):
    (question, options, index of the right one, each option's explanation)."""
    from mcp_ui.recap import load_quiz

    cells = json.loads((REPO / "lessons" / notebook).read_text(encoding="utf-8"))["cells"]
    source = source_of(cells[-1])
    call = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
                and getattr(n.func, "attr", "") == "quiz")
    quiz = load_quiz(ast.literal_eval(call.args[0]))
    return [(q.question, [o.text for o in q.options], q.right, [o.why for o in q.options])
            for q in quiz.questions]


def answer_the_quiz(page, notebook: str, cell=None) -> None:
    """«Elige una respuesta en cada pregunta y pulsa "Comprobar".» A wrong answer first, to
    see that option's own explanation; then the right answer of every question."""
    quiz = quiz_of(notebook)
    cell = cell or page.locator(".jp-Notebook .jp-CodeCell").last  # the quiz's cell
    questions = cell.locator(".widget-vbox:has(> .widget-radio)")
    expect(questions, "the quiz is shown once").to_have_count(len(quiz))

    def pick(question, option: str) -> None:
        question.locator(".widget-radio-box label").filter(
            has_text=re.compile(rf"^{re.escape(option)}$")).locator("input").check()
        question.get_by_role("button", name="Comprobar").click()

    _, options, right, whys = quiz[0]
    wrong = (right + 1) % len(options)
    pick(questions.first, options[wrong])
    expect(questions.first).to_contain_text("✗ No. " + whys[wrong][:40])
    for number, (_, options, right, whys) in enumerate(quiz):
        pick(questions.nth(number), options[right])
        expect(questions.nth(number)).to_contain_text("✓ Correcto. " + whys[right][:40])


def nothing_to_answer(page) -> None:
    """The notebook asks nothing (its questions, if any, go to the scripted user)."""


# -- the lessons ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Journey:
    notebook: str
    learner: Callable = nothing_to_answer
    # in the outputs (or, for a pair, in the outputs of the cell whose code has the first
    # part): the ✓ lines of the notebook's checks and the outcomes the markdown promises
    prints: tuple = ()
    expected_crosses: str = r"$^"  # ✗ lines that are lesson content, not a failed check
    focus: str = ""             # scrolled into view for the screenshot


def zero_points(exercise: str) -> re.Pattern:
    return re.compile(rf"^{exercise}: 0 de [1-9]\d* puntos$", re.M)


def full_marks(exercise: str) -> re.Pattern:
    return re.compile(rf"^{exercise}: ([1-9]\d*) de \1 puntos$", re.M)


STARTERS = (
    Journey("01_roots.ipynb",
           prints=("✓ El servidor de la lección no escribió ninguno.",
                   "« ✓ Escribí …/Notas/../Notas-privadas/robo.md.",  # the naive server did
                   zero_points("ejercicio4")),
           focus="El servidor de la lección no escribió ninguno"),
    Journey("02_formularios.ipynb", learner_02,
           prints=("✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md",
                   "✓ El servidor de la lección no tocó el disco en ningún caso.",
                   "« ✗ El servidor se negó a enviar este formulario", zero_points("ejercicio2")),
           focus='"note_id":"note-7","confirm":true'),
    Journey("03_modo_url.ipynb", learner_03,
           prints=("✓ Consentimiento → página → notifications/elicitation/complete",
                   "✓ La página no se cargó: sin consentimiento no hay visita.",
                   "este enlace se anuló", "« ✓ Sincronización configurada",
                   ("s25.call", "« ✗ error -32042: URL elicitation required"),
                   ("s26.call", "« ✓ No se sincronizó nada: antes hay que autorizar Notas Sync."),
                   ("try_backup", "« ✓ Aún no sé pedirla."),
                   zero_points("ejercicio3a"), zero_points("ejercicio3b")),
           focus="Llegó notifications/elicitation/complete"),
    Journey("04_seguridad.ipynb",
           prints=("✓ Solo el primero pasa", "✓ El formulario no llegó a salir del servidor",
                   "✓ El servidor de la lección no borró nada: ni la nota de verdad ni su copia "
                   "de fuera.", "✓ Estado falso rechazado"),
           expected_crosses=r"^✗ El servidor se niega a enviarlo: ",
           focus="notas-sync.example.evil.example"),
    Journey("05_sdk_oficial.ipynb", learner_05,
           prints=("Borrada la nota note-7 (TPS report, 2024-04-10).",
                   "Borrada la nota note-14 (TPS report, 2025-04-09).",
                   "Borrada la nota note-31 (2025-01-15).",
                   "✓ Se borró una sola de las dos actas: la que elegiste."),
           focus='"note_id":"note-31","confirm":true'),
    Journey("06_revision_2026.ipynb", learner_06,
           prints=("« ✓ Borrada la nota note-14",
                   "✓ Estado alterado y estado reutilizado con otros argumentos",
                   "✓ Ninguna escritura salió del límite configurado en el servidor.",
                   "« ✓ Sincronización configurada",
                   "« ✗ El servidor se negó a enviar este formulario",  # exercise 2's starter
                   "✓ Los dos tokens se leen sin la clave",
                   "✓ Falsificado: el hash sin clave lo dejó pasar",
                   "✓ Movido: el sello sin atar mezcló dos llamadas",
                   "✓ Repetido: con los dos sellos se borró una nota que la usuaria rechazó.",
                   "✓ Caducado: el sello sin caducidad lo aceptó",
                   ("try_backup", "« ✓ Tu cliente no abre páginas"),
                   zero_points("ejercicio2"), zero_points("ejercicio3a"),
                   zero_points("ejercicio3b_2026"), zero_points("reto")),
           focus="« ✓ Sincronización configurada"),
    Journey("07_terminos_clave.ipynb", focus="✓ Correcto. Las roots son una capacidad del cliente"),
    Journey("08_lecturas.ipynb", prints=(re.compile(r"^code/roots\.py +\d+ líneas", re.M),),
           focus="code/notes/roots.py"),
)
# -- reading the run -----------------------------------------------------------------------
def output_text(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        text = out.get("text") or (out.get("data") or {}).get("text/plain") or ""
        parts.append("".join(text) if isinstance(text, list) else text)
    return "\n".join(parts)


def source_of(cell: dict) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def first_line(cell: dict) -> str:
    return (source_of(cell).strip().splitlines() or [""])[0]


def appears(expected, text: str) -> bool:
    return bool(expected.search(text)) if isinstance(expected, re.Pattern) else expected in text


# -- the course the journeys run in ---------------------------------------------------------
def serve_course(module_jupyter_lab, tmp_path_factory, copy, solutions=None):
    """One JupyterLab for the module, serving a private copy of the course (`copy`/). Its
    exercise cells hold `solutions` typed in (a folder of ejercicioN.py) or, without it, the
    starters. Each soluciones/ starts with what its exercise cells write (as after running
    notebooks 01-03), so notebook 06 finds them even when run alone. Kernels get a private
    TMPDIR and no LESSON_USER."""
    base = tmp_path_factory.mktemp("every-notebook")
    lessons = copy_course(base / copy) / "lessons"
    if solutions is not None:
        assert type_in_solutions(lessons, solutions)
    assert write_starter_solutions(lessons), "no %%writefile exercise cells found"
    scratch = base / "tmp"
    scratch.mkdir()
    lab = module_jupyter_lab(base, env={
        "LESSON_USER": None, "LESSON_KEEP_LAB": None, "TMPDIR": str(scratch)})
    return lab, scratch


def practice_folders(course) -> set[str]:
    return {p.name for p in course[1].glob("notas-leccion-*")}


def run_with_clicks(page, lab, course, relpath: str, journey: Journey, shot: str) -> None:
    """Open, Run All, answer as the markdown says, then check what the run left."""
    before = practice_folders(course)
    deliberate = deliberate_waits(REPO / "lessons" / journey.notebook)
    open_notebook(page, lab, relpath, workspace=shot)
    clear_all_outputs(page)
    start_run_all(page)
    page.set_default_timeout(ms(PATIENCE + deliberate))  # cells run up to the next dialog
    journey.learner(page)
    wait_until_all_ran(page, deliberate)
    answer_the_quiz(page, journey.notebook)

    cells = [c for c in notebook_cells(page) if c["cell_type"] == "code"]
    errors = [f"{first_line(c)} → {o.get('ename')}: {o.get('evalue')}"
              for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    stderr = [f"{first_line(c)} → {''.join(o.get('text', ''))[:300]}"
              for c in cells for o in c.get("outputs", [])
              if o["output_type"] == "stream" and o.get("name") == "stderr"]
    unran = [first_line(c) for c in cells if c.get("execution_count") is None]
    assert errors == [], errors
    assert stderr == [], stderr
    assert unran == [], f"cells that never ran: {unran}"
    shown = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    assert shown.count() == 0, shown.all_inner_texts()
    widgets = [o["data"][WIDGET]["model_id"] for c in cells for o in c.get("outputs", [])
               if WIDGET in (o.get("data") or {})]
    drawn_twice = [first_line(c) for c in cells for o in c.get("outputs", [])
                   if WIDGET in (o.get("data") or {})
                   and widgets.count(o["data"][WIDGET]["model_id"]) > 1]
    assert drawn_twice == [], f"the same widget is drawn twice by: {drawn_twice}"

    text = "\n".join(output_text(c) for c in cells)
    for expected in journey.prints:
        if isinstance(expected, tuple):
            code, expected = expected
            found = any(appears(expected, output_text(c)) for c in cells
                        if code in source_of(c))
        else:
            found = appears(expected, text)
        assert found, f"not in the outputs: {expected!r}"
    failed_checks = [line for line in text.splitlines() if line.startswith("✗ ")
                     and not re.search(journey.expected_crosses, line)]
    assert failed_checks == []
    assert practice_folders(course) <= before, "the cleanup cell left the practice folder"

    if journey.focus:
        page.get_by_text(journey.focus).first.scroll_into_view_if_needed()
    assert screenshot(page, f"notebook-{shot}").stat().st_size > 0


def name_of(journey: Journey) -> str:
    return journey.notebook.removesuffix(".ipynb")


