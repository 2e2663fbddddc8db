"""The grader's side of the sandbox: start it for one submission, fork servers in it, stop it.

`Sandbox(solution_dir, code_dir)` starts grader/hosts/zygote.py under the system interpreter
(`/usr/bin/python3 -I`) in a new session. The zygote builds the isolation this mode's plan asks
for (see its docstring), then forks a fresh notes server per `spawn()`; the grader talks MCP to
each over plain pipes, so one interpreter start serves every test of a submission. Every server
gets the same command line (`argv`); a test's own inputs (`private`) reach only its options.
Each test gets an `identity()` (with private uids, a fresh uid), its servers run as it, and
`release(identity)` ends every process of it when the test is over. `data` is the sandbox's
data area as a grader.boundary.Folder, opened before any learner code runs: the only way the
grader touches what the learner's processes can write. `kill()` ends the whole sandbox at once
(the budget watchdog uses it from another thread). A sandbox may also be built before its
submission is known, its solution folder empty until then (grader/hosts/ahead.py, `ahead`).

`detect_mode()` picks the strongest isolation this machine offers; `plan(mode)` says, once per
mode, what is in force in it: it is handed to the zygote, which applies exactly that, and it is
what every report lists under `protections`. Both fall back (root namespaces -> user namespace
-> plain) instead of refusing to grade; grader/hosts/plainmode.py says what plain mode promises and
refuses what it cannot make safe.

Each test of a root grader gets a uid no live process has (grader/hosts/uids.py); the sandbox's own
uid is only the group that reads the solution. In plain mode, which has no PID namespace,
`release()`, `kill()` and `close()` end every process of those uids (or, without a private
uid, every descendant of the zygote) and what they left in the shared temp folders
(grader/hosts/reaper.py), within `REAP_SECONDS`.

Why one module over 600 lines: it is one job, the grader's half of the zygote's protocol
(starting it, its commands, the processes it forks, their ending), and its pieces share the
control socket and its lock; what stands alone already lives beside it in grader/hosts/
(uids.py, reaper.py, tempspace.py, plainmode.py).

Deliberate simplifications: uids are random in a large range, checked against /proc, not
taken from a registry; Linux only.
"""

import atexit
import functools
import json
import os
import platform
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from grader import boundary
from grader.errors import HostError
from grader.hosts import reaper, tempspace, uids, volumes
from grader.paths import CODE_DIR
from shared import wire  # the grader's trusted copy (code/ is on sys.path: grader/__init__)

ZYGOTE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zygote.py")
SYSTEM_PYTHON = "/usr/bin/python3"
LIMITS = {"memory_mib": 1024, "file_mib": 8, "files_open": 256, "cpu_s": 20,
          "processes": 96}
DISK_MIB = 64
CGROUP_LIMITS = {"pids": {"pids.max": "160"},
                 "memory": {"memory.limit_in_bytes": str(1536 << 20)},
                 "cpu": {"cpu.shares": "1024"}}
LENDING_SHARES = "2"  # cpu.shares while the submission lends its busy slot (grader/pool.py)
# What the seccomp filter denies to everything in the sandbox (EPERM; clone3 gets ENOSYS so
# that threads fall back to clone, whose namespace flags are denied too; statx ENOSYS, so that
# stat falls back to fstatat: statx alone reads a file's birth time, which would say how long
# the grading has run, grader/hosts/zygote.py FreshTimes; pidfd_open, clone's pidfd flag,
# statmount and listmount: a pidfd leads to the namespaces' ids and the mounts' unique ids are
# the machine's counts since the sandbox was made, a counter of tests). The zygote maps the
# names to the numbers of its architecture (x86_64, aarch64) and kills any other ABI (x32, i386).
SECCOMP_DENIED = ("keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter",
                  "io_uring_register", "userfaultfd", "perf_event_open", "bpf", "ptrace",
                  "process_vm_readv", "process_vm_writev", "pidfd_getfd", "mount", "umount2",
                  "pivot_root", "unshare", "setns", "open_tree", "move_mount", "fsopen",
                  "fsconfig", "fsmount", "fspick", "mount_setattr", "chroot", "kexec_load",
                  "kexec_file_load", "init_module", "finit_module", "delete_module", "acct",
                  "swapon", "swapoff", "reboot", "quotactl", "name_to_handle_at",
                  "open_by_handle_at", "fanotify_init", "personality", "syslog", "vhangup",
                  "clone3", "statx", "pidfd_open", "statmount", "listmount",
                  "clone (namespace or pidfd flags)")
