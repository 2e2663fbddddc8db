"""The wire: JSON-RPC 2.0, one JSON object per line, in both directions.

`parse` turns one line into a message or a JSON-RPC error. `Connection` is one end of a pipe:
it writes frames, matches responses to the requests it sent, and hands incoming requests and
notifications to a handler. It knows nothing about MCP or notes.

Deliberate simplifications:
- No JSON-RPC batches (MCP removed them in 2025-06-18): an array is an invalid request.
- Requests that may block (they wait for the other side) run in a thread each; the rest run
  inline on the reader thread. That is enough for one client on stdio.
"""

import json
import queue
import sys
import threading

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MISSING_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28

MAX_LINE_BYTES = 4 * 1024 * 1024  # a bigger frame is refused, never parsed


class RpcError(Exception):
    """A JSON-RPC error, raised by handlers and turned into an error response."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data
        self.msg_id = None  # set by parse() when the offending frame had a readable id

    def to_dict(self):
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Reply:
    """A handler's result plus something to run once that result is on the wire."""

    def __init__(self, result, then):
        self.result, self.then = result, then


class ConnectionClosed(Exception):
    """The other side went away while we waited for its answer."""


class _Slot:
    """Where the answer to one of our requests lands: a result or an exception."""

    def __init__(self):
        self._done = threading.Event()
        self._result = self._error = None

    def set_result(self, result):
        self._result = result
        self._done.set()

    def set_exception(self, error):
        self._error = error
        self._done.set()

    def result(self, timeout):
        if not self._done.wait(timeout):
            raise TimeoutError
        if self._error is not None:
            raise self._error
        return self._result


def valid_id(value):
    # bool is a subclass of int, and the SDK drops frames with float or bool ids.
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def parse(line):
    """Return a message dict with a `kind` key: request, notification or response.

    Raises RpcError for what cannot be a message; its `msg_id` is the request id when one
    could be read, so that the error response can carry it.
    """
    if len(line) > MAX_LINE_BYTES:
        raise RpcError(INVALID_REQUEST, f"Message larger than {MAX_LINE_BYTES} bytes")
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise RpcError(PARSE_ERROR, "Parse error: not a JSON value") from None
    if not isinstance(msg, dict):
        raise RpcError(INVALID_REQUEST, "A message must be a JSON object")
    if msg.get("jsonrpc") != "2.0":
        raise _bad(INVALID_REQUEST, 'Missing "jsonrpc": "2.0"', msg)
    if "method" in msg:
        if not isinstance(msg["method"], str):
            raise _bad(INVALID_REQUEST, "method must be a string", msg)
        if "id" not in msg:
            return {**msg, "kind": "notification"}  # never answered, even when malformed
        if "params" in msg and not isinstance(msg["params"], dict):
            raise _bad(INVALID_PARAMS, "params must be an object", msg)
        if not valid_id(msg["id"]):
            raise RpcError(INVALID_REQUEST, "id must be a string or an integer")
        return {**msg, "kind": "request"}
    if valid_id(msg.get("id")) and (("result" in msg) != ("error" in msg)):
        return {**msg, "kind": "response"}
    raise _bad(INVALID_REQUEST, "Neither a request, a notification nor a response", msg)


def _bad(code, message, msg):
    err = RpcError(code, message)
    err.msg_id = msg.get("id") if valid_id(msg.get("id")) else None
    return err


