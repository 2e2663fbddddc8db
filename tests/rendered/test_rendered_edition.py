"""`make rendered`: the lesson as static pages from an unattended run of the student edition.

Every notebook is there with its outputs, the forms and dialogs are drawn from the stored
widget state in chromium with nothing but 127.0.0.1 reachable (and from file://), the index is
the course map with working links, and the demo transcripts of both revisions are included.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from rendered_helpers import REPO, require

from waits import PATIENCE, ms

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def lessons(rendered) -> list[str]:
    # (not a hidden file: the notebooks group's scratch copy, there for a moment while this
    # group runs beside it; the build leaves hidden names out too, editions/common.py)
    return sorted(p.name for p in (rendered.course / "lessons").glob("*.ipynb")
                  if not p.name.startswith("."))


def executed(rendered, name: str) -> dict:
    return json.loads((rendered.out / "notebooks" / name).read_text(encoding="utf-8"))


def text_of(output: dict) -> str:
    if output.get("output_type") == "stream":
        value = output.get("text", "")
    else:
        value = (output.get("data") or {}).get("text/plain", "")
    return "".join(value) if isinstance(value, list) else value


def test_every_notebook_has_its_page_and_its_executed_notebook(rendered):
    names = lessons(rendered)
    assert len(names) >= 8
    for name in names:
        assert (rendered.out / Path(name).with_suffix(".html").name).stat().st_size > 10_000
        assert (rendered.out / "notebooks" / name).exists()


def test_every_code_cell_ran_unattended_without_an_error(rendered):
    for name in lessons(rendered):
        cells = [c for c in executed(rendered, name)["cells"] if c["cell_type"] == "code"]
        assert cells and all(c["execution_count"] for c in cells if "".join(c["source"]).strip())
        errors = [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
        assert errors == [], (name, errors[:1])
        assert sum(len(c["outputs"]) for c in cells) > 0, name


def test_each_page_shows_its_notebooks_outputs(rendered):
    for name in lessons(rendered):
        page = (rendered.out / Path(name).with_suffix(".html").name).read_text(encoding="utf-8")
        outputs = [o for c in executed(rendered, name)["cells"] if c["cell_type"] == "code"
                   for o in c["outputs"]]
        shown_as_text = [o for o in outputs if WIDGET_VIEW not in (o.get("data") or {})
                         and "text/html" not in (o.get("data") or {})]
        lines = [line.strip() for o in shown_as_text for line in text_of(o).splitlines()
                 if len(line.strip()) > 12]
        missing = [line for line in lines if html.escape(line, quote=False) not in page
                   and html.escape(line) not in page]
        assert not missing, (name, missing[:3])
        views = sum(WIDGET_VIEW in (o.get("data") or {}) for o in outputs)
        assert page.count('<script type="application/vnd.jupyter.widget-view+json">') == views, name


def test_forms_and_dialogs_have_their_widget_state_stored(rendered):
    with_widgets = 0
    for name in lessons(rendered):
        nb = executed(rendered, name)
        views = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
                 if WIDGET_VIEW in (o.get("data") or {})]
        if views:
            with_widgets += 1
            state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
            assert all(o["data"][WIDGET_VIEW]["model_id"] in state for o in views), name
    assert with_widgets >= 3  # at least the core path: 01, 02, 03


def test_the_index_is_the_course_map_with_a_working_link_to_every_page(rendered):
    index = (rendered.out / "index.html").read_text(encoding="utf-8")
    readme = (rendered.course / "README.md").read_text(encoding="utf-8")
    heading = next(h for h in re.findall(r"(?m)^## (.+)$", readme)
                   if h.startswith(("Mapa del curso", "Los cuadernos")))
    assert f"<h2>{html.escape(heading)}</h2>" in index
    targets = set(re.findall(r'href="([^"#:]+)"', index))
    for name in lessons(rendered):
        assert Path(name).with_suffix(".html").name in targets
    assert {"demo-2025-11-25.html", "demo-2026-07-28.html"} <= targets
    assert all((rendered.out / t).exists() for t in targets), targets


def test_the_demo_transcripts_of_both_revisions_are_included(rendered):
    for revision, extra in (("2025-11-25", []), ("2026-07-28", ["--protocol", "2026-07-28"])):
        demo = subprocess.run([sys.executable, str(REPO / "code" / "main.py"), *extra],
                              capture_output=True, text=True, timeout=120).stdout
        kept = (rendered.out / f"demo-{revision}.txt").read_text(encoding="utf-8")
        assert kept.splitlines()[:5] == demo.splitlines()[:5]
        assert abs(len(kept.splitlines()) - len(demo.splitlines())) <= 3  # the whole run
        page = (rendered.out / f"demo-{revision}.html").read_text(encoding="utf-8")
        assert html.escape(kept.splitlines()[0]) in page
    assert "elicitation/create" in (rendered.out / "demo-2025-11-25.txt").read_text()
    assert "input_required" in (rendered.out / "demo-2026-07-28.txt").read_text()


def test_pages_load_nothing_from_another_host(rendered):
    """Every src/href in the pages is relative (the assets are in static/)."""
    for page in rendered.out.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'(?:src|href)="((?:https?:)?//[^"]+)"', text)
        remote += re.findall(r'import\("((?:https?:)?//[^"]+)"', text)
        assert remote == [] or all(u.startswith(("https://modelcontextprotocol.io",
                                                  "https://github.com", "https://www."))
                                   and 'href="' + u + '"' in text for u in remote), \
            (page.name, remote[:3])


# -- in chromium ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    sys.path.insert(0, str(REPO / "tests" / "lite"))
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require("the playwright pip package is not installed: run `make venv`")
    import litesite
    executable = litesite.find_chromium()
    if executable is None:
        require("chromium not found: run `make chromium` (Debian: apt-get install chromium)")
    with litesite.NetworkRecorder() as proxy, sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable,
                                     args=litesite.chromium_args(proxy.port))
        yield chromium, proxy, litesite
        chromium.close()


def open_page(browser, url: str, origin: str | None):
    chromium, proxy, litesite = browser
    context = chromium.new_context(viewport={"width": 1300, "height": 1000})
    seen = {"blocked": [], "failed": []}

    def route(route):
        allowed = route.request.url.startswith(origin + "/") if origin else \
            route.request.url.startswith("file://")
        if allowed:
            route.continue_()
        else:
            seen["blocked"].append(route.request.url)
            route.abort("blockedbyclient")
    context.route("**/*", route)
    context.on("requestfailed", lambda r: seen["failed"].append(r.url))
    context.on("response", lambda r: r.status >= 400 and seen["failed"].append(r.url))
    page = context.new_page()
    page.set_default_timeout(ms(PATIENCE))  # a hang detector, not a speed (tests/waits.py)
    start = len(proxy.attempts)
    page.goto(url)
    return context, page, seen, lambda: litesite.left_the_machine(proxy.attempts[start:])


def test_forms_and_dialogs_render_offline_from_127_0_0_1(rendered, browser):
    _, _, litesite = browser
    port = litesite.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                             "--directory", str(rendered.out), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    server = litesite.Server(proc, port)
    try:
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                urllib.request.urlopen(f"{server.url}/index.html", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "http.server did not start"
                time.sleep(0.1)
        context, page, seen, outside = open_page(browser, f"{server.url}/02_formularios.html",
                                                 server.url)
        form = page.locator(".widget-radio-box label", has_text="2024-04-10 · note-7")
        form.wait_for(state="visible")
        assert form.locator("input").is_checked()  # the scripted user's choice, as stored
        assert page.locator(".widget-checkbox input").first.is_checked()
        assert page.get_by_role("button", name="Aceptar").first.is_visible()
        page.goto(f"{server.url}/03_modo_url.html")
        page.get_by_text("quiere que abras una página").first.wait_for(state="visible")
        page.goto(f"{server.url}/01_roots.html")
        if page.locator(".jp-Mermaid").count():
            page.locator(".jp-Mermaid svg").first.wait_for(state="attached")
        assert seen == {"blocked": [], "failed": []}
        assert outside() == []
        context.close()
    finally:
        server.stop()


def test_a_page_opened_from_the_disk_draws_its_form(rendered, browser):
    context, page, seen, outside = open_page(
        browser, (rendered.out / "02_formularios.html").as_uri(), None)
    page.locator(".widget-radio-box label", has_text="2024-04-10 · note-7").wait_for(
        state="visible")
    assert seen["blocked"] == [] and outside() == []
    context.close()
