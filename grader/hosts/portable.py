"""The portable self-check host: your own code, on your own machine, any operating system.

`ui.revisar` must work on macOS, Windows and Linux without root, where the official grader's
sandbox (grader/hosts/sandbox.py: Linux namespaces, a forking zygote, SOCK_SEQPACKET, prctl,
seccomp) cannot start. Here each notes server is a plain process of your own user running
`grader/hosts/launch.py code serve --solution ...` (the same command line for every server; a
test's own options come in on its standard input), talking MCP over its pipes exactly as in
the sandbox; notes live in a temporary folder read and written by path
(grader/hosts/plainfs.py); the checks, the client and the feedback are the same code as in
official grading (grader/checks/channels.py drives both through the same process interface).

How a server starts, fastest first:
- where the system has fork (Linux, macOS), the host's fork server forks it
  (grader/hosts/forks.py, `launch.py code --fork-server`: one warm process per host, started
  when the host starts or ahead of it by the warm helper, grader/warm.py; it has imported the
  course's server and runs no learner code). Each check's host has its own, ended with it;
- elsewhere (Windows), or when the fork server does not answer (it could not start or died),
  a subprocess `sys.executable -I launch.py ...`, which imports the course's server itself.
Either way the server sees the same command line, the same options and the same folder, and
has the same interface here (PortableProcess, forks.ForkedProcess). Each spawn also starts the
next server (the spare) while the test runs: it loads the solution only when its own test's
options come in; the last spare is ended with the host.

What is NOT in force here, and every report says so (`PLAN`): no separate user, no private
filesystem or network, no memory, CPU or process limits, no seccomp: the code you wrote runs
with your own rights, as it does when you run the notebooks. That is fine for a self-check
(nobody else's code runs here) and is why the grade comes from the official grader, which keeps
the full sandbox. Timeouts and the submission's time budget still hold.

Nothing here imports a Linux-only module (tests/grader/test_selfcheck.py and
tests/laptop/test_laptop_portable_static.py check it statically): no poll, no
fcntl/resource/prctl; fork and descriptor passing only in grader/hosts/forks.py, behind its
`POSSIBLE` check; reading a server's output is a blocking read on a thread, which every
platform has.

Deliberate simplifications: a server's own children are not tracked (killing the server does
not kill what it forked); writes to a server are plain blocking writes.
"""

import os
import subprocess
import sys
import threading

from grader.errors import HostError
from grader.hosts.piped import PipedServer
from grader.hosts.plainfs import SelfCheckHost
from grader.hosts.protections import self_check_plan
from grader.paths import CODE_DIR

LAUNCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
NOTICE = ("Autoevaluación en modo local (sin aislamiento): tu código corre en tu máquina con tus "
          "propios permisos (sin otro usuario, sin límites de memoria ni de procesos, con tu red "
          "y tus archivos). Solo sirve para practicar: la nota la pone el corrector oficial, con "
          "todas las protecciones.")
# -I: no user site, no PYTHON* variables; a fresh folder; every call and the budget timed
PLAN = self_check_plan("portable", "isolated_python", "fresh_working_folder", "timeouts",
                       "budget_watchdog")


def server_env():
    """A server's environment: this one without PYTHON* and NOTES_* variables, UTF-8 pipes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NOTES_"))}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


class PortableProcess(PipedServer):
    """One server subprocess with the interface the harness drives (see grader/hosts/): its
    command line is `argv` (the same for every server of a submission), and `private` (this
    test's options) goes in on its standard input (grader/hosts/launch.py)."""

    def __init__(self, argv, cwd):
        try:
            self.proc = subprocess.Popen([sys.executable, "-I", LAUNCH, CODE_DIR, *argv],
                                         cwd=cwd, env=server_env(), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         bufsize=0)
        except OSError as exc:
            raise HostError(f"no se pudo arrancar el servidor ({exc})") from None
        self.pid = self.proc.pid
        self.attach(self.proc.stdin, self.proc.stdout, self.proc.stderr)

    def kill(self):
        try:
            self.proc.kill()
        except OSError:
            pass

    def status(self, wait=0.0):
        try:
            return self.proc.wait(timeout=wait) if wait else self.proc.poll()
        except subprocess.TimeoutExpired:
            return None


_ahead = []  # a fork server started before its host was built (grader/warm.py), at most one


def start_ahead():
    """Start the fork server of this process's next host now (the warm helper does, before it
    waits for its one check: the fork server's Python start and imports are paid by then)."""
    from grader.hosts.forks import ForkServer  # here: JupyterLite's page never loads it
    forks = ForkServer.start(LAUNCH, CODE_DIR, server_env())
    if forks is not None:
        _ahead.append(forks)


def fork_server():
    """The fork server started ahead when it is still there, else a new one (None where the
    system has no fork); each is used by one host only."""
    from grader.hosts.forks import ForkServer
    while _ahead:
        forks = _ahead.pop()
        if not forks.lost and forks.process.poll() is None:
            return forks
        forks.close()
    return ForkServer.start(LAUNCH, CODE_DIR, server_env())


class PortableHost(SelfCheckHost):
    """Servers as subprocesses of this Python, notes in a temporary folder."""

    processes = True
    mode = "portable"
    plan = PLAN
    notice = NOTICE
    folders = ("data", "work")  # work: every server's working folder

    def __init__(self, solution_dir, workspace, fork_server=True):
        super().__init__(solution_dir, workspace)
        self._live = []
        self._spare = None  # (argv, the next launched server: started, waiting for its options)
        self._lock = threading.Lock()
        self._fork_server = fork_server  # False: every server launched (Windows' way)
        self.forks = None  # the fork server, where there is one (grader/hosts/forks.py)

    def start(self):
        super().start()
        if self._fork_server:
            self.forks = fork_server()
        return self

    def spawn(self, argv, private=(), identity=None):
        """A server for one test: the spare started after the previous spawn when it has the
        same command line (its start already paid), else a new one; then the next spare is
        started, while this test runs. Each is forked by the fork server where there is one,
        else launched (its Python's start and the server's imports paid while waiting)."""
        argv = list(argv)
        work = os.path.join(self.root, "work")
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and (spare[0] != argv or spare[1].status() is not None):
            spare[1].kill()
            spare[1].status(wait=5.0)
            spare = None
        process = spare[1] if spare is not None else self._server(argv, work)
        with self._lock:
            self._live.append(process)
        process.begin(private)
        following = self._server(argv, work, wait=False)  # forked while this test runs
        with self._lock:
            self._live.append(following)  # ended with the others by sweep, kill and close
            self._spare = (argv, following)
        return process

    def _server(self, argv, work, wait=True):
        """A new server waiting for its options: forked when the fork server answers (`wait`:
        once it said so, else ahead, as a spare: one that never comes is replaced), else
        launched."""
        forked = self.forks.spawn(argv, work, wait) if self.forks is not None else None
        return forked if forked is not None else PortableProcess(argv, work)

    def sweep(self):
        with self._lock:
            live, self._live, self._spare = self._live, [], None
        for process in live:
            process.kill()

    def kill(self):
        self.sweep()

    def close(self):
        with self._lock:
            live, self._live, self._spare = self._live, [], None
        for process in live:
            process.kill()
            process.status(wait=5.0)
            process.close_input()
            process.close_output()
        if self.forks is not None:
            self.forks.close()
