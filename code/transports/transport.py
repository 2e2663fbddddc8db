"""Transports: how the single-threaded session core meets the world.

The core (session.py) takes frames in and gives frames and timer requests out. Something must
feed it, write what it sends, keep its clock and show the setup page (the driver contract):

- `serve_stdio(server, lines, write)`: the real server. The reader (the caller's thread)
  feeds each line to the core under one lock; a timer thread runs the core's timers under the
  same lock, so the core is never entered twice at once. It is the one driver that starts
  threads: its clock, and the setup page on 127.0.0.1 when `Config.page_transport` is "http".
  `start_in_process` is the same over in-memory pipes, on one more thread.
  With `Config.second_user` (`serve --second-user NAME`, for graders only, off by default) it
  hosts a second session, of that other user, on the same pipe: each of its frames travels
  wrapped in the notification SECOND_SESSION_METHOD, params {"frame": <the frame>}, both
  ways. A grader uses it to check that what one user started cannot be completed or used by
  another (exercise 3); whoever writes on the pipe speaks for both users, so never with real
  users. With `Config.provider == "rpc"` (`serve --provider rpc`, graders too) exercise 3's
  Nube de Copias is the client's: `ProviderChannel` asks it on the same pipe, and a thread of
  its own reads the pipe, so an answer reaches the core while the core waits for it.
- `Loopback`: a client and a session in one thread, with no thread at all: frames go through
  a queue that `pump_until(...)` empties, and timers fire when the pump reaches them. The demo,
  the tests and the grader's in-process host use it; the page stays inline.
- `AsyncLoopback`: the same on an asyncio event loop (the notebooks' kernel, the browser),
  where the loop's own `call_later` is the clock; the page stays inline unless the notebook
  serves it (JupyterLab).

Whatever shows the page, a completion reaches the core through the clock's `call_soon`, the
only thing other threads may call. A cancelled timer leaves the clocks' heaps promptly
(TimerHeap), so forms that were answered leave nothing queued.

Deliberate simplifications: one session per transport (two with `--second-user`); timers have
the resolution of the thread or loop that runs them.
"""

import heapq
import itertools
import json
import queue
import threading
import time
from collections import deque

from core.session import Session
from shared import wire
from shared.protocol import PROVIDER_METHOD, SECOND_SESSION_METHOD
from urlflow.nube_copias import ProviderError

SECOND_MARK = SECOND_SESSION_METHOD.encode()
PROVIDER_IDS = "nube-"   # the ids of the provider requests (the session's are numbers)
PROVIDER_TIMEOUT = 10.0  # seconds a provider request may take


class Timer:
    """A callback scheduled by a clock; `cancel()` stops it if it has not run yet."""

    def __init__(self, due, fn, on_cancel=None):
        self.due, self.fn, self.cancelled = due, fn, False
        self._on_cancel = on_cancel

    def cancel(self):
        if not self.cancelled:
            self.cancelled = True
            if self._on_cancel is not None:
                self._on_cancel()


class TimerHeap:
    """Timers in due order. A cancelled timer does not wait for its due time to leave: it goes
    at once when it is next, and all cancelled ones go as soon as they are half of the heap,
    so the heap never holds more cancelled timers than live ones (plus one).

    Not thread-safe: the clock that owns it guards it."""

    def __init__(self):
        self._heap, self._count, self._cancelled = [], itertools.count(), 0

    def __len__(self):
        return len(self._heap)

    def push(self, seconds, fn, on_cancel):
        timer = Timer(time.monotonic() + max(0.0, seconds), fn, on_cancel)
        heapq.heappush(self._heap, (timer.due, next(self._count), timer))
        return timer

    def forget_cancelled(self):
        """Called once for each timer cancelled while still in the heap."""
        self._cancelled += 1
        if 2 * self._cancelled > len(self._heap):
            self._heap = [entry for entry in self._heap if not entry[2].cancelled]
            heapq.heapify(self._heap)
            self._cancelled = 0
        else:
            self._drop_cancelled_head()

    def next_due(self):
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now):
        """The next timer due by `now`, taken out of the heap; None when none is due."""
        if self._heap and self._heap[0][0] <= now:
            timer = heapq.heappop(self._heap)[2]
            timer._on_cancel = None  # out of the heap: a late cancel() changes no count
            return timer
        return None

    def _drop_cancelled_head(self):
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
            self._cancelled -= 1


class ThreadClock:
    """Timers on one background thread; each callback runs under `lock`.

    A callback that raises is logged and the clock goes on (the session's own callbacks never
    raise: they come in through its guarded entry)."""

    def __init__(self, lock, log=None):
        self.lock = lock
        self.log = log or (lambda text: None)
        self._timers = TimerHeap()
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def call_later(self, seconds, fn):
        with self._wake:
            timer = self._timers.push(seconds, fn, self._cancelled)
            self._wake.notify()
        return timer

    def call_soon(self, fn):
        return self.call_later(0, fn)

    def pending(self):
        """How many timers the heap holds (live or cancelled): for tests and benchmarks."""
        with self._wake:
            return len(self._timers)

    def stop(self):
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join(timeout=5)

    def _cancelled(self):
        with self._wake:
            self._timers.forget_cancelled()

    def _loop(self):
        while True:
            with self._wake:
                while not self._stopped and \
                        (timer := self._timers.pop_due(time.monotonic())) is None:
                    due = self._timers.next_due()
                    self._wake.wait(None if due is None else due - time.monotonic())
                if self._stopped:
                    return
            if not timer.cancelled:
                with self.lock:
                    try:
                        timer.fn()
                    except Exception as exc:
                        self.log(f"a timer failed: {type(exc).__name__}: {exc}")


