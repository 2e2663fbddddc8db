"""A learner's two key journeys, in a real JupyterLab driven by headless Debian chromium.

No LESSON_USER here: the notebooks wait for real clicks. Each test works on a private copy of
code/, lessons/ and grader/ (JupyterLab may autosave what it runs; the repository's notebooks
must not change), with TMPDIR pointing into the test's folder so the practice folder the
notebook creates can be inspected on disk (LESSON_KEEP_LAB keeps it after `lab.close()`).
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import (
    clear_all_outputs,
    copy_course,
    open_notebook,
    screenshot,
    start_run_all,
    wait_until_all_ran,
)

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect

# The kernel, the notes server and the browser share two cores with whatever else runs:
# give assertions the same patience as the page (Playwright's default is 5 s).
expect.set_options(timeout=30_000)


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


def notes_in(scratch: Path) -> dict[str, set[str]]:
    """The practice folder the notebook created: {folder: note files}."""
    labs = sorted(scratch.glob("notas-leccion-*"))
    assert len(labs) == 1, f"expected one practice folder, found {labs}"
    return {folder: {p.name for p in (labs[0] / folder).glob("*.md")}
            for folder in ("Notas", "Notas-privadas", "Trabajo")}


@pytest.mark.timeout(420)
def test_picking_the_2024_note_in_the_form_deletes_exactly_that_note(jupyter_lab, page, course):
    root, scratch = course
    lab = jupyter_lab(root / "lessons")
    open_notebook(page, lab, "02_formularios.ipynb")
    clear_all_outputs(page)  # or the stored outputs could pass for this run's
    start_run_all(page)  # the run pauses at the form until someone clicks

    choice = page.locator(".widget-radio-box label", has_text="2024-04-10 · note-7")
    choice.wait_for(timeout=90_000)
    before = notes_in(scratch)  # the call is paused on the form: the disk cannot change now
    assert {"tps-2023.md", "tps-2024.md", "tps-2025.md"} <= before["Notas"]

    choice.locator("input").check()  # check() also verifies the radio took the click
    page.locator(".widget-checkbox", has_text="Sí, bórrala").locator("input").check()
    page.get_by_role("button", name="Aceptar", exact=True).click()

    # exact: later cells' scripted answers also say "Enviaste Aceptar (accept): ..."
    sent = 'Enviaste Aceptar (accept): {"note_id":"note-7","confirm":true}'
    expect(page.get_by_text(sent, exact=True)).to_be_visible()
    check = page.get_by_text("✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md")
    expect(check).to_be_visible(timeout=60_000)
    wait_until_all_ran(page)
    after = notes_in(scratch)
    assert before["Notas"] - after["Notas"] == {"tps-2024.md"}
    assert after["Notas"] - before["Notas"] == set()
    assert after["Notas-privadas"] == before["Notas-privadas"]
    assert after["Trabajo"] == before["Trabajo"]

    check.scroll_into_view_if_needed()
    assert screenshot(page, "journey-form-elicitation").stat().st_size > 0


@pytest.mark.timeout(420)
def test_consent_then_setup_page_then_completion_arrives_in_the_notebook(jupyter_lab, page,
                                                                        course):
    root, _ = course
    lab = jupyter_lab(root / "lessons")
    open_notebook(page, lab, "03_modo_url.ipynb")
    clear_all_outputs(page)  # or the stored outputs could pass for this run's
    start_run_all(page)  # the run pauses at the form until someone clicks

    consent = page.get_by_role("button", name="Acepto abrir la página")
    consent.wait_for(timeout=90_000)
    expect(page.locator("mark", has_text="127.0.0.1").first).to_be_visible()
    expect(page.get_by_text("esta misma máquina (loopback)")).to_be_visible()
    assert page.locator("a.mcp-open-page").count() == 0  # nothing to open before consent

    consent.click()
    link = page.locator("a.mcp-open-page")
    expect(link).to_be_visible()
    with page.context.expect_page() as opened:
        link.click()
    setup = opened.value
    setup.wait_for_load_state()
    assert setup.url.startswith("http://127.0.0.1:") and "/connect?elicitation=" in setup.url
    expect(setup.locator("h1")).to_have_text("Autorizar Notas Sync")
    setup.locator("#allow").click()
    expect(setup.locator("#result")).to_contain_text("Notas Sync quedó autorizado")
    assert screenshot(setup, "journey-url-mode-setup-page").stat().st_size > 0

    page.bring_to_front()
    arrived = page.get_by_text("Llegó notifications/elicitation/complete").first
    expect(arrived).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Sincronización configurada.").first).to_be_visible()
    done = page.get_by_text("✓ Consentimiento → página → notifications/elicitation/complete")
    expect(done).to_be_visible(timeout=60_000)
    # Later, a 2026-07-28 client calls notes_sync before any setup: its consent, declined.
    later = page.locator(".widget-vbox:has(> .widget-hbox > button.widget-button:enabled)")
    later.first.wait_for(timeout=90_000)
    expect(later).to_contain_text("quiere que abras una página")
    later.get_by_role("button", name="Rechazar", exact=True).click()
    wait_until_all_ran(page)
    arrived.scroll_into_view_if_needed()
    assert screenshot(page, "journey-url-mode").stat().st_size > 0
