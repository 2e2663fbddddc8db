"""Streamable HTTP: the notes server over HTTP (`serve --http HOST:PORT`), on the same core.

The session core (session.py) is the one stdio uses: frames in; frames, timers and page
completions out. This driver is its HTTP side, standard library only: the front
(http_front.py) reads every connection's requests on one thread; each request read in full
runs on a thread of its own, feeds its JSON-RPC body (parsed once) to a session under one lock
(so the core is never entered twice at once, as on stdio) and writes what the session sends
back, as one JSON object or as a stream of Server-Sent Events (SSE). One endpoint, MCP_PATH,
speaks both revisions:

- 2025-11-25 (and 2025-06-18): sessions. An `initialize` without `Mcp-Session-Id` starts one
  (its own Session; its id goes back in that header), every later request carries the id,
  DELETE ends the session and an unknown id gets 404. A request is answered as JSON when its
  answer is ready at once; otherwise as an SSE stream that also carries what the session sends
  meanwhile (its elicitation/create and roots/list requests, progress), up to the answer.
  What belongs to no running request (the roots/list after `notifications/initialized`, a
  completion notification) goes on the client's GET stream, kept until it opens one.
- 2026-07-28: no sessions. Each POST stands alone: its `_meta` carries the version and the
  client's capabilities, and its headers must repeat the body (http_headers.py:
  `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), else 400 with
  HeaderMismatch (-32020). What the server keeps between requests belongs to the client that
  made it: each client has a space of its own (client_spaces.py: a cookie, or what it carries
  back), a Session whose requests run under ids of the server's own (clients reuse ids). An
  error gets the status the revision gives it: 404 for an unknown method, 400 for bad params,
  an unsupported version or a missing capability. Closing the response stream cancels the
  request.

Where a frame goes (http_channels.Channel): an answer to the stream of its request; anything
else to the stream of what the session was doing when it sent it (the request being handled,
or the question being answered; timers remember it), else to the GET stream.

Safety: `Host` and `Origin` must name a loopback address or the one the server listens on
(DNS rebinding: 403 otherwise); `MCP-Protocol-Version` is checked on every method. No client
starves another, each budget on its own (beyond one, 503 with `Retry-After`):
- reading requests: the front's (http_front.Limits: connections, a deadline for a whole head
  and a whole body, the bodies held at once);
- requests being answered (a thread each, streams included): at most MAX_REQUESTS, of which
  one client (a session, a 2026-07-28 client with its cookie) holds at most PER_CLIENT;
- GET streams: one per session (409 for a second), so at most MAX_SESSIONS;
- sessions: MAX_SESSIONS; 2026-07-28 clients: MAX_CLIENTS. To make room the least recently
  used one that holds nothing (no open handle, waiting call, pending flow, request being
  answered; a GET stream alone does not count) is ended; one in use never is.
An idle session ends after SESSION_IDLE_SECONDS, an idle 2026-07-28 client after
CLIENT_IDLE_SECONDS; `close()` ends every session and stream.

Deliberate simplifications: no authentication (listening on loopback is the protection);
streams cannot be resumed (no event ids; `Last-Event-ID` is ignored); every connection is the
same user (`--user`); the setup page keeps its own port (server.serve_page_http); no
`subscriptions/listen` (the server has no list changes to announce); one lock for every
session (the core's work per frame is short; the waiting happens outside it); a client that
keeps no cookie is told apart only by what it carries back (client_spaces.py).
"""

import itertools
import secrets
import select
import socket
import threading
import time
from collections import OrderedDict
from urllib.parse import urlsplit

from shared import http_headers, wire
from shared.http_headers import meta_of, stateless_request
from shared.protocol import (
    HANDSHAKE_VERSIONS,
    HEADER_MISMATCH,
    META_VERSION,
)
from transports import client_spaces, http_front
from transports.http_channels import Channel, Slots, Stream
from transports.transport import ThreadClock