# No socket at all (socketpair only as AF_UNIX, a connected pair that reaches nobody else), no
# System V or POSIX message-queue IPC: in plain mode there is no network or IPC namespace, and
# in the others every test's servers share the sandbox's, where an abstract socket or a shared
# memory segment would carry something from one test to the next (IPC outlives its processes).
# No server needs them: the setup page goes over the private rpc channel.
SECCOMP_NO_SHARING = ("socket", "socketpair (except AF_UNIX)", "shmget", "shmat", "shmctl",
                        "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd",
                        "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
                        "mq_timedreceive", "mq_notify", "mq_getsetattr")
# In the namespaces, no pipe, socket pair or memory file either: the kernel numbers them in
# sequences of the whole machine, which a server would read its position by (a server's own
# standard streams are FIFOs of a file system of their own, zygote.py `Volumes`). Python's
# subprocess and asyncio need them; no server of the course does.
SECCOMP_NUMBERED = ("pipe", "pipe2", "socketpair", "memfd_create", "memfd_secret")
SECCOMP_ARCHES = ("x86_64", "aarch64")
START_TIMEOUT = 20.0
SEND_TIMEOUT = 10.0
REAP_SECONDS = 5.0  # plain mode: the most that ending every process of a sandbox may take
WARM_UP = "warm_up_solution.py"  # the zygote's warm-up input, in the code copy (root's)
_live = set()  # sandboxes started by this process and not closed yet (for the exit handler)


class SandboxError(HostError):
    """The sandbox could not do what was asked (it died, or did not answer in time)."""


def detect_mode():
    """The strongest mode that really works here: "root", "userns" or "plain" (cached)."""
    return _detect_mode(os.environ.get("GRADER_SANDBOX"))


@functools.cache
def _detect_mode(forced):
    tempspace.clean_stale()  # what dead grader processes left behind, before adding ours
    candidates = []
    if sys.platform.startswith("linux") and os.path.exists(SYSTEM_PYTHON):
        candidates += ["root"] if os.geteuid() == 0 else ["userns"]
    if forced == "userns" and candidates == ["root"]:  # a user namespace made by root: the
        candidates = ["userns"]                         # mode of a grader that is not root
    if forced in ("userns", "plain"):  # only ever weaker, to test
        candidates = [c for c in candidates if c == forced]
    code = compiled_code()
    for candidate in candidates:
        empty = tempspace.mkdtemp("probe")
        box = Sandbox(empty, code, mode=candidate)
        try:
            box.start()
            return candidate
        except SandboxError:
            continue
        finally:
            box.close()
            boundary.remove_tree(empty)
    return "plain"


def landlock_abi():
    """The Landlock ABI version the kernel offers to this process (0: none or refused)."""
    if not sys.platform.startswith("linux") or platform.machine() not in SECCOMP_ARCHES:
        return 0
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(ctypes.c_long(444), None, ctypes.c_long(0), ctypes.c_long(1))
    return max(int(version), 0)  # landlock_create_ruleset(NULL, 0, ..._VERSION), both ABIs


def landlock_features(abi):
    """What Landlock confines at ABI `abi` (None: no Landlock); the zygote checks the same."""
    if abi < 1:
        return None
    return ["filesystem"] + (["tcp"] if abi >= 4 else []) + \
        (["abstract_unix_sockets", "signals"] if abi >= 6 else [])