def serve_stdio(server, lines, write_bytes):
    """Serve one client: feed `lines` to a session until EOF; frames go to `write_bytes`.

    This driver provides the setup page: with `Config.page_transport == "http"` (the default)
    it serves it on 127.0.0.1 (server.serve_page_http: a thread, and the HTTP machinery only
    loaded when a browser comes); with "rpc" the session answers the page's private method;
    with "inline" nobody serves it."""
    lock = threading.RLock()
    clock = ThreadClock(lock, log=server.log)
    if server.config.page_transport == "http":
        server.serve_page_http()
    if server.config.provider == "rpc":
        channel = ProviderChannel(lines, write_bytes)
        server.provider.attach(channel.call)
        lines = channel.lines()
    session = Session(server, lambda frame: write_bytes(wire.encode(frame)), clock)
    second = None
    if server.config.second_user:
        second = Session(server, lambda frame: write_bytes(wrap_second(frame)), clock,
                         user=server.config.second_user)
    try:
        for line in lines:
            with lock:
                inner = unwrap_second(line) if second is not None else None
                if inner is None:
                    session.receive(line)
                else:
                    second.receive(inner)
    finally:
        with lock:
            session.close()
            if second is not None:
                second.close()
        clock.stop()


class ProviderChannel:
    """`serve --provider rpc`: Nube de Copias asked on the MCP pipe (nube_copias.RemoteProvider).

    `call(params)` sends the request PROVIDER_METHOD with an id of its own and waits for its
    answer (the result, or ProviderError). A thread of its own reads the pipe: it takes those
    answers out and hands every other line on (`lines()`), so the core may wait while it holds
    its lock (a page or a tool exchanges a code or makes a copy from the core)."""

    def __init__(self, lines, write_bytes, timeout=PROVIDER_TIMEOUT):
        self._write, self.timeout = write_bytes, timeout
        self._inbox = queue.SimpleQueue()
        self._waiting = {}  # request id -> [Event, its answer]
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()

    def lines(self):
        while (line := self._inbox.get()) is not None:
            yield line

    def call(self, params):
        request_id = f"{PROVIDER_IDS}{next(self._ids)}"
        slot = [threading.Event(), None]
        with self._lock:
            self._waiting[request_id] = slot
        try:
            self._write(wire.encode(wire.request(request_id, PROVIDER_METHOD, params)))
            slot[0].wait(self.timeout)
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)
        answer = slot[1]
        if answer is None:
            raise ProviderError("Nube de Copias no respondió a tiempo")
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise ProviderError(str(error.get("message") or "Nube de Copias lo rechazó"))
        return answer.get("result")

    def _read(self, lines):
        try:
            for line in lines:
                if not self._answered(line):
                    self._inbox.put(line)
        finally:
            with self._lock:
                slots = list(self._waiting.values())
            for event, _ in slots:  # no answer will come any more
                event.set()
            self._inbox.put(None)

    def _answered(self, line):
        raw = line.encode() if isinstance(line, str) else bytes(line)
        if PROVIDER_IDS.encode() not in raw:
            return False
        try:
            msg = json.loads(raw)
        except (ValueError, RecursionError):
            return False
        if not isinstance(msg, dict) or "method" in msg or not isinstance(msg.get("id"), str):
            return False
        with self._lock:
            slot = self._waiting.get(msg["id"])
            if slot is None:
                return False
            slot[1] = msg
        slot[0].set()
        return True


def wrap_second(frame):
    """One frame of the second session, as the line that carries it on the shared pipe."""
    inner = wire.encode(frame).rstrip(b"\n")
    return (b'{"jsonrpc":"2.0","method":"' + SECOND_MARK + b'","params":{"frame":' + inner
            + b"}}\n")


def unwrap_second(line):
    """The frame a line carries for the second session (its JSON text), or None when the
    line is for the first session (anything that is not exactly that notification)."""
    raw = line.encode() if isinstance(line, str) else bytes(line)
    if SECOND_MARK not in raw or len(raw) > wire.MAX_LINE_BYTES:
        return None
    try:
        msg = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or msg.get("method") != SECOND_SESSION_METHOD or "id" in msg:
        return None
    params = msg.get("params")
    if not isinstance(params, dict) or "frame" not in params:
        return None
    return json.dumps(params["frame"], ensure_ascii=False, separators=(",", ":"))


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
    may only call `call_soon` (a setup page served elsewhere does, when a flow ends).
    """

    def __init__(self, server, deliver=None, user=None):
        self.deliver = deliver
        self._queue = deque()                  # (target, item): "server"/"client" lines, "call"
        self._timers = TimerHeap()
        self._wake = threading.Condition()
        self.session = Session(server, lambda frame: self._put("client", wire.encode(frame)),
                               self, user=user)

    # the session's clock
    def call_later(self, seconds, fn):
        return self._timers.push(seconds, fn, self._timers.forget_cancelled)

    def call_soon(self, fn):
        self._put("call", fn)

    def pending(self):
        """How many timers the heap holds (live or cancelled): for tests and benchmarks."""
        return len(self._timers)

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
            now = time.monotonic()
            timer = self._timers.pop_due(now)
            if timer is not None:
                if not timer.cancelled:
                    timer.fn()
                continue
            if deadline is not None and now >= deadline:
                raise TimeoutError("no answer in time")
            wait = [t for t in (self._timers.next_due(), deadline) if t is not None]
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

    def __init__(self, server, loop, deliver=None, user=None):
        self.loop, self.deliver = loop, deliver
        self.session = Session(server, lambda frame: self.loop.call_soon(
            self._to_client, wire.encode(frame)), self, user=user)

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
