"""Fixtures for the JupyterLite edition (helpers in litesite.py).

    def test_x(lite_site, lite_page):
        open_notebook(lite_page.page, lite_page.url, PROBE_PATH)

- ``lite_site`` (session): the site built once by editions/lite/build.py (with .venv-lite) as
  `make lite` builds it, from the student edition (editions/release/build.py makes it in a
  temporary folder; in the student edition it is the repository itself), plus
  tests/lite/probe/, into build/lite-test/. A build whose inputs did not change is reused
  (fingerprints).
- ``lite_server`` (session): `python3 -m http.server` on 127.0.0.1 and a free port, serving
  that site; stopped by PID.
- ``lite_browser`` (module): Debian's chromium through Playwright, with every connection
  other than loopback sent to a recording proxy that refuses it.
- ``lite_page``: a fresh browser context whose requests to anything but the server are
  aborted and recorded (``lite_page.seen``); screenshot and records kept in
  tests/artifacts/ when the test fails.

Missing prerequisites (chromium, playwright, .venv-lite, npm) skip with the reason, except
under CI=true, where they fail, as does a failed build everywhere.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass

import pytest
from litesite import (
    ARTIFACTS,
    LITE_PYTHON,
    REPO,
    Build,
    BuildFailed,
    NetworkRecorder,
    build_site,
    chromium_args,
    find_chromium,
    guard_network,
    in_ci,
    screenshot,
    serve,
    stage_probe_content,
    student_edition,
)

from waits import PATIENCE, TEST_TIMEOUT, ms

TEST_SITE = REPO / "build" / "lite-test"


def require(reason: str):
    """Skip with ``reason``, or fail under CI=true (where nothing may be missing)."""
    if in_ci():
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(items):
    """The first test that uses the site pays for building it (a session fixture): every
    such test gets waits.TEST_TIMEOUT unless it says otherwise."""
    for item in items:
        if "lite_site" in getattr(item, "fixturenames", ()) and \
                item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@dataclass
class SiteBuild:
    build: Build
    content: object  # the staged content folder (a Path), kept for rebuild checks


@pytest.fixture(scope="session")
def lite_site(tmp_path_factory) -> SiteBuild:
    if not LITE_PYTHON.exists():
        require(f"{LITE_PYTHON.relative_to(REPO)} is missing: run `make lite-venv` "
                "(`make test` and `make lite` make it)")
    if shutil.which("npm") is None:
        require("npm is missing: the build takes Pyodide from the npm registry "
                "(Debian: apt-get install npm)")
    work = tmp_path_factory.mktemp("lite")
    try:
        course = student_edition(work / "release")
        content = stage_probe_content(work / "content", course)
        build = build_site(content, TEST_SITE)
    except BuildFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    return SiteBuild(build, content)


@pytest.fixture(scope="session")
def lite_server(lite_site):
    server = serve(lite_site.build.out)
    yield server
    server.stop()


@dataclass
class LiteBrowser:
    browser: object
    proxy: NetworkRecorder


@pytest.fixture(scope="module")
def lite_browser():
    """Module-scoped like tests/browser's: Playwright's sync API keeps an asyncio loop running
    in the main thread, which later asyncio.run() calls of other test modules must not see."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require("the playwright pip package is not installed: run `make venv`")
    executable = find_chromium()
    if executable is None:
        require("chromium not found ($CHROMIUM, `command -v chromium`, /usr/bin/chromium): "
                "run `make chromium` (Debian: apt-get install chromium); Playwright's own "
                "browser download cannot work here")
    with NetworkRecorder() as proxy, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=chromium_args(proxy.port),
                                    headless=True, timeout=ms(PATIENCE))
        yield LiteBrowser(browser, proxy)
        browser.close()


@dataclass
class LitePage:
    page: object
    url: str  # the site's origin, e.g. http://127.0.0.1:PORT
    seen: dict  # litesite.guard_network's records
    proxy: NetworkRecorder
    start: int  # proxy attempts before this test

    @property
    def proxy_attempts(self) -> list[str]:
        """Request lines that reached the recording proxy during this test."""
        return self.proxy.attempts[self.start:]


@pytest.fixture
def lite_page(lite_browser, lite_server, request):
    context = lite_browser.browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(ms(PATIENCE))
    seen = guard_network(context, lite_server.url)
    page = context.new_page()
    page.set_default_timeout(ms(PATIENCE))  # tests/waits.py says why
    lite = LitePage(page, lite_server.url, seen, lite_browser.proxy,
                    len(lite_browser.proxy.attempts))
    yield lite
    failed = any(getattr(getattr(request.node, f"rep_{when}", None), "failed", False)
                 for when in ("setup", "call"))
    if failed:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
        try:
            screenshot(page, f"{name}-FAILED")
        except Exception:
            pass
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        records = dict(seen, proxy=lite.proxy_attempts)
        records["local"] = len(records["local"])
        (ARTIFACTS / f"{name}-network.json").write_text(json.dumps(records, indent=1))
    context.close()