@functools.cache
def plan(mode):
    """What is in force in `mode` on this machine: computed once, handed to every zygote of
    that mode (which applies exactly this), listed in every report as `protections`."""
    linux = sys.platform.startswith("linux")
    root = os.geteuid() == 0
    private_uid = mode == "root" or (mode == "plain" and root)
    isolated = mode in ("root", "userns")
    seccomp = linux and platform.machine() in SECCOMP_ARCHES
    cgroups = sorted(tempspace.cgroup_parents()) if mode == "root" else []
    denied = list(SECCOMP_DENIED) + list(SECCOMP_NO_SHARING) + \
        (list(SECCOMP_NUMBERED) if isolated else [])
    return {
        "mode": mode,
        "isolated_python": True,
        "minimal_environment": True,
        "fresh_working_folder": True,
        "rlimits": sorted(["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
                           "RLIMIT_CORE"] + (["RLIMIT_NPROC"] if private_uid else [])),
        "unprivileged_uid": private_uid,
        "no_capabilities": True,
        "capability_bounding_set_empty": linux and (isolated or root),
        "no_new_privs": linux,
        "fresh_session_keyring": linux,
        "seccomp_denied": denied if seccomp else None,
        "seccomp_arch": platform.machine() if seccomp else None,
        "network_namespace": isolated,
        "private_filesystem": isolated,
        "pid_namespace": isolated,
        "disk_quota_mib": DISK_MIB if isolated else None,
        "cgroups": cgroups or None,
        "parent_death_signal": linux,
        "grader_touches_data_only_through_descriptors": True,
        "timeouts": True,
        "budget_watchdog": True,
        "process_group_killed": True,
        "sockets_denied": seccomp,
        "private_tmpdir": True,
        "uid_per_test": private_uid,
        "read_only_home_and_tmpdir": isolated or private_uid,
        "fresh_uid": private_uid,
        "every_process_of_the_uid_killed": private_uid if mode == "plain" else None,
        "one_submission_at_a_time": True if mode == "plain" else None,
        "landlock": landlock_features(landlock_abi()) if mode == "plain" else None,
        "pid_namespace_per_server": isolated,
        "fixed_file_times": True,
        "counters_visible": counters_visible(mode, landlock_abi() > 0),
    }


def counters_visible(mode, landlock):
    """What a server can still tell its test's position by, in `mode` (grader/README.md, *No
    counter between tests*): "pids" (the machine's pid sequence, without a PID namespace),
    "proc" (other processes' /proc entries, the zygote's CPU ticks among them, without
    Landlock), "inode_numbers" (of the folders and notes made for its test: most file systems
    number them in order) and "kernel_object_numbers" (pipes, its standard streams among them,
    socket pairs and memory files are numbered machine-wide). The namespaces close the last
    two: each test's folder is a file system of its own (grader/hosts/volumes.py), a server's
    standard streams are FIFOs of one of their own and it can make no pipe, socket pair or
    memory file (SECCOMP_NUMBERED). Change and birth times say nothing: what a server is
    given has its times given again right before it starts, and statx is refused (zygote.py,
    FreshTimes). The tests' shuffled order (grader/checks/later.py) leaves what is listed here
    nothing to tell public from hidden tests by."""
    plain = mode == "plain"
    return (["pids"] if plain else []) + (["proc"] if plain and not landlock else []) + \
        (["inode_numbers", "kernel_object_numbers"] if plain else [])