MCP_PATH = "/mcp"
MAX_REQUESTS = 64             # requests being answered at once (a thread each)
PER_CLIENT = 8                # ... of which one client's
MAX_SESSIONS = 64             # 2025-11-25 sessions alive at once (and GET streams)
MAX_CLIENTS = 128             # 2026-07-28 client spaces alive at once
SESSION_IDLE_SECONDS = 1800.0  # a session nobody used for this long is ended
CLIENT_IDLE_SECONDS = 600.0   # a 2026-07-28 client space nobody used for this long is ended
KEEPALIVE_SECONDS = 15.0      # an SSE comment when a stream was quiet this long
WRITE_SECONDS = 10.0          # a client that reads its answer slower than this is dropped
CHECK_SECONDS = 0.5           # how often a waiting stream looks whether its client left
CLOSE_WAIT = 2.0              # seconds close() waits for a running tool before it goes on
LIMITS = http_front.Limits(connections=256, head_bytes=64 * 1024, head_seconds=10.0,
                           body_bytes=wire.MAX_LINE_BYTES, body_seconds=30.0,
                           buffered_bytes=64 * 1024 * 1024, idle_seconds=10.0)
LOOPBACK = ("localhost", "127.0.0.1", "::1")

class Refused(Exception):
    """A request this transport answers itself: its HTTP status and the JSON-RPC error (and
    `Retry-After` for a 503: try again in a moment)."""

    def __init__(self, status, code, message, msg_id=None):
        super().__init__(message)
        self.status, self.error, self.msg_id = status, wire.RpcError(code, message), msg_id
        self.headers = [("Retry-After", "1")] if status == 503 else []


def busy(reason, msg_id=None):
    return Refused(503, wire.INTERNAL_ERROR, f"Servidor ocupado: {reason}. Vuelve a "
                   "intentarlo en un momento.", msg_id)


