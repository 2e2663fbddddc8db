"""What a learner's code can and cannot do inside the sandbox, checked from inside.

A probe "solution" tries things at import time and prints what happened as one JSON line on
its stderr, which the grader captures. With the full sandbox (root on Linux) every attempt
to reach the network, read the grader's files or other submissions, write outside, or grow
without bound must fail; the probe itself must still be able to run a server. It runs as two
tests' servers, one after the other, with different options: the second finds nothing the
first left (the first tries every place), its command line and environment are the same, and
each test's processes (a daemon included) end when its test is released.
"""

import json
import os
import secrets
import socket
import tempfile
import time

import pytest
from sandbox_probes import need_the_full_sandbox, reported, solution_folder

from grader.hosts.sandbox import Sandbox, SandboxError, plan
from grader.paths import REPO_DIR


@pytest.fixture(scope="module", autouse=True)
def full_sandbox():
    """These tests need the full sandbox; under CI=true its absence fails the run."""
    need_the_full_sandbox()


PROBE = '''
import json, os, socket, sys, threading

report = {{"uid": os.getuid(), "euid": os.geteuid(), "ppid": os.getppid(), "cwd": os.getcwd(),
          "argv": sys.argv, "environ": dict(os.environ)}}

def attempt(name, action):
    try:
        report[name] = "ok: " + repr(action())[:80]
    except BaseException as exc:
        report[name] = type(exc).__name__

# what an earlier test's server could have left for this one (`remember` below)
PLACES = [os.environ.get("HOME", "/"), os.environ.get("TMPDIR", "/tmp"), "/tmp", os.getcwd(),
          "/sandbox/data", "/sandbox", "/dev/shm", "/var/tmp"]
report["found"] = sorted(os.path.join(place, name) for place in set(PLACES)
                         if os.path.isdir(place) and os.access(place, os.R_OK)
                         for name in os.listdir(place) if name.startswith("recuerdo"))

attempt("internet", lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))
attempt("host_loopback", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("listen_loopback", lambda: socket.create_server(("127.0.0.1", 0)))
attempt("abstract_socket", lambda: socket.socket(socket.AF_UNIX).bind("\\0recuerdo"))
attempt("socketpair", lambda: socket.socketpair())
attempt("pipe", lambda: os.pipe())
attempt("memfd", lambda: os.memfd_create("recuerdo"))
attempt("read_checks",
        lambda: open({repo!r} + "/grader/checks/hidden/test_ej2_hidden.py").read())
attempt("read_reference",
        lambda: open({repo!r} + "/grader/reference/soluciones/ejercicio2.py").read())
attempt("list_repo", lambda: os.listdir({repo!r}))
attempt("read_other_submission", lambda: open({other!r}).read())
attempt("list_root_home", lambda: os.listdir("/root"))
attempt("read_proc", lambda: open("/proc/1/environ").read())
attempt("list_data", lambda: os.listdir("/sandbox/data"))
attempt("read_zygote_proc", lambda: os.listdir("/sandbox/.zygote/proc"))
attempt("write_repo", lambda: open({repo!r} + "/sandbox-was-here", "w"))
attempt("write_solution", lambda: open("/sandbox/solution/x.py", "w"))
attempt("write_usr", lambda: open("/usr/x", "w"))
for place in sorted(set(PLACES)):  # memory for the next test, if anywhere takes it
    attempt("remember " + place, lambda place=place: open(os.path.join(place, "recuerdo"),
                                                          "w").write("ya estuve"))
attempt("write_own_tree", lambda: open("/sandbox/data/" + {tree!r} + "/propio", "w").write("x"))
attempt("chroot", lambda: os.chroot("/tmp"))
attempt("memory_2gib", lambda: len(bytearray(2 << 30)))
attempt("big_file", lambda: open("/sandbox/data/" + {tree!r} + "/big", "wb").write(
    b"x" * (64 << 20)))
import ctypes, errno, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = {{"x86_64": {{"keyctl": 250, "add_key": 248, "io_uring_setup": 425, "userfaultfd": 323,
                      "bpf": 321, "perf_event_open": 298, "ptrace": 101, "unshare": 272,
                      "process_vm_readv": 310, "mount": 165, "setns": 308, "shmget": 29,
                      "msgget": 68, "pidfd_open": 434, "statmount": 457, "listmount": 458}},
           "aarch64": {{"keyctl": 219, "add_key": 217, "io_uring_setup": 425, "userfaultfd": 282,
                       "bpf": 280, "perf_event_open": 241, "ptrace": 117, "unshare": 97,
                       "process_vm_readv": 270, "mount": 40, "setns": 268, "shmget": 194,
                       "msgget": 186, "pidfd_open": 434, "statmount": 457,
                       "listmount": 458}}}}[os.uname().machine]
ARGS = {{"keyctl": (0, -3, 0), "add_key": (b"user", b"k", b"v", 1, -3), "unshare": (0x10000000,),
        "io_uring_setup": (1, 0), "ptrace": (16, 1, 0, 0), "shmget": (1234, 4096, 0o1666),
        "msgget": (1234, 0o1666), "pidfd_open": (os.getpid(), 0)}}
report["syscalls"] = {{}}
for name, number in NUMBERS.items():
    result = libc.syscall(number, *ARGS.get(name, (0, 0, 0, 0)))
    report["syscalls"][name] = errno.errorcode.get(ctypes.get_errno(), "?") if result < 0 else "ok"
report["bounding_set"] = [libc.prctl(23, cap, 0, 0, 0) for cap in range(41)]
worker = threading.Thread(target=lambda: None)
worker.start()
worker.join()
report["threads"] = "ok"
attempt("subprocess", lambda: subprocess.run(["/usr/bin/true"]).returncode)
report["subprocess"] = report["subprocess"].replace("ok: 0", "0")
report["top_level"] = sorted(os.listdir("/"))
children = []
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        import time
        time.sleep(30)
        os._exit(0)
    children.append(pid)
report["forks"] = len(children)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
if os.fork() == 0:  # a daemon that outlives its server: it must not outlive its test
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(60)
    os._exit(0)
sys.stderr.write("PROBE " + json.dumps(report) + "\\n")
sys.stderr.flush()
'''


