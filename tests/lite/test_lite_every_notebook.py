"""Every lesson notebook, whole, in the JupyterLite site, as a learner runs it there: cell after
cell with Shift+Enter, answering each form and consent with real clicks, then the quiz.

The notebooks run in order, 01 to 08, in one browser (one storage, as a learner's): 06 finds
the exercise files 02 and 03 wrote. Each notebook gets its own tab and kernel. A cell that
awaits runs as a task there (lessons/mcp_ui/cells.py), so each cell is awaited until its panel
says it finished; when a dialog opens in it, the learner answers it as the notebook's text says
(ANSWERS, in order of appearance). Afterwards: no traceback anywhere, the ✓ lines and outcomes
of tests/browser/journeys.py's STARTERS are shown, no ✗ line that is not lesson content, and
nothing left the machine.

Every wait is for a state (a cell's prompt, a dialog, the panel's `.mcp-cell-done`, the
simulated page's answer), bounded as tests/waits.py says; the steps from a consent to the
simulated page's answer share the call's setup_wait.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from litesite import (
    NOTEBOOK,
    WATCH_RUN,
    code_cell_at,
    error_text,
    left_the_machine,
    open_notebook,
    output_text,
    run_cell,
    screenshot,
    unexpected_failures,
    wait_ran,
)

from waits import PATIENCE, SETUP_WAIT, Deadline, deliberate_waits, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
from mcp_ui.cells import awaits  # noqa: E402  (which cells run as tasks there)

from journeys import STARTERS, answer_the_quiz, appears  # noqa: E402

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

OPEN_DIALOG = ".widget-vbox:has(> .widget-hbox > button.widget-button:enabled)"
FIRST_CELL_MARK = 'if sys.platform == "emscripten":'  # the first cell: the runner is not in yet
REPO = Path(__file__).resolve().parents[2]
# What the learner answers, in the order the dialogs appear (the notebooks' own instructions).
ANSWERS = {
    "02_formularios.ipynb": ["note-7"],              # «Elige la nota de 2024»
    "03_modo_url.ipynb": ["authorize"],              # consent + Autorizar
    "05_sdk_oficial.ipynb": ["note-7", "note-14", "note-31"],
    "06_revision_2026.ipynb": ["note-14", "authorize-then-done"],
}
JOURNEYS = {journey.notebook: journey for journey in STARTERS}


@pytest.fixture(scope="module")
def learner_context(lite_browser, lite_server):
    """One browser context for the module: the learner's storage, shared by the notebooks."""
    context = lite_browser.browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(ms(PATIENCE))
    yield context
    context.close()


def choose_note(cell, dialog, note: str) -> None:
    dialog.locator(".widget-radio-box label").filter(
        has_text=re.compile(rf"· {re.escape(note)}$")).locator("input").check()
    dialog.locator(".widget-checkbox", has_text="Sí, bórrala").locator("input").check()
    dialog.get_by_role("button", name="Aceptar", exact=True).click()
    # answered, the dialog's buttons are disabled: it no longer matches OPEN_DIALOG
    expect(cell).to_contain_text(f'Enviaste Aceptar (accept): {{"note_id":"{note}"')


def authorize(cell, dialog, then_done: bool) -> None:
    dialog.get_by_role("button", name="Acepto abrir la página").click()
    page = cell.locator(".mcp-simulated-page")
    with Deadline(SETUP_WAIT, "the simulated page was not answered within the call's "
                  "setup_wait after the consent, so the call ends pending") as setup_wait:
        expect(page).to_contain_text("Simulación", timeout=setup_wait.ms())
        page.get_by_role("button", name="Autorizar").click(timeout=setup_wait.ms())
        expect(page).to_contain_text("Notas Sync quedó autorizado", timeout=setup_wait.ms())
    if then_done:  # 2026-07-28: no completion notice, the person says when
        done = cell.get_by_role("button", name="Ya terminé en la página")
        expect(done).to_be_enabled()
        done.click()
        expect(done).to_be_disabled()


def answer(cell, dialog, what: str) -> None:
    if what.startswith("note-"):
        choose_note(cell, dialog, what)
    elif what.startswith("authorize"):
        authorize(cell, dialog, then_done=what.endswith("done"))
    elif what == "decline":
        dialog.get_by_role("button", name="Rechazar", exact=True).click()
        expect(cell).to_contain_text("Enviaste Rechazar (decline)")
    else:
        raise AssertionError(f"unknown answer {what!r}")


def run_to_the_end(page, cell, answers: list[str], patience: float) -> str:
    """Run one cell as a learner does and stay with it until it finished, answering each
    dialog that opens in it; its outputs."""
    source = cell.locator(".jp-InputArea-editor").inner_text()
    run_cell(page, cell)
    wait_ran(page, cell, patience)
    if not awaits(source) or FIRST_CELL_MARK in source:  # ran directly: nothing pending
        return output_text(cell)
    expect(cell.locator(".mcp-cell")).to_have_count(1)  # it runs as a task: its panel
    done = cell.locator(".mcp-cell.mcp-cell-done")
    dialog = cell.locator(OPEN_DIALOG)
    while done.count() == 0:
        expect(done.or_(dialog).first).to_be_visible(timeout=ms(patience))
        if done.count() == 0 and dialog.count() == 1:
            assert answers, f"a dialog nobody expected: {dialog.inner_text()[:300]}"
            answer(cell, dialog, answers.pop(0))
    if error_text(cell):
        raise AssertionError(f"the cell raised:\n{error_text(cell)}")
    return output_text(cell)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("notebook", sorted(p.name for p in (REPO / "lessons").glob("0*.ipynb")))
def test_the_notebook_runs_whole_in_the_browser_with_real_clicks(learner_context, lite_server,
                                                                 lite_browser, notebook):
    from litesite import guard_network

    context = learner_context
    seen = guard_network(context, lite_server.url)
    attempts_before = len(lite_browser.proxy.attempts)
    page = context.new_page()
    page.set_default_timeout(ms(PATIENCE))
    try:
        open_notebook(page, lite_server.url, f"lessons/{notebook}")
        patience = PATIENCE + deliberate_waits(REPO / "lessons" / notebook)
        answers = list(ANSWERS.get(notebook, []))
        cells = page.locator(f"{NOTEBOOK} .jp-CodeCell")
        outputs = []
        for index in range(cells.count() - 1):  # the quiz comes last
            outputs.append(run_to_the_end(page, code_cell_at(page, index), answers, patience))
        assert answers == [], f"dialogs that never opened: {answers}"
        quiz = code_cell_at(page, cells.count() - 1)
        quiz.locator(".jp-InputArea-prompt").evaluate(WATCH_RUN)
        quiz.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")  # the last cell: run it in place, add no cell
        wait_ran(page, quiz)
        answer_the_quiz(page, notebook, quiz)
        text = "\n".join(outputs)
        journey = JOURNEYS[notebook]
        for expected in journey.prints:
            expected = expected[1] if isinstance(expected, tuple) else expected
            assert appears(expected, text), f"not in the outputs: {expected!r}"
        failed = [line for line in text.splitlines() if line.startswith("✗ ")
                  and not re.search(journey.expected_crosses, line)]
        assert failed == []
        screenshot(page, f"lite-notebook-{notebook.removesuffix('.ipynb')}")
        assert seen["blocked"] == [] and unexpected_failures(seen) == []
        assert left_the_machine(lite_browser.proxy.attempts[attempts_before:]) == []
    except BaseException:
        screenshot(page, f"lite-notebook-{notebook.removesuffix('.ipynb')}-FAILED")
        raise
    finally:
        context.unroute("**/*")
        page.close()
