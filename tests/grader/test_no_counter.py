"""A server cannot tell which test is running: no counter survives from one test to the next.

Each submission here is graded the way a worker grades one (grader.runner.grade), once with
the public tests (what ui.revisar runs) and once with all of them (official grading), by the
grader of a throw-away copy of the repository under a throw-away venv
(tests/grader/throwaway.py), in the root mode, in a user namespace (the mode of a grader that is
not root, forced with GRADER_SANDBOX=userns) and in plain mode (namespaces refused, as on
Gradescope: tests/grader/nonamespaces.py). A small driver in the copy keeps every server the
sandbox forks, with the options its test gave it, and prints what each wrote on its stderr.

- The recorder (tests/grader/positions.py) writes what each of its servers sees: every server
  of one exercise file sees the same pid, parent, parent's CPU and memory counters, /proc,
  folders, file times and heap, in both runs, except what the mode lists under
  `counters_visible` (plain mode: the machine's pids); the heap is the same for every server
  given the same options in one run (the run's random names change it between runs).
- The fresh uid of each test never follows the tests' order.
- Twelve servers with the same options, one after another, see the same heap, and (with a PID
  namespace) the same pid and parent, the first as every later one.
- A submission that stops archiving once a pid passes a threshold keeps the same share of the
  public and of the hidden points, in the self-check and in official grading.

`GRADER_UNDER_TEST=/some/checkout` grades with that checkout's code/ and grader/ instead (to
see these tests fail on a grader that lets servers count; only ever from a throw-away clone).
"""

import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest
from positions import AGES, COUNTERS, pid_threshold, recorder, seen
from throwaway import copy_repository, make_venv

from grader.boundary import remove_tree
from grader.paths import REPO_DIR

pytestmark = pytest.mark.timeout(900)
MODES = ("root", "userns", "plain")
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nonamespaces.py")
# What each name of `counters_visible` leaves open, among the recorder's values.
OPEN = {"pids": ("pid", "ppid", "pgid", "sid", "pid_minus_ppid"),
        "proc": ("parent_stat", "grandparent_stat", "self_stat", "proc", "uptime"),
        "kernel_object_numbers": ("stdio_inodes", "made_inodes")}
# Set once per sandbox (its random group, its interpreter's start, the run's random names):
# the same for every server of one run given the same options, not across runs.
PER_RUN = ("gid", "heap")
DRIVER = r'''
import json
import sys

from grader import runner
from grader.hosts import sandbox

servers = []
spawn = sandbox.Sandbox.spawn


def keep(self, argv, private=(), identity=None):
    server = spawn(self, argv, private, identity)
    servers.append((server, list(private), identity))
    return server


sandbox.Sandbox.spawn = keep
only = sys.argv[3:] or None
result = runner.grade(sys.argv[1], "s", only, runner.SUBMISSION_BUDGET, sys.argv[2], "sandbox")
print(json.dumps({"result": result, "servers": [
    {"stderr": server.stderr().splitlines(), "private": private, "identity": identity}
    for server, private, identity in servers]}))
'''


# Twelve servers with the same options, one after another, each in a test of its own (a folder
# made for it in the data area with a note in it, given as its root), each stopped and its test
# released: what each sees of its heap, pid and parent (the first is no exception), and the
# inode numbers of its folder and note (with the file system's device).
SERVERS = r'''
import json
import os
import secrets
import sys
import tempfile
import time

from grader.hosts.sandbox import Sandbox

PROBE = "\n".join([
    "import gc, os, sys, time",
    "heap = None",
    "for _ in range(100):  # once the server's own threads are idle: two looks that agree",
    "    looked = [sys.getallocatedblocks(), len(gc.get_objects())]",
    "    if looked == heap:",
    "        break",
    "    heap = looked",
    "    time.sleep(0.02)",
    "frame, root = sys._getframe(), None",
    "while frame is not None and root is None:",
    "    private = frame.f_locals.get('private')",
    "    if isinstance(private, list) and '--root' in private:",
    "        root = private[private.index('--root') + 1]",
    "    frame = frame.f_back",
    "stats = [os.stat(os.path.join(root, name)) for name in ('', 'Notas', 'Notas/a.md')]",
    "inodes = [[info.st_ino, info.st_dev] for info in stats]",
    "sys.stderr.write('SEEN ' + repr(heap + [os.getpid(), os.getppid(), inodes]) + '\\n')",
    ""])

folder = tempfile.mkdtemp()
os.chmod(folder, 0o755)
with open(os.path.join(folder, "probe.py"), "w") as handle:
    handle.write(PROBE)
os.chmod(os.path.join(folder, "probe.py"), 0o644)
box = Sandbox(folder, mode=sys.argv[1] if len(sys.argv) > 1 else None).start()
seen = []
for _ in range(12):
    identity = box.identity()
    name = secrets.token_hex(8)
    tree = box.data.make_dir(name, owner=identity, private=True)
    notes = tree.make_dir("Notas")
    notes.write_file("a.md", b"# a\n")
    server = box.spawn(["serve", "--solution", box.inner("solution")],
                       ["--root", box.inner("data") + "/" + name], identity)
    deadline = time.monotonic() + 30
    while "SEEN " not in server.stderr() and time.monotonic() < deadline:
        time.sleep(0.02)
    seen.append(server.stderr().split("SEEN ", 1)[1].splitlines()[0])
    server.stop()
    box.release(identity)
    notes.close()
    tree.close()
    box.data.remove(name)
box.close()
print(json.dumps({"mode": box.mode, "seen": seen,
                  "visible": box.protections()["counters_visible"]}))
'''


