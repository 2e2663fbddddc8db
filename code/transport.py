"""Transports: how the single-threaded session core meets the world.

The core (session.py) takes frames in and gives frames and timer requests out. Something must
feed it, write what it sends and keep its clock:

- `serve_stdio(server, lines, write)`: the real server. A reader thread feeds each line to the
  core under one lock; a timer thread runs the core's timers under the same lock, so the core
  is never entered twice at once. `start_in_process` is the same over in-memory pipes.
- `Loopback`: a client and a session in one thread, with no thread at all: frames go through
  a queue that `pump_until(...)` empties, and timers fire when the pump reaches them. The demo,
  the tests and the browser (no threads there) use it.
- `AsyncLoopback`: the same on an asyncio event loop (the notebooks' kernel), where the
  loop's own `call_later` is the clock.

Deliberate simplifications: one session per transport; timers have the resolution of the
thread or loop that runs them; `call_soon` is the only thing other threads may call.
"""

import heapq
import itertools
import queue
import threading
import time
from collections import deque

import wire
from session import Session


class Timer:
    """A callback scheduled by a clock; `cancel()` stops it if it has not run yet."""

    def __init__(self, due, fn):
        self.due, self.fn, self.cancelled = due, fn, False

    def cancel(self):
        self.cancelled = True


class ThreadClock:
    """Timers on one background thread; each callback runs under `lock`."""

    def __init__(self, lock):
        self.lock = lock
        self._heap, self._count = [], itertools.count()
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def call_later(self, seconds, fn):
        timer = Timer(time.monotonic() + max(0.0, seconds), fn)
        with self._wake:
            heapq.heappush(self._heap, (timer.due, next(self._count), timer))
            self._wake.notify()
        return timer

    def call_soon(self, fn):
        return self.call_later(0, fn)

    def stop(self):
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join(timeout=5)

    def _loop(self):
        while True:
            with self._wake:
                while not self._stopped and (not self._heap or
                                             self._heap[0][0] > time.monotonic()):
                    self._wake.wait(self._heap[0][0] - time.monotonic() if self._heap
                                    else None)
                if self._stopped:
                    return
                _, _, timer = heapq.heappop(self._heap)
            if not timer.cancelled:
                with self.lock:
                    timer.fn()


def serve_stdio(server, lines, write_bytes):
    """Serve one client: feed `lines` to a session until EOF; frames go to `write_bytes`."""
    lock = threading.RLock()
    clock = ThreadClock(lock)
    session = Session(server, lambda frame: write_bytes(wire.encode(frame)), clock)
    try:
        for line in lines:
            with lock:
                session.receive(line)
    finally:
        with lock:
            session.close()
        clock.stop()


class LinePipe:
    """An in-memory, one-way pipe of lines (for `start_in_process`)."""

    def __init__(self):
        self._queue = queue.SimpleQueue()

    def write(self, data):
        self._queue.put(data)

    def close(self):
        self._queue.put(None)

    def __iter__(self):
        while (line := self._queue.get()) is not None:
            yield line


def start_in_process(server):
    """`serve_stdio` on a thread over in-memory pipes: returns (send, lines, close)."""
    to_server, to_client = LinePipe(), LinePipe()

    def serve():
        try:
            serve_stdio(server, to_server, to_client.write)
        finally:
            to_client.close()
    threading.Thread(target=serve, daemon=True).start()
    return to_server.write, to_client, to_server.close


class Loopback:
    """A session and a client in one thread, joined by a queue instead of threads.

    `send(line)` hands a line to the session; the session's frames go to `deliver(line)` (the
    client's receive). Nothing happens until someone pumps: `pump_until(done, timeout)`
    delivers queued lines both ways and runs due timers until `done()` is true. Other threads
    may only call `call_soon` (the setup page does, when a flow ends).
    """

    def __init__(self, server, deliver=None):
        self.deliver = deliver
        self._queue = deque()                  # (target, item): "server"/"client" lines, "call"
        self._timers, self._count = [], itertools.count()
        self._wake = threading.Condition()
        self.session = Session(server, lambda frame: self._put("client", wire.encode(frame)),
                               self)

    # the session's clock
    def call_later(self, seconds, fn):
        timer = Timer(time.monotonic() + max(0.0, seconds), fn)
        heapq.heappush(self._timers, (timer.due, next(self._count), timer))
        return timer

    def call_soon(self, fn):
        self._put("call", fn)

    # the client's side
    def send(self, line):
        self._put("server", line)

    def close(self):
        self.session.close()

    def _put(self, target, item):
        with self._wake:
            self._queue.append((target, item))
            self._wake.notify()

    def pump_until(self, done, timeout=None):
        """Move frames and fire timers until `done()`; TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not done():
            with self._wake:
                item = self._queue.popleft() if self._queue else None
            if item is not None:
                self._handle(*item)
                continue
            while self._timers and self._timers[0][2].cancelled:
                heapq.heappop(self._timers)
            now = time.monotonic()
            if self._timers and self._timers[0][0] <= now:
                heapq.heappop(self._timers)[2].fn()
                continue
            if deadline is not None and now >= deadline:
                raise TimeoutError("no answer in time")
            wait = [t for t in (self._timers[0][0] if self._timers else None, deadline)
                    if t is not None]
            if not wait:
                raise TimeoutError("nothing left to do and no answer")
            with self._wake:
                if not self._queue:
                    self._wake.wait(max(0.0, min(wait) - now))

    def _handle(self, target, item):
        if target == "server":
            self.session.receive(item)
        elif target == "client":
            self.deliver(item)
        else:
            item()


class AsyncLoopback:
    """A session on an asyncio loop (the notebooks' kernel): its clock is the loop itself.

    `send(line)` schedules the line for the session; the session's lines go to
    `deliver(line)`, also scheduled on the loop, so neither side is ever re-entered.
    """

    def __init__(self, server, loop, deliver=None):
        self.loop, self.deliver = loop, deliver
        self.session = Session(server, lambda frame: self.loop.call_soon(
            self._to_client, wire.encode(frame)), self)

    def call_later(self, seconds, fn):
        return self.loop.call_later(max(0.0, seconds), fn)

    def call_soon(self, fn):
        return self.loop.call_soon_threadsafe(fn)

    def send(self, line):
        self.loop.call_soon(self.session.receive, line)

    def _to_client(self, line):
        if self.deliver is not None:
            self.deliver(line)

    def close(self):
        self.session.close()
