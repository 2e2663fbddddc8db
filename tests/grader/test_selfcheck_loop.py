"""The learner's check loop: `ui.revisar` runs each check after the first in a grader helper
started ahead (lessons/mcp_ui/warm.py, grader/warm.py), and nothing of one check reaches the next.

- a warm check gives the same verdicts, scores and feedback as a cold one;
- a learner's edit between two checks is seen by the second;
- a helper serves one check and is spent: the next check gets a new one, started after the check
  before it was over, and so does the sandbox's grading worker the helper starts ahead; a
  helper started for another setting (GRADER_HOST) is not used;
- a helper whose kernel goes away exits without grading anything;
- on the portable host without a fork server (Windows), the server started ahead for the next
  test ends with its host (tests/grader/test_portable_fork_server.py: with one).
"""

import os
import shutil
import subprocess
import sys
import time

import pytest
from mutants import MUTANTS, REFERENCE

from grader.hosts import kinds
from grader.paths import REPO_DIR

sys.path.insert(0, os.path.join(REPO_DIR, "lessons"))
from mcp_ui import review, warm  # noqa: E402

EXERCISE = "ejercicio3a"
BUG = next(m for m in MUTANTS if m.name == "compara_versiones_como_texto")  # loses a 3A test


def verdicts(result):
    return [(t["id"], t["name"], t["score"], t["status"], t["output"]) for t in result.tests]


@pytest.fixture
def loop(monkeypatch):
    """A learner's kernel: revisar runs the grader as a process, no helper kept yet."""
    monkeypatch.setattr(review, "runner", review.grader_process)
    warm.discard()
    yield
    warm.discard()


@pytest.fixture
def solutions(tmp_path):
    folder = tmp_path / "soluciones"
    shutil.copytree(REFERENCE, folder)
    return folder


def checked_in_the_ready_helper(folder):
    """revisar once the helper kept for it is warm (a learner editing meanwhile): the review,
    and the helper that ran it."""
    helper = warm.kept()
    assert helper is not None and warm.wait_ready(120)
    result = review.revisar(EXERCISE, folder)
    assert helper.returncode is not None, "the check did not run in the ready helper"
    return result, helper


def test_a_warm_check_gives_the_same_result_as_a_cold_one(loop, tmp_path):
    folder = BUG.write(str(tmp_path / "soluciones"))
    cold = review.revisar(EXERCISE, folder)  # the first check: a new grader process
    warm_result, _ = checked_in_the_ready_helper(folder)
    assert cold.problem is None and warm_result.problem is None
    assert cold.score < cold.max_score  # the bug loses a test: there is feedback to compare
    assert (warm_result.score, warm_result.max_score, warm_result.mode) == \
        (cold.score, cold.max_score, cold.mode)
    assert verdicts(warm_result) == verdicts(cold)
    assert (warm_result.notice, warm_result.off) == (cold.notice, cold.off)


def test_a_learner_edit_between_two_checks_is_seen(loop, solutions):
    first = review.revisar(EXERCISE, solutions)
    assert first.score == first.max_score
    BUG.write(str(solutions.parent / "con-fallo"))
    shutil.copy(solutions.parent / "con-fallo" / BUG.file, solutions / BUG.file)  # saved
    second, _ = checked_in_the_ready_helper(solutions)
    assert second.score < second.max_score
    shutil.copy(os.path.join(REFERENCE, BUG.file), solutions / BUG.file)  # fixed again
    third, _ = checked_in_the_ready_helper(solutions)
    assert third.score == third.max_score


def test_a_helper_serves_one_check_and_the_next_check_gets_a_new_one(loop, solutions):
    review.revisar(EXERCISE, solutions)
    _, used = checked_in_the_ready_helper(solutions)
    following = warm.kept()
    assert used.poll() is not None  # spent: it exited with its check
    assert following is not None and following.pid != used.pid and following.poll() is None
    _, used_next = checked_in_the_ready_helper(solutions)
    assert used_next is following and warm.kept() not in (used, following)


def workers_of(pid):
    """The grading workers (grader/pool.py) that process `pid` started: their pids."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if b"grader.worker" in argv and str(pid).encode() in argv:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not kinds.sandbox_possible(), reason="the sandbox runs on Linux only")
def test_the_sandbox_worker_started_ahead_serves_its_helpers_check_and_ends_with_it(
        loop, solutions):
    review.revisar(EXERCISE, solutions)
    helper = warm.kept()
    assert warm.wait_ready(120)
    [worker] = workers_of(helper.pid)  # warm, waiting for its one job
    result, used = checked_in_the_ready_helper(solutions)
    assert used is helper and result.score == result.max_score and result.mode == "root"
    deadline = time.monotonic() + 120
    while os.path.exists(f"/proc/{worker}") and _alive(worker):
        assert time.monotonic() < deadline, "the worker outlived its check"
        time.sleep(0.05)
    assert worker not in workers_of(warm.kept().pid)  # the next helper has a worker of its own


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_helper_started_for_another_setting_is_ended_not_used(loop, solutions, monkeypatch):
    review.revisar(EXERCISE, solutions)
    helper = warm.kept()
    assert helper is not None and warm.wait_ready(120)
    monkeypatch.setenv("GRADER_HOST", "portable")
    result = review.revisar(EXERCISE, solutions)
    assert result.mode == "portable"  # run cold, in the setting asked for
    assert helper.returncode is not None and helper.returncode != 0  # ended, unused
    assert warm.kept() is not helper


def test_a_helper_exits_without_grading_when_its_kernel_goes_away():
    helper = warm.start()
    helper.stdin.close()
    try:
        helper.wait(timeout=120)
    except subprocess.TimeoutExpired:
        helper.kill()
        raise
    finally:
        out = helper.stdout.read()
        helper.stdout.close()
        helper.stderr.close()
    assert helper.returncode == 0 and b"{" not in out


def test_no_portable_server_outlives_its_host_the_one_started_ahead_included(tmp_path):
    from grader.hosts.portable import PortableHost
    workspace = tmp_path / "ws"
    workspace.mkdir()
    host = PortableHost(REFERENCE, str(workspace), fork_server=False).start()  # Windows' way
    argv = ["serve", "--solution", os.path.join(REFERENCE, "ejercicio2.py")]
    first, second = host.spawn(argv), host.spawn(argv)
    ahead = host._spare[1]  # started for the next test, waiting for its options
    assert len({first.pid, second.pid, ahead.pid}) == 3 and ahead.status() is None
    host.close()
    assert all(p.status(wait=30.0) is not None for p in (first, second, ahead))
