"""The front of an HTTP server: every connection's requests read on one thread, under budgets.

A server that gives each connection a thread while it reads the request can be emptied by
one client: open as many connections as there are threads and send a byte now and then.
`Front` reads instead: one thread (a selector) accepts every connection and reads each
request's head and body as the bytes come, so a slow client holds a socket and the bytes it
sent, never a thread. Only a request read in full reaches the server (`dispatch(connection)`,
on the front's thread: the server admits it, starting its own thread, or refuses it), and a
connection kept alive comes back here for its next request (`resume`). So the budgets:

- connections being read (idle ones between two requests included): at most
  `Limits.connections`. One more arriving makes room: the connection kept alive and idle
  longest is closed, else the request that started longest ago gets 503 with `Retry-After`
  (a legitimate request is read in milliseconds, so the slowest is the likeliest attacker);
- a head: at most `head_bytes` (431), all of it within `head_seconds` of its first byte;
  a body: at most `body_bytes` (413, unread), all of it within `body_seconds` of its head's
  end (408 otherwise); the bodies held at once: at most `buffered_bytes` in all (the slowest
  ones make room, else 503);
- an idle connection: closed after `idle_seconds`.

What the front answers itself (431, 413, 408, 503, 400 for what is not HTTP/1.x) is made by
the server's `render(status, reason)`, so each server answers in its own words (a JSON-RPC
error, an HTML page), always with `Connection: close`.

`Prefetched` is http.server's request handler for a request the front read: the handler's
`rfile` holds only its request line, its headers are the ones the front parsed, and its body
is `self.body`. `Workers` runs what the servers hand it on threads kept for the next request.

Deliberate simplifications: HTTP/1.0 and 1.1 only, with `Content-Length` (a chunked body is
refused with 411); one request at a time per connection (a pipelined one waits in the
buffer); the front's budgets know no client identity (there is none before a request is
read): the server's own budgets, per client, come after it.
"""

import errno
import io
import queue
import re
import selectors
import socket
import threading
import time
from collections import namedtuple
from http.server import BaseHTTPRequestHandler

Limits = namedtuple("Limits", "connections head_bytes head_seconds body_bytes body_seconds "
                              "buffered_bytes idle_seconds",
                    defaults=(256, 64 * 1024, 10.0, 4 * 1024 * 1024, 30.0, 64 * 1024 * 1024,
                              10.0))

REASONS = {400: "Bad Request", 408: "Request Timeout", 411: "Length Required",
           413: "Content Too Large", 414: "URI Too Long", 431: "Request Header Fields Too Large",
           503: "Service Unavailable", 505: "HTTP Version Not Supported"}
IDLE, HEAD, BODY, HANDLED = "idle", "head", "body", "handled"
VERSION = re.compile(rb"HTTP/(\d{1,3})\.(\d{1,3})")
FIELD_NAME = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a token (RFC 9110)
MAX_FIELDS = 100
RECV = 64 * 1024


class Connection:
    """One client connection, from its accept to its close: while the front reads it (its
    `phase`, `buffer`, `deadline`) and while the server handles its request (`head`,
    `body`, `headers`, `method`)."""

    def __init__(self, sock, address, now):
        self.sock, self.address = sock, address
        self.buffer = bytearray()
        self.phase, self.since, self.deadline = IDLE, now, None
        self.head = self.body = self.headers = self.method = None
        self.view, self.got, self.reserved = None, 0, 0
        self.answered = 0  # requests of this connection answered so far

    def __repr__(self):
        return f"Connection({self.address!r}, {self.phase})"


