"""A sandbox built ahead of its submission (grader/hosts/ahead.py), as the grading worker of a
warm helper builds one before the learner's files are known:

- it forks no server before its submission came, and its solution folder is empty until then;
- the learner's files written in afterwards reach its servers compiled once, unwritable and
  with their times given again right before each server (FreshTimes), in the root mode and in
  plain mode;
- it serves one grading and is spent with it; the next one built holds no file of the check
  before; one that cannot be built leaves nothing, and the check builds its own;
- a grading through it gives the same verdicts as one through a sandbox built for it;
- a warm helper that gets no command line grades nothing and leaves no sandbox running.
"""

import json
import os
import sys
import time

import pytest
from mutants import MUTANTS
from sandbox_probes import need_the_full_sandbox, reported

from grader import runner
from grader.hosts import ahead, kinds
from grader.hosts.sandbox import SandboxError
from grader.intake.solutions import Prepared
from grader.paths import REPO_DIR

sys.path.insert(0, os.path.join(REPO_DIR, "lessons"))
from mcp_ui import warm  # noqa: E402

BUG = next(m for m in MUTANTS if m.name == "compara_versiones_como_texto")  # loses a 3A test


@pytest.fixture(scope="module", autouse=True)
def root_on_linux():
    """These tests need the sandbox's root and plain modes; under CI=true their absence fails."""
    need_the_full_sandbox()


@pytest.fixture(params=["root", "plain"])
def built(request):
    """A sandbox built ahead in a new workspace, in each mode: (box, workspace)."""
    kind = kinds.SandboxKind()
    workspace = kind.new_workspace()
    box = ahead.SandboxAhead(os.path.join(workspace, "solution"), mode=request.param)
    os.mkdir(box.solution_dir, 0o755)
    os.chmod(box.solution_dir, 0o755)
    box.build()
    yield box, workspace
    box.close()
    kind.remove(workspace)


PROBE = r'''
import json, os, sys, time
from extension import Extension
extension = Extension()
report = {"now": time.time(), "ctime": os.stat(__file__).st_ctime,
          "compiled": sorted(sys.modules["extension"].COMPILED)}
def attempt(name, action):
    try:
        action()
        report[name] = "ok"
    except BaseException as exc:
        report[name] = type(exc).__name__
attempt("change_own_file", lambda: open(os.path.realpath(__file__), "a").write("# x"))
attempt("new_file_in_solution", lambda: open(os.path.join(os.path.dirname(
    os.path.realpath(__file__)), "otro.py"), "w"))
sys.stderr.write("PROBE " + json.dumps(report) + "\n")
sys.stderr.flush()
'''


def probe(box):
    """One test's server on the probe: what it reported."""
    return json.loads(reported(box, "PROBE "))


def hand_in(box, text=PROBE):
    """The worker's part once the command line came: the learner's files written in, then the
    zygote told (grader/runner.py through kinds.SandboxKind)."""
    prepared = Prepared("probe")
    prepared.files["probe.py"] = text
    kinds.SandboxKind().write(prepared, box.solution_dir)
    box.start()


def test_a_sandbox_built_ahead_forks_no_server_before_its_submission_came(built):
    box, _ = built
    assert os.listdir(box.solution_dir) == []
    with pytest.raises(SandboxError):
        box.spawn(["serve", "--solution", box.inner("solution")], (), box.identity())


def test_the_files_handed_in_later_are_compiled_once_and_the_learner_cannot_change_them(built):
    box, _ = built
    ahead._claimed[box.solution_dir] = box  # as a grading that claimed it: fill, not write
    try:
        hand_in(box)
    finally:
        ahead._claimed.pop(box.solution_dir, None)
    report = probe(box)
    assert report["compiled"] == [os.path.join(box.inner("solution"), "probe.py")]
    assert report["change_own_file"] != "ok" and report["new_file_in_solution"] != "ok"
    assert os.listdir(box.solution_dir) == ["probe.py"]


def test_the_files_handed_in_later_get_their_times_again_before_each_server(built):
    box, _ = built
    ahead._claimed[box.solution_dir] = box
    try:
        hand_in(box)
    finally:
        ahead._claimed.pop(box.solution_dir, None)
    path = os.path.join(box.solution_dir, "probe.py")
    written = os.stat(path).st_ctime_ns
    time.sleep(0.05)  # the clock that stamps a change time moves on (a tick or a few)
    first = probe(box)
    assert os.stat(path).st_ctime_ns > written  # held: its times given again at the spawn
    assert first["ctime"] * 1e9 > written
    again = os.stat(path).st_ctime_ns
    time.sleep(0.05)
    probe(box)
    assert os.stat(path).st_ctime_ns > again  # and again for the next server


