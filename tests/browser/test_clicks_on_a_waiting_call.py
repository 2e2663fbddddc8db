"""What a learner's clicks do to a call that waits on a form, in JupyterLab (tests/lite checks
the JupyterLite site).

Answering a form never moves the notebook's selection: Shift+Enter after the clicks runs the
next cell, not the call again. A learner presses Shift+Enter on the call's cell (the selection
moves to the cell below), picks a note, ticks the confirmation and clicks «Aceptar» in the
form, then presses Shift+Enter again: the cell below runs and the call ran once. The learner
clicks an option's words, not its little circle or square (the natural place to click, and
the one a label passes on to its input): the same holds for a quiz's options. The same clicks
on a plain widget, without lessons/mcp_ui/focus.py's mark, do move the selection to the
widget's cell: that is JupyterLab's own behaviour, which the first test would catch if the
mark stopped working.

■ in the toolbar stops a call that waits on a form, at once, as notebook 02 says: the cell
stops with one line that says so, the form closes without sending anything, and the
transcript shows the client's cancellation and the server's retraction of its question.
Nothing else is clicked in between (before lessons/mcp_ui/interrupt.py, the interrupt took
effect only at the next click on the form).

Every wait is for a state (a dialog, an echo in the panel, a cell's execution count, the
notebook's active cell), bounded as tests/waits.py says.
"""

from __future__ import annotations

import pytest
from mcp_ui.recap import load_quiz

from lab import (
    FORM_CALL,
    LAB_CELL,
    OPEN_DIALOG,
    code_cell,
    open_notebook,
    run_cell,
    scratch_notebook,
    wait_for_cell,
)
from waits import PATIENCE, TEST_TIMEOUT, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

CELLS = [
    LAB_CELL,
    FORM_CALL,
    'print("SIGUIENTE", len(conn.calls))',
    'import ipywidgets as w\n\ndisplay(w.Button(description="Sin marca"))',
    'print("DESPUÉS")',
    "lab.close()",
    'ui.quiz("01")',
    'print("TRAS EL CUESTIONARIO")',
    "conn.transcript(last_call=True)\nlab.show('Notas')",
]
INTERRUPT = '.jp-NotebookPanel-toolbar [data-command="notebook:interrupt-kernel"]'
ACTIVE = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"


@pytest.fixture
def notebook(tmp_path):
    return scratch_notebook(tmp_path, "selection.ipynb", CELLS)


def shift_enter_on(page, index: int) -> None:
    """Click into the cell's editor and press Shift+Enter, as a learner does."""
    code_cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def active_becomes(page, index: int) -> None:
    page.wait_for_function(f"() => ({ACTIVE})() === {index}")


@pytest.mark.timeout(TEST_TIMEOUT)
def test_shift_enter_after_answering_a_form_runs_the_next_cell(jupyter_lab, page, notebook):
    lessons, scratch = notebook
    lab = jupyter_lab(lessons, env={"LESSON_USER": None, "LESSON_KEEP_LAB": None,
                                    "TMPDIR": str(scratch)})
    open_notebook(page, lab, "selection.ipynb")
    wait_for_cell(page, run_cell(page, 0))

    shift_enter_on(page, 1)  # the call waits for the form; the selection moves below
    form = code_cell(page, 1).locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    active_becomes(page, 2)
    form.get_by_text("2024-04-10 · note-7", exact=True).click()  # the words, not the circle
    assert page.evaluate(ACTIVE) == 2
    form.locator(".widget-checkbox span", has_text="Sí, bórrala").click()
    assert page.evaluate(ACTIVE) == 2
    form.get_by_role("button", name="Aceptar", exact=True).click()
    expect(code_cell(page, 1).get_by_text("« ✓ Borrada la nota note-7")).to_be_visible()
    assert page.evaluate(ACTIVE) == 2

    page.keyboard.press("Shift+Enter")  # no click in between: the keyboard went back
    assert "SIGUIENTE 1" in wait_for_cell(page, 2)  # one call: the form's cell did not rerun
    expect(page.locator(OPEN_DIALOG)).to_have_count(0)
    active_becomes(page, 3)


@pytest.mark.timeout(TEST_TIMEOUT)
def test_shift_enter_after_clicking_a_quiz_option_by_its_words_runs_the_next_cell(
        jupyter_lab, page, notebook):
    lessons, scratch = notebook
    lab = jupyter_lab(lessons, env={"LESSON_USER": None, "TMPDIR": str(scratch)})
    open_notebook(page, lab, "selection.ipynb")
    wait_for_cell(page, run_cell(page, 0))
    quiz = load_quiz("01")
    shift_enter_on(page, 6)
    first = code_cell(page, 6).locator(".widget-radio-box").first
    expect(first).to_be_visible()
    active_becomes(page, 7)
    right = quiz.questions[0].options[quiz.questions[0].right].text
    first.get_by_text(right, exact=True).click()
    code_cell(page, 6).get_by_role("button", name="Comprobar").first.click()
    expect(code_cell(page, 6).get_by_text("✓ Correcto.")).to_be_visible()
    assert page.evaluate(ACTIVE) == 7

    page.keyboard.press("Shift+Enter")
    assert "TRAS EL CUESTIONARIO" in wait_for_cell(page, 7)
    expect(code_cell(page, 6).get_by_text("✓ Correcto.")).to_be_visible()  # not drawn again


@pytest.mark.timeout(TEST_TIMEOUT)
def test_the_stop_button_stops_a_call_waiting_on_a_form_without_any_click_on_it(
        jupyter_lab, page, notebook):
    lessons, scratch = notebook
    lab = jupyter_lab(lessons, env={"LESSON_USER": None, "TMPDIR": str(scratch)})
    open_notebook(page, lab, "selection.ipynb")
    wait_for_cell(page, run_cell(page, 0))

    run_cell(page, 1)
    call = code_cell(page, 1)
    form = call.locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    page.locator(INTERRUPT).first.click()
    shown = wait_for_cell(page, 1)  # the cell ended: no click on the form was needed
    assert "Detuviste la celda" in shown and "notifications/cancelled" in shown
    # one Spanish line, not a trace through the client nor Python's exception name
    assert "async_client" not in shown and "Traceback" not in shown
    assert "CancelledError" not in shown
    expect(form).to_have_count(0)
    expect(call.get_by_text("el formulario se cerró sin enviar nada")).to_be_visible()

    transcript = wait_for_cell(page, run_cell(page, 8))
    cancels = [line for line in transcript.splitlines() if "notifications/cancelled" in line]
    assert [line.split()[0] for line in cancels] == ["C→S", "S→C"]
    assert "tps-2023.md, tps-2024.md, tps-2025.md" in transcript  # nothing was deleted


@pytest.mark.timeout(TEST_TIMEOUT)
def test_a_plain_widget_does_move_the_selection_to_its_cell(jupyter_lab, page, notebook):
    lessons, scratch = notebook
    lab = jupyter_lab(lessons, env={"LESSON_USER": None, "LESSON_KEEP_LAB": None,
                                    "TMPDIR": str(scratch)})
    open_notebook(page, lab, "selection.ipynb")
    shift_enter_on(page, 3)
    button = code_cell(page, 3).get_by_role("button", name="Sin marca")
    expect(button).to_be_visible()
    active_becomes(page, 4)
    button.click()
    active_becomes(page, 3)  # JupyterLab selects the widget's cell: what focus.py prevents