# -- the server ---------------------------------------------------------------------------------
class StreamableHttp:
    """`server` (a NotesServer) on HOST:PORT at MCP_PATH; `serve_forever()` until `close()`."""

    def __init__(self, server, host="127.0.0.1", port=0, log=None, trace=None, limits=LIMITS):
        self.server, self.log = server, log or (lambda text: None)
        self.lock = threading.RLock()
        self.clock = ThreadClock(self.lock, log=self.log)
        self.sessions = OrderedDict()  # Mcp-Session-Id -> Channel, least recently used first
        self.clients = client_spaces.Spaces(
            lambda name: Channel(self, name, stateless=True), MAX_CLIENTS, CLIENT_IDLE_SECONDS,
            log=self.log)
        self.requests = Slots(MAX_REQUESTS, PER_CLIENT)
        self.workers = http_front.Workers("mcp-http")
        self.listeners = Slots(2 * MAX_SESSIONS, 2)  # a GET stream a session (and one ending)
        self._ids = itertools.count(1)
        self._trace, self._trace_lock = trace, threading.Lock()
        self._closed = False
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listening = socket.create_server((host, port), family=family, backlog=128)
        self.front = http_front.Front(listening, self._dispatch, self._render, limits,
                                      self.log)
        self.host, self.port = host, listening.getsockname()[1]
        self.hosts = {*LOOPBACK, host.strip("[]").lower()}
        self.url = f"http://{'[' + host + ']' if ':' in host else host}:{self.port}{MCP_PATH}"
        self.clock.call_later(min(SESSION_IDLE_SECONDS, CLIENT_IDLE_SECONDS) / 10, self._reap)

    def serve_forever(self):
        self.front.serve_forever(poll=0.2)

    def stop_soon(self, exception):
        """For a signal handler: `serve_forever` raises `exception` at its next turn (within
        0.2 s), between two connections' events, never in the middle of one."""
        self.front.stop_with = exception

    def close(self):
        """End every session and stream, stop listening and stop the clock. A tool still
        running after CLOSE_WAIT seconds (it holds the core) is not waited for: the streams
        end without it, and its session is left to the process's end."""
        if self._closed:
            return
        self._closed = True
        self.front.close()
        held = self.lock.acquire(timeout=CLOSE_WAIT)
        try:
            channels = [*self.sessions.values(), *self.clients.table.values()]
            self.sessions.clear()
            self.clients.table.clear()
            if not held:
                self.log(f"a tool still runs after {CLOSE_WAIT:g} s: stopping without it")
            for channel in channels:
                channel.end() if held else channel.end_streams()
        finally:
            if held:
                self.lock.release()
        self.clock.stop()

    # -- admission: each request read in full gets a thread, or 503 --------------------------
    def _dispatch(self, connection):
        """On the front's thread: a thread for this request if its budget has room (a GET
        stream: one per session; anything else: MAX_REQUESTS, PER_CLIENT for one client),
        else 503 at once."""
        headers = connection.headers
        client = headers.get("Mcp-Session-Id") or client_spaces.cookie(headers)
        slots = self.listeners if connection.method == "GET" else self.requests
        slot = None if self._closed else slots.take(client)
        if slot is None:
            self.front.release(connection)
            try:
                connection.sock.sendall(self._render(503, "demasiadas peticiones a la vez"
                                                     + (" de este cliente" if client else "")))
            except OSError:
                pass
            http_front._close(connection.sock, graceful=True)
            return
        try:
            self.workers.run(self._handle, connection, slot)
        except RuntimeError as exc:  # no thread to be had now
            slot.give()
            self.front.release(connection)
            http_front._close(connection.sock)
            self.log(f"http: no thread for a request: {exc}")
        except BaseException:  # the thread started, and then came a stop: it gives the slot
            slot.give()        # back too, and a Slot is given back once
            raise

    def _handle(self, connection, slot):
        """A request's own thread: the handler, then the connection's next request (or its
        close); the slot is given back once, whatever happens."""
        keep = False
        try:
            connection.sock.settimeout(WRITE_SECONDS)
            keep = McpRequest(connection, self).run()
        except Exception as exc:  # a bug in here: this connection only, one line
            self.log(f"http: a request failed: {type(exc).__name__}: {exc}")
        finally:
            slot.give()
            self.front.finished(connection, keep and not self._closed)

    def _render(self, status, reason):
        """What the front (and the admission) answer themselves: a JSON-RPC error."""
        body = wire.encode(wire.error_response(None, wire.RpcError(
            wire.INTERNAL_ERROR if status >= 500 else wire.INVALID_REQUEST,
            f"HTTP {status}: {reason}"))).rstrip(b"\n")
        return http_front.refusal(status, body, "application/json", [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")])

    # -- sessions and clients ------------------------------------------------------------------
    def new_session(self):
        """A new 2025-11-25 session; to make room, the least recently used one that holds
        nothing is ended; Refused(503) when every one holds something."""
        with self.lock:
            if len(self.sessions) >= MAX_SESSIONS:
                idle = next((c for c in self.sessions.values() if not c.in_use()), None)
                if idle is None:
                    raise busy(f"hay {MAX_SESSIONS} sesiones con notas abiertas o llamadas en "
                               "curso")
                self.end_session(idle.name)
            name = secrets.token_urlsafe(24)
            self.sessions[name] = Channel(self, name)
            return self.sessions[name]

    def session(self, name):
        with self.lock:
            channel = self.sessions.get(name)
            if channel is not None:
                self.sessions.move_to_end(name)
                channel.last_used = time.monotonic()
            return channel

    def end_session(self, name):
        with self.lock:
            channel = self.sessions.pop(name, None)
        if channel is not None:
            channel.end()
        return channel is not None

    def client(self, who, msg_id):
        """The space of a 2026-07-28 client (client_spaces.py); Refused(503) when there is
        no room for a new one."""
        with self.lock:
            try:
                return self.clients.get(who)
            except client_spaces.Full as full:
                raise busy(str(full), msg_id) from None

    def _reap(self):
        """Every so often: end the sessions and the 2026-07-28 clients nobody used for their
        idle time (their GET streams too), unless a request of theirs is being answered."""
        with self.lock:
            old = time.monotonic() - SESSION_IDLE_SECONDS
            for name, channel in list(self.sessions.items()):
                if channel.last_used < old and not channel.answering():
                    self.log(f"session {name[:8]}… ended: unused for "
                             f"{SESSION_IDLE_SECONDS:g} s")
                    self.end_session(name)
            self.clients.reap(busy=Channel.answering)
        if not self._closed:
            self.clock.call_later(min(SESSION_IDLE_SECONDS, CLIENT_IDLE_SECONDS) / 10,
                                  self._reap)

    def next_id(self):
        return f"http-{next(self._ids)}"

    # -- frames --------------------------------------------------------------------------------
    def encode(self, frame, stream):
        data = wire.encode(frame)
        self.record("out", data, stream.name)
        return data

    @property
    def tracing(self):
        return self._trace is not None

    def record(self, direction, data, channel):
        """`--trace`: one JSON line per frame: {"dir", "frame", "channel"}; a 2026-07-28
        exchange is a channel of its own (clients reuse ids)."""
        if self._trace is None:
            return
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        entry = {"dir": direction, "frame": text.rstrip("\n"), "channel": channel}
        with self._trace_lock:
            self._trace.write(wire.encode(entry))

    def allowed(self, value, origin=False):
        """Is this `Host` (or `Origin`) one of ours? A loopback name or the listening
        address; a Host must also name our port."""
        if value is None:
            return origin  # no Origin: not a browser; a Host is required
        try:
            parts = urlsplit(value if origin else "//" + value)
            port = parts.port
        except ValueError:
            return False
        if origin and parts.scheme not in ("http", "https"):
            return False
        return parts.hostname in self.hosts and (origin or port in (None, self.port))


class McpRequest(http_front.Prefetched):
    """One HTTP request to the MCP endpoint, read by the front (`owner` the server)."""

    protocol_version = "HTTP/1.1"
    _raw = None  # the body, while this request may still trace it

    def __init__(self, connection, owner):
        super().__init__(connection, owner)
        self.owner = owner

    def version_string(self):  # no software versions in answers
        return "notas-mcp"

    # -- the three methods -----------------------------------------------------------------------
    def do_POST(self):
        try:
            self._checked()
            msg = self._message()
            name = self.headers.get("Mcp-Session-Id")
            if name is not None:
                return self._stateful(self._session(name, msg.get("id")), msg)
            version = self.headers.get("MCP-Protocol-Version")
            if msg["kind"] != "response" and stateless_request(msg, version):
                return self._stateless(msg)
            if msg["kind"] == "request" and msg["method"] == "initialize":
                if version is not None and version.strip() not in HANDSHAKE_VERSIONS:
                    raise Refused(400, wire.INVALID_REQUEST,
                                  f"Versión de protocolo no soportada: {version!r}", msg["id"])
                return self._stateful(self.owner.new_session(), msg, new=True)
            raise Refused(400, wire.INVALID_REQUEST, "Falta la cabecera Mcp-Session-Id: empieza "
                          "con initialize (o usa 2026-07-28, con _meta en cada petición)",
                          msg.get("id"))
        except Refused as refused:
            self._refuse(refused)

    def do_GET(self):
        try:
            self._checked()
            channel = self._session(self.headers.get("Mcp-Session-Id"))
            if not self._accepts("text/event-stream"):
                raise Refused(406, wire.INVALID_REQUEST, "El stream GET necesita Accept: "
                              "text/event-stream")
            stream = Stream(channel.name)
            with self.owner.lock:
                if channel.listener is not None and not channel.listener.closed:
                    raise Refused(409, wire.INVALID_REQUEST, "Esta sesión ya tiene un stream GET")
                channel.listen(stream)
        except Refused as refused:
            return self._refuse(refused)
        try:
            self._events(stream)
        finally:
            with self.owner.lock:
                if channel.listener is stream:
                    channel.listener = None
            stream.end()

    def do_DELETE(self):
        try:
            self._checked()
            name = self.headers.get("Mcp-Session-Id")
            self._session(name)
            self.owner.end_session(name)
            self._send(200, b"", None)
        except Refused as refused:
            self._refuse(refused)

    def do_OPTIONS(self):
        """A browser's CORS preflight (a page on a loopback origin, e.g. MCP Inspector)."""
        try:
            self._checked()
        except Refused as refused:
            return self._refuse(refused)
        self._send(204, b"", None, [
            ("Access-Control-Allow-Methods", "GET, POST, DELETE"),
            ("Access-Control-Allow-Headers", "Content-Type, Accept, Mcp-Session-Id, "
             "MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID"),
            ("Access-Control-Max-Age", "600")])

    def do_PUT(self):
        self._refuse(Refused(405, wire.INVALID_REQUEST, "Usa POST, GET o DELETE"))

    do_PATCH = do_PUT

    # -- checks ----------------------------------------------------------------------------------
    def _checked(self):
        """Our endpoint, our Host, no foreign Origin (DNS rebinding)."""
        if not self.owner.allowed(self.headers.get("Host")) or \
                not self.owner.allowed(self.headers.get("Origin"), origin=True):
            raise Refused(403, wire.INVALID_REQUEST, "Host u Origin no permitidos")
        if urlsplit(self.path).path != MCP_PATH:
            raise Refused(404, wire.INVALID_REQUEST, f"El endpoint MCP es {MCP_PATH}")

    def _session(self, name, msg_id=None):
        """The session named `name`, whatever the method: its negotiated version must be the
        `MCP-Protocol-Version` header's, when there is one (400 otherwise)."""
        if name is None:
            raise Refused(400, wire.INVALID_REQUEST, "Falta la cabecera Mcp-Session-Id")
        channel = self.owner.session(name)
        if channel is None:
            raise Refused(404, wire.INVALID_REQUEST, "Sesión desconocida o terminada")
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version.strip() != channel.session.protocol_version:
            raise Refused(400, wire.INVALID_REQUEST, f"MCP-Protocol-Version {version!r} no es "
                          "la versión negociada en esta sesión", msg_id)
        return channel

    def _message(self):
        """The POST's message, parsed once (wire.parse); Refused for anything else. The body
        the front read is let go at once (kept only while `--trace` may still write it)."""
        if "json" not in self.headers.get("Content-Type", ""):
            raise Refused(415, wire.INVALID_REQUEST, "El cuerpo debe ser application/json")
        if self.headers.get("Content-Length") is None:
            raise Refused(411, wire.INVALID_REQUEST, "Falta Content-Length")
        body, self.body = self.body, None
        self.owner.front.release(self.front_connection)
        if self.owner.tracing:
            self._raw = body
        try:
            msg = wire.parse(body)
        except wire.RpcError as err:
            raise Refused(400, err.code, err.message, err.msg_id) from None
        finally:
            del body
        if msg["kind"] == "request" and not (self._accepts("application/json")
                                             and self._accepts("text/event-stream")):
            raise Refused(406, wire.INVALID_REQUEST, "Accept debe incluir application/json y "
                          "text/event-stream", msg["id"])
        return msg

    def _traced(self, channel):
        """`--trace`: the body as it came, in `channel`; then it is let go."""
        if self._raw is not None:
            self.owner.record("in", self._raw, channel)
            self._raw = None

    def _accepts(self, kind):
        accept = self.headers.get("Accept", "")
        return kind in accept or "*/*" in accept

    # -- the two revisions ----------------------------------------------------------------------
    def _stateful(self, channel, msg, new=False):
        self._traced(channel.name)
        if msg["kind"] != "request":
            def deliver():  # an answer continues where its question was asked
                if msg["kind"] == "response":
                    channel.context = channel.asked.pop(msg["id"], None)
                channel.session.deliver(msg)
            channel.enter(None, deliver)
            return self._send(202, b"", None)
        stream = Stream(channel.name)

        def receive():
            channel.waiting[msg["id"]] = stream
            channel.session.deliver(msg)
        channel.enter(stream, receive)
        headers = []
        if new:
            if channel.session.protocol_version is None:  # initialize failed: no session
                self.owner.end_session(channel.name)
            else:
                headers.append(("Mcp-Session-Id", channel.name))
        self._reply(stream, headers, lambda: None)

    def _stateless(self, msg):
        if msg["kind"] == "notification":  # none is defined over HTTP at 2026-07-28
            return self._send(202, b"", None)
        problem = http_headers.mismatch(msg, self.headers, self.owner.server.tools)
        if problem is not None:
            raise Refused(400, HEADER_MISMATCH, f"Cabeceras que no coinciden: {problem}",
                          msg["id"])
        if META_VERSION not in meta_of(msg) and msg["method"] != "server/discover":
            raise Refused(400, wire.INVALID_PARAMS, f"_meta necesita {META_VERSION}", msg["id"])
        who = client_spaces.identify(self.headers, msg)
        channel, ours = self.owner.client(who, msg["id"]), self.owner.next_id()
        stream = Stream(f"2026-07-28/{ours}")
        self._traced(stream.name)
        ours_msg = {**msg, "id": ours}

        def receive():
            channel.waiting[ours], channel.client_ids[ours] = stream, msg["id"]
            channel.session.deliver(ours_msg)
        try:
            channel.enter(stream, receive)
            headers = [("Set-Cookie", client_spaces.set_cookie(who.secret))] \
                if who.secret is not None else []
            self._reply(stream, headers, lambda: channel.gone(stream, ours))
        finally:
            with self.owner.lock:
                self.owner.clients.done(channel)

    # -- answers ----------------------------------------------------------------------------------
    def _reply(self, stream, headers, on_gone):
        """The answer as JSON when it is all there is and it is ready; else an SSE stream up to
        it. `on_gone` runs when the client leaves before the answer."""
        frames, over = stream.take(0)
        if over and stream.answered and len(frames) == 1:
            return self._send(stream.status, frames[0].rstrip(b"\n"), "application/json",
                              headers)
        if not self._events(stream, frames, headers) and not stream.answered:
            stream.end()
            on_gone()

    def _events(self, stream, frames=(), headers=()):
        """Write `stream` as SSE until it is over or the client leaves; True when it ended."""
        try:
            self.send_response(200)
            for name, value in (("Content-Type", "text/event-stream"),
                                ("X-Accel-Buffering", "no"), ("Connection", "close"),
                                *headers, *self._common()):
                self.send_header(name, value)
            self.end_headers()
            self.close_connection = True
            quiet, over = time.monotonic(), False
            while True:
                for data in frames:
                    self.wfile.write(b"event: message\ndata: " + data.rstrip(b"\n") + b"\n\n")
                if frames:
                    self.wfile.flush()
                    quiet = time.monotonic()
                if over:
                    return True
                if time.monotonic() - quiet > KEEPALIVE_SECONDS:
                    self.wfile.write(b": sigo aqui\n\n")
                    self.wfile.flush()
                    quiet = time.monotonic()
                if self._client_left():
                    return False
                frames, over = stream.take(CHECK_SECONDS)
        except OSError:  # the client went away mid-write (or was too slow)
            return False

    def _client_left(self):
        """Has the client closed its side? (A readable socket with nothing to read.)"""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _refuse(self, refused):
        answer = wire.encode(wire.error_response(refused.msg_id, refused.error))
        if self._raw is not None:  # a message this transport refused: traced on its own
            channel = f"refused/{self.owner.next_id()}"
            self._traced(channel)
            self.owner.record("out", answer, channel)
        body = answer.rstrip(b"\n")
        headers = [("Allow", "GET, POST, DELETE")] if refused.status == 405 else []
        self._send(refused.status, body, "application/json", [*headers, *refused.headers])

    def _send(self, status, body, content_type, headers=()):
        """A whole answer, its head and body in one write."""
        try:
            self.send_response(status)
            extra = [("Content-Type", content_type)] if content_type else []
            for name, value in (*extra, ("Content-Length", str(len(body))), *headers,
                                *self._common()):
                self.send_header(name, value)
            self._headers_buffer.append(b"\r\n" + body)  # end_headers, with the body
            self.flush_headers()
        except OSError:
            self.close_connection = True

    def _common(self):
        """Headers on every answer: never cached, never sniffed; CORS for a loopback page."""
        common = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")]
        origin = self.headers.get("Origin") if self.headers else None
        if origin is not None and self.owner.allowed(origin, origin=True):
            common += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                       ("Access-Control-Expose-Headers", "Mcp-Session-Id")]
        return common

    def log_request(self, code="-", size="-"):  # never log bodies or query strings
        pass

    def log_message(self, fmt, *args):
        self.owner.log("http: " + fmt % args)


def serve(server, host, port, log, trace=None, ready=None):
    """`serve --http`: run until interrupted (SIGINT, or SIGTERM through main.py's handler);
    `ready(http)` is called once it listens."""
    http = StreamableHttp(server, host, port, log, trace)
    try:
        if ready is not None:
            ready(http)
        http.serve_forever()
    finally:
        http.close()
