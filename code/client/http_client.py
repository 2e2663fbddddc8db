"""The lesson's client over Streamable HTTP: a pipe of lines for Client, made of POSTs.

`connect(url)` returns `(send, lines, close)`, what `sync_client.Client(send, lines, close)`
takes (like transport.start_in_process), so the same client core speaks over HTTP:

- `send(frame)` POSTs one frame and returns once the server has taken it (the answer's
  headers arrived), so frames reach the server in the order the core wrote them;
- what comes back comes out of `lines`, one frame per line: a JSON answer, the events of the
  answer's SSE stream, and (2025-11-25) the session's GET stream, opened after `initialize`;
- `close()` ends the session (DELETE) and every stream.

`ServerProcess` starts `serve --http` as a child process and tells its URL.

The headers each revision asks for are made here, from the frame: `Mcp-Session-Id` and
`MCP-Protocol-Version` once a 2025-11-25 session is negotiated; at 2026-07-28 the headers of
http_headers.py, the cookie the server set (the server tells its clients apart by it, so this
pipe's handles and calls stay its own), and `Mcp-Param-*` for the tools this client listed
(a tool whose `x-mcp-header` marks break the rules is left out of tools/list, as the
revision asks). A
2026-07-28 `notifications/cancelled` is not sent: the request's stream is closed instead, which
is how that revision cancels over HTTP. A refused request (an HTTP error) comes back as a
JSON-RPC error for it.

A 2025-11-25 stream that ends before its answer, after the server gave its events ids, is
resumed with a GET and `Last-Event-ID`, waiting the `retry` the server asked for.

Deliberate simplifications: one connection per POST; plain http:// only (no TLS, no
authorization).
"""

import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

from shared import http_headers, wire
from shared.protocol import META_VERSION

ACCEPT = "application/json, text/event-stream"
MAX_RESUMES = 3  # GETs with Last-Event-ID for one request whose stream keeps ending early


