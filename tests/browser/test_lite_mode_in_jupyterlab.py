"""The JupyterLite behaviour of the lessons' lab, with real clicks in a real JupyterLab.

JupyterLite cannot deliver a click to a cell that is awaiting it, so there the lab's calls
return as soon as a dialog waits for the person, the click completes the call in its panel,
and the setup page is drawn inside the notebook (no sockets). LESSON_KERNEL=lite switches
that behaviour on in an ordinary kernel; here a learner runs the cells one by one:

- the form's cell ends while the form waits; the check says «responde primero...»; a click
  on the form finishes the call in its panel; the check, run again, gives ✓;
- the URL consent's cell ends too; consent draws the simulated provider page, its Autorizar
  button completes the flow, and notifications/elicitation/complete arrives in the panel.

Every wait is for a state (a cell's execution count, a dialog, the panel's lines), bounded as
tests/waits.py says; the steps from the consent to the simulated page's answer share the call's
setup_wait, after which the call would end pending.
"""

from __future__ import annotations

import nbformat
import pytest

from lab import copy_course, open_notebook, run_cell, screenshot, wait_for_cell
from waits import PATIENCE, SETUP_WAIT, TEST_TIMEOUT, Deadline, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

OPEN_DIALOG = ".widget-vbox:has(> .widget-hbox > button.widget-button:enabled)"
CELLS = [
    "import mcp_ui as ui\n\nlab = ui.NotesLab(quiet=True)\nconn = await lab.connect(quiet=True)",
    'await conn.call("notes_delete", {"title": "TPS report"})',
    "lab.check_chosen_note_deleted(conn)",
    'await conn.call("notes_setup")',
    "lab.check_url_flow(conn)",
    "lab.close()",
]


@pytest.fixture
def notebook(tmp_path):
    lessons = copy_course(tmp_path / "curso") / "lessons"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nb, lessons / "lite_mode.ipynb")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    return lessons, scratch


@pytest.mark.timeout(TEST_TIMEOUT)
def test_calls_return_while_dialogs_wait_and_clicks_complete_them_in_their_panel(
        jupyter_lab, page, notebook):
    lessons, scratch = notebook
    lab = jupyter_lab(lessons, env={"LESSON_KERNEL": "lite", "LESSON_USER": None,
                                    "LESSON_KEEP_LAB": None, "TMPDIR": str(scratch)})
    open_notebook(page, lab, "lite_mode.ipynb")
    wait_for_cell(page, run_cell(page, 0))

    text = wait_for_cell(page, run_cell(page, 1))  # ends although the form waits
    assert "La llamada sigue abierta" in text
    form = page.locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    assert "responde primero al formulario de arriba" in wait_for_cell(page, run_cell(page, 2))

    form.locator(".widget-radio-box label", has_text="2024-04-10 · note-7").locator(
        "input").check()
    form.locator(".widget-checkbox", has_text="Sí, bórrala").locator("input").check()
    form.get_by_role("button", name="Aceptar", exact=True).click()
    expect(page.get_by_text("« ✓ Borrada la nota note-7 (TPS report, 2024-04-10).")
           ).to_be_visible()
    assert "✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md" in wait_for_cell(
        page, run_cell(page, 2))

    wait_for_cell(page, run_cell(page, 3))  # ends while the consent waits
    consent = page.locator(OPEN_DIALOG)
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
    expect(page.get_by_text("Llegó notifications/elicitation/complete")).to_be_visible()
    expect(page.get_by_text("« ✓ Sincronización configurada.")).to_be_visible()
    assert "✓ Consentimiento → página → notifications/elicitation/complete" in wait_for_cell(
        page, run_cell(page, 4))
    simulated.scroll_into_view_if_needed()
    assert screenshot(page, "lite-mode-in-jupyterlab").stat().st_size > 0
    wait_for_cell(page, run_cell(page, 5))
    assert not list(scratch.glob("notas-leccion-*"))
