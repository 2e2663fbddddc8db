"""The portable host's fork server, where the system has fork (Linux, macOS): its servers forked
from one warm process instead of a new Python each.

A new Python for every notes server pays its start and the import of the course's server again
(about 70 ms of CPU each, many servers per check). `ForkServer.start()` launches one process,

    python -I grader/hosts/launch.py CODE_DIR --fork-server

that imports and warms up the course's server once (as every launched server does), runs no
learner code, and forks one child per server on request (grader/hosts/launch.py describes the
requests). `spawn` hands it three fresh pipes (the server's standard input, output and error,
passed as descriptors over a socketpair, as multiprocessing's forkserver does) and the common
command line; the `ForkedProcess` it returns has the same interface as the launched
`PortableProcess` (begin, read, send, close_input, close_output, kill, status, stderr, pid), so
the checks cannot tell them apart. Each server is a child of the fork server, which reports its
exit status over the socket; `kill` is SIGKILL from here to its pid while no exit has been
reported (the same user: allowed on Linux and macOS).

Where fork or descriptor passing is missing (Windows: `POSSIBLE` is false), `start` returns
None and nothing here runs; the host launches its servers as before. Whenever the fork server
does not answer (it could not start, died, or refused), `spawn` returns None and the host falls
back the same way: from then on every server of the check is launched. Its servers still die
with it: when its socket ends it kills every child, and if it died first (killed from outside),
the host kills them (a test using one then sees its server die, as with a launched one killed).

A spawn need not wait for the fork: its pipes work at once (what is sent waits in them), and
the pid comes in on the fork server's socket (answers come in the order of the requests); the
host waits only for the first server of a test, and lets the next test's spare be forked
while this one runs. A server killed before its pid came is killed when it comes.

Deliberate simplifications: requests go one at a time over the socket; a server's own children
are not tracked, as for a launched server; `kill` signals a pid the fork server may have reaped
a moment before its report came in (a pid is not reused that fast in practice).
"""

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import threading

from grader.hosts.piped import PipedServer

POSSIBLE = sys.platform != "win32" and hasattr(os, "fork") and hasattr(socket, "send_fds")
ANSWER_TIMEOUT = 10.0  # seconds a spawn waits for its pid (the first one: the fork server's start)
STOP_TIMEOUT = 5.0


class ForkServer:
    """One fork server process, the socket to it, and the servers it forked."""

    def __init__(self, process, control):
        self.process, self.control = process, control
        self.lost = False          # it died, refused or stopped: no more spawns from it
        self._waiting = collections.deque()  # ForkedProcesses whose pid has not come yet
        self._servers = {}         # pid -> ForkedProcess not reported ended yet
        self._changed = threading.Condition()
        self._asking = threading.Lock()  # one request at a time
        threading.Thread(target=self._listen, daemon=True, name="fork-server").start()

    @classmethod
    def start(cls, launch, code_dir, env):
        """A fork server for `code_dir`'s server, or None where fork is missing or it cannot
        start."""
        if not POSSIBLE:
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            process = subprocess.Popen([sys.executable, "-I", launch, code_dir, "--fork-server"],
                                       stdin=theirs.fileno(), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env=env)
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        return cls(process, ours)

    def _listen(self):
        """Its answers and exit reports, until its socket ends."""
        buffer = b""
        while True:
            try:
                chunk = self.control.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if "pid" in message:
                    self._forked(message["pid"])
                elif "exit" in message:
                    with self._changed:
                        server = self._servers.pop(message["exit"], None)
                        if server is not None:
                            server.exit_status = message.get("status")
                        self._changed.notify_all()
        with self._changed:
            self.lost = True
            orphans, self._servers = list(self._servers.values()), {}
            never, self._waiting = list(self._waiting), collections.deque()
            for server in never:  # asked for, never forked (or never said so)
                server.exit_status = -signal.SIGKILL
            self._changed.notify_all()
        for server in orphans:  # it died before them: they end here, as they would with it
            self._signal(server.known_pid)
            with self._changed:
                server.exit_status = -signal.SIGKILL
                self._changed.notify_all()

    def _forked(self, pid):
        with self._changed:
            if not self._waiting:
                return
            server = self._waiting.popleft()
            server.known_pid = pid
            self._servers[pid] = server
            killed = server.killed
            self._changed.notify_all()
        if killed:  # killed before its pid came
            self._signal(pid)

    def spawn(self, argv, cwd, wait=True):
        """A server forked for `argv` (the common command line) in `cwd`, waiting for its
        options; None when the fork server cannot give one (the host launches it instead).
        `wait`: until its pid came (else it may still come, or the server may end unforked:
        its status says so)."""
        if self.lost:
            return None
        pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        request = json.dumps({"argv": list(argv), "cwd": cwd}).encode()
        server = ForkedProcess(self, *ours)
        sent = False
        with self._asking:
            with self._changed:
                if not self.lost:
                    self._waiting.append(server)
            try:
                if server in self._waiting:
                    socket.send_fds(self.control,
                                    [len(request).to_bytes(4, "big") + request], theirs)
                    sent = True
            except OSError:
                with self._changed:
                    self._waiting.remove(server)  # never asked for: no pid will come for it
            finally:
                for fd in theirs:
                    os.close(fd)
        if sent and wait:
            with self._changed:
                self._changed.wait_for(lambda: server.known_pid is not None or self.lost,
                                       timeout=ANSWER_TIMEOUT)
        if sent and (not wait or server.known_pid is not None):
            return server
        self.lost = True  # silent or gone: the host launches its servers from now on
        server.kill()  # a pid that still comes is killed then (its answer keeps its place)
        server.close_input()
        server.close_output()
        self.stop()
        return None

    def pid(self, server, wait):
        with self._changed:
            self._changed.wait_for(lambda: server.known_pid is not None
                                   or server.exit_status is not None, timeout=wait)
            return server.known_pid

    def status(self, server, wait):
        with self._changed:
            if wait:
                self._changed.wait_for(lambda: server.exit_status is not None, timeout=wait)
            return server.exit_status

    def kill(self, server):
        """SIGKILL to a server not reported ended (so its pid is still its); one whose pid has
        not come yet is killed when it comes."""
        with self._changed:
            server.killed = True
            pid = server.known_pid if server.exit_status is None else None
        if pid is not None:
            self._signal(pid)

    @staticmethod
    def _signal(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    def stop(self):
        """End it: its socket closes for writing, so it kills every server still running,
        reaps them (their statuses still come in) and exits."""
        self.lost = True
        try:
            self.control.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def close(self):
        self.stop()
        with self._changed:
            self._changed.wait_for(lambda: not self._servers and not self._waiting,
                                   timeout=STOP_TIMEOUT)
        self.control.close()


class ForkedProcess(PipedServer):
    """One server forked by the fork server, with the interface the harness drives (the same
    as grader/hosts/portable.py's PortableProcess)."""

    def __init__(self, forks, stdin, stdout, stderr):
        self.forks = forks
        self.known_pid = None    # once the fork server said it (ForkServer's lock)
        self.exit_status = None  # once it ended (as subprocess gives it: -9 when killed)
        self.killed = False
        self.attach(open(stdin, "wb", buffering=0), open(stdout, "rb", buffering=0),
                    open(stderr, "rb", buffering=0))

    @property
    def pid(self):
        """Its pid (waited for while the fork server has not said it yet); None if it never
        came."""
        return self.forks.pid(self, ANSWER_TIMEOUT)

    def kill(self):
        self.forks.kill(self)

    def status(self, wait=0.0):
        return self.forks.status(self, wait)
