"""The JupyterLite behaviour of the lessons' lab, with real clicks in a real JupyterLab.

JupyterLite cannot deliver a click to a cell that is awaiting it, so there a cell that awaits
runs as a task (lessons/mcp_ui/cells.py): the cell ends at once, the click completes the call,
and the cell's own output fills in afterwards, in order; later cells wait their turn. The setup
page is drawn inside the notebook (no sockets). LESSON_KERNEL=lite switches that behaviour on in
an ordinary kernel; here a learner runs the cells one by one with Shift+Enter:

- the form's cell ends while the form waits; the check cell run next says it waits its turn,
  and neither shows anything from before the answer; a click on the form finishes the call,
  then the listing under it and the check appear, right;
- the URL consent's cell ends too; consent draws the simulated provider page, its Autorizar
  button completes the flow, and notifications/elicitation/complete arrives in the panel;
- «⏹ Detener» cancels a call whose form waits (JupyterLite's ■), and the cell behind it.

Every wait is for a state (a cell's execution count, a dialog, a finished cell's panel:
`.mcp-cell-done`), bounded as tests/waits.py says; the steps from the consent to the simulated
page's answer share the call's setup_wait, after which the call would end pending.
"""

from __future__ import annotations

import pytest

from lab import (
    FORM_CALL,
    LAB_CELL,
    OPEN_DIALOG,
    code_cell,
    open_notebook,
    run_cell,
    scratch_notebook,
    screenshot,
    wait_for_cell,
)
from waits import PATIENCE, SETUP_WAIT, TEST_TIMEOUT, Deadline, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

CELLS = [
    LAB_CELL,
    'await conn.call("notes_delete", {"title": "TPS report"})\nlab.show("Notas")',
    "lab.check_chosen_note_deleted(conn)",
    'await conn.call("notes_setup")',
    "lab.check_url_flow(conn)",
    FORM_CALL,
    'print("después de detener")',
    "lab.close()",
]


@pytest.fixture
def notebook(tmp_path):
    return scratch_notebook(tmp_path, "lite_mode.ipynb", CELLS)


def finished(page, index: int) -> str:
    """Wait until the cell has run and, if it ran as a task (it shows a `.mcp-cell` panel),
    until that task finished (`.mcp-cell-done`); the text of its outputs."""
    text = wait_for_cell(page, index)
    cell = code_cell(page, index)
    if cell.locator(".mcp-cell").count() == 0:
        return text
    panel = cell.locator(".mcp-cell.mcp-cell-done")
    expect(panel).to_have_count(1)
    return panel.inner_text()


@pytest.mark.timeout(TEST_TIMEOUT)
def test_cells_wait_for_the_answer_and_show_what_follows_it(jupyter_lab, page, notebook):
    lessons, scratch = notebook
    lab = jupyter_lab(lessons, env={"LESSON_KERNEL": "lite", "LESSON_USER": None,
                                    "LESSON_KEEP_LAB": None, "TMPDIR": str(scratch)})
    open_notebook(page, lab, "lite_mode.ipynb")
    wait_for_cell(page, run_cell(page, 0))

    wait_for_cell(page, run_cell(page, 1))  # the cell ends although the form waits
    form = code_cell(page, 1).locator(OPEN_DIALOG)
    expect(form).to_have_count(1)
    wait_for_cell(page, run_cell(page, 2))
    prompt = code_cell(page, 1).locator(".jp-InputArea-prompt").inner_text().strip()  # [n]:
    expect(code_cell(page, 2)).to_contain_text(f"Espera su turno: la celda {prompt[:-1]} ")
    assert "📁" not in code_cell(page, 1).inner_text()  # nothing from before the answer
    assert "Elegiste" not in code_cell(page, 2).inner_text()

    form.locator(".widget-radio-box label", has_text="2024-04-10 · note-7").locator(
        "input").check()
    form.locator(".widget-checkbox", has_text="Sí, bórrala").locator("input").check()
    form.get_by_role("button", name="Aceptar", exact=True).click()
    listing = finished(page, 1)
    assert listing.index("« ✓ Borrada la nota note-7 (TPS report, 2024-04-10).") < \
        listing.index("📁 Notas/: compra.md, tps-2023.md, tps-2025.md")
    assert "✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md" in finished(page, 2)

    wait_for_cell(page, run_cell(page, 3))  # ends while the consent waits
    consent = code_cell(page, 3).locator(OPEN_DIALOG)
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
    assert "« ✓ Sincronización configurada." in finished(page, 3)
    run_cell(page, 4)
    assert "✓ Consentimiento → página → notifications/elicitation/complete" in finished(
        page, 4)
    simulated.scroll_into_view_if_needed()
    assert screenshot(page, "lite-mode-in-jupyterlab").stat().st_size > 0

    wait_for_cell(page, run_cell(page, 5))  # a second form, left open
    expect(code_cell(page, 5).locator(OPEN_DIALOG)).to_have_count(1)
    wait_for_cell(page, run_cell(page, 6))
    code_cell(page, 5).get_by_role("button", name="⏹ Detener").click()
    assert "Detuviste esta celda" in finished(page, 5)
    behind = finished(page, 6)
    assert "Detuviste esta celda" in behind and "después de detener" not in behind
    expect(code_cell(page, 5)).to_contain_text("notifications/cancelled")
    wait_for_cell(page, run_cell(page, 7))
    assert not list(scratch.glob("notas-leccion-*"))