def run_probe(box, private=()):
    """One test's server with the probe as its solution: its report, its uid."""
    identity = box.identity()
    tree = secrets.token_hex(4)
    box.data.make_dir(tree, owner=identity, private=True).close()
    with open(os.path.join(box.solution_dir, "probe.py"), "w") as handle:
        handle.write(PROBE_TEXT[0].replace("@TREE@", tree))
    server = box.spawn(["serve", "--solution", box.inner("solution")], private, identity)
    deadline = time.monotonic() + 60
    while "PROBE " not in server.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    line = next(x for x in server.stderr().splitlines() if x.startswith("PROBE "))
    alive_before = [pid for pid in filter(str.isdigit, os.listdir("/proc"))
                    if owner(pid) == identity]  # the server and the daemon it started
    server.kill()
    box.release(identity)
    box.data.remove(tree)
    return {**json.loads(line[len("PROBE "):]), "identity": identity,
            "alive_before_release": alive_before,
            "alive_after_release": [f"{pid} {state(pid)}"  # the state says why, if any
                                    for pid in filter(str.isdigit, os.listdir("/proc"))
                                    if owner(pid) == identity]}


PROBE_TEXT = [""]


@pytest.fixture(scope="module")
def probed():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    other_dir = tempfile.mkdtemp(prefix="grader-sub-")
    other = os.path.join(other_dir, "ejercicio2.py")
    with open(other, "w") as handle:
        handle.write("# another learner's work\n")
    folder = tempfile.mkdtemp(prefix="grader-probe-")
    os.chmod(folder, 0o755)
    PROBE_TEXT[0] = PROBE.format(port=listener.getsockname()[1], repo=REPO_DIR, other=other,
                                 tree="@TREE@")
    with open(os.path.join(folder, "probe.py"), "w") as handle:
        handle.write(PROBE_TEXT[0])
    os.chmod(os.path.join(folder, "probe.py"), 0o644)
    box = Sandbox(folder).start()
    first = run_probe(box, ["--sdk-version", "1.0.0"])
    second = run_probe(box, ["--sdk-version", "2.0.0", "--state-sealer", "solution"])
    box.close()
    listener.close()
    yield {**first, "second": second}
    for path in (other, os.path.join(folder, "probe.py")):
        os.unlink(path)
    os.rmdir(other_dir)
    os.rmdir(folder)