@functools.cache
def compiled_code():
    """A private copy of code/ (its *.py and its folders' *.py) with bytecode compiled by the
    sandbox's interpreter."""
    source = CODE_DIR
    folder = tempspace.mkdtemp("code")
    atexit.register(boundary.remove_tree, folder)
    target = os.path.join(folder, "code")
    os.makedirs(target)
    os.chmod(folder, 0o755)
    with open(os.path.join(target, WARM_UP), "w") as handle:  # trusted: the zygote runs it
        handle.write("from extension import Extension\n\nextension = Extension()\n")
    for parent, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        here = os.path.join(target, os.path.relpath(parent, source))
        os.makedirs(here, exist_ok=True)
        for name in sorted(files):
            if name.endswith(".py"):
                shutil.copy2(os.path.join(parent, name), os.path.join(here, name))
    # before compiling: the bytecode records the source's time
    for parent, dirs, files in os.walk(target):
        for name in [*dirs, *files]:
            boundary.given_times(os.path.join(parent, name))
    python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
    subprocess.run([python, "-I", "-m", "compileall", "-q", target], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for parent, dirs, files in os.walk(target, topdown=False):  # no time says when it ran
        for name in dirs + files:
            os.chmod(os.path.join(parent, name), 0o755 if name in dirs else 0o644)
            boundary.given_times(os.path.join(parent, name))
    boundary.given_times(target)
    return target


def make_cgroups(name, controllers):
    """cgroup v1 groups for one sandbox, below the grader's own, for each planned controller;
    the launcher joins them before it forks anything. Raises SandboxError if one cannot be made
    (the plan promised it)."""
    parents = tempspace.cgroup_parents()
    made = []
    try:
        for controller in controllers:
            path = os.path.join(parents[controller], name)
            os.mkdir(path)
            made.append(path)
            for key, value in CGROUP_LIMITS[controller].items():
                with open(os.path.join(path, key), "w") as handle:
                    handle.write(value)
    except (OSError, KeyError) as exc:
        for path in made:
            tempspace.remove_cgroup(path)
        raise SandboxError(f"cgroup {name}: {exc}") from None
    return made


class Sandbox:
    """The official grader's server host (see grader/hosts/ for what a host offers)."""

    processes = True   # servers are processes, over pipes (checks/channels.py ProcessChannel)
    self_check = False
    ahead = False      # built before its submission came (grader/hosts/ahead.py)

    def __init__(self, solution_dir, code_dir=None, mode=None, limits=None):
        self.solution_dir = solution_dir
        self.code_dir = code_dir or compiled_code()
        self.mode = mode or detect_mode()
        self.plan = plan(self.mode)
        self.limits = {**LIMITS, **(limits or {})}
        self.uid = None  # chosen in start() (grader/hosts/uids.py), the grader's own if not root
        self.test_uids = []    # the tests' uids handed out and not released yet
        self._spare_uids = []  # fresh uids taken from /proc in one look (plain mode)
        self.proc = None
        self.problem = None
        self.data = None
        self._errors = {}      # a server's stderr fd -> its ServerProcess (one reader thread)
        self._errors_lock = threading.Lock()
        self._errors_reader = None
        self._lock = threading.Lock()
        self._job = None
        self._stderr = bytearray()
        self._cgroups = []

    # -- lifecycle -------------------------------------------------------------------------
    def start(self):
        """Start the zygote; returns self once it is ready. The launcher gets a parent-death
        signal tied to the calling thread: start sandboxes from a thread that outlives them."""
        try:
            self.uid = uids.allocate(check_live=not self.isolated) if os.geteuid() == 0 \
                else os.getuid()
        except uids.NoFreeUid as exc:
            raise SandboxError(str(exc)) from None
        self._job = tempspace.mkdtemp("job")
        _live.add(self)
        os.chmod(self._job, 0o711)
        root = os.path.join(self._job, "root")
        os.mkdir(root)
        private = self.plan["unprivileged_uid"]
        if self.mode == "plain":
            self._lay_out_plain(private)
            if private:  # for the next grader run, should this one be killed
                tempspace.record_uid(self._job, self.uid)
        if self.plan["cgroups"]:
            self._cgroups = make_cgroups(os.path.basename(self._job), self.plan["cgroups"])
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg = {"mode": self.mode, "root": root,
               "code": self.code_dir, "solution": self.solution_dir,
               "work": os.path.join(self._job, "work"), "tmp": os.path.join(self._job, "tmp"),
               "data": os.path.join(self._job, "data"), "uid": self.uid,
               "host_uid": os.getuid(), "host_gid": os.getgid(),
               "parent": os.getpid(), "plan": self.plan,
               "limits": self.limits, "disk_mib": DISK_MIB,
               "given_times_ns": boundary.GIVEN_TIMES_NS,
               "cgroups": [os.path.join(path, "cgroup.procs") for path in self._cgroups],
               "ahead": self.ahead}
        python = SYSTEM_PYTHON if self.mode != "plain" or os.path.exists(SYSTEM_PYTHON) \
            else sys.executable
        self.proc = subprocess.Popen(
            [python, "-I", ZYGOTE, str(theirs.fileno())], pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        theirs.close()
        self._ctl = ours
        try:  # the configuration goes over the socket, never on a command line
            ours.send(json.dumps(cfg).encode())
        except OSError as exc:
            raise SandboxError(f"the sandbox did not start ({exc})") from None
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        ready = self._receive(START_TIMEOUT)
        if not ready.get("ready"):
            self.problem = ready.get("problem") or "the sandbox did not start"
            raise SandboxError(self.problem)
        data = self.host_path(self.inner("data"))
        try:  # opened now, before any learner code runs: see grader/boundary.py; the grader's
            # own (with private uids, each test's folder in it belongs to that test's uid)
            self.data = boundary.Folder.trusted(data, expect_uid=os.geteuid())
        except OSError as exc:
            raise SandboxError(f"the data area cannot be opened: {exc}") from None
        if self.isolated:  # each test's folder a file system of its own (grader/hosts/volumes.py)
            self.data = volumes.DataArea(self.data.fd, self.command)
        return self

    def _lay_out_plain(self, private):
        """Plain mode's folders. With private uids: work (HOME) and tmp (TMPDIR) root's and
        empty, readable and not writable (nothing to keep between tests there); data root's,
        0711 (a test's uid reaches its own folder in it, made by the grader, and cannot list or
        write the rest); the solution readable by the sandbox's group and nobody else (root's,
        0750), so that it cannot change what is graded (the folder above it must let others
        through: the workspace the grader makes for it does, kinds.SandboxKind.workspace).
        Without root, all three are the grader's own (0700): a self-check only
        (grader/hosts/plainmode.py)."""
        for name, mode in (("work", 0o755), ("data", 0o711), ("tmp", 0o755)):
            path = os.path.join(self._job, name)
            os.mkdir(path, 0o700)
            if private:
                os.chmod(path, mode)
            boundary.given_times(path)
        if private:
            os.chown(self.solution_dir, 0, self.uid)
            os.chmod(self.solution_dir, 0o750)

    def _drain(self, stream):
        """Keep the zygote's first 64 KiB of stderr. `stream` is held from the start: `close()`
        may drop `self.proc` while this thread still reads its last bytes."""
        try:
            for chunk in iter(lambda: stream.read1(65536), b""):
                if len(self._stderr) < 65536:
                    self._stderr += chunk[:65536 - len(self._stderr)]
        except (OSError, ValueError):  # the pipe was closed under it: nothing more to keep
            pass

    def watch_stderr(self, fd, server):
        """Keep what `server` writes on `fd` (its stderr), read by one thread per sandbox."""
        with self._errors_lock:
            self._errors[fd] = server
            if self._errors_reader is None:
                self._errors_reader = threading.Thread(target=self._read_errors, daemon=True)
                self._errors_reader.start()

    def _read_errors(self):
        poller, watched = select.poll(), set()
        while True:
            with self._errors_lock:
                current = dict(self._errors)
                if not current and self.proc is None:
                    self._errors_reader = None
                    return
            for fd in current.keys() - watched:
                poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
                watched.add(fd)
            for fd, _ in poller.poll(100):
                server = current.get(fd)
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if chunk and server is not None:
                    server.keep_stderr(chunk)
                    continue
                poller.unregister(fd)
                watched.discard(fd)
                with self._errors_lock:
                    self._errors.pop(fd, None)
                os.close(fd)

    def lend(self, lending):
        """While its checks wait on the clock the submission lends its busy slot to another
        learner: its servers (idle, if honest) then get almost no CPU when others want it, so
        one that spins cannot slow the learners who are busy. Root mode only (its cgroups);
        plain mode never lends."""
        for path in list(self._cgroups):
            if os.path.exists(os.path.join(path, "cpu.shares")):  # its cpu controller's
                try:
                    with open(os.path.join(path, "cpu.shares"), "w") as handle:
                        handle.write(LENDING_SHARES if lending else
                                     CGROUP_LIMITS["cpu"]["cpu.shares"])
                except OSError:  # the sandbox ended meanwhile (its budget ran out): no servers
                    pass

    def kill(self):
        """End the whole sandbox now (safe from any thread; close() still cleans up)."""
        proc = self.proc
        if proc is None:
            return
        plain_without_uid = self.mode == "plain" and not self.plan["unprivileged_uid"]
        if plain_without_uid:  # before the zygote dies: its orphans are re-parented to it
            reaper.kill_descendants(proc.pid, REAP_SECONDS)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        if self.mode == "plain" and self.plan["unprivileged_uid"]:
            for uid in [self.uid, *self.test_uids]:
                reaper.kill_uid(uid, REAP_SECONDS)

    def close(self):
        if self.data is not None:
            self.data.close()
            self.data = None
        if self.proc is not None:
            try:
                self._ctl.send(json.dumps({"op": "quit"}).encode())
            except OSError:
                pass
            self.kill()
            self.proc.wait()
            self._ctl.close()
            self.proc = None
        if self.mode == "plain" and self.plan["unprivileged_uid"] and self.uid is not None:
            for uid in [self.uid, *self.test_uids]:
                if not reaper.kill_uid(uid, REAP_SECONDS):
                    sys.stderr.write(f"[grader] warning: processes of uid {uid} outlived "
                                     f"{REAP_SECONDS:g} s of SIGKILL (the uid is not used "
                                     "again)\n")
                reaper.clean_shared(uid)
        self.test_uids = []
        if self._job:
            boundary.remove_tree(self._job)
            self._job = None
        for path in self._cgroups:
            tempspace.remove_cgroup(path)
        self._cgroups = []
        _live.discard(self)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # -- paths ---------------------------------------------------------------------------
    @property
    def isolated(self):
        return self.mode in ("root", "userns")

    def inner(self, name):
        """Where the server sees code, solution, work and data."""
        if self.isolated:
            return f"/sandbox/{name}"
        return {"code": self.code_dir, "solution": self.solution_dir}.get(
            name, os.path.join(self._job or "", name))

    def host_path(self, inner_path):
        """Where the grader finds what the server sees at `inner_path` (used once, in start(),
        to open `data` while no learner code has run; never to read or write later)."""
        if self.isolated:
            return f"/proc/{self.proc.pid}/root{self._job}/root{inner_path}"
        return inner_path

    # -- commands ------------------------------------------------------------------------
    def _receive(self, timeout, fds=None):
        """The zygote's answer; the descriptors that came with it are added to `fds` (closed
        when None)."""
        ready, _, _ = select.select([self._ctl], [], [], timeout)
        if not ready:
            raise SandboxError("the sandbox did not answer in time")
        try:
            data, received, _, _ = socket.recv_fds(self._ctl, 65536, 8)
        except OSError as exc:
            raise SandboxError(f"the sandbox is gone ({exc})") from None
        if fds is None:
            for fd in received:
                os.close(fd)
        else:
            fds.extend(received)
        if not data:
            raise SandboxError("the sandbox is gone: " + self.stderr_tail())
        return json.loads(data)

    def command(self, op, fds=(), timeout=10.0, received=None, **fields):
        """The zygote's answer to `op`; `fds` go with the request, and the descriptors that
        come with the answer are added to `received` (closed when None)."""
        with self._lock:
            if self.proc is None:
                raise SandboxError("the sandbox is closed")
            try:
                socket.send_fds(self._ctl, [json.dumps({"op": op, **fields}).encode()],
                                list(fds))
            except OSError as exc:
                raise SandboxError(f"the sandbox is gone ({exc})") from None
            reply = self._receive(timeout, received)
        if "error" in reply:
            raise SandboxError(reply["error"])
        return reply

    def identity(self):
        """Who a test's servers run as: with private uids, a fresh uid no live process has
        (named in the job folder, so that a later run can end what a killed grader left);
        else None (the sandbox's own uid)."""
        if not self.plan["unprivileged_uid"]:
            return None
        if not self._spare_uids:
            try:
                self._spare_uids = uids.allocate_many(
                    16, check_live=not self.isolated, busy=[self.uid, *self.test_uids])
            except uids.NoFreeUid as exc:
                raise SandboxError(str(exc)) from None
        uid = self._spare_uids.pop(0)
        if self.mode == "plain":
            tempspace.record_uid(self._job, uid)
        self.test_uids.append(uid)
        return uid

    def release(self, identity):
        """A test is over: end every process that ran as its `identity` (daemons in new
        sessions included) and, in plain mode, what it left in the shared temp folders."""
        if identity is None or identity not in self.test_uids:
            return
        self.test_uids.remove(identity)
        reply = self.command("release", uid=identity, timeout=REAP_SECONDS + 10)
        if self.mode == "plain":
            if not reply.get("ok"):
                reaper.kill_uid(identity, REAP_SECONDS)
            reaper.clean_shared(identity)

    def spawn(self, argv, private=(), identity=None):
        """Fork a notes server in the sandbox; returns a ServerProcess. Its command line is
        `main.py` + `argv` (the same for every server of a submission); `private` (this test's
        inputs) reach only its options; it runs as `identity` (see `identity()`). In the
        namespaces its standard streams are FIFOs the zygote's mounter makes on a file system of
        their own (a pipe's inode number is the machine's next: zygote.py, `Volumes`); else
        pipes."""
        if self.isolated:
            ends = []
            try:
                reply = self.command("spawn", received=ends, argv=list(argv),
                                     private=list(private), uid=identity)
            except BaseException:
                for fd in ends:
                    os.close(fd)
                raise
            if len(ends) != 3:
                for fd in ends:
                    os.close(fd)
                raise SandboxError("the sandbox gave a server no standard streams")
            return ServerProcess(self, reply["pid"], *ends)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        try:
            reply = self.command("spawn", fds=(stdin_r, stdout_w, stderr_w), argv=list(argv),
                                 private=list(private), uid=identity)
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        return ServerProcess(self, reply["pid"], stdin_w, stdout_r, stderr_r)

    def sweep(self):
        """Kill every process in the sandbox except the zygote (between tests)."""
        self.command("sweep")

    def stderr_tail(self):
        return bytes(self._stderr[-2000:]).decode("utf-8", "replace")

    def protections(self):
        return dict(self.plan)


def kill_all():
    """Kill every sandbox this process started and has not closed (it is about to exit)."""
    for box in list(_live):
        box.kill()


class ServerProcess:
    """One forked notes server: pipes for the client, its stderr, and how to stop it.

    Writing to it never blocks for more than `SEND_TIMEOUT` seconds (a server that does not
    read its input is treated as gone); its stdout is read by the grader's harness from
    `stdout_fd`; at most 32 KiB of its stderr is kept."""

    def __init__(self, sandbox, pid, stdin_fd, stdout_fd, stderr_fd):
        self.sandbox, self.pid = sandbox, pid
        self.stdout_fd = stdout_fd
        self._stdin = stdin_fd
        os.set_blocking(stdin_fd, False)
        self._stdin_lock = threading.Lock()
        self._closing = False
        self._stderr = bytearray()
        self._poller = None
        self.exit_code = None
        sandbox.watch_stderr(stderr_fd, self)

    def read(self, timeout):
        """Up to 64 KiB of its stdout: b"" at its end, None when nothing came in `timeout`."""
        if self._poller is None:
            self._poller = select.poll()
            self._poller.register(self.stdout_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        if not self._poller.poll(int(timeout * 1000)):
            return None
        try:
            return os.read(self.stdout_fd, 65536)
        except OSError:
            return b""

    def kill(self):
        """SIGKILL to its process group (the zygote reaps it)."""
        try:
            self.sandbox.command("kill", pid=self.pid)
        except Exception:
            pass

    def keep_stderr(self, chunk):
        if len(self._stderr) < 32768:
            self._stderr += chunk[:32768 - len(self._stderr)]

    def send(self, data):
        view, deadline = memoryview(data), time.monotonic() + SEND_TIMEOUT
        with self._stdin_lock:
            while view:
                if self._stdin is None or self._closing or time.monotonic() > deadline:
                    raise wire.ConnectionClosed("the server's input is closed or full")
                try:
                    view = view[os.write(self._stdin, view):]
                except BlockingIOError:
                    poller = select.poll()
                    poller.register(self._stdin, select.POLLOUT)
                    poller.poll(100)
                except OSError:  # the server is gone
                    raise wire.ConnectionClosed("the server's input is closed") from None

    def stderr(self):
        return bytes(self._stderr).decode("utf-8", "replace")

    def close_input(self):
        self._closing = True
        with self._stdin_lock:
            if self._stdin is not None:
                os.close(self._stdin)
                self._stdin = None

    def close_output(self):
        """Close our end of its stdout (once nothing reads it any more)."""
        if self.stdout_fd is not None:
            os.close(self.stdout_fd)
            self.stdout_fd = None

    def stop(self, grace=2.0):
        """Close its stdin, give it `grace` seconds to exit, then kill its process group."""
        self.close_input()
        try:
            status = self.sandbox.command("status", pid=self.pid, wait=grace,
                                          timeout=grace + 5)["exit"]
            if status is None:
                self.sandbox.command("kill", pid=self.pid)
                status = self.sandbox.command("status", pid=self.pid, wait=2,
                                              timeout=7)["exit"]
            self.exit_code = status
        except SandboxError:
            pass
        return self.exit_code

    def status(self, wait=0.0):
        """Its exit code, waiting up to `wait` seconds for it; None while it runs."""
        try:
            return self.sandbox.command("status", pid=self.pid, wait=wait,
                                        timeout=wait + 10)["exit"]
        except SandboxError:
            return None
