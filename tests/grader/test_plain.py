"""Plain mode (no namespaces) keeps its promises, piece by piece; what it cannot keep, it refuses.

The hostile catalogue (test_hostile.py) attacks plain mode as a whole, the way a container runs
it. Here each promise of grader/README.md's *Plain mode* is checked on its own: a uid a live
process has is never handed out; every process of a uid dies, daemons in new sessions
included; what a uid left in the shared temp folders goes, without following links; learner
code in a plain sandbox has no socket, no System V IPC, a private TMPDIR, a solution it cannot
change and (where the kernel offers Landlock) nothing outside its folders; and the check before
grading refuses what other users could read or prepare. These tests need root (a private uid).
"""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader import cli, pool
from grader.hosts import kinds, plainmode, reaper, uids
from grader.hosts.sandbox import Sandbox, plan
from grader.paths import REFERENCE_DIR

REFERENCE = os.path.join(REFERENCE_DIR, "soluciones")
SANDBOX_RANGE = range(uids.DEFAULT_RANGE[0], sum(uids.DEFAULT_RANGE))


@pytest.fixture(scope="module", autouse=True)
def as_root():
    if os.geteuid() != 0 or not kinds.sandbox_possible():
        message = "plain mode's private uids need root on Linux"
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: " + message)
        pytest.skip(message)


def free_uid():
    """A uid in the default range that no process has (the test's own, not the grader's)."""
    return uids.allocate()


@pytest.fixture
def open_tmp():
    """A folder in /tmp that other users may enter (0755; tmp_path's parents are 0700)."""
    folder = tempfile.mkdtemp(prefix="plain-test-", dir="/tmp")
    os.chmod(folder, 0o755)
    yield folder
    from grader.boundary import remove_tree
    remove_tree(folder)


def start_as(uid, code):
    """A Python process running `code` as `uid` (its own group, no others)."""
    return subprocess.Popen(["/usr/bin/python3", "-I", "-S", "-c", code], user=uid, group=uid,
                            extra_groups=[], cwd="/", env={}, stdout=subprocess.PIPE)


DAEMON = """
import ctypes, os, sys, time
if "subreaper" in sys.argv:  # orphans below are re-parented to this process
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
os.waitpid(child, 0)  # the daemon exists now, in its own session, re-parented
print("ready", flush=True)
time.sleep(60)
"""


# -- uids --------------------------------------------------------------------------------------
def test_a_uid_that_a_live_process_has_is_never_handed_out(monkeypatch):
    uid = free_uid()
    sleeper = start_as(uid, "import time; time.sleep(60)")
    try:
        deadline = time.monotonic() + 10
        while uid not in uids.live_uids():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        monkeypatch.setenv("GRADER_UID_RANGE", f"{uid}:2")
        assert uids.allocate() == uid + 1
        monkeypatch.setenv("GRADER_UID_RANGE", f"{uid}:1")
        with pytest.raises(uids.NoFreeUid):
            uids.allocate()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert uids.allocate() == uid  # nothing of it lives any more: it may come back


def test_uids_are_fresh_and_far_from_real_accounts():
    handed = [uids.allocate() for _ in range(200)]
    assert len(set(handed)) == 200
    assert all(uid in SANDBOX_RANGE for uid in handed)


def test_a_uid_range_that_reaches_real_accounts_or_the_no_change_uid_is_ignored(monkeypatch):
    for text in ("0:10", "1000:5", f"{0xFFFFFFFF - 3}:3", "nada"):
        monkeypatch.setenv("GRADER_UID_RANGE", text)
        assert uids.uid_range() == uids.DEFAULT_RANGE


# -- the reaper ----------------------------------------------------------------------------------
def test_the_reaper_never_kills_as_root_or_a_real_account():
    for uid in (0, 1000, 65534, 0xFFFFFFFF):
        with pytest.raises(ValueError):
            reaper.kill_uid(uid, 1.0)


def test_every_process_of_a_uid_dies_even_a_daemon_in_a_new_session():
    uid = free_uid()
    parent = start_as(uid, DAEMON)
    assert parent.stdout.readline() == b"ready\n"
    assert len(reaper.processes_of(uid)) == 2  # the parent and the daemon it left
    assert reaper.kill_uid(uid, 5.0) is True
    parent.wait()
    assert reaper.processes_of(uid) == []


