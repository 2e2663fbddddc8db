"""Fixtures of the real-hub test: tests/browser's browser and page (Debian chromium through
Playwright, the same CI=true rule: a missing tool fails there instead of skipping), and one
JupyterHub for the module (hub.py), stopped by PID afterwards; its log is kept in
tests/artifacts/ when a test of the module failed."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for _folder in (HERE.parent, HERE.parent / "browser"):  # waits.py, lab.py, journeys.py
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
_spec = importlib.util.spec_from_file_location("browser_conftest",
                                               HERE.parent / "browser" / "conftest.py")
_browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_browser)

browser = _browser.browser
page = _browser.page
pytest_make_collect_report = _browser.pytest_make_collect_report
pytest_runtest_makereport = _browser.pytest_runtest_makereport
missing = _browser._missing
IN_CI = _browser.IN_CI

from hub import (  # noqa: E402
    MISSING_PROXY,
    PROXY,
    binder_env,
    can_make_users,
    start_hub,
    stop_hub,
)
from lab import ARTIFACTS  # noqa: E402


@pytest.fixture(scope="module")
def hub(request, tmp_path_factory):
    """A JupyterHub on 127.0.0.1 with two learners, ana and beto, each with the course in
    ~/curso, their servers from the Binder environment (binder/)."""
    if not os.access(PROXY, os.X_OK):
        missing(MISSING_PROXY)
    failed_before = request.session.testsfailed
    running = start_hub(tmp_path_factory.mktemp("hub"), binder_env())
    yield running
    stop_hub(running)
    if request.session.testsfailed > failed_before:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "hub.log").write_text(running.log())


@pytest.fixture(scope="module")
def other_user():
    """A system user of the hub's machine who is none of the hub's learners."""
    from hub import OtherUser

    why = can_make_users()
    if why:
        missing(why)
    user = OtherUser()
    yield user
    user.remove()