def encode(msg):
    return (json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class Connection:
    """One end of a newline-delimited JSON-RPC pipe.

    `handler(msg)` is called for each request and notification; for a request it returns the
    result or raises RpcError. `blocking(method)` says which requests must run in their own
    thread because they may wait for the other side.
    """

    def __init__(self, write_bytes, handler, blocking=lambda method: False, log=None):
        self._write_bytes = write_bytes
        self._handler = handler
        self._blocking = blocking
        self._log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self._lock = threading.Lock()
        self._pending = {}  # our request id -> _Slot
        self._next_id = 0
        self.closed = False

    # -- sending -------------------------------------------------------------------------
    def send(self, msg):
        data = encode(msg)
        with self._lock:
            if self.closed:
                raise ConnectionClosed("connection closed")
            self._write_bytes(data)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request(self, method, params=None, timeout=None):
        """Send a request and wait for its result; an error response raises RpcError."""
        future = _Slot()
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
            self._pending[msg_id] = future
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            self.send(msg)
            return future.result(timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer to {method} within {timeout} s") from None
        finally:
            with self._lock:
                self._pending.pop(msg_id, None)

    # -- receiving -----------------------------------------------------------------------
    def feed(self, line):
        """Handle one incoming line (bytes, without or with its newline)."""
        if not line.strip():
            return
        try:
            msg = parse(line)
        except RpcError as err:
            self._reply_error(err.msg_id, err)
            return
        if msg["kind"] == "response":
            self._resolve(msg)
        elif msg["kind"] == "request" and self._blocking(msg["method"]):
            threading.Thread(target=self._dispatch, args=(msg,), daemon=True).start()
        else:
            self._dispatch(msg)

    def serve(self, lines):
        """Read lines until EOF, then fail whatever still waits for an answer."""
        try:
            for line in lines:
                self.feed(line)
        finally:
            self.close()

    def close(self):
        with self._lock:
            self.closed = True
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(ConnectionClosed("the client went away"))

    def _resolve(self, msg):
        with self._lock:  # whoever takes a future out of _pending is the one who completes it
            future = self._pending.pop(msg["id"], None)
        if future is None:
            self._log(f"ignored a response to unknown id {msg['id']!r}")
        elif "error" in msg:
            error = msg["error"] if isinstance(msg["error"], dict) else {}
            future.set_exception(RpcError(error.get("code", INTERNAL_ERROR),
                                          str(error.get("message", "")), error.get("data")))
        else:
            future.set_result(msg["result"])

    def _dispatch(self, msg):
        is_request = msg["kind"] == "request"
        try:
            result = self._handler(msg)
            if is_request:
                reply = result if isinstance(result, Reply) else Reply(result, None)
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": reply.result})
                if reply.then:
                    reply.then()
        except RpcError as err:
            if is_request:
                self._reply_error(msg["id"], err)
        except ConnectionClosed:
            pass
        except Exception as exc:  # a bug must not kill the reader thread
            self._log(f"internal error in {msg.get('method')}: {type(exc).__name__}: {exc}")
            if is_request:
                self._reply_error(msg["id"], RpcError(INTERNAL_ERROR, "Internal error"))

    def _reply_error(self, msg_id, err):
        reply = {"jsonrpc": "2.0", "error": err.to_dict()}
        if msg_id is not None:  # an unreadable id is left out, not sent as null
            reply["id"] = msg_id
        try:
            self.send(reply)
        except ConnectionClosed:
            pass


class LinePipe:
    """An in-memory, one-way pipe of lines: what the demo uses instead of stdin/stdout."""

    def __init__(self):
        self._queue = queue.SimpleQueue()

    def write(self, data):
        self._queue.put(data)

    def close(self):
        self._queue.put(None)

    def __iter__(self):
        while (line := self._queue.get()) is not None:
            yield line


def read_lines(stream, limit=MAX_LINE_BYTES):
    """Lines from a binary stream, never buffering more than `limit` bytes of one line.

    An oversized line is yielded cut at limit + 1 bytes (so `parse` refuses it) and the rest
    of it, up to its newline, is skipped.
    """
    while line := stream.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := stream.readline(limit + 1)) and not rest.endswith(b"\n"):
                pass
        yield line


def traced(lines, write, trace):
    """Wrap a line source and a writer so both directions are copied to `trace`, one JSON
    object per line: {"dir": "in"|"out", "frame": <the line as text>}. Off by default."""
    lock = threading.Lock()

    def record(direction, data):
        entry = {"dir": direction, "frame": data.decode("utf-8", "replace").rstrip("\n")}
        with lock:
            trace.write(encode(entry))

    def traced_lines():
        for line in lines:
            record("in", line)
            yield line

    def traced_write(data):
        record("out", data)
        write(data)
    return traced_lines(), traced_write
