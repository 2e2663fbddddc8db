"""The lesson notebooks of the student edition in the JupyterLite site, with real clicks.

A learner's core path in the browser, served from 127.0.0.1 with every other request refused,
running the notebooks' own cells one by one as a learner does there (a cell cannot await a
click in JupyterLite, so a cell that awaits runs as a task and fills in its output as it goes,
and later cells wait their turn: lessons/mcp_ui/cells.py):

- 02: the disambiguation form (pick note-7, confirm, Aceptar): only that note is gone; the
  check run before the answer waits its turn and then says ✓; Shift+Enter after the clicks
  (on the options' words) runs the next cells, not the call again;
- 03: the URL consent, the setup page drawn in the notebook (labelled a simulation), its
  Autorizar button, and the completion notification;
- 04: the swap attack (the shared folder replaced by a link while the form is open): the
  naive server deletes by path, the lesson's refuses and nothing of the user's is deleted;
- 01: `ui.revisar` on the exercise-4 starter, run in the page by the grader's
  in-process host: 0 points, each public test with its feedback, labelled as a formative
  self-check; a correct exercise 4, typed into the starter cell, gets every public point there
  too (a folder moved with its handle open is judged where it is now, as in JupyterLab).

Results are asserted as tests/browser asserts them in JupyterLab. Every notebook opens with the
JupyterLite first cell (test_lite_every_notebook.py runs each of them whole).
Every wait is for a state (a cell's new execution count, a dialog, a line in the call's panel),
bounded as tests/waits.py says; the steps from the consent to the simulated page's answer share
the call's setup_wait.
"""

from __future__ import annotations

import json

import pytest
from litesite import (
    WATCH_RUN,
    cell,
    code_cell_at,
    left_the_machine,
    open_notebook,
    press_shift_enter,
    run_cell,
    screenshot,
    unexpected_failures,
    wait_finished,
    wait_output,
    wait_ran,
)

from grading_points import PUBLIC
from waits import PATIENCE, SETUP_WAIT, TEST_TIMEOUT, Deadline, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

FIRST_CELL_MARK = 'if sys.platform == "emscripten":'
OPEN_DIALOG = ".widget-vbox:has(> .widget-hbox > button.widget-button:enabled)"
SETUP = "lab = ui.NotesLab("  # the lesson's lab
IMPORT = "import mcp_ui as ui"  # in the setup cell, or earlier (01: for ui.diagnostico)


def assert_stayed_on_the_machine(lite) -> None:
    assert lite.seen["local"], "no request reached the site at all"
    assert lite.seen["blocked"] == []
    assert left_the_machine(lite.proxy_attempts) == []
    assert unexpected_failures(lite.seen) == []


def start_lesson(lite, notebook: str) -> None:
    """Open a lesson, run its JupyterLite first cell and its setup cell (the lab's: it waits on
    no dialog, so a restarted kernel gets `lab` back by running it once)."""
    page = lite.page
    open_notebook(page, lite.url, f"lessons/{notebook}", first_visit=True)  # lite_page: fresh
    first = code_cell_at(page, 0)
    assert FIRST_CELL_MARK in first.locator(".jp-InputArea-editor").inner_text()
    run_cell(page, first)
    wait_ran(page, first)
    imports = cell(page, IMPORT)
    if SETUP not in imports.locator(".jp-InputArea-editor").inner_text():
        run_cell(page, imports)
        wait_ran(page, imports)
    run_cell(page, SETUP)
    wait_ran(page, SETUP)


def test_every_lesson_opens_with_the_jupyterlite_cell(lite_site):
    lessons = sorted((lite_site.content / "lessons").glob("*.ipynb"))
    assert len(lessons) >= 8
    missing = []
    for notebook in lessons:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = [c for c in cells if c["cell_type"] == "code"]
        source = "".join(code[0]["source"]) if code else ""
        if FIRST_CELL_MARK not in source or "course_lite.setup()" not in source:
            missing.append(notebook.name)
    assert missing == []