def state(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return "gone"


def owner(pid):
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def test_learner_code_runs_as_an_unprivileged_uid(probed):
    assert probed["uid"] != 0 and probed["euid"] != 0
    assert probed["chroot"] == "PermissionError"


def test_learner_code_has_no_network_not_even_the_hosts_loopback(probed):
    assert probed["internet"] == "OSError" or probed["internet"].endswith("Error")
    assert not probed["internet"].startswith("ok")
    assert not probed["host_loopback"].startswith("ok")


@pytest.mark.parametrize("attempt", ["listen_loopback", "abstract_socket"])
def test_learner_code_opens_no_socket_another_test_could_reach(probed, attempt):
    assert probed[attempt] == "PermissionError"


def test_learner_code_makes_no_pipe_socket_pair_or_memory_file_numbered_machine_wide(probed):
    # the kernel numbers them in sequences of the whole machine: a counter of tests
    for attempt in ("pipe", "socketpair", "memfd"):
        assert probed[attempt] == "PermissionError", attempt


def test_a_servers_standard_streams_are_fifos_numbered_alike_in_every_server(tmp_path):
    folder = solution_folder(tmp_path)
    (folder / "probe.py").write_text(
        "import os, stat, sys\n"
        "seen = [[stat.S_ISFIFO(os.fstat(fd).st_mode), os.fstat(fd).st_ino] for fd in (0, 1, 2)]\n"
        "sys.stderr.write('STREAMS ' + repr(seen) + '\\n')\n")
    os.chmod(folder / "probe.py", 0o644)
    box = Sandbox(str(folder)).start()
    try:
        seen = [reported(box, "STREAMS ") for _ in range(4)]
    finally:
        box.close()
    # the same in every server, whatever came before: numbered from the start of a file
    # system of their own (the server points its fd 1 at its stderr before a solution loads)
    assert len(set(seen)) == 1 and seen[0].startswith("[[True, 2], [True, "), seen


@pytest.mark.parametrize("attempt", ["read_checks", "read_reference", "list_repo",
                                     "read_other_submission", "list_root_home", "read_proc",
                                     "list_data", "read_zygote_proc"])
def test_learner_code_cannot_read_the_grader_or_other_submissions(probed, attempt):
    assert probed[attempt] in ("FileNotFoundError", "PermissionError")


@pytest.mark.parametrize("attempt", ["write_repo", "write_solution", "write_usr"])
def test_learner_code_cannot_write_outside_its_work_folder(probed, attempt):
    assert probed[attempt] in ("FileNotFoundError", "PermissionError", "OSError")
    assert not os.path.exists(os.path.join(REPO_DIR, "sandbox-was-here"))


def test_nothing_is_a_place_to_remember_anything_for_the_next_test(probed):
    remembered = {name: got for name, got in probed.items() if name.startswith("remember ")}
    assert remembered and all(got in ("PermissionError", "OSError", "FileNotFoundError")
                              for got in remembered.values()), remembered
    assert probed["write_own_tree"].startswith("ok")  # its own test's notes: writable
    assert probed["found"] == [] and probed["second"]["found"] == []


def test_every_test_runs_as_its_own_uid_and_its_processes_end_with_it(probed):
    second = probed["second"]
    assert probed["uid"] == probed["identity"] and second["uid"] == second["identity"]
    assert probed["identity"] != second["identity"]
    assert len(probed["alive_before_release"]) >= 2  # a daemon beside its server...
    assert probed["alive_after_release"] == [] and second["alive_after_release"] == []


def test_every_server_starts_with_the_same_command_line_and_environment(probed):
    """The second server got other options (a test's own inputs); what its code can read of
    its command line and environment is the same."""
    second = probed["second"]
    assert probed["argv"] == second["argv"] and "--sdk-version" not in probed["argv"]
    assert probed["environ"] == second["environ"]
    assert probed["cwd"] == second["cwd"]


def test_learner_code_sees_only_a_minimal_tree(probed):
    assert set(probed["top_level"]) <= {"bin", "dev", "etc", "lib", "lib32", "lib64",
                                        "libx32", "sbin", "sandbox", "tmp", "usr"}


def test_memory_files_and_processes_are_capped(probed):
    assert probed["memory_2gib"] == "MemoryError"
    assert probed["big_file"] == "OSError"  # RLIMIT_FSIZE (Python ignores SIGXFSZ)
    assert probed["forks"] < 200


@pytest.mark.parametrize("call", ["keyctl", "add_key", "io_uring_setup", "userfaultfd", "bpf",
                                  "perf_event_open", "ptrace", "unshare", "process_vm_readv",
                                  "mount", "setns", "shmget", "msgget", "pidfd_open",
                                  "statmount", "listmount"])
def test_the_seccomp_filter_denies_kernel_interfaces_learner_code_never_needs(probed, call):
    assert probed["syscalls"][call] == "EPERM"


def test_the_capability_bounding_set_is_empty(probed):
    assert probed["bounding_set"] == [0] * 41


def test_threads_still_work_under_the_filter_and_forks_too(probed):
    assert probed["threads"] == "ok" and probed["forks"] > 0
    assert probed["subprocess"] == "PermissionError"  # its pipe is refused, said plainly


def test_the_protections_listed_are_the_ones_the_zygote_applied():
    protections = plan("root")
    assert protections["fresh_session_keyring"] and protections["capability_bounding_set_empty"]
    assert {"keyctl", "add_key", "request_key", "io_uring_setup", "userfaultfd", "bpf",
            "perf_event_open", "ptrace", "unshare", "setns", "mount"} \
        <= set(protections["seccomp_denied"])


def test_no_process_of_the_sandbox_survives_it(probed):
    assert probed["alive_after_release"] == []


def test_a_sandbox_that_lends_its_slot_gets_the_least_cpu_until_it_works_again(tmp_path):
    # while a learner's checks wait on the clock, another learner is busy (grader/pool.py):
    # the waiting learner's servers must not compete with it for the CPU
    box = Sandbox(str(solution_folder(tmp_path))).start()
    try:
        shares = [os.path.join(path, "cpu.shares") for path in box._cgroups
                  if os.path.exists(os.path.join(path, "cpu.shares"))]
        assert len(shares) == 1, box._cgroups

        def now():
            with open(shares[0]) as handle:
                return int(handle.read())

        working = now()
        box.lend(True)
        assert now() < working / 100
        box.lend(False)
        assert now() == working
    finally:
        box.close()
    box.lend(True)  # after the sandbox ended: nothing to lower, and no error


COMPILED_PROBE = '''
import json, sys
from extension import Extension

extension = Extension()
ORIGIN = "@ORIGIN@"
sys.stderr.write("COMPILED " + json.dumps({"files": sorted(sys.modules["extension"].COMPILED),
                                           "origin": ORIGIN}) + "\\n")
sys.stderr.flush()
'''


def test_a_submission_is_compiled_once_and_a_file_changed_since_runs_as_it_is(tmp_path):
    folder = solution_folder(tmp_path)
    probe = folder / "probe.py"
    probe.write_text(COMPILED_PROBE.replace("@ORIGIN@", "first"))
    os.chmod(probe, 0o644)
    box = Sandbox(str(folder)).start()

    def report():
        return json.loads(reported(box, "COMPILED "))

    try:
        first = report()
        assert first == {"files": [box.inner("solution") + "/probe.py"], "origin": "first"}
        probe.write_text(COMPILED_PROBE.replace("@ORIGIN@", "second"))
        assert report()["origin"] == "second"  # not the bytecode of the first version
    finally:
        box.close()


@pytest.fixture
def empty_box(tmp_path):
    box = Sandbox(str(solution_folder(tmp_path))).start()
    yield box
    box.close()


def test_each_tests_folder_is_a_file_system_of_its_own_owned_by_the_tests_uid(empty_box):
    identity = empty_box.identity()
    first = empty_box.data.make_dir("prueba-1", owner=identity, private=True)
    second = empty_box.data.make_dir("prueba-2", owner=identity, private=True)
    try:
        area, one, two = (os.fstat(f.fd) for f in (empty_box.data, first, second))
        assert len({area.st_dev, one.st_dev, two.st_dev}) == 3
        assert (one.st_uid, one.st_gid, one.st_mode & 0o777) == (identity, identity, 0o700)
        assert one.st_ino == two.st_ino  # numbered from the start, each of them
        first.write_file("a.md", b"# a\n")
        second.write_file("a.md", b"# a\n")
        assert os.stat("a.md", dir_fd=first.fd).st_ino == \
            os.stat("a.md", dir_fd=second.fd).st_ino
    finally:
        first.close()
        second.close()


def test_a_tests_folder_and_everything_in_it_go_when_it_is_removed(empty_box):
    folder = empty_box.data.make_dir("prueba", owner=empty_box.identity(), private=True)
    folder.write_file("a.md", b"# a\n")
    folder.close()
    empty_box.data.remove("prueba")
    with pytest.raises(FileNotFoundError):
        os.stat("prueba", dir_fd=empty_box.data.fd)
    again = empty_box.data.make_dir("prueba", owner=empty_box.identity(), private=True)
    try:
        assert os.listdir(again.fd) == []  # the same name again: a new, empty file system
    finally:
        again.close()


@pytest.mark.parametrize("name", ["../fuera", "a/b", ".", "", "x" * 65, "nombre con espacios"])
def test_the_mounter_mounts_only_on_a_single_plain_name_in_the_data_area(empty_box, name):
    with pytest.raises(SandboxError, match="not a volume's name"):
        empty_box.command("volume", name=name, uid=None)
    assert empty_box.command("volume", name="bien", uid=None) == {"ok": True}