def test_what_a_uid_left_in_a_shared_folder_goes_and_its_links_are_not_followed(open_tmp):
    uid = free_uid()
    shared = Path(open_tmp) / "compartida"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    target = Path(open_tmp) / "del-root.txt"
    target.write_text("intacto")
    start_as(uid, f"""
import os
os.symlink({str(target)!r}, {str(shared / "enlace")!r})
os.makedirs({str(shared / "carpeta" / "dentro")!r})
open({str(shared / "carpeta" / "dentro" / "f")!r}, "w").close()
open({str(shared / "archivo")!r}, "w").close()
""").wait()
    (shared / "de-otro").write_text("no es suyo")
    reaper.clean_shared(uid, folders=(str(shared),))
    assert sorted(os.listdir(shared)) == ["de-otro"]
    assert target.read_text() == "intacto"


def test_every_descendant_of_a_subreaper_dies_a_daemon_in_a_new_session_included():
    parent = subprocess.Popen([sys.executable, "-c", DAEMON, "subreaper"],
                              stdout=subprocess.PIPE)
    assert parent.stdout.readline() == b"ready\n"
    deadline = time.monotonic() + 5
    while not reaper.descendants(parent.pid):  # the daemon, once its parent is gone
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert reaper.kill_descendants(parent.pid, 5.0) is True
    assert reaper.descendants(parent.pid) == set()
    assert parent.poll() is None  # the process itself is left alone
    parent.kill()
    parent.wait()


# -- inside a plain sandbox ------------------------------------------------------------------
PROBE = r'''
import ctypes, json, os, socket, stat, sys
from extension import Extension
extension = Extension()
report = {"uid": os.getuid(), "gid": os.getgid(), "umask": os.umask(0o077)}
def attempt(name, action):
    try:
        report[name] = "ok"
        action()
    except BaseException as exc:
        report[name] = type(exc).__name__
attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW))
attempt("socketpair_unix", lambda: socket.socketpair(socket.AF_UNIX))
libc = ctypes.CDLL(None, use_errno=True)
report["shmget"] = libc.shmget(0, 4096, 0o1600) >= 0 or ctypes.get_errno()
report["mq_open"] = libc.mq_open(b"/cola", 0o100 | 2, 0o600, None) >= 0 or ctypes.get_errno()
tmp = os.environ["TMPDIR"]
info = os.stat(tmp)
report["tmpdir"] = [info.st_uid, stat.S_IMODE(info.st_mode), os.path.realpath(tmp)]
attempt("write_solution", lambda: open(os.path.realpath(__file__), "a").write("# x"))
attempt("new_in_solution", lambda: open(os.path.join(os.path.dirname(
    os.path.realpath(__file__)), "otro.py"), "w"))
attempt("write_work", lambda: open("nuevo", "w").write("x"))
attempt("write_tmp", lambda: open("/tmp/plain-probe-@TOKEN@", "w").write("x"))
attempt("read_etc", lambda: open("/etc/hostname").read())
sys.stderr.write("PROBE " + json.dumps(report) + "\n")
sys.stderr.flush()
'''


@pytest.fixture(scope="module")
def probed():
    token = os.urandom(4).hex()
    folder = tempfile.mkdtemp(prefix="plain-probe-")
    with open(os.path.join(folder, "probe.py"), "w") as handle:
        handle.write(PROBE.replace("@TOKEN@", token))
    os.chmod(folder, 0o755)
    os.chmod(os.path.join(folder, "probe.py"), 0o644)
    box = Sandbox(folder, mode="plain").start()
    try:
        identity = box.identity()  # a test's own uid
        server = box.spawn(["serve", "--solution", box.inner("solution")], [], identity)
        deadline = time.monotonic() + 60
        while "PROBE " not in server.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        line = next(x for x in server.stderr().splitlines() if x.startswith("PROBE "))
        report = json.loads(line[len("PROBE "):])
        report["test_uid"], report["box_uid"], report["job"] = identity, box.uid, box._job
    finally:
        box.close()
    report["left"] = reaper.processes_of(report["test_uid"]) + \
        reaper.processes_of(report["box_uid"])
    report["tmp_left"] = os.path.exists(f"/tmp/plain-probe-{token}")
    yield report
    for name in os.listdir(folder):
        os.unlink(os.path.join(folder, name))
    os.rmdir(folder)


def test_learner_code_in_plain_mode_runs_as_its_tests_own_fresh_uid(probed):
    assert probed["uid"] == probed["test_uid"] != probed["box_uid"]
    assert probed["uid"] in SANDBOX_RANGE and probed["gid"] == probed["box_uid"]
    assert probed["umask"] == 0o077


def test_learner_code_in_plain_mode_has_no_socket_but_a_unix_socketpair(probed):
    assert [probed[name] for name in ("tcp", "udp6", "unix", "netlink")] == \
        ["PermissionError"] * 4
    assert probed["socketpair_unix"] == "ok"


def test_learner_code_in_plain_mode_has_no_system_v_or_message_queue_ipc(probed):
    assert probed["shmget"] == 1 and probed["mq_open"] == 1  # EPERM