def test_a_sandbox_built_ahead_takes_its_submission_once(built):
    box, _ = built
    box.start()  # an empty submission: nothing to compile, the template starts
    with pytest.raises(SandboxError):
        box.start()


@pytest.fixture
def opened(monkeypatch):
    """Every host a grading opened (kinds.SandboxKind.open), in order."""
    hosts = []
    original = kinds.SandboxKind.open

    def spy(self, solution_dir, workspace):
        host = original(self, solution_dir, workspace)
        hosts.append((host, workspace))
        return host

    monkeypatch.setattr(kinds.SandboxKind, "open", spy)
    yield hosts
    while (workspace := ahead.claim()) is not None:  # one a test left unused
        kinds.SandboxKind().remove(workspace)


def grade(folder):
    return runner.grade(str(folder), "soluciones", ["ejercicio3a"], tests="public",
                        host="sandbox")


def test_a_sandbox_built_ahead_serves_one_grading_and_the_next_holds_nothing_of_it(
        opened, tmp_path):
    folder = BUG.write(str(tmp_path / "soluciones"))
    kind = kinds.SandboxKind()
    kind.start_ahead()
    first = grade(folder)
    grade(folder)  # nothing built ahead for it: a sandbox of its own
    kind.start_ahead()
    [(used, used_workspace), (own, _)] = opened
    assert used.ahead and not own.ahead and first["score"] < first["max_score"]
    assert used.proc is None and not os.path.exists(used_workspace)  # spent
    workspace = ahead.claim()
    following = ahead.opened(workspace, os.path.join(workspace, "solution"))
    try:
        assert workspace != used_workspace and os.listdir(following.solution_dir) == []
        folders = set()
        assert following.data.snapshot(folders=folders) == {} and folders == set()
    finally:
        following.close()
        kind.remove(workspace)


def test_a_grading_through_a_sandbox_built_ahead_gives_the_same_verdicts(opened, tmp_path):
    folder = BUG.write(str(tmp_path / "soluciones"))
    kinds.SandboxKind().start_ahead()
    through_ahead = grade(folder)
    built_for_it = grade(folder)
    assert [host.ahead for host, _ in opened] == [True, False]

    def verdicts(result):
        return [(t["id"], t["score"], t["status"], t["output"]) for t in result["tests"]]

    assert (through_ahead["score"], through_ahead["protections"]) == \
        (built_for_it["score"], built_for_it["protections"])
    assert verdicts(through_ahead) == verdicts(built_for_it)


def started_by(pid, marker):
    """The live processes that process `pid` started with `marker` in their command line."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and any(marker in arg for arg in argv):
            found.append(int(entry))
    return found


def test_a_helper_that_got_no_line_grades_nothing_and_leaves_no_sandbox_running(monkeypatch):
    monkeypatch.setenv("GRADER_HOST", "sandbox")
    helper = warm.start()
    try:
        assert helper.stdout.readline() == warm.READY
        [worker] = started_by(helper.pid, b"grader.worker")
        zygotes = started_by(worker, b"zygote.py")
        assert zygotes  # its sandbox, built ahead
        helper.stdin.close()
        helper.wait(timeout=120)
        out = helper.stdout.read()
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait()
        helper.stdout.close()
        helper.stderr.close()
    assert helper.returncode == 0 and b"{" not in out
    deadline = time.monotonic() + 60
    while any(os.path.exists(f"/proc/{pid}") for pid in [worker, *zygotes]):
        assert time.monotonic() < deadline, "the helper's sandbox outlived it"
        time.sleep(0.05)



def test_a_sandbox_that_cannot_be_built_ahead_leaves_nothing_and_the_check_builds_its_own(
        opened, tmp_path, monkeypatch):
    made = []

    def refuse(self):
        made.append(os.path.dirname(self.solution_dir))
        raise SandboxError("no namespaces here")

    monkeypatch.setattr(ahead.SandboxAhead, "build", refuse)
    kinds.SandboxKind().start_ahead()
    assert made and not os.path.exists(made[0]) and ahead.claim() is None
    result = grade(BUG.write(str(tmp_path / "soluciones")))
    [(own, _)] = opened
    assert not own.ahead and 0 < result["score"] < result["max_score"]
