"""Streamable HTTP's bookkeeping: the frames of each HTTP answer, each session's channel, and
each request's place among those being answered (streamable_http.py is the server that uses
them).

- `Stream`: the frames of one HTTP response, in order (a POST's, up to its answer, or a GET
  stream). The core side puts, never blocking; the request's thread takes and writes them.
- `Channel`: one Session seen from HTTP: which stream each frame the session sends goes to (the
  request being answered, the request that asked, the GET stream, or a backlog for a GET stream
  not opened yet), and 2026-07-28's own ids for a client's requests.
- `ContextClock`: the session's clock, whose timers run in the context they were set in.
- `Slots`: how many requests are answered at once, in all and of one client.

Deliberate simplifications: a stream keeps at most MAX_QUEUED frames (a client that slow is
dropped) and a backlog MAX_BACKLOG; streams cannot be resumed (no event ids).
"""

import json
import threading
import time
from collections import deque

from core.session import Session
from shared import wire
from shared.protocol import HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION

MAX_QUEUED = 1000             # frames waiting on one stream: a client this slow is dropped
MAX_BACKLOG = 100             # frames kept for a GET stream that is not open yet

STATUS_OF_ERROR = {  # 2026-07-28: the HTTP status of a JSON-RPC error (others: 200)
    wire.METHOD_NOT_FOUND: 404, wire.INVALID_PARAMS: 400, wire.INVALID_REQUEST: 400,
    wire.PARSE_ERROR: 400, HEADER_MISMATCH: 400, MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400}


# -- streams ------------------------------------------------------------------------------------
class Stream:
    """The frames of one HTTP response, in order: a POST's (up to its answer) or a GET stream.

    The core side `put`s encoded frames (under the core lock, never blocking); the HTTP thread
    `take`s them and writes them. `status` is the HTTP status of the answer, if it had one."""

    def __init__(self, name):
        self.name = name          # the channel it belongs to, for the trace
        self.answered = False     # the answer was put: nothing follows it
        self.closed = False       # nothing more goes in (answered, given up or ended)
        self.status = 200
        self._frames = deque()
        self._ready = threading.Condition(threading.Lock())

    def put(self, data, answer=False, status=200):
        """Queue a frame; False when the stream takes no more (or its client is too slow)."""
        with self._ready:
            if self.closed:
                return False
            if len(self._frames) >= MAX_QUEUED:
                self._frames.clear()
                self.closed = True
                self._ready.notify()
                return False
            self._frames.append(data)
            if answer:
                self.answered = self.closed = True
                self.status = status
            self._ready.notify()
            return True

    def take(self, timeout):
        """(frames waiting, whether the stream is over); waits up to `timeout` for one."""
        with self._ready:
            if not self._frames and not self.closed:
                self._ready.wait(timeout)
            frames = list(self._frames)
            self._frames.clear()
            return frames, self.closed

    def end(self):
        with self._ready:
            self.closed = True
            self._ready.notify()