def test_learner_code_in_plain_mode_keeps_nothing_in_home_or_tmpdir_nor_changes_its_solution(
        probed):
    uid, mode, path = probed["tmpdir"]
    assert (uid, mode) == (0, 0o755) and path.startswith(probed["job"])
    assert probed["write_solution"] == probed["new_in_solution"] == "PermissionError"
    assert probed["write_work"] == "PermissionError"


def test_with_landlock_learner_code_in_plain_mode_writes_nowhere_but_its_folders(probed):
    if not plan("plain")["landlock"]:  # the kernel offers none: the check before grading holds
        assert probed["write_tmp"] == "ok"
    else:
        assert probed["write_tmp"] == "PermissionError"
    assert probed["read_etc"] == "ok"
    assert probed["tmp_left"] is False  # written or not, nothing of the uid is left in /tmp


def test_nothing_of_a_plain_sandbox_runs_after_it_closes(probed):
    assert probed["left"] == []
    assert not os.path.exists(probed["job"])


# -- the check before grading ----------------------------------------------------------------
def job(path):
    return {"path": path, "name": os.path.basename(path)}


def test_plain_mode_refuses_hidden_tests_other_users_can_read(open_tmp, monkeypatch):
    hidden = Path(open_tmp) / "hidden"
    hidden.mkdir()
    (hidden / "test_x.py").write_text("secreto")
    monkeypatch.setattr(plainmode, "HIDDEN_DIR", str(hidden))
    monkeypatch.setattr(plainmode, "REFERENCE_DIR", str(Path(open_tmp) / "nada"))
    refused = plainmode.admit("plain", [job(REFERENCE)], None, "all")
    assert str(hidden / "test_x.py") in refused.refusal and "No se corrigió nada" in \
        refused.refusal
    os.chmod(open_tmp, 0o700)
    assert plainmode.admit("plain", [job(REFERENCE)], None, "all") == \
        plainmode.Admission(workers=1)
    os.chmod(open_tmp, 0o755)
    allowed = plainmode.admit("plain", [job(REFERENCE)], None, "all", allow_unsafe=True)
    assert allowed.refusal == "" and "--allow-unsafe-plain" in allowed.warning


def test_plain_mode_refuses_other_submissions_other_users_can_read(open_tmp, monkeypatch):
    monkeypatch.setattr(plainmode, "HIDDEN_DIR", str(Path(open_tmp) / "nada"))
    monkeypatch.setattr(plainmode, "REFERENCE_DIR", str(Path(open_tmp) / "nada"))
    batch = Path(open_tmp) / "clase"
    for name in ("ana", "luis"):
        (batch / name).mkdir(parents=True)
        (batch / name / "ejercicio2.py").write_text(f"# de {name}")
    jobs = [job(str(batch / "ana")), job(str(batch / "luis"))]
    refusal = plainmode.admit("plain", jobs, None, "all").refusal
    assert str(batch / "ana") in refusal and " más" in refusal  # the first three, and a count
    assert plainmode.admit("plain", jobs[:1], None, "all").refusal == ""  # only its own
    os.chmod(batch, 0o700)
    assert plainmode.admit("plain", jobs, None, "all").refusal == ""


def test_plain_mode_refuses_a_report_folder_other_users_could_create(open_tmp, monkeypatch):
    monkeypatch.setattr(plainmode, "HIDDEN_DIR", str(Path(open_tmp) / "nada"))
    monkeypatch.setattr(plainmode, "REFERENCE_DIR", str(Path(open_tmp) / "nada"))
    open_place = Path(open_tmp) / "abierta"
    open_place.mkdir()
    os.chmod(open_place, 0o1777)
    refused = plainmode.admit("plain", [job(REFERENCE)], str(open_place / "notas"), "all")
    assert str(open_place) in refused.refusal and "carpeta de informes" in refused.refusal
    os.chmod(open_place, 0o755)
    assert plainmode.admit("plain", [job(REFERENCE)], str(open_place / "notas"), "all") \
        .refusal == ""


def test_without_a_private_uid_only_a_self_check_of_one_submission_is_graded():
    one, two = [job(REFERENCE)], [job(REFERENCE), job(REFERENCE)]
    for mode, fallback in (("plain", False), ("portable", True)):
        assert plainmode.admit(mode, one, None, "public", root=False, fallback=fallback) \
            .refusal == ""
        assert "No se corrigió nada" in plainmode.admit(mode, one, None, "all", root=False,
                                                        fallback=fallback).refusal
        assert "--allow-unsafe-plain" in plainmode.admit(mode, two, None, "public", root=False,
                                                         fallback=fallback).refusal
        assert plainmode.admit(mode, two, None, "all", allow_unsafe=True, root=False,
                               fallback=fallback).refusal == ""
    assert plainmode.admit("portable", two, None, "all", root=False) == plainmode.Admission()


