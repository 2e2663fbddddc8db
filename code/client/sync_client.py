"""The blocking driver of the lesson's client (client_core.py): the demo, the tests, the grader.

Two ways to reach a server, the same core behind both:

- `Client(send, lines, close)`: over a stream of lines (a server process's pipes). A reader
  thread feeds the core; the user's questions are answered by a small bounded pool of worker
  threads (beyond MAX_PENDING_QUESTIONS waiting, a question is refused), so a server that
  asks many at once costs no more threads.
- `Client.local(server)`: a new session of `server` in this thread, with no thread at all
  (transport.Loopback): every wait pumps frames both ways and fires the session's timers.

The core is entered by one thread at a time (`_enter`, under one lock); the frames it gives
are written, in order, after the lock is let go, so a server that does not read its input
blocks only the thread writing to it. The user (see client_core.py for the contract) is
called outside the lock: by a worker over a stream, inline in-process.

Deliberate simplifications: a timeout covers a whole request or tool call (all its rounds);
a request that timed out is not cancelled on the wire (the asyncio driver does that).
"""

import functools
import queue
import threading

from client.client_core import CANCEL, ClientCore, Driver
from shared import wire

MAX_PENDING_QUESTIONS = 32  # questions waiting for a worker; beyond: refused


class Client(Driver):
    """A blocking client: over a stream of lines, or in-process with `Client.local(server)`."""

    Core = ClientCore  # a subclass may bring its own core (the grader's reads pre-parsed frames)

    def __init__(self, send, lines=None, close=None, *, timeout=30.0, workers=4,
                 loopback=None, user=None, **options):
        self.user, self.timeout = user, timeout
        self._send_bytes, self._close, self._loopback = send, close, loopback
        self._lock = threading.Condition(threading.RLock())
        self._write_lock = threading.Lock()
        self._frames, self._deferred = [], []   # what the core gave, during `_enter`
        self._closed = False
        self.core = self.Core(self._frames_out, self, self._ask, self._visit, **options)
        self._workers = []
        if loopback is None:
            self._jobs = queue.Queue(MAX_PENDING_QUESTIONS)
            self._workers = [threading.Thread(target=self._work, daemon=True)
                             for _ in range(workers)]
            for worker in self._workers:
                worker.start()
            self._reader = threading.Thread(target=self._read, args=(lines,), daemon=True)
            self._reader.start()

    @classmethod
    def local(cls, server, session_user=None, **options):
        """A client and a new session of `server` in this thread (transport.Loopback);
        `session_user` is who that session is (default: the server's local user)."""
        from transports.transport import Loopback
        loopback = Loopback(server, user=session_user)
        client = cls(loopback.send, loopback=loopback, **options)
        loopback.deliver = client._receive
        return client

    # -- the core, one thread at a time --------------------------------------------------------
    def _enter(self, action):
        """Run `action` on the core; then write its frames (in the core's order) and run what
        it deferred, both outside the lock."""
        with self._lock:
            value = action()
            frames, self._frames = self._frames, []
            deferred, self._deferred = self._deferred, []
            self._lock.notify_all()
            if frames:
                self._write_lock.acquire()  # before the next thread can make frames
        if frames:
            try:
                for msg in frames:
                    self._send_bytes(wire.encode(msg))
            finally:
                self._write_lock.release()
        for fn in deferred:
            fn()
        return value

    def _frames_out(self, msg):
        self._frames.append(msg)

    def call_soon(self, fn):
        """The core's clock: `fn` runs once the frames before it are written (in-process: once
        the session has read them)."""
        self._deferred.append(fn if self._loopback is None
                              else lambda: self._loopback.call_soon(fn))

    def _receive(self, line):
        self._enter(lambda: self.core.receive(line))

    def _read(self, lines):
        try:
            for line in lines:
                try:
                    self._receive(line)
                except (wire.ConnectionClosed, OSError, ValueError):
                    continue  # our answer could not be written: the reader goes on
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._closed = True
                self._lock.notify_all()
            for _ in self._workers:
                try:
                    self._jobs.put_nowait(None)
                except queue.Full:
                    pass

    # -- the user ------------------------------------------------------------------------------
    def _ask(self, question):
        """In-process the user answers at once; over a stream, a worker asks them."""
        if self._loopback is not None:
            return self._answer(question, self._elicit(question))
        try:
            self._jobs.put_nowait(question)
        except queue.Full:
            question.fail(wire.RpcError(wire.INTERNAL_ERROR,
                                        "Client busy: too many requests at once"))

    def _work(self):
        while (question := self._jobs.get()) is not None:
            answer = self._elicit(question)
            try:
                self._enter(functools.partial(self._answer, question, answer))
            except (wire.ConnectionClosed, OSError, ValueError):
                pass  # the server went away before our answer: nothing left to answer

    def _elicit(self, question):
        if self.user is None:
            return CANCEL
        try:
            return self.user.elicit(question.params, question.request_id)
        except Exception as exc:  # the core turns it into the protocol's answer
            return exc

    @staticmethod
    def _answer(question, answer):
        if isinstance(answer, Exception):
            question.fail(answer)
        else:
            question.answer(answer)

    def _visit(self, question):
        """After a consent: the user opens the page (called through the core's clock)."""
        self.user.open_url(question.url)
        self._enter(question.opened)

    # -- waiting -------------------------------------------------------------------------------
    def _wait(self, outcome, timeout):
        if self._loopback is not None:
            try:
                self._loopback.pump_until(lambda: outcome.done, timeout)
            except TimeoutError:
                self._enter(lambda: self.core.forget(outcome))
                raise TimeoutError(f"no answer to {outcome.what} within {timeout} s") from None
        else:
            with self._lock:
                if not self._lock.wait_for(lambda: outcome.done or self._closed, timeout):
                    self.core.forget(outcome)
                    raise TimeoutError(f"no answer to {outcome.what} within {timeout} s")
                if not outcome.done:
                    raise wire.ConnectionClosed("the server went away")
        if outcome.error is not None:
            raise outcome.error
        return outcome.result

    def close(self):
        if self._loopback is not None:
            self._loopback.close()
        if self._close:
            self._close()
        if self._loopback is None:
            self._reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the MCP operations --------------------------------------------------------------------
    def request(self, method, params=None, timeout=None):
        """Send a request and wait for its result; an error response raises RpcError."""
        return self._wait(self._enter(lambda: self.core.request(method, params)),
                          timeout or self.timeout)

    def notify(self, method, params=None):
        self._enter(lambda: self.core.notify(method, params))

    def connect(self, wait_for_roots=True):
        """Handshake (2025 revisions; `server/discover` at 2026-07-28). Waits until the
        server has asked for our roots."""
        self._wait(self._enter(lambda: self.core.connect(wait_for_roots)), self.timeout)
        return self

    def list_tools(self):
        return self.request("tools/list", {})["tools"]

    def call_tool(self, name, arguments=None, timeout=700.0, max_rounds=10):
        """Call a tool; at 2026-07-28 answer `input_required` rounds until a final result."""
        return self._wait(self._enter(lambda: self.core.call_tool(name, arguments, max_rounds)),
                          timeout)

    def set_roots(self, roots):
        """Change our roots; at 2025-11-25 tell the server and wait until it re-asked."""
        self._wait(self._enter(lambda: self.core.set_roots(roots)), self.timeout)

    def cancel(self, request_id, reason=None):
        self._enter(lambda: self.core.cancel(request_id, reason))