class Headers:
    """A request's header fields as the front read them (once): `get` (the first value, any
    case), `get_all`, `keys`, `items`, `in` and `[]`, like http.server's message."""

    def __init__(self, fields):
        self._fields, self._by_name = fields, {}
        for name, value in fields:
            self._by_name.setdefault(name.lower(), []).append(value)

    @classmethod
    def parse(cls, block):
        """The fields of a head's header block (bytes, up to its blank line); ValueError for
        a line that is not `name: value` (folded lines, spaces before the colon, a name that
        is not a token, NUL or CR in a value) or more than MAX_FIELDS."""
        fields = []
        for line in block.split(b"\n"):
            line = line[:-1] if line.endswith(b"\r") else line
            if not line:
                continue
            name, colon, value = line.partition(b":")
            if not colon or not FIELD_NAME.fullmatch(name):
                raise ValueError("a header line that is not name: value")
            value = value.strip(b" \t")
            if b"\0" in value or b"\r" in value:
                raise ValueError("a header value with NUL or CR")
            fields.append((name.decode("ascii"), value.decode("latin-1")))
            if len(fields) > MAX_FIELDS:
                raise ValueError(f"too many header lines (more than {MAX_FIELDS})")
        return cls(fields)

    def get(self, name, default=None):
        values = self._by_name.get(name.lower())
        return values[0] if values else default

    __getitem__ = get

    def get_all(self, name, default=None):
        values = self._by_name.get(name.lower())
        return list(values) if values else default

    def keys(self):
        return [name for name, _ in self._fields]

    def items(self):
        return list(self._fields)

    def __contains__(self, name):
        return name.lower() in self._by_name

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._fields)