def test_the_other_modes_are_not_judged_here():
    assert plainmode.admit("root", [job(REFERENCE)] * 3, "/tmp/x", "all") == \
        plainmode.Admission()


class Graded(Exception):
    """What the stand-in for pool.grade_all raises, once it has seen how it was asked."""


@pytest.mark.parametrize("mode", ["plain", "root"])
def test_only_plain_mode_grades_a_class_one_learner_at_a_time_without_lending_slots(
        monkeypatch, tmp_path, mode):
    # in plain mode a learner whose checks wait on the clock keeps its servers up: nobody else
    # may start meanwhile; in the namespaces a waiting learner lends its slot
    batch = tmp_path / "clase"
    for name in ("ana", "bea"):
        shutil.copytree(REFERENCE, batch / name)
    monkeypatch.setattr(kinds.SandboxKind, "mode", lambda self: mode)
    asked = {}

    def grade_all(jobs, workers, progress=None, alone=False):
        asked.update(workers=workers, alone=alone)
        raise Graded

    monkeypatch.setattr(pool, "grade_all", grade_all)
    with pytest.raises(Graded):
        cli.main(["--batch", str(batch), "--jobs", "2", "--format", "json",
                  "--out", str(tmp_path / "notas"), "--allow-unsafe-plain"])
    assert asked == ({"workers": 1, "alone": True} if mode == "plain" else
                     {"workers": 2, "alone": False})


# -- the command line where the sandbox cannot run (macOS, Windows) ----------------------------
def test_without_host_a_system_that_cannot_run_the_sandbox_grades_with_the_portable_host(
        monkeypatch, capsys):
    monkeypatch.setattr(kinds, "sandbox_possible", lambda: False)
    code = cli.main([REFERENCE, "--only", "ejercicio4", "--tests", "public", "--format", "json"])
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 0, err
    assert result["protections"]["mode"] == "portable"
    assert "modo local (sin aislamiento)" in result["notice"]
    assert "modo local (sin aislamiento" in err


def test_without_host_the_portable_fallback_refuses_the_hidden_tests(monkeypatch, capsys):
    monkeypatch.setattr(kinds, "sandbox_possible", lambda: False)
    assert cli.main([REFERENCE, "--only", "ejercicio4", "--format", "json"]) == 4
    out, err = capsys.readouterr()
    assert out == "" and "pruebas ocultas" in err


@pytest.mark.parametrize("how", [["--tests", "all"], ["--batch"]])
def test_host_auto_that_comes_to_the_portable_host_refuses_a_batch_and_the_hidden_tests(
        monkeypatch, capsys, tmp_path, how):
    """What a missing --host refuses, --host auto refuses too when it comes to the portable
    host: a learner's code would run with your rights, read the hidden tests and write the
    results folder after the grader exits."""
    monkeypatch.setenv("GRADER_HOST", "portable")
    if how == ["--batch"]:
        (tmp_path / "clase").mkdir()
        os.symlink(REFERENCE, tmp_path / "clase" / "ana")
        os.symlink(REFERENCE, tmp_path / "clase" / "luis")
        how = ["--batch", str(tmp_path / "clase"), "--tests", "public"]
    else:
        how = [REFERENCE, *how]
    assert cli.main([*how, "--only", "ejercicio4", "--host", "auto", "--format", "json"]) == 4
    out, err = capsys.readouterr()
    assert out == "" and "modo local (sin aislamiento" in err and "No se corrigió nada" in err


def test_a_row_graded_by_a_self_check_host_says_so_in_the_gradebook(monkeypatch, capsys):
    monkeypatch.setenv("GRADER_HOST", "portable")
    assert cli.main([REFERENCE, "--only", "ejercicio4", "--tests", "public", "--host", "auto",
                     "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["oficial"].startswith("no: autoevaluación en modo local")
    assert cli.main([REFERENCE, "--only", "ejercicio4", "--host", "sandbox",
                     "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["oficial"] == "sí"


def test_host_sandbox_where_it_cannot_run_is_exit_4_with_a_spanish_reason(monkeypatch, capsys):
    monkeypatch.setattr(kinds, "sandbox_possible", lambda: False)
    assert cli.main([REFERENCE, "--host", "sandbox"]) == 4
    out, err = capsys.readouterr()
    assert out == "" and "solo funciona en Linux" in err and "--host portable" in err


def test_a_crashed_submission_still_names_the_mode():
    result = pool.crashed({"name": "ana", "host": "sandbox"}, "boom")
    assert result["protections"]["mode"] in ("root", "userns", "plain")