@pytest.fixture(scope="module", params=MODES)
def world(request, tmp_path_factory):
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        message = "needs root on Linux (the sandbox's root and plain modes)"
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: " + message)
        pytest.skip(message)
    base = tmp_path_factory.mktemp("posicion-" + request.param)  # 0700
    copy = copy_repository(os.environ.get("GRADER_UNDER_TEST", REPO_DIR), str(base / "copia"))
    for name, text in (("driver.py", DRIVER), ("servers.py", SERVERS)):
        with open(os.path.join(copy, name), "w") as handle:
            handle.write(text)
    world = {"base": base, "copy": copy, "python": make_venv(str(base / "venv")),
             "mode": request.param}
    yield world
    remove_tree(str(base))


def run_in_copy(world, *argv):
    """What a script of the copy prints (JSON), run under the throw-away venv, in plain mode
    as a container that refuses namespaces would run it."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "GRADER_UID_RANGE": f"{1 << 24}:4096"}  # a narrowed range: every uid in it tried
    if world["mode"] == "userns":  # as a grader that is not root grades (a user namespace)
        env["GRADER_SANDBOX"] = "userns"
    launcher = [sys.executable, LAUNCHER] if world["mode"] == "plain" else []
    run = subprocess.run([*launcher, world["python"], *argv], cwd=world["copy"], env=env,
                         capture_output=True, timeout=600)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    return json.loads(run.stdout)


def grade(world, submission, tests, *only):
    """{"result": the report, "servers": [{"stderr", "private", "identity"}]}."""
    graded = run_in_copy(world, "driver.py", submission, tests, *only)
    assert graded["result"]["protections"]["mode"] == world["mode"]
    return graded


@pytest.fixture(scope="module")
def recorded(world):
    submission = recorder(str(world["base"] / "registra"))
    return {tests: grade(world, submission, tests) for tests in ("public", "all")}


def views(graded):
    """Every server's record, with the file that wrote it and its test's options."""
    found = []
    for server in graded["servers"]:
        for record in seen(server["stderr"]):
            file = next(path for path in record["times"] if path.endswith(".py"))
            found.append({**record, "file": os.path.basename(file),
                          "private": server["private"], "identity": server["identity"]})
    return found


def closed(graded):
    """The recorder's counters this mode promises to close (without a private filesystem, the
    system's own folders are the machine's, changed by whoever uses it)."""
    protections = graded["result"]["protections"]
    left_open = {name for channel in protections["counters_visible"]
                 for name in OPEN.get(channel, ())}
    if not protections["private_filesystem"]:  # their age: the clock's, shifted by the machine
        left_open.update(("system_times", "system_ages", "system_births"))
    return [name for name in COUNTERS + AGES if name not in left_open]


def test_the_recorder_is_graded_as_the_reference_and_every_server_recorded(recorded):
    for graded in recorded.values():
        result = graded["result"]
        assert result["score"] == result["max_score"], \
            [(t["id"], t["output"]) for t in result["tests"] if t["score"] != t["max_score"]]
        # a server can be ended before its solution loaded: on a busy machine a server that
        # missed a deadline gets the sandbox swept, which ends the servers of the tests that
        # wait too (they start again from the beginning, grader/checks/later.py)
        silent = [server["stderr"][-600:] for server in graded["servers"]
                  if not seen(server["stderr"])]
        assert len(graded["servers"]) - len(silent) >= 50
        assert len(silent) <= len(graded["servers"]) // 10, silent


def test_every_server_sees_the_same_whatever_ran_before_it_in_the_self_check_and_officially(
        recorded):
    values = defaultdict(set)  # (file, counter) -> what its servers saw, in both runs
    for graded in recorded.values():
        names = [name for name in closed(graded) if name not in PER_RUN + AGES]
        for view in views(graded):
            for name in names:
                values[view["file"], name].add(same_folders(view, view[name]))
    differ = {key: sorted(seen)[:3] for key, seen in values.items() if len(seen) > 1}
    assert not differ, differ


def test_what_a_server_was_given_changed_last_when_that_server_started(recorded):
    """A file's change time, against the clock, must not say how long the grading has run:
    between the first server and the last the clock moves by the whole grading, and the age of
    everything a server was given by no more than a server's start."""
    spans = {}
    for run, graded in recorded.items():
        seen_views = views(graded)
        span = max(v["monotonic"] for v in seen_views) - min(v["monotonic"] for v in seen_views)
        spans[run] = span
        for name in [name for name in closed(graded) if name in AGES]:
            ages = defaultdict(list)  # a path -> its age as each server saw it
            for view in seen_views:
                for path, age in view[name].items():
                    ages[path].append(age)
            assert ages
            for path, seen_ages in ages.items():
                assert all(isinstance(age, float) for age in seen_ages), (path, seen_ages[:5])
                assert max(seen_ages) - min(seen_ages) < 1 + span / 4, (name, path, seen_ages)
    # Long enough for a counter to show (ages spread over the whole span) in one run at least:
    # the run of every test waits on the clock for its expiry tests; the public one may not.
    assert max(spans.values()) > 3, spans