class Front:
    """Accept and read the requests of `listening` (a bound, listening socket); `dispatch`
    gets each complete one. `render(status, reason)` -> bytes: a whole refusal response."""

    def __init__(self, listening, dispatch, render, limits=None, log=None):
        self.listening, self.dispatch, self.render = listening, dispatch, render
        self.limits, self.log = limits or Limits(), log or (lambda text: None)
        self.listening.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(listening, selectors.EVENT_READ, "accept")
        self._wake, self._waker = socket.socketpair()
        self._wake.setblocking(False)
        self.selector.register(self._wake, selectors.EVENT_READ, "wake")
        self.reading = {}         # socket -> Connection, while the front reads it
        self.buffered = 0         # bytes of bodies held now (reserved as their heads arrive)
        self._resumed, self._lock = [], threading.Lock()
        self._stopped = False
        self._idle = threading.Event()  # set while no thread runs serve_forever
        self._idle.set()
        self.stop_with = None     # raised by serve_forever at its next turn (a signal's stop)

    # -- the loop ------------------------------------------------------------------------------
    def serve_forever(self, poll=0.2):
        """Accept and read until `stop()`; raises `stop_with` at the first turn after it is
        set (between two events, never in the middle of one)."""
        self._idle.clear()
        try:
            while not self._stopped:
                if self.stop_with is not None:
                    raise self.stop_with
                now = time.monotonic()
                due = [c.deadline for c in self.reading.values() if c.deadline is not None]
                timeout = poll if not due else max(0.0, min(poll, min(due) - now))
                for key, _ in self.selector.select(timeout):
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "wake":
                        self._woken()
                    else:
                        self._read(key.data)
                self._expire(time.monotonic())
        finally:
            self._idle.set()

    def stop(self):
        """From any thread: the loop ends at its next turn."""
        self._stopped = True
        self._poke()

    def close(self):
        """Stop the loop (waiting for it, when another thread runs it), then close every
        connection still being read, and the listening socket."""
        self.stop()
        self._idle.wait(5)
        for connection in list(self.reading.values()):
            self._drop(connection)
        with self._lock:
            resumed, self._resumed = self._resumed, []
        for connection in resumed:
            _close(connection.sock)
        for sock in (self.listening, self._wake, self._waker):
            try:
                self.selector.unregister(sock)
            except (KeyError, ValueError, OSError):
                pass
            sock.close()
        self.selector.close()

    def finished(self, connection, keep_alive):
        """From a server's thread: its request is answered; the connection is read again
        for its next request, or closed."""
        self.release(connection)
        if keep_alive:
            self.resume(connection)
        else:
            _close(connection.sock, graceful=True)

    def resume(self, connection):
        """From a server's thread: `connection` (its request answered, kept alive) is read
        again for its next request."""
        with self._lock:
            if self._stopped:
                _close(connection.sock)
                return
            self._resumed.append(connection)
        self._poke()

    def _poke(self):
        try:
            self._waker.send(b"\0")
        except OSError:
            pass

    def _woken(self):
        try:
            while self._wake.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        with self._lock:
            resumed, self._resumed = self._resumed, []
        now = time.monotonic()
        for connection in resumed:
            self.release(connection)  # in case the server did not
            connection.answered += 1
            connection.head = connection.headers = None
            connection.phase, connection.since = IDLE, now
            connection.deadline = now + self.limits.idle_seconds
            self._watch(connection)
            if connection.buffer:  # a pipelined request came with the last one
                self._parse(connection, now)

    # -- connections ---------------------------------------------------------------------------
    def _accept(self):
        while True:
            try:
                sock, address = self.listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # EMFILE and the like: try again at the next turn
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM,
                                     errno.ECONNABORTED):
                    raise
                self.log(f"http: cannot accept a connection now: {exc.strerror}")
                return
            sock.setblocking(False)
            try:  # answers go out as written (no wait for an ACK between headers and body)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            now = time.monotonic()
            if len(self.reading) >= self.limits.connections:
                self._make_room(now)
            connection = Connection(sock, address, now)
            connection.deadline = now + self.limits.idle_seconds
            self._watch(connection)

    def _watch(self, connection):
        connection.sock.setblocking(False)
        self.reading[connection.sock] = connection
        self.selector.register(connection.sock, selectors.EVENT_READ, connection)

    def _unwatch(self, connection, release=True):
        if self.reading.pop(connection.sock, None) is not None:
            try:
                self.selector.unregister(connection.sock)
            except (KeyError, ValueError):
                pass
        if release:
            self.release(connection)

    def release(self, connection):
        """The server is done with this request's body (any thread): its bytes leave the
        budget of bodies held at once (and the server drops its reference)."""
        with self._lock:
            self.buffered -= connection.reserved
            connection.reserved = 0
        connection.body = None

    def _drop(self, connection):
        self._unwatch(connection)
        _close(connection.sock)

    def _make_room(self, now):
        """The budget of connections is full: close the kept-alive connection idle longest
        (quietly: it is between two requests), else refuse the connection whose request
        started longest ago (a legitimate one is read in milliseconds)."""
        kept = [c for c in self.reading.values() if c.phase == IDLE and c.answered]
        if kept:
            self._drop(min(kept, key=lambda c: c.since))
            return
        slowest = min(self.reading.values(), key=lambda c: c.since)
        self._refuse(slowest, 503, "too many connections at once; this request was the "
                                   "slowest to arrive")

    def _refuse(self, connection, status, reason):
        """Answer `status` (the server's words for `reason`) and close."""
        self._unwatch(connection)
        try:
            connection.sock.send(self.render(status, reason))
        except OSError:
            pass
        _close(connection.sock, graceful=True)

    def _expire(self, now):
        for connection in [c for c in self.reading.values()
                           if c.deadline is not None and c.deadline <= now]:
            if connection.phase == IDLE:
                self._drop(connection)  # a keep-alive connection nobody used: closed quietly
            else:
                self._refuse(connection, 408, f"the request took more than "
                             f"{self._allowed(connection):g} s to arrive")

    def _allowed(self, connection):
        return self.limits.head_seconds if connection.phase == HEAD else \
            self.limits.body_seconds

    # -- reading -------------------------------------------------------------------------------
    def _read(self, connection):
        now = time.monotonic()
        try:
            if connection.phase == BODY:
                got = connection.sock.recv_into(connection.view[connection.got:])
                if got:
                    connection.got += got
            else:
                data = connection.sock.recv(RECV)
                got = len(data)
                connection.buffer += data
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(connection)
            return
        if not got:  # the client closed its side
            self._drop(connection)
            return
        if connection.phase == BODY:
            if connection.got == len(connection.body):
                self._complete(connection)
            return
        self._parse(connection, now)

    def _parse(self, connection, now):
        if connection.phase == IDLE:
            while connection.buffer[:2] == b"\r\n":  # empty lines before a request: ignored
                del connection.buffer[:2]
            if not connection.buffer:
                return
            connection.phase, connection.since = HEAD, now
            connection.deadline = now + self.limits.head_seconds
        end, size = _head_end(connection.buffer)
        if end < 0:
            if len(connection.buffer) > self.limits.head_bytes:
                line_done = b"\n" in connection.buffer
                self._refuse(connection, 431 if line_done else 414,
                             f"a request {'head' if line_done else 'line'} of more than "
                             f"{self.limits.head_bytes} bytes")
            return
        if end > self.limits.head_bytes:
            self._refuse(connection, 431, f"a request head of more than "
                                          f"{self.limits.head_bytes} bytes")
            return
        head = bytes(connection.buffer[:end + size])
        rest = connection.buffer[end + size:]
        problem = self._understood(connection, head)
        if problem is not None:
            self._refuse(connection, *problem)
            return
        length = connection.length
        if length > self.limits.body_bytes:
            self._refuse(connection, 413, f"a body of more than {self.limits.body_bytes} "
                                          "bytes")
            return
        if length > self.limits.buffered_bytes - self.buffered:
            self._room_for(length, connection)
            if length > self.limits.buffered_bytes - self.buffered:  # held by the server
                self._refuse(connection, 503, "too many request bodies arriving at once")
                return
        connection.head = head
        connection.body = bytearray(length)
        with self._lock:
            connection.reserved = length
            self.buffered += length
        taken = min(length, len(rest))
        connection.body[:taken] = rest[:taken]
        connection.got, connection.buffer = taken, bytearray(rest[taken:])
        connection.view = memoryview(connection.body)
        if taken < length:
            connection.phase, connection.deadline = BODY, now + self.limits.body_seconds
            if connection.expect_continue:
                try:
                    connection.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")
                except OSError:
                    pass
            return
        self._complete(connection)

    def _understood(self, connection, head):
        """Read the request line and headers: None, or (status, reason) to refuse it."""
        line, _, rest = head.partition(b"\n")
        words = line.rstrip(b"\r").split()
        version = VERSION.fullmatch(words[2]) if len(words) == 3 else None
        if version is None or int(version[1]) < 1:
            return 400, "not an HTTP/1.x request line"
        if int(version[1]) > 1:
            return 505, "only HTTP/1.0 and HTTP/1.1"
        try:
            headers = Headers.parse(rest)
        except ValueError as exc:
            return (431 if "many" in str(exc) else 400), str(exc)
        if headers.get("Transfer-Encoding") is not None:
            return 411, "a body needs Content-Length (no Transfer-Encoding)"
        lengths = headers.get_all("Content-Length") or []
        if len(set(lengths)) > 1:
            return 400, "two different Content-Length headers"
        try:
            length = int(lengths[0]) if lengths else 0
        except ValueError:
            length = -1
        if length < 0 or (lengths and not lengths[0].strip().isdigit()):
            return 400, "Content-Length is not a number"
        connection.method = words[0].decode("latin-1")
        connection.headers, connection.length = headers, length
        connection.expect_continue = words[2] != b"HTTP/1.0" and \
            (headers.get("Expect") or "").lower() == "100-continue"
        return None

    def _room_for(self, length, newcomer):
        """Refuse the slowest bodies still arriving until `length` more bytes fit."""
        for connection in sorted((c for c in self.reading.values()
                                  if c.phase == BODY and c is not newcomer),
                                 key=lambda c: c.since):
            if length <= self.limits.buffered_bytes - self.buffered:
                return
            self._refuse(connection, 503, "too many request bodies arriving at once; this "
                                          "one was the slowest")

    def _complete(self, connection):
        """A whole request: the server takes the connection (and gives it back with
        `resume`, or closes it) and its body (and calls `release` once it is done with it)."""
        self._unwatch(connection, release=False)
        connection.phase, connection.view = HANDLED, None
        connection.body = bytes(connection.body) if len(connection.body) < 4096 \
            else connection.body  # a big one is handed over as it is, never copied
        connection.sock.setblocking(True)
        try:
            self.dispatch(connection)
        except Exception as exc:  # a bug in the server's admission: this request only
            self.log(f"http: dispatch failed: {type(exc).__name__}: {exc}")
            self.release(connection)
            _close(connection.sock)


