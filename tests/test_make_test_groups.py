"""`make test`'s runner (tools/run_tests.py): every test runs in exactly one group, and a
group's processes never outlive it, whether pytest ends or is interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import run_tests  # noqa: E402

# A command that leaves a sleeper behind in a session of its own (as a server started with
# start_new_session does), prints its PID, then sleeps itself unless told to exit.
LEAVE_A_SLEEPER = """
import subprocess, sys, time
sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                           start_new_session=True)
print(sleeper.pid, flush=True)
if sys.argv[1] == "stay":
    time.sleep(300)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def reaper(how: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(REPO / "tools" / "run_tests.py"), "--reap", "--",
                             sys.executable, "-c", LEAVE_A_SLEEPER, how],
                            stdout=subprocess.PIPE, text=True)


def test_every_test_file_runs_in_exactly_one_group_or_is_shared_out_in_parts():
    groups, _ = run_tests.plan()
    files = [p for p in (REPO / "tests").rglob("test_*.py") if "node_modules" not in p.parts]
    assert files
    for path in files:
        rel = str(path.relative_to(REPO))
        owners = [g for g in groups
                  if any(rel == p or rel.startswith(p + "/") for p in g.paths)
                  and not any(rel == i or rel.startswith(i + "/") for i in g.ignore)]
        assert len(owners) == 1 or (owners and all(g.part for g in owners)), \
            f"{rel} runs in {[g.name for g in owners] or 'no group'}"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the reaper finds descendants in /proc")
def test_a_process_that_outlives_pytest_is_listed_and_killed():
    proc = reaper("exit")
    out, _ = proc.communicate(timeout=60)
    sleeper = int(out.split()[0])
    assert proc.returncode == 0
    assert run_tests.LEFTOVER in out and f"{sleeper} " in out
    assert not alive(sleeper)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the reaper finds descendants in /proc")
def test_a_sigterm_interrupts_pytest_and_kills_what_it_left_by_pid():
    proc = reaper("stay")
    sleeper = int(proc.stdout.readline())
    child = run_tests.descendants(proc.pid)[0]
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode != 0  # the command got SIGINT: KeyboardInterrupt
    deadline = time.monotonic() + 5
    while (alive(child) or alive(sleeper)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child) and not alive(sleeper)


def test_the_summary_counts_come_from_pytests_last_line_and_failures_are_shown_whole():
    log = "\n".join([
        "collected 3 items", "", "=" * 10 + " FAILURES " + "=" * 10, "___ test_x ___",
        "E   assert 1 == 2", "=" * 10 + " short test summary info " + "=" * 10,
        "FAILED tests/a/test_x.py::test_x - assert 1 == 2",
        "=" * 10 + " 1 failed, 2 passed, 1 error in 3.21s " + "=" * 10])
    line, found = run_tests.counts(log)
    assert line == "1 failed, 2 passed, 1 error"
    assert found == {"failed": 1, "passed": 2, "errors": 1}
    shown = run_tests.failures(log)
    assert shown.startswith("=" * 10 + " FAILURES") and "E   assert 1 == 2" in shown
    assert "FAILED tests/a/test_x.py::test_x" in shown
