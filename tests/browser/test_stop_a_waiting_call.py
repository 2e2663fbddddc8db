"""■ in JupyterLab's toolbar stops a call that waits on a form, at once, as notebook 02 says.

A learner runs a call whose form stays open and clicks ■ (interrupt the kernel) instead of
answering: the cell stops with one line that says so, the form closes without sending
anything, and the transcript shows the client's cancellation and the server's retraction of
its question. Nothing else is clicked in between (before lessons/mcp_ui/interrupt.py, the
interrupt took effect only at the next click on the form). Waits are for states, bounded as
tests/waits.py says.
"""

from __future__ import annotations

import nbformat
import pytest

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
    "conn.transcript(last_call=True)\nlab.show('Notas')",
    "lab.close()",
]
INTERRUPT = '.jp-NotebookPanel-toolbar [data-command="notebook:interrupt-kernel"]'


@pytest.mark.timeout(TEST_TIMEOUT)
def test_the_stop_button_stops_a_call_waiting_on_a_form_without_any_click_on_it(
        jupyter_lab, page, tmp_path):
    lessons = copy_course(tmp_path / "curso") / "lessons"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nb, lessons / "detener.ipynb")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    lab = jupyter_lab(lessons, env={"LESSON_USER": None, "TMPDIR": str(scratch)})
    open_notebook(page, lab, "detener.ipynb")
    wait_for_cell(page, run_cell(page, 0))

    run_cell(page, 1)
    call = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
    form = call.locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    page.locator(INTERRUPT).first.click()
    shown = wait_for_cell(page, 1)  # the cell ended: no click on the form was needed
    assert "Detuviste la celda" in shown and "CancelledError" in shown
    assert "async_client" not in shown  # one line, not a trace through the client
    expect(form).to_have_count(0)
    expect(call.get_by_text("el formulario se cerró sin enviar nada")).to_be_visible()

    transcript = wait_for_cell(page, run_cell(page, 2))
    cancels = [line for line in transcript.splitlines() if "notifications/cancelled" in line]
    assert [line.split()[0] for line in cancels] == ["C→S", "S→C"]
    assert "tps-2023.md, tps-2024.md, tps-2025.md" in transcript  # nothing was deleted
    wait_for_cell(page, run_cell(page, 3))