class Workers:
    """Threads that run `fn(*args)` jobs, each kept idle for IDLE_WORKER seconds for a next one
    (starting a thread for each request costs more than the request). A job goes to an idle
    thread, else to a new one: the callers bound how many run at once."""

    IDLE_WORKER = 30.0

    def __init__(self, name="http"):
        self.name, self._idle, self._lock = name, [], threading.Lock()

    def run(self, fn, *args):
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            threading.Thread(target=self._work, args=((fn, args),), name=self.name,
                             daemon=True).start()
        else:
            inbox.put((fn, args))

    def _work(self, job):
        inbox = queue.SimpleQueue()
        while True:
            fn, args = job
            fn(*args)
            with self._lock:
                self._idle.append(inbox)
            try:
                job = inbox.get(timeout=self.IDLE_WORKER)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # nobody handed it a job: this thread ends
                        self._idle.remove(inbox)
                        return
                job = inbox.get()  # handed one as it timed out


def _head_end(buffer):
    """(where the head's blank line starts, its length), or (-1, 0)."""
    crlf, lf = buffer.find(b"\r\n\r\n"), buffer.find(b"\n\n")
    if crlf >= 0 and (lf < 0 or crlf < lf):
        return crlf, 4
    if lf >= 0:
        return lf, 2
    return -1, 0


