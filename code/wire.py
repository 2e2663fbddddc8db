"""The wire: JSON-RPC 2.0, one JSON object per line, in both directions.

`parse` turns one line into a message (a dict with a `kind`: request, notification or
response) or raises `RpcError`; `encode` turns a message into a line; the small builders
(`request`, `notification`, `response`, `error_response`) make the four shapes. Nothing here
knows about MCP or notes, and nothing here reads, writes, waits or starts a thread: the
session (session.py) and the transports (transport.py) do that.

Deliberate simplifications: no JSON-RPC batches (MCP removed them in 2025-06-18): an array is
an invalid request; ids are strings or integers (the SDK drops floats and booleans).
"""

import json
import threading

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

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

    @classmethod
    def from_dict(cls, error):
        error = error if isinstance(error, dict) else {}
        code = error.get("code")
        return cls(code if isinstance(code, int) else INTERNAL_ERROR,
                   str(error.get("message", "")), error.get("data"))


class ConnectionClosed(Exception):
    """The other side went away while we waited for its answer."""


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
    """One line of UTF-8. A string that cannot be UTF-8 (a lone surrogate) is sent escaped."""
    text = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
    try:
        return (text + "\n").encode()
    except UnicodeEncodeError:
        return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


# -- the four shapes ---------------------------------------------------------------------------
def request(msg_id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def response(msg_id, result):
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_response(msg_id, err):
    msg = {"jsonrpc": "2.0"}
    if msg_id is not None:  # an unreadable id is left out, not sent as null
        msg["id"] = msg_id
    msg["error"] = err.to_dict()
    return msg


# -- lines -------------------------------------------------------------------------------------
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
