"""A learner's two key journeys, in a real JupyterLab driven by headless Debian chromium.

No LESSON_USER here: the notebooks wait for real clicks. Each test works on a private copy of
code/, lessons/ and grader/ (JupyterLab may autosave what it runs; the repository's notebooks
must not change), with TMPDIR pointing into the test's folder so the practice folder the
notebook creates can be inspected on disk (LESSON_KEEP_LAB keeps it after `lab.close()`).
Screenshots go to tests/artifacts/.

Each step waits for the state it needs, bounded as tests/waits.py says (the URL journey's steps
from the consent to the page's answer share the call's setup_wait); the steps themselves are
journeys.py's, as in test_every_notebook.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from journeys import cell_of, consent_and_authorize
from lab import (
    REPO,
    clear_all_outputs,
    copy_course,
    open_notebook,
    screenshot,
    start_run_all,
    wait_until_all_ran,
)
from waits import PATIENCE, TEST_TIMEOUT, deliberate_waits, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A private copy of the course, a TMPDIR to look into, and a human learner."""
    root = copy_course(tmp_path / "curso")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.delenv("LESSON_USER", raising=False)  # `make test` sets it; a person clicks here
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setenv("LESSON_KEEP_LAB", "1")
    return root, scratch


def run_paused_by_clicks(page, lab, notebook: str) -> float:
    """Open the notebook, clear its stored outputs (they could pass for this run's) and Run
    All, which pauses at its first dialog; returns the seconds its cells wait on purpose,
    which every later wait gets on top of PATIENCE."""
    deliberate = deliberate_waits(REPO / "lessons" / notebook)
    open_notebook(page, lab, notebook)
    clear_all_outputs(page)
    start_run_all(page)
    page.set_default_timeout(ms(PATIENCE + deliberate))
    return deliberate


def notes_in(scratch: Path) -> dict[str, set[str]]:
    """The practice folder the notebook created: {folder: note files}."""
    labs = sorted(scratch.glob("notas-leccion-*"))
    assert len(labs) == 1, f"expected one practice folder, found {labs}"
    return {folder: {p.name for p in (labs[0] / folder).glob("*.md")}
            for folder in ("Notas", "Notas-privadas", "Trabajo")}


@pytest.mark.timeout(TEST_TIMEOUT)
def test_picking_the_2024_note_in_the_form_deletes_exactly_that_note(jupyter_lab, page, course):
    root, scratch = course
    lab = jupyter_lab(root / "lessons")
    deliberate = run_paused_by_clicks(page, lab, "02_formularios.ipynb")

    choice = page.locator(".widget-radio-box label", has_text="2024-04-10 · note-7")
    choice.wait_for()
    cell = cell_of(page, choice)
    before = notes_in(scratch)  # the call is paused on the form: the disk cannot change now
    assert {"tps-2023.md", "tps-2024.md", "tps-2025.md"} <= before["Notas"]

    choice.locator("input").check()  # check() also verifies the radio took the click
    cell.locator(".widget-checkbox", has_text="Sí, bórrala").locator("input").check()
    cell.get_by_role("button", name="Aceptar", exact=True).click()

    # exact: the words of a learner's own click («Enviaste»)
    sent = 'Enviaste Aceptar (accept): {"note_id":"note-7","confirm":true}'
    expect(cell.get_by_text(sent, exact=True)).to_be_visible()
    check = page.get_by_text("✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md")
    expect(check).to_be_visible()
    wait_until_all_ran(page, deliberate)
    after = notes_in(scratch)
    assert before["Notas"] - after["Notas"] == {"tps-2024.md"}
    assert after["Notas"] - before["Notas"] == set()
    assert after["Notas-privadas"] == before["Notas-privadas"]
    assert after["Trabajo"] == before["Trabajo"]

    check.scroll_into_view_if_needed()
    assert screenshot(page, "journey-form-elicitation").stat().st_size > 0


@pytest.mark.timeout(TEST_TIMEOUT)
def test_consent_then_setup_page_then_completion_arrives_in_the_notebook(jupyter_lab, page,
                                                                        course):
    """Consent (nothing to open before it), the link, the setup page on 127.0.0.1 (its steps
    within the call's setup_wait), Autorizar; then notifications/elicitation/complete and the
    call's answer arrive in the call's cell, and the notebook's check says so."""
    root, _ = course
    lab = jupyter_lab(root / "lessons")
    deliberate = run_paused_by_clicks(page, lab, "03_modo_url.ipynb")

    cell = consent_and_authorize(page, shot="journey-url-mode-setup-page")
    done = page.get_by_text("✓ Consentimiento → página → notifications/elicitation/complete")
    expect(done).to_be_visible()
    wait_until_all_ran(page, deliberate)
    cell.get_by_text("Llegó notifications/elicitation/complete").scroll_into_view_if_needed()
    assert screenshot(page, "journey-url-mode").stat().st_size > 0
