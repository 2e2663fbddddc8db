"""The grader's side of the sandbox: start it for one submission, fork servers in it, stop it.

`Sandbox(solution_dir, code_dir)` starts grader/zygote.py under the system interpreter
(`/usr/bin/python3 -I`) in a new session. The zygote builds the isolation it can (see its
docstring), then forks a fresh notes server per `spawn()`; the grader talks MCP to each over
plain pipes, so one interpreter start serves every test of a submission. `browse()` performs
one HTTP request from inside the sandbox's network namespace (the setup page of exercise 3
listens on the sandbox's own loopback). `host_path()` maps a path the server sees to the path
the grader reads: with namespaces, the sandbox's tmpfs is reached through
/proc/<launcher>/root, and everything in it disappears with the sandbox.

`detect_mode()` picks the strongest isolation this machine offers and `protections()` says
what was in force; both fall back (root namespaces -> user namespace -> plain) instead of
refusing to grade.

Deliberate simplifications: uids for parallel sandboxes come from a pid-derived range, not
from a registry; Linux only for the isolated modes.
"""

import atexit
import itertools
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import wire  # noqa: E402  (code/wire.py, the grader's trusted copy)
from grader.paths import CODE_DIR

ZYGOTE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zygote.py")
SYSTEM_PYTHON = "/usr/bin/python3"
HELPER_UID = 65534  # nobody: runs the browser helper, never learner code
LIMITS = {"memory_mib": 1024, "file_mib": 8, "files_open": 256, "cpu_s": 20,
          "processes": 96}
DISK_MIB = 64
CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_LIMITS = {"pids": {"pids.max": "160"},
                 "memory": {"memory.limit_in_bytes": str(1536 << 20)},
                 "cpu": {"cpu.shares": "1024"}}
START_TIMEOUT = 20.0
_uids = itertools.count()
_mode_cache = {}


class SandboxError(Exception):
    """The sandbox could not do what was asked (it died, or did not answer in time)."""


def _next_uid():
    return 200000 + (os.getpid() % 16384) * 64 + next(_uids) % 64


def detect_mode():
    """The strongest mode that really works here: "root", "userns" or "plain" (cached)."""
    if "mode" in _mode_cache:
        return _mode_cache["mode"]
    candidates = []
    if sys.platform.startswith("linux") and os.path.exists(SYSTEM_PYTHON):
        candidates += ["root"] if os.geteuid() == 0 else ["userns"]
    if os.environ.get("GRADER_SANDBOX") in ("userns", "plain"):  # only ever weaker, to test
        candidates = [c for c in candidates if c == os.environ["GRADER_SANDBOX"]]
    mode = "plain"
    code = compiled_code()
    for candidate in candidates:
        empty = tempfile.mkdtemp(prefix="grader-probe-")
        box = Sandbox(empty, code, mode=candidate)
        try:
            box.start()
            mode = candidate
            break
        except SandboxError:
            continue
        finally:
            box.close()
            shutil.rmtree(empty, ignore_errors=True)
    _mode_cache["mode"] = mode
    return mode


