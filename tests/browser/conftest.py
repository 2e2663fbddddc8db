"""Pytest fixtures for real-browser tests of the lessons (see lab.py for the helpers).

    def test_journey(jupyter_lab, page, tmp_path):
        lab = jupyter_lab(tmp_path)           # -> lab.Lab, stopped after the test
                                              # (module_jupyter_lab: one for the module)
        open_notebook(page, lab, "x.ipynb")
        run_all(page)
        screenshot(page, "journey-done")

Tests skip with a clear message when chromium, playwright or jupyterlab is missing; under
`CI=true` the same message fails them instead (a browser module skipped at import fails too),
so that CI cannot stay green without having run them. On failure, a screenshot and the
JupyterLab server log are written to tests/artifacts/.

`from lab import ...` works because pytest (default "prepend" import mode) puts this
folder on sys.path; keep tests/ and tests/browser/ free of __init__.py for that reason.
"""

from __future__ import annotations

import importlib
import os
import re

import pytest

from lab import ARTIFACTS, CHROMIUM_ARGS, MISSING_CHROMIUM, find_chromium, screenshot, start_lab
from lab import stop_lab as _stop_lab
from waits import PATIENCE, ms

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _missing(reason: str):
    """Skip because a browser tool is missing; under CI=true, fail with the same reason."""
    if IN_CI:
        pytest.fail(f"CI=true, so this is a failure, not a skip: {reason}", pytrace=False)
    pytest.skip(reason)


def _require(module: str, reason: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        _missing(reason)


class MissingBrowserTool(pytest.Item):
    """Stands in, under CI=true, for a browser test module that skipped itself at import."""

    def __init__(self, *, reason, **kwargs):
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self):
        _missing(self.reason)

    def reportinfo(self):
        return self.path, None, self.name


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """Under CI=true a browser test module skipped at import (`pytest.importorskip`) yields one
    failing test instead (the rest of the run goes on)."""
    report = yield
    if IN_CI and report.skipped and isinstance(collector, pytest.Module):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "passed"
        report.longrepr = None
        report.result = [MissingBrowserTool.from_parent(
            collector, name="browser_tools_are_installed",
            reason=str(reason).removeprefix("Skipped: "))]
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)  # lets fixtures see if the test failed
    return report


def _failed(request) -> bool:
    return any(getattr(getattr(request.node, f"rep_{when}", None), "failed", False)
               for when in ("setup", "call"))


def _artifact_name(request, suffix: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{request.node.name}-{suffix}")


def _labs(failed, log_name):
    """Start JupyterLab servers on demand; stop them all afterwards, keeping their logs in
    tests/artifacts/ when `failed()` says something went wrong."""
    _require("jupyterlab", "jupyterlab is not installed: run `make venv`")
    labs = []

    def start(root_dir, **kwargs):
        lab = start_lab(root_dir, **kwargs)
        labs.append(lab)
        return lab

    yield start
    for lab in labs:
        if failed():
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / log_name(lab)).write_text(lab.log())
        _stop_lab(lab)


@pytest.fixture
def jupyter_lab(request):
    """Factory: ``jupyter_lab(root_dir) -> Lab``. Every server started is stopped after the test."""
    yield from _labs(lambda: _failed(request),
                     lambda lab: _artifact_name(request, f"jupyter-{lab.port}") + ".log")


@pytest.fixture(scope="module")
def module_jupyter_lab(request):
    """Like ``jupyter_lab``, but every server started lives until the module ends, so its
    tests share it (each test should end its own kernels: ``lab.shutdown_kernels()``).
    If any test of the module failed, the server log is kept in tests/artifacts/."""
    failed_before = request.session.testsfailed
    module = request.module.__name__.rpartition(".")[2]
    yield from _labs(lambda: request.session.testsfailed > failed_before,
                     lambda lab: f"{module}-jupyter-{lab.port}.log")


@pytest.fixture(scope="module")
def browser():
    """A headless Playwright chromium Browser using the Debian chromium binary.

    Module-scoped on purpose: while Playwright's sync API runs, the main thread has a running
    asyncio loop, so every later `asyncio.run()` / `anyio.run()` in the same pytest process
    (the SDK and UI tests) would fail with "cannot be called from a running event loop".
    Launching chromium again per module costs well under a second.
    """
    sync_api = _require("playwright.sync_api",
                        "the playwright pip package is not installed: run `make venv`")
    executable = find_chromium()
    if executable is None:
        _missing(MISSING_CHROMIUM)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS,
                                    headless=True, timeout=ms(PATIENCE))
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    """A fresh page (own browser context, 1400x900). Screenshot saved if the test fails.
    Its actions and waits are bounded by waits.PATIENCE unless they say otherwise."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(ms(PATIENCE))  # e.g. context.expect_page()
    page = context.new_page()
    page.set_default_timeout(ms(PATIENCE))
    yield page
    if _failed(request):
        try:
            screenshot(page, _artifact_name(request, "FAILED"))
        except Exception:
            pass
    context.close()