def _close(sock, graceful=False):
    """Close `sock`; `graceful`: after our answer, so the client reads it before a reset."""
    try:
        if graceful:
            sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def refusal(status, body, content_type, headers=()):
    """A whole response that closes the connection, with `headers`: for `render`."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}",
             f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
             "Connection: close", *(f"{name}: {value}" for name, value in headers)]
    if status == 503:
        lines.append("Retry-After: 1")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class SocketWriter(io.BufferedIOBase):
    """A handler's `wfile`: every write is sent whole (sendall), within the socket's timeout."""

    def __init__(self, sock):
        self.sock = sock

    def writable(self):
        return True

    def write(self, data):
        self.sock.sendall(data)
        return len(data)


class Prefetched(BaseHTTPRequestHandler):
    """http.server's handler for a request `Front` read: `rfile` holds its head, `self.body`
    its body, `wfile` writes to the client. `run()` handles it and says whether the
    connection may serve another request."""

    def __init__(self, connection, server):  # no socketserver set-up: the front did it
        self.front_connection = connection
        self.request = self.connection = connection.sock
        self.client_address, self.server = connection.address, server
        self.rfile = io.BytesIO(b"")  # everything was read: the head is parsed, the body here
        self.wfile = SocketWriter(connection.sock)
        self.body = connection.body

    def run(self):
        """Handle the request; True when the connection may serve another."""
        self.close_connection = True
        try:
            if self.parse_request():
                method = getattr(self, "do_" + self.command, None)
                if method is None:
                    self.send_error(501, f"Unsupported method ({self.command!r})")
                else:
                    method()
        except OSError:  # the client left, or took too long to read its answer
            self.close_connection = True
        return not self.close_connection

    def parse_request(self):
        """The request line (the front checked its shape and version) and the headers the
        front read (never parsed twice); whether the connection is kept, as http.server
        decides it."""
        line = self.front_connection.head.partition(b"\n")[0].rstrip(b"\r")
        self.raw_requestline = line + b"\r\n"
        self.requestline = line.decode("latin-1")
        self.command, self.path, self.request_version = self.requestline.split()
        if self.path.startswith("//"):  # as http.server does: never a scheme-relative URL
            self.path = "/" + self.path.lstrip("/")
        self.headers = self.front_connection.headers
        wanted = (self.headers.get("Connection") or "").lower()
        self.close_connection = not (self.request_version != "HTTP/1.0"
                                     and self.protocol_version >= "HTTP/1.1")
        if wanted == "close":
            self.close_connection = True
        elif wanted == "keep-alive" and self.protocol_version >= "HTTP/1.1":
            self.close_connection = False
        return True