@pytest.mark.timeout(TEST_TIMEOUT)
def test_form_in_the_browser_deletes_only_the_chosen_note(lite_page):
    page = lite_page.page
    start_lesson(lite_page, "02_formularios.ipynb")
    run_cell(page, "Lista de la compra")
    wait_output(page, "Lista de la compra", "Borrada la nota")
    wait_finished(page, "Lista de la compra")

    form_cell = cell(page, '{"title": "TPS report"}, scripted=')
    run_cell(page, form_cell)  # the cell ends at once; its call waits for the form
    wait_ran(page, form_cell)
    form = form_cell.locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    check = cell(page, "lab.check_chosen_note_deleted(conn)")
    run_cell(page, check)
    wait_ran(page, check)
    expect(check.locator(".mcp-cell")).to_contain_text("Espera su turno")
    assert "Elegiste" not in check.locator(".jp-Cell-outputArea").inner_text()

    form.locator(".widget-radio-box label", has_text="2024-04-10 · note-7").locator(
        "input").check()
    form.locator(".widget-checkbox", has_text="Sí, bórrala").locator("input").check()
    form.get_by_role("button", name="Aceptar", exact=True).click()
    expect(form_cell.get_by_text("« ✓ Borrada la nota note-7 (TPS report, 2024-04-10).")
           ).to_be_visible()
    shown = wait_finished(page, check, task=True)
    assert "✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md" in shown
    notas = next(line for line in shown.splitlines() if "📁 Notas/" in line)
    assert "tps-2024.md" not in notas and "tps-2023.md" in notas and "tps-2025.md" in notas
    form_cell.scroll_into_view_if_needed()
    screenshot(page, "lite-lesson-02-form")
    assert_stayed_on_the_machine(lite_page)


@pytest.mark.timeout(TEST_TIMEOUT)
def test_the_swap_attack_of_notebook_04_is_refused_in_the_browser(lite_page):
    # Pyodide emulates directory descriptors by path: there the check that the shared
    # folder is still the one accepted (device and inode, no link) is what refuses
    page = lite_page.page
    start_lesson(lite_page, "04_seguridad.ipynb")
    swap = 'scripted=[lab.swap_during_form("Notas", then=elige)]'
    run_cell(page, swap)
    shown = wait_finished(page, swap)  # it awaits: it runs as a task after its prompt's number
    assert "alguien renombra Notas/ a Notas-movida/" in shown
    assert "« ✓ Borré …/Notas/tps-2024.md." in shown  # the naive server, by the path it listed
    assert "« ✗ No se borró nada: la carpeta compartida" in shown
    assert "ya no es la que aceptaste" in shown
    assert "✓ El servidor de la lección no borró nada: ni la nota de verdad ni su copia" in shown
    screenshot(page, "lite-lesson-04-swap")
    assert_stayed_on_the_machine(lite_page)


@pytest.mark.timeout(TEST_TIMEOUT)
def test_shift_enter_after_answering_a_form_in_the_browser_runs_the_next_cells(lite_page):
    page = lite_page.page
    start_lesson(lite_page, "02_formularios.ipynb")
    form_cell = cell(page, '{"title": "TPS report"}, scripted=')
    form_cell.locator(".jp-InputArea-editor").click()
    press_shift_enter(page)  # the call's cell runs; the selection moves to the text below
    form = form_cell.locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    # the options' words, where a learner clicks (not the little circle and square)
    form.get_by_text("2024-04-10 · note-7", exact=True).click()
    form.locator(".widget-checkbox span", has_text="Sí, bórrala").click()
    form.get_by_role("button", name="Aceptar", exact=True).click()
    expect(form_cell.get_by_text("« ✓ Borrada la nota note-7")).to_be_visible()
    ran_once = form_cell.locator(".jp-InputArea-prompt").inner_text()
    check = cell(page, "lab.check_chosen_note_deleted(conn)")
    check.locator(".jp-InputArea-prompt").evaluate(WATCH_RUN)
    press_shift_enter(page)  # the markdown below the call
    press_shift_enter(page)  # the check
    assert "✓ Elegiste note-7 y solo desapareció" in wait_finished(page, check)
    assert form_cell.locator(".jp-InputArea-prompt").inner_text() == ran_once
    expect(page.locator(OPEN_DIALOG)).to_have_count(0)  # no second form


