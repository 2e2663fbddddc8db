"""A notes server on three pipes, as the portable host drives it: what a launched server
(grader/hosts/portable.py) and a forked one (grader/hosts/forks.py) share.

`attach` takes the server's standard input, output and error (unbuffered binary files); its
error output is drained by a thread of its own, and its first STDERR_KEPT bytes are kept for
the feedback. The harness's interface (grader/hosts/__init__.py): `begin` (this test's
options, one JSON line), `read`, `send`, `close_input`, `close_output`, `stderr`; the subclass
adds how it is killed and waited for (`kill`, `status`).

Deliberate simplifications: reads and writes block (each reader has its own thread; a server
that stops reading blocks its writer, as a pipe does); the drain is a bare thread
(`Thread.start()` would wait until it runs, a GIL hand-off of up to 5 ms at every server while
the checks' threads are busy).
"""

import _thread
import json
import threading

from shared import wire

STDERR_KEPT = 32768


class PipedServer:
    def attach(self, stdin, stdout, stderr):
        self._in, self._out, self._err = stdin, stdout, stderr
        self._stderr = bytearray()
        self._write = threading.Lock()
        _thread.start_new_thread(self._drain, ())

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

    def stderr(self):
        return bytes(self._stderr).decode("utf-8", "replace")