class Channel:
    """One Session seen from HTTP: where each frame it sends goes.

    A `stateless` one is a 2026-07-28 client's space (client_spaces.py), named after the
    client, whose requests run under this driver's own ids; the others are 2025-11-25
    sessions, one per `Mcp-Session-Id`."""

    claimed = False  # a 2026-07-28 space: its client showed its cookie (client_spaces.py)

    def __init__(self, http, name, stateless=False):
        self.http, self.name, self.stateless = http, name, stateless
        self.context = None      # the Stream of what the session is doing now
        self.waiting = {}        # request id -> the Stream its answer goes to
        self.client_ids = {}     # stateless: our request id -> the client's
        self.asked = {}          # 2025: the session's request id -> the Stream that carried it
        self.listener = None     # 2025: the GET stream
        self.backlog = deque()   # 2025: frames for a GET stream not opened yet
        self.last_used = time.monotonic()
        self.session = Session(http.server, self._route, ContextClock(self, http.clock),
                               client=name if stateless else None)

    def in_use(self):
        """Does this session hold something its client would lose (under the core lock): an
        open handle, a call waiting (for a form, the roots or the setup page), a flow it
        started that is still pending, a request being answered? A GET stream alone does
        not count: its client opens it again."""
        session = self.session
        return bool(self.waiting or session.calls or session.handles.live()
                    or self.http.server.flows.pending_for(session.id))

    def enter(self, stream, fn):
        """Run `fn` (a way into the session) with `stream` as its context, under the core lock."""
        with self.http.lock:
            before, self.context = self.context, stream
            try:
                fn()
            finally:
                self.context = before

    def answering(self):
        """Is a request of this session being answered (a POST's stream still open)?"""
        return any(not s.closed for s in self.waiting.values())

    def end(self):
        """The session is over (DELETE, idle, shutdown): close it and every stream."""
        with self.http.lock:
            self.session.close()
            self.end_streams()
            self.waiting.clear()
            self.asked.clear()

    def end_streams(self):
        """End every stream of this session (each has a lock of its own)."""
        for stream in (self.listener, *self.waiting.values(), *self.asked.values()):
            if stream is not None:
                stream.end()

    # -- frames out (the session's `send`, under the core lock) ---------------------------------
    def _route(self, frame):
        if "method" not in frame:
            self._answer(frame)
            return
        target = self.context if self.context is not None and not self.context.closed else None
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if frame["method"] == "notifications/cancelled":
            target = self.asked.pop(params.get("requestId"), None) or target
        if self.stateless:
            if target is None or "id" in frame:  # 2026-07-28 sends no requests
                self.http.log(f"dropped a {frame['method']} that no 2026-07-28 request awaits")
                return
        elif target is None:
            target = self.listener if self.listener is not None and \
                not self.listener.closed else None
        if "id" in frame:
            self.asked[frame["id"]] = target
        if target is None:
            if len(self.backlog) < MAX_BACKLOG:
                self.backlog.append(frame)
            else:
                self.http.log(f"session {self.name}: no GET stream; dropped {frame['method']}")
            return
        target.put(self.http.encode(frame, target))

    def _answer(self, frame):
        stream = self.waiting.pop(frame.get("id"), None)
        if stream is None:
            self.http.log(f"session {self.name}: an answer whose HTTP request is gone")
            return
        status = 200
        if self.stateless:
            frame = {**frame, "id": self.client_ids.pop(frame["id"])}
            code = frame["error"].get("code") if isinstance(frame.get("error"), dict) else None
            status = STATUS_OF_ERROR.get(code, 200)
        stream.put(self.http.encode(frame, stream), answer=True, status=status)

    def listen(self, stream):
        """A GET stream opened: it gets what waited for it (under the core lock)."""
        self.listener = stream
        while self.backlog:
            frame = self.backlog.popleft()
            if "id" in frame:
                self.asked[frame["id"]] = stream
            stream.put(self.http.encode(frame, stream))

    def gone(self, stream, request_id):
        """The client left before its answer. 2026-07-28: that cancels the request."""
        with self.http.lock:
            if self.stateless and self.waiting.get(request_id) is stream:
                del self.waiting[request_id]
                del self.client_ids[request_id]
                cancel = json.dumps(wire.notification("notifications/cancelled", {
                    "requestId": request_id, "reason": "El cliente cerró la conexión."}))
                self.enter(None, lambda: self.session.receive(cancel))


class ContextClock:
    """The session's clock: the shared ThreadClock, but a timer runs in the context it was set
    in (a progress tick goes to the stream of its call); page completions (`call_soon`, any
    thread) in none."""

    def __init__(self, channel, clock):
        self.channel, self.clock = channel, clock

    def call_later(self, seconds, fn):
        stream = self.channel.context
        return self.clock.call_later(seconds, lambda: self.channel.enter(stream, fn))

    def call_soon(self, fn):
        return self.clock.call_soon(lambda: self.channel.enter(None, fn))


# -- a request's place ---------------------------------------------------------------------------
class Slots:
    """Requests being answered at once: at most `total`, and `per_client` of one client (a
    client None is counted in the total only). Any thread."""

    def __init__(self, total, per_client):
        self.total, self.per_client = total, per_client
        self.held, self.by_client = 0, {}
        self._lock = threading.Lock()

    def take(self, client):
        """A Slot of `client`'s, or None when there is no room for it."""
        with self._lock:
            mine = self.by_client.get(client, 0)
            if self.held >= self.total or (client is not None and mine >= self.per_client):
                return None
            self.held += 1
            if client is not None:
                self.by_client[client] = mine + 1
            return Slot(self, client)

    def _give(self, client):
        with self._lock:
            self.held -= 1
            if client is not None:
                left = self.by_client.pop(client) - 1
                if left:
                    self.by_client[client] = left


class Slot:
    """One request's place in its Slots; `give()` gives it back, once, however often it is
    called (an exception may reach both places that give it back)."""

    def __init__(self, slots, client):
        self.slots, self.client, self._given = slots, client, threading.Lock()

    def give(self):
        if self._given.acquire(blocking=False):
            self.slots._give(self.client)
