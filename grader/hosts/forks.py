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
back the same way: a check never fails because of this shortcut. Its servers still die with
it: when its socket ends it kills every child, and if it died first, the host kills them.

Deliberate simplifications: one request at a time (a spawn waits for its pid); a server's own
children are not tracked, as for a launched server.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading

from shared import wire

POSSIBLE = sys.platform != "win32" and hasattr(os, "fork") and hasattr(socket, "send_fds")
ANSWER_TIMEOUT = 10.0  # seconds a spawn waits for its pid (the first one: the fork server's start)
STOP_TIMEOUT = 5.0
STDERR_KEPT = 32768


class ForkServer:
    """One fork server process, the socket to it, and the exit statuses it reported."""

    def __init__(self, process, control):
        self.process, self.control = process, control
        self.lost = False          # it died, refused or stopped: no more spawns from it
        self._exits = {}           # pid -> exit status (as subprocess gives it)
        self._servers = {}         # pid -> ForkedProcess not yet ended
        self._answers = []         # {"pid": ...} answers not yet taken
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
            with self._changed:
                for line in lines:
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue
                    if "exit" in message:
                        self._exits[message["exit"]] = message.get("status")
                        self._servers.pop(message["exit"], None)
                    elif "pid" in message:
                        self._answers.append(message["pid"])
                self._changed.notify_all()
        with self._changed:
            self.lost = True
            orphans, self._servers = self._servers, {}
            self._changed.notify_all()
        for pid in orphans:  # it died before them: they end here, as they would with it
            self._signal(pid)
            with self._changed:
                self._exits.setdefault(pid, -signal.SIGKILL)
                self._changed.notify_all()

    def spawn(self, argv, cwd):
        """A server forked for `argv` (the common command line) in `cwd`, waiting for its
        options; None when the fork server cannot give one (the host launches it instead)."""
        if self.lost:
            return None
        pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        request = json.dumps({"argv": list(argv), "cwd": cwd}).encode()
        pid = None
        with self._asking:
            try:
                socket.send_fds(self.control, [len(request).to_bytes(4, "big") + request],
                                theirs)
                with self._changed:
                    self._changed.wait_for(lambda: self._answers or self.lost,
                                           timeout=ANSWER_TIMEOUT)
                    if self._answers:
                        pid = self._answers.pop(0)
            except OSError:
                pass
            finally:
                for fd in theirs:
                    os.close(fd)
            if pid is None:
                self.lost = True  # silent or gone: its later answers are not waited for
        if pid is None:
            for fd in ours:
                os.close(fd)
            self.stop()
            return None
        server = ForkedProcess(self, pid, *ours)
        with self._changed:
            if pid not in self._exits:
                self._servers[pid] = server
        return server

    def status(self, pid, wait):
        with self._changed:
            if wait:
                self._changed.wait_for(lambda: pid in self._exits, timeout=wait)
            return self._exits.get(pid)

    def kill(self, pid):
        """SIGKILL to a server that has not been reported ended (so its pid is still its)."""
        with self._changed:
            if pid in self._exits:
                return
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
            self._changed.wait_for(lambda: not self._servers, timeout=STOP_TIMEOUT)
        self.control.close()


class ForkedProcess:
    """One server forked by the fork server, with the interface the harness drives (the same
    as grader/hosts/portable.py's PortableProcess)."""

    def __init__(self, forks, pid, stdin, stdout, stderr):
        self.forks, self.pid = forks, pid
        self._in = open(stdin, "wb", buffering=0)
        self._out = open(stdout, "rb", buffering=0)
        self._err = open(stderr, "rb", buffering=0)
        self._stderr = bytearray()
        self._write = threading.Lock()
        threading.Thread(target=self._drain, daemon=True).start()

    def begin(self, private):
        """This test's options: the server loads the solution and starts serving."""
        try:
            self.send(json.dumps(list(private)).encode() + b"\n")
        except wire.ConnectionClosed:
            pass  # it died at once: the harness sees the end of its output
        return self

    def _drain(self):
        with self._err:
            for chunk in iter(lambda: self._err.read(65536), b""):
                if len(self._stderr) < STDERR_KEPT:
                    self._stderr += chunk[:STDERR_KEPT - len(self._stderr)]

    def read(self, timeout):
        """Up to 64 KiB of its stdout; b"" at its end. Blocks (the reader has its own thread)."""
        try:
            return self._out.read(65536) or b""
        except (OSError, ValueError):
            return b""

    def send(self, data):
        with self._write:
            try:
                view = memoryview(data)
                while view:
                    view = view[self._in.write(view):]
            except (OSError, ValueError):
                raise wire.ConnectionClosed("the server's input is closed") from None

    def close_input(self):
        with self._write:
            try:
                self._in.close()
            except OSError:
                pass

    def close_output(self):
        try:
            self._out.close()
        except OSError:
            pass

    def kill(self):
        self.forks.kill(self.pid)

    def status(self, wait=0.0):
        return self.forks.status(self.pid, wait)

    def stderr(self):
        return bytes(self._stderr).decode("utf-8", "replace")
