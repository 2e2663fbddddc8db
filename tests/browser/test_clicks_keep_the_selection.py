"""Answering a form never moves the notebook's selection: Shift+Enter after the clicks runs the
next cell, not the call again (JupyterLab here; tests/lite checks the JupyterLite site).

A learner presses Shift+Enter on the call's cell (the selection moves to the cell below), picks
a note, ticks the confirmation and clicks «Aceptar» in the form, then presses Shift+Enter again:
the cell below runs and the call ran once. The learner clicks an option's words, not its little
circle or square (the natural place to click, and the one a label passes on to its input): the
same holds for a quiz's options. The same clicks on a plain widget, without
lessons/mcp_ui/focus.py's mark, do move the selection to the widget's cell: that is JupyterLab's
own behaviour, which the first test would catch if the mark stopped working.

Every wait is for a state (a dialog, an echo in the panel, a cell's execution count, the
notebook's active cell), bounded as tests/waits.py says.
"""

from __future__ import annotations

import nbformat
import pytest
from mcp_ui.recap import load_quiz

from lab import copy_course, open_notebook, run_cell, wait_for_cell
from waits import PATIENCE, TEST_TIMEOUT, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

OPEN_DIALOG = ".widget-vbox:has(> .widget-hbox > button.widget-button:enabled)"
CELLS = [
    "import mcp_ui as ui\n\nlab = ui.NotesLab(quiet=True)\nconn = await lab.connect(quiet=True)",
    'await conn.call("notes_delete", {"title": "TPS report"})',
    'print("SIGUIENTE", len(conn.calls))',
    'import ipywidgets as w\n\ndisplay(w.Button(description="Sin marca"))',
    'print("DESPUÉS")',
    "lab.close()",
    'ui.quiz("01")',
    'print("TRAS EL CUESTIONARIO")',
]
ACTIVE = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"


@pytest.fixture
def notebook(tmp_path):
    lessons = copy_course(tmp_path / "curso") / "lessons"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nb, lessons / "selection.ipynb")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    return lessons, scratch


def code_cell(page, index: int):
    return page.locator(".jp-Notebook .jp-CodeCell").nth(index)


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
