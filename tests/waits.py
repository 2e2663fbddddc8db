"""How long the browser journeys wait, and why: the one home of every bound that tests/browser
and tests/lite put on a wait.

A journey waits for a state, never for a stretch of time: the status bar's "Idle", a cell's
execution count, a dialog whose buttons are enabled, the setup page's answer, the call's last
line. A bound only decides when a state that is not coming gets reported, as the locator that
waited for it (with a screenshot), rather than as pytest-timeout's stack dump. Two kinds of
bound, and no other number:

- The lab's own timeouts, where the server decides what the notebook shows next. After a
  consent, the call waits `SETUP_WAIT` seconds for the setup page (the default setup_wait of
  `NotesLab.connect`, `server.MAX_SETUP_WAIT`); a page answered later leaves the call pending,
  which is correct, but is not the journey the notebook describes. So the steps from the consent
  click to the page's answer share that one deadline (`Deadline`), and running out of it says
  so. A notebook's cells that wait on purpose (03's late consent, `setup_wait=3`; 02's client
  timeout, `cancel_after=2`) add their seconds to the waits that span them (the run's end, the
  next dialog): `deliberate_waits` reads them from the notebook itself.
- `PATIENCE`, for a state whose arrival depends only on how fast the machine is: a server or a
  kernel starting, Pyodide booting, cells running up to a dialog, a click's echo in the page.
  It is a hang detector, not an estimate of speed: a state that has not come after PATIENCE is
  taken as never coming. Alone on the 2-core machine the project is tested on, the slowest of
  these (Pyodide booting to an idle kernel) takes 12-13 s, JupyterLab's kernel 5 s; PATIENCE is
  over 15 times that. `make stress` (tools/stress.py: two CPU burners on those two cores, with
  other jobs running, load average 11-27) passed 3 rounds of both editions' suites with it.
  `TEST_TIMEOUT`, pytest-timeout's limit for one browser test, leaves room for the journey
  running slowly plus one PATIENCE for the wait that never ends.

Deliberate simplifications: one PATIENCE for every machine-bound state (a click's echo gets as
long as Pyodide's boot), since a hang detector only needs to be long enough, and a failing
journey costs PATIENCE once.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for folder in (REPO / "code", REPO / "lessons"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from mcp_ui.lab import NotesLab  # noqa: E402

PATIENCE = 240.0  # seconds; see the module's docstring
TEST_TIMEOUT = 900  # seconds; pytest-timeout's limit for one browser test
SETUP_WAIT = inspect.signature(NotesLab.connect).parameters["setup_wait"].default
# keyword arguments of the lab that make a cell wait that many seconds on purpose
DELIBERATE = ("setup_wait", "cancel_after")


def ms(seconds: float) -> float:
    """Playwright's unit."""
    return seconds * 1000.0


class Deadline:
    """A point in time several waits share, e.g. the server's setup_wait after a consent::

        with Deadline(SETUP_WAIT, "the page was not answered in the call's setup_wait") as d:
            link.click(timeout=d.ms()); ...

    A wait that fails once it is over (Playwright's TimeoutError, or an `expect` given what
    was left), or a step that starts after it, fails as an AssertionError saying which
    deadline it was."""

    def __init__(self, seconds: float, what: str):
        self.seconds, self.what = seconds, what
        self.start = time.monotonic()

    def left(self) -> float:
        """Seconds left; AssertionError saying what ran out when none are."""
        left = self.start + self.seconds - time.monotonic()
        assert left > 0, f"{self.what} ({self.seconds:g} s)"
        return left

    def ms(self) -> float:
        return ms(self.left())

    def __enter__(self) -> Deadline:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        spent = time.monotonic() - self.start
        if kind is not None and (kind.__name__ == "TimeoutError" or spent >= self.seconds):
            raise AssertionError(f"{self.what} ({self.seconds:g} s; {spent:.0f} s spent)") \
                from error


def deliberate_waits(notebook: Path) -> float:
    """Seconds the notebook's cells wait on purpose: the sum of every `setup_wait=` and
    `cancel_after=` its code passes as a constant."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    total = 0.0
    for cell in cells:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] != "code" or source.lstrip().startswith(("%", "!")):
            continue
        tree = compile(source, "<cell>", "exec",
                       flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        for node in ast.walk(tree):
            for keyword in getattr(node, "keywords", ()) if isinstance(node, ast.Call) else ():
                if keyword.arg in DELIBERATE and isinstance(keyword.value, ast.Constant):
                    total += float(keyword.value.value)
    return total


CURRENT_TAB = "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel"


def wait_until_current(page, path: str, timeout: float) -> None:
    """Until the main area's current tab is the document ``path`` (JupyterLab and JupyterLite).
    Opening a notebook by URL first restores the tabs the workspace left open (a learner's
    earlier notebooks) and only then opens ``path``: on a busy machine one of those is current,
    with an idle kernel, in between, and the status bar's "Idle" speaks of the current tab."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    label = re.compile(rf"^\s*{re.escape(name)}\s*$")
    page.locator(CURRENT_TAB).filter(has_text=label).first.wait_for(state="visible",
                                                                     timeout=timeout)