@pytest.mark.timeout(TEST_TIMEOUT)
def test_url_consent_simulated_page_and_completion_in_the_browser(lite_page):
    page = lite_page.page
    start_lesson(lite_page, "03_modo_url.ipynb")  # its lab cell waits on nothing
    consent_cell = cell(page, 'await conn.call("notes_setup"')
    run_cell(page, consent_cell)
    wait_ran(page, consent_cell)  # ends while the consent waits
    consent = consent_cell.locator(OPEN_DIALOG)
    expect(consent).to_contain_text("quiere que abras una página")
    expect(consent).to_contain_text("verás debajo una simulación")
    consent.get_by_role("button", name="Acepto abrir la página").click()

    simulated = page.locator(".mcp-simulated-page")
    with Deadline(SETUP_WAIT, "the simulated page was not answered within the call's "
                  "setup_wait after the consent, so the call ends pending") as setup_wait:
        expect(simulated).to_contain_text("Simulación", timeout=setup_wait.ms())
        expect(simulated).to_contain_text("notas-sync.localhost/connect?elicitation=",
                                          timeout=setup_wait.ms())
        assert page.context.pages == [page]  # nothing opened in another tab
        simulated.get_by_role("button", name="Autorizar").click(timeout=setup_wait.ms())
        expect(simulated).to_contain_text("Notas Sync quedó autorizado",
                                          timeout=setup_wait.ms())
    expect(consent_cell.get_by_text("Llegó notifications/elicitation/complete")).to_be_visible()
    expect(consent_cell.get_by_text("« ✓ Sincronización configurada.")).to_be_visible()
    check = "lab.check_url_flow(conn)"
    run_cell(page, check)
    assert "✓ Consentimiento → página → notifications/elicitation/complete" in wait_ran(
        page, check)
    simulated.scroll_into_view_if_needed()
    screenshot(page, "lite-lesson-03-url")
    assert_stayed_on_the_machine(lite_page)


@pytest.mark.timeout(TEST_TIMEOUT)
def test_revisar_in_the_browser_self_checks_the_starter_in_the_page(lite_page):
    page = lite_page.page
    start_lesson(lite_page, "01_roots.ipynb")
    starter = "%%writefile soluciones/ejercicio4.py"
    run_cell(page, starter)
    assert "soluciones/ejercicio4.py" in wait_ran(page, starter)
    review = 'ui.revisar("ejercicio4")'
    run_cell(page, review)
    shown = wait_ran(page, review)
    assert f"ejercicio4: 0 de {PUBLIC['ejercicio4']:g} puntos" in shown
    assert "Autoevaluación en el navegador" in shown and "sin aislamiento ni límites" in shown
    assert "la nota la pone el corrector oficial" in shown
    rows = cell(page, review).locator("table tr")
    expect(rows.first).to_be_visible()
    # the public tests of exercise 4: a row each, or folded under the test they wait for
    waiting = cell(page, review).locator(".mcp-review-waiting li")
    assert rows.count() + waiting.count() >= 3
    assert "💥" not in shown  # failed checks of the learner's code, not crashed checks
    assert "tu reacción no revocó ninguno" in shown
    screenshot(page, "lite-lesson-01-revisar")
    assert_stayed_on_the_machine(lite_page)


# A correct exercise 4, written the way a learner might (not the reference's wording): it asks
# each handle where its file is now.
MY_EXERCISE_4 = '''%%writefile soluciones/ejercicio4.py
from extension import Extension

extension = Extension()


@extension.on_roots_changed
def revoke_what_left(change):
    for handle in change.handles:
        now = handle.current_path()
        if not (now and change.new_roots.contains(now)):
            change.revoke(handle, "ya no está dentro de tus roots")
'''


@pytest.mark.timeout(TEST_TIMEOUT)
def test_a_correct_exercise_4_gets_every_public_point_in_the_browser(lite_page):
    page = lite_page.page
    start_lesson(lite_page, "01_roots.ipynb")
    starter = cell(page, "%%writefile soluciones/ejercicio4.py")
    starter.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(MY_EXERCISE_4)
    run_cell(page, starter)
    assert "soluciones/ejercicio4.py" in wait_ran(page, starter)
    review = 'ui.revisar("ejercicio4")'
    run_cell(page, review)
    shown = wait_ran(page, review)
    points = PUBLIC["ejercicio4"]
    assert f"ejercicio4: {points:g} de {points:g} puntos" in shown, shown
    screenshot(page, "lite-lesson-01-ejercicio4-correct")
    assert_stayed_on_the_machine(lite_page)