def compiled_code():
    """A private copy of code/*.py with bytecode compiled by the sandbox's interpreter."""
    if "code" in _mode_cache:
        return _mode_cache["code"]
    source = CODE_DIR
    target = os.path.join(tempfile.mkdtemp(prefix="grader-code-"), "code")
    atexit.register(shutil.rmtree, os.path.dirname(target), True)
    os.makedirs(target)
    os.chmod(os.path.dirname(target), 0o755)
    for name in sorted(os.listdir(source)):
        if name.endswith(".py"):
            shutil.copy2(os.path.join(source, name), os.path.join(target, name))
    python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
    subprocess.run([python, "-I", "-m", "compileall", "-q", target], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for folder, dirs, files in os.walk(target):
        for name in dirs + files:
            os.chmod(os.path.join(folder, name), 0o755 if name in dirs else 0o644)
    _mode_cache["code"] = target
    return target


def make_cgroups(name):
    """cgroup v1 groups (pids, memory, cpu) for one sandbox, below the grader's own; the
    launcher joins them before it forks anything. Whatever cannot be made is skipped."""
    made = {}
    try:
        with open("/proc/self/cgroup") as handle:
            mine = {line.split(":")[1]: line.split(":", 2)[2].strip()
                    for line in handle if line.count(":") >= 2}
    except OSError:
        return made
    for controller, settings in CGROUP_LIMITS.items():
        parent = os.path.join(CGROUP_ROOT, controller, mine.get(controller, "/").lstrip("/"))
        path = os.path.join(parent, name)
        try:
            os.mkdir(path)
            for key, value in settings.items():
                with open(os.path.join(path, key), "w") as handle:
                    handle.write(value)
            made[controller] = path
        except OSError:
            remove_cgroups([path])
    return made


def remove_cgroups(paths):
    for path in paths:
        for _ in range(50):  # the last processes may take a moment to leave
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


class Sandbox:
    def __init__(self, solution_dir, code_dir=None, mode=None, limits=None):
        self.solution_dir = solution_dir
        self.code_dir = code_dir or compiled_code()
        self.mode = mode or detect_mode()
        self.limits = {**LIMITS, **(limits or {})}
        self.uid = _next_uid() if os.geteuid() == 0 else os.getuid()
        self.proc = None
        self.problem = None
        self._lock = threading.Lock()
        self._job = None
        self._stderr = bytearray()
        self._cgroups = []
        self.cgroup_controllers = []

    # -- lifecycle -------------------------------------------------------------------------
    def start(self):
        self._job = tempfile.mkdtemp(prefix="grader-job-")
        os.chmod(self._job, 0o711)
        root = os.path.join(self._job, "root")
        os.mkdir(root)
        if self.mode == "plain":
            for name in ("work", "data"):
                os.mkdir(os.path.join(self._job, name))
            if os.geteuid() == 0:  # only this sandbox's uid may enter its folders
                os.chmod(os.path.dirname(self.solution_dir), 0o711)
                for path in (os.path.join(self._job, "work"), os.path.join(self._job, "data"),
                             self.solution_dir):
                    os.chown(path, self.uid, self.uid)
                    os.chmod(path, 0o700)
        if self.mode == "root":
            made = make_cgroups(os.path.basename(self._job))
            self._cgroups, self.cgroup_controllers = list(made.values()), sorted(made)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg = {"mode": self.mode, "ctl_fd": theirs.fileno(), "root": root,
               "code": self.code_dir, "solution": self.solution_dir,
               "work": os.path.join(self._job, "work"), "uid": self.uid,
               "helper_uid": HELPER_UID, "host_uid": os.getuid(), "host_gid": os.getgid(),
               "drop_uid": self.mode == "plain" and os.geteuid() == 0,
               "limits": self.limits, "disk_mib": DISK_MIB,
               "cgroups": [os.path.join(path, "cgroup.procs") for path in self._cgroups]}
        python = SYSTEM_PYTHON if self.mode != "plain" or os.path.exists(SYSTEM_PYTHON) \
            else sys.executable
        self.proc = subprocess.Popen(
            [python, "-I", ZYGOTE, json.dumps(cfg)], pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        theirs.close()
        self._ctl = ours
        threading.Thread(target=self._drain, daemon=True).start()
        ready = self._receive(START_TIMEOUT)
        if not ready.get("ready"):
            self.problem = ready.get("problem") or "the sandbox did not start"
            raise SandboxError(self.problem)
        return self

    def _drain(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            if len(self._stderr) < 65536:
                self._stderr += chunk[:65536 - len(self._stderr)]

    def close(self):
        if self.proc is not None:
            try:
                self._ctl.send(json.dumps({"op": "quit"}).encode())
            except OSError:
                pass
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
            self.proc.wait()
            self._ctl.close()
            self.proc = None
        if self._job:
            shutil.rmtree(self._job, ignore_errors=True)
            self._job = None
        remove_cgroups(self._cgroups)
        self._cgroups = []

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
        """The path the grader uses to read or write what the server sees at `inner_path`."""
        if self.isolated:
            return f"/proc/{self.proc.pid}/root{self._job}/root{inner_path}"
        return inner_path

    def give(self, host_path):
        """Make a file or folder the grader created in the data area the learner's."""
        if os.geteuid() == 0 and self.mode != "userns":
            os.chown(host_path, self.uid, self.uid)

    # -- commands ------------------------------------------------------------------------
    def _receive(self, timeout):
        ready, _, _ = select.select([self._ctl], [], [], timeout)
        if not ready:
            raise SandboxError("the sandbox did not answer in time")
        try:
            data = self._ctl.recv(65536)
        except OSError as exc:
            raise SandboxError(f"the sandbox is gone ({exc})") from None
        if not data:
            raise SandboxError("the sandbox is gone: " + self.stderr_tail())
        return json.loads(data)

    def command(self, op, fds=(), timeout=10.0, **fields):
        with self._lock:
            if self.proc is None:
                raise SandboxError("the sandbox is closed")
            try:
                socket.send_fds(self._ctl, [json.dumps({"op": op, **fields}).encode()],
                                list(fds))
            except OSError as exc:
                raise SandboxError(f"the sandbox is gone ({exc})") from None
            reply = self._receive(timeout)
        if "error" in reply:
            raise SandboxError(reply["error"])
        return reply

    def spawn(self, argv):
        """Fork a notes server (`main.py` + argv) in the sandbox; returns a ServerProcess."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        try:
            reply = self.command("spawn", fds=(stdin_r, stdout_w, stderr_w), argv=list(argv))
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        return ServerProcess(self, reply["pid"], stdin_w, stdout_r, stderr_r)

    def browse(self, url, method="GET", data=None, timeout=15.0):
        """One HTTP request made from inside the sandbox; {"status", "body"} or {"error"}."""
        read_end, write_end = os.pipe()
        try:
            self.command("browse", fds=(write_end,), url=url, method=method, data=data)
        except SandboxError:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        chunks, deadline = [], time.monotonic() + timeout
        with os.fdopen(read_end, "rb") as pipe:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                chunk = pipe.read1(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        try:
            return json.loads(b"".join(chunks))
        except ValueError:
            return {"error": "the browser helper gave no answer"}

    def sweep(self):
        """Kill every process in the sandbox except the zygote (between tests)."""
        self.command("sweep")

    def stderr_tail(self):
        return bytes(self._stderr[-2000:]).decode("utf-8", "replace")

    def protections(self):
        root = os.geteuid() == 0
        dropped = (self.mode == "root") or (self.mode == "plain" and root)
        return {
            "mode": self.mode,
            "isolated_python": True,
            "minimal_environment": True,
            "fresh_working_folder": True,
            "rlimits": sorted(["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
                               "RLIMIT_CORE"] + (["RLIMIT_NPROC"] if dropped else [])),
            "unprivileged_uid": dropped,
            "no_capabilities": dropped or self.mode == "userns" or not root,
            "network_namespace": self.isolated,
            "private_filesystem": self.isolated,
            "pid_namespace": self.isolated,
            "disk_quota_mib": DISK_MIB if self.isolated else None,
            "cgroups": self.cgroup_controllers or None,
            "timeouts": True,
            "process_group_killed": True,
        }


class ServerProcess:
    """One forked notes server: pipes for the client, its stderr, and how to stop it."""

    def __init__(self, sandbox, pid, stdin_fd, stdout_fd, stderr_fd):
        self.sandbox, self.pid = sandbox, pid
        self.stdin = os.fdopen(stdin_fd, "wb", buffering=0)
        self.stdout = os.fdopen(stdout_fd, "rb")
        self._stderr = bytearray()
        self._stderr_fd = stderr_fd
        self.exit_code = None
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        with os.fdopen(self._stderr_fd, "rb") as pipe:
            for chunk in iter(lambda: pipe.read1(65536), b""):
                if len(self._stderr) < 32768:
                    self._stderr += chunk[:32768 - len(self._stderr)]

    def send(self, data):
        try:
            self.stdin.write(data)
        except (OSError, ValueError):  # the server is gone or we closed its input
            raise wire.ConnectionClosed("the server's input is closed") from None

    def stderr(self):
        return bytes(self._stderr).decode("utf-8", "replace")

    def close_input(self):
        try:
            self.stdin.close()
        except OSError:
            pass

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