def same_folders(view, value):
    """`value` as JSON, the run's own folders named alike (plain mode's have random names)."""
    text = json.dumps(value, sort_keys=True)
    for folder, name in ((os.path.dirname(view["cwd"]), "<trabajo>"),
                         (os.path.dirname(view["folder"]), "<entrega>"),
                         (os.path.dirname(view["code"]), "<codigo>")):
        text = text.replace(json.dumps(folder)[1:-1], name)
    return text


def test_a_servers_heap_is_the_same_for_the_same_options_however_many_servers_came_before(
        recorded):
    for graded in recorded.values():
        heaps = defaultdict(set)
        for view in views(graded):
            for name in PER_RUN:
                heaps[view["file"], json.dumps(view["private"]), name].add(
                    json.dumps(view[name]))
        assert max(len(group) for group in heaps.values()) == 1, \
            {key: seen for key, seen in heaps.items() if len(seen) > 1}


def test_where_counters_are_left_open_the_protections_say_so(recorded):
    for graded in recorded.values():
        protections = graded["result"]["protections"]
        visible = protections["counters_visible"]
        assert ("pids" in visible) == (not protections["pid_namespace_per_server"])
        assert ("proc" in visible) == (protections["mode"] == "plain"
                                       and not protections["landlock"])
        if "pids" in visible:  # what is listed is what a server really sees change
            assert len({view["pid"] for view in views(graded)}) > 1
        if "kernel_object_numbers" in visible:
            assert len({json.dumps(view["stdio_inodes"]) for view in views(graded)}) > 1


def test_the_uid_of_each_test_does_not_follow_the_order_of_the_tests(recorded, world):
    if world["mode"] == "userns":  # one uid for every test, the grader's own (no private uids)
        for graded in recorded.values():
            assert not graded["result"]["protections"]["unprivileged_uid"]
            assert {server["identity"] for server in graded["servers"]} == {None}
        return
    for graded in recorded.values():
        uids = list(dict.fromkeys(server["identity"] for server in graded["servers"]
                                  if server["identity"] is not None))
        assert len(uids) >= 20
        assert uids != sorted(uids) and uids != sorted(uids, reverse=True)


@pytest.mark.parametrize("tests", ["public", "all"])
def test_a_submission_that_stops_after_a_pid_threshold_scores_alike_in_public_and_hidden_tests(
        world, tests):
    graded = grade(world, pid_threshold(str(world["base"] / f"umbral-{tests}")), tests,
                   "ejercicio2")
    tests_seen = graded["result"]["tests"]
    share = {}
    for hidden in (False, True):
        mine = [t for t in tests_seen if t["hidden"] == hidden and t["max_score"]]
        if mine:
            share[hidden] = sum(t["score"] for t in mine) / sum(t["max_score"] for t in mine)
    assert share[False] in (0, 1), share  # all or nothing: no test is told from another
    assert len(set(share.values())) == 1, share


@pytest.fixture(scope="module")
def twelve(world):
    """servers.py's run in the world's mode."""
    return {world["mode"]: run_in_copy(world, "servers.py", world["mode"])}


def test_the_first_server_and_every_later_one_see_the_same_heap_pid_and_parent(twelve):
    for mode, ran in twelve.items():
        assert ran["mode"] == mode
        heaps = {tuple(json.loads(seen)[:2]) for seen in ran["seen"]}
        assert len(ran["seen"]) == 12 and len(heaps) == 1, (mode, ran["seen"])
        if mode != "plain":
            assert {tuple(json.loads(seen)[2:4]) for seen in ran["seen"]} == {(2, 1)}, mode


def test_every_tests_folder_and_note_get_the_same_inode_numbers_the_first_as_every_later_one(
        twelve):
    """A file system numbers what it makes in order: each test's folder is one of its own
    (grader/hosts/volumes.py) where the mode can mount; plain mode lists the numbers."""
    for mode, ran in twelve.items():
        # the numbers only: the device is the kernel's lowest free one, given back when a test's
        # file system is unmounted, and moved by whatever else the machine mounts meanwhile
        inodes = [json.dumps([ino for ino, _ in json.loads(seen)[4]]) for seen in ran["seen"]]
        assert len(inodes) == 12
        if mode == "plain":  # the machine's file system: some reuse a freed number, some not
            assert "inode_numbers" in ran["visible"]
        else:
            assert "inode_numbers" not in ran["visible"], mode
            assert len(set(inodes)) == 1, (mode, inodes)