class HttpPipe:
    """One client's connection to an MCP endpoint (see the module docstring)."""

    def __init__(self, url, timeout=30.0):
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"an http:// URL of an MCP endpoint, not {url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.timeout = timeout
        self.session_id = None   # 2025-11-25, from the initialize answer
        self.cookie = None       # 2026-07-28: "name=value" the server set (who this client is)
        self.version = None      # 2025-11-25, negotiated
        self.marks = {}          # tool name -> http_headers.marked(its inputSchema)
        self._lines = queue.SimpleQueue()
        self._open = {}          # request id -> its connection, while it runs (closing it
        #                          cancels the request at 2026-07-28)
        self._connections = set()
        self._lock = threading.Lock()
        self._closed = False

    # -- the pipe --------------------------------------------------------------------------------
    def lines(self):
        while (line := self._lines.get()) is not None:
            yield line

    def send(self, data):
        msg = json.loads(data)
        # 2026-07-28: the request says so in `_meta`; a notification (cancelled) does not, but
        # then no session was ever negotiated
        stateless = META_VERSION in _meta(msg) or ("id" not in msg and self.session_id is None)
        if stateless and msg.get("method") == "notifications/cancelled":
            return self._cancel(_params(msg).get("requestId"))
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if "method" in msg and "id" in msg and stateless:
            headers.update(http_headers.request_headers(
                msg, self.marks.get(_params(msg).get("name"), ())))
            if self.cookie is not None:
                headers["Cookie"] = self.cookie
        elif not stateless:
            headers.update(self._session_headers())
        connection = None
        try:
            connection = self._connection()
            connection.request("POST", self.path, body=data, headers=headers)
            response = connection.getresponse()
        except OSError as exc:
            if connection is not None:
                self._forget(connection)
            if "method" in msg and "id" in msg:
                self._error(msg["id"], f"no pude enviar {msg['method']}: {exc}")
                return
            raise
        if "method" in msg and "id" in msg:
            with self._lock:
                self._open[msg["id"]] = connection
        threading.Thread(target=self._read, args=(connection, response, msg),
                         daemon=True).start()

    def close(self):
        """DELETE the session, close every stream, end `lines`."""
        with self._lock:
            self._closed = True
            connections, self._connections = list(self._connections), set()
        if self.session_id is not None:
            try:
                connection = http.client.HTTPConnection(self.host, self.port, timeout=5)
                connection.request("DELETE", self.path, headers=self._session_headers())
                connection.getresponse().read()
                connection.close()
            except OSError:
                pass
        for connection in connections:
            self._forget(connection)
        self._lines.put(None)

    # -- reading answers -------------------------------------------------------------------------
    def _read(self, connection, response, msg):
        request_id = msg.get("id") if "method" in msg else None
        cookie = response.getheader("Set-Cookie")
        if cookie:  # the server's name for this client (2026-07-28): sent back from now on
            self.cookie = cookie.split(";", 1)[0].strip()
        try:
            if msg.get("method") == "initialize":
                self.session_id = response.getheader("Mcp-Session-Id") or self.session_id
            kind = response.getheader("Content-Type", "")
            if "text/event-stream" in kind:
                connection.socket.settimeout(None)  # a stream may stay quiet for long
                if not self._stream(response, msg) and request_id is not None \
                        and self._open.get(request_id) is connection and not self._closed:
                    self._error(request_id, "el stream terminó sin la respuesta")
            else:
                body = response.read()
                if body.strip():
                    self._deliver(body, msg, response.status)
                elif response.status >= 400 and request_id is not None:
                    self._error(request_id, f"HTTP {response.status} {response.reason}")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if request_id is not None and not self._closed:
                self._error(request_id, f"la conexión se cortó: {exc}")
        finally:
            with self._lock:
                self._open.pop(request_id, None)
            self._forget(connection)

    def _stream(self, response, msg, resumes=0):
        """Deliver an SSE stream's frames; True when the answer to `msg` came. A stream that
        ends before it, after the server gave its events ids, is resumed (2025-11-25,
        SEP-1699): a GET with `Last-Event-ID`, after the `retry` the server asked for."""
        last_id, retry, answered = None, 1.0, False
        for event in events(response):
            last_id = event["id"] or last_id
            retry = event["retry"] / 1000 if event["retry"] is not None else retry
            if event["data"].strip():
                answered = self._deliver(event["data"], msg) or answered
        if "id" in msg and "method" in msg and not answered and last_id is not None \
                and self.session_id is not None and resumes < MAX_RESUMES and not self._closed:
            time.sleep(min(retry, 30.0))
            connection = self._connection()
            try:
                connection.request("GET", self.path, headers={
                    **self._session_headers(), "Accept": "text/event-stream",
                    "Last-Event-ID": last_id})
                resumed = connection.getresponse()
                if resumed.status == 200:
                    connection.socket.settimeout(None)
                    answered = self._stream(resumed, msg, resumes + 1)
            finally:
                self._forget(connection)
        return answered

    def _deliver(self, data, msg, status=200):
        """Put one frame on `lines`; True when it is the answer to `msg`."""
        try:
            frame = json.loads(data)
        except ValueError:
            if "method" in msg and "id" in msg:
                self._error(msg["id"], f"HTTP {status}: la respuesta no es JSON")
            return False
        answer = isinstance(frame, dict) and "method" not in frame and "method" in msg
        if answer and "error" in frame and "id" not in frame and "id" in msg:
            frame["id"] = msg["id"]  # a refusal of the transport, about this request
        answer = answer and "id" in msg and frame.get("id") == msg["id"]
        if answer:
            self._answered(msg, frame)
        self._lines.put(wire.encode(frame))
        return answer

    def _answered(self, msg, frame):
        """What this pipe learns from an answer: the negotiated version, the tools' marks."""
        result = frame.get("result")
        if not isinstance(result, dict):
            return
        if msg["method"] == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.version = result["protocolVersion"]
            if self.session_id is not None:
                threading.Thread(target=self._listen, daemon=True).start()
        if msg["method"] == "tools/list" and isinstance(result.get("tools"), list):
            kept = []
            for tool in result["tools"]:
                try:
                    marks = http_headers.marked(tool.get("inputSchema", {}))
                except (AttributeError, ValueError):
                    continue  # broken x-mcp-header marks: the tool is left out
                self.marks[tool.get("name")] = marks
                kept.append(tool)
            result["tools"] = kept

    def _listen(self):
        """2025-11-25: the session's GET stream, for what the server asks outside a request."""
        try:
            connection = self._connection()
            connection.request("GET", self.path, headers={
                **self._session_headers(), "Accept": "text/event-stream"})
            response = connection.getresponse()
            if response.status != 200:
                return
            connection.socket.settimeout(None)
            for event in events(response):
                if event["data"].strip():
                    self._deliver(event["data"], {})
        except (OSError, http.client.HTTPException):
            pass
        finally:
            self._forget(connection)

    # -- helpers ---------------------------------------------------------------------------------
    def _session_headers(self):
        headers = {"Mcp-Session-Id": self.session_id} if self.session_id is not None else {}
        if self.version is not None:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def _cancel(self, request_id):
        """2026-07-28: cancelling a request is closing its stream."""
        with self._lock:
            connection = self._open.pop(request_id, None)
        if connection is not None:
            self._forget(connection)

    def _error(self, request_id, text):
        self._lines.put(wire.encode(wire.error_response(
            request_id, wire.RpcError(wire.INTERNAL_ERROR, text))))

    def _connection(self):
        """A new connection, already connected; `.socket` stays reachable after http.client
        hands it to a response that closes the connection (an SSE stream)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        with self._lock:
            if self._closed:
                raise OSError("the pipe is closed")
            self._connections.add(connection)
        connection.connect()
        connection.socket = connection.sock
        return connection

    def _forget(self, connection):
        """Close a connection, waking first whoever is reading its stream (shutting the
        socket down ends their read; closing a response under a reader would wait for it)."""
        with self._lock:
            self._connections.discard(connection)
        sock = getattr(connection, "socket", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        connection.close()
        if sock is not None:
            sock.close()


def events(response):
    """Each Server-Sent Event of a response, as it arrives: {"data": bytes, "id": str or
    None, "retry": milliseconds or None}."""
    event = {"data": [], "id": None, "retry": None}
    while line := response.readline(wire.MAX_LINE_BYTES + 64):
        line = line.rstrip(b"\r\n")
        if not line:
            if event["data"] or event["id"] is not None or event["retry"] is not None:
                yield {**event, "data": b"\n".join(event["data"])}
            event = {"data": [], "id": None, "retry": None}
            continue
        field, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if field == b"data":
            event["data"].append(value)
        elif field == b"id":
            event["id"] = value.decode("utf-8", "replace")
        elif field == b"retry" and value.isdigit():
            event["retry"] = int(value)
    if event["data"]:
        yield {**event, "data": b"\n".join(event["data"])}


def _params(msg):
    return msg.get("params") if isinstance(msg.get("params"), dict) else {}


def _meta(msg):
    meta = _params(msg).get("_meta")
    return meta if isinstance(meta, dict) else {}


class ServerProcess:
    """`main.py serve --http 127.0.0.1:0 ARGS` as a child process (tests, the notebook's
    replicas): `url` once it listens (the log line that names it), `log` its stderr lines,
    `stop()` ends it by its PID (SIGTERM: a clean stop) and returns its exit code; a server
    that does not stop in time gets SIGABRT, so that Python's fault handler writes where each
    thread was stuck into the log the error shows."""

    def __init__(self, *args, listen="127.0.0.1:0", cwd=None, env=None, timeout=20.0):
        code = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # client/ is in code/
        main = os.path.join(code, "main.py")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-X", "faulthandler", main, "serve", "--http", listen,
             *map(str, args)],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        self.log, self._new = [], threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.wait_log(r"ready on (http://\S+/mcp)", timeout)[1]
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname, parts.port

    def _read(self):
        for line in self.proc.stderr:
            with self._new:
                self.log.append(line.rstrip("\n"))
                self._new.notify_all()
        with self._new:
            self.log.append(None)  # the process closed its stderr
            self._new.notify_all()

    def wait_log(self, pattern, timeout=20.0):
        """The first log line matching `pattern` (a regular expression), as a re.Match."""
        found = []

        def match():
            found[:] = [m for line in self.log if line and (m := re.search(pattern, line))]
            return found or None in self.log
        with self._new:
            if not self._new.wait_for(match, timeout) or not found:
                raise RuntimeError(f"no log line like {pattern!r}: {self.log[-5:]}")
        return found[0]

    def stop(self, signum=signal.SIGTERM, timeout=10.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # SIGABRT: the fault handler writes where every thread is stuck to its stderr
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            with self._new:
                self._new.wait_for(lambda: None in self.log, 5)
                log = "\n".join(line for line in self.log[-80:] if line is not None)
            raise RuntimeError(f"the server did not stop on its signal; its log:\n{log}") \
                from None


def connect(url, timeout=30.0):
    """`(send, lines, close)` for `sync_client.Client`, speaking Streamable HTTP to `url`."""
    pipe = HttpPipe(url, timeout)
    return pipe.send, pipe.lines(), pipe.close
