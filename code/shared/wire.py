"""The wire: JSON-RPC 2.0, one JSON object per line, in both directions.

`parse` turns one line into a message (a dict with a `kind`: request, notification or
response) or raises `RpcError`; `encode` turns a message into a line; the small builders
(`request`, `notification`, `response`, `error_response`) make the four shapes. Nothing here
knows about MCP or notes, and nothing here reads, writes, waits or starts a thread: the
session (session.py) and the transports (transport.py) do that.

Both directions keep the same limits: a frame is at most MAX_LINE_BYTES and nests at most
MAX_DEPTH arrays and objects. `parse` refuses a deeper frame before decoding it (a linear scan
at C speed, so a line of a million `[` costs a fraction of a second and never a RecursionError),
and `check_json` refuses a value the server is about to send that breaks them, or that is not
strict JSON (NaN, Infinity, sets, objects, cycles): what our own `parse` would refuse is never
sent.

Deliberate simplifications: no JSON-RPC batches (MCP removed them in 2025-06-18): an array is
an invalid request; ids are strings or integers (the SDK drops floats and booleans); a lone
surrogate in a string is allowed both ways (`encode` sends it escaped, as JSON permits).
"""

import json
import threading
from itertools import accumulate, repeat
from operator import sub

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_LINE_BYTES = 4 * 1024 * 1024  # a bigger frame is refused, never parsed
MAX_DEPTH = 64                    # arrays and objects inside each other; MCP needs < 20


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
    if too_deep(line):
        raise _too_deep(line)
    try:
        msg = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
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


def too_deep(data):
    """Whether arrays and objects nest more than MAX_DEPTH deep in this JSON text (bytes or
    str), in linear time and at C speed: no recursion, whatever the text.

    Brackets inside strings do not count. Text that is not JSON may be judged too deep; it is
    refused either way.
    """
    if data.count("[" if isinstance(data, str) else b"[") + \
            data.count("{" if isinstance(data, str) else b"{") <= MAX_DEPTH:
        return False  # the common case: two counts
    data = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    outside = b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    brackets = outside.translate(_BRACKETS, _NOT_BRACKETS)  # "[" "{" -> 2, "]" "}" -> 0
    return max(accumulate(map(sub, brackets, repeat(1))), default=0) > MAX_DEPTH


_BRACKETS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _too_deep(line):
    """The error for a frame nested deeper than MAX_DEPTH, with its id when it can be read."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return RpcError(PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels")
    err = RpcError(INVALID_REQUEST, f"Message nested deeper than {MAX_DEPTH} levels")
    err.msg_id = msg.get("id") if isinstance(msg, dict) and valid_id(msg.get("id")) else None
    return err


def _bad(code, message, msg):
    err = RpcError(code, message)
    err.msg_id = msg.get("id") if valid_id(msg.get("id")) else None
    return err


class NotJSON(ValueError):
    """A value the server must not send: `kind` is "type", "number", "depth" or "size"."""

    def __init__(self, kind, detail):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


def check_json(value, limit=MAX_LINE_BYTES - 1024):
    """Raise NotJSON unless `value` is strict JSON that our own `parse` would read back.

    Strict: only dicts, lists, strings, numbers (no NaN or Infinity), booleans and None, no
    cycles; at most MAX_DEPTH deep; at most `limit` bytes once encoded (room is left for the
    envelope of the frame that carries it). Returns the compact encoding.
    """
    try:
        text = _STRICT.encode(value)
    except TypeError as exc:
        raise NotJSON("type", str(exc)) from None
    except ValueError as exc:  # NaN, Infinity or a cycle
        raise NotJSON("type" if "ircular" in str(exc) else "number", str(exc)) from None
    except RecursionError:
        raise NotJSON("depth", f"nested deeper than {MAX_DEPTH} levels") from None
    size = len(text) if 4 * len(text) <= limit else len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise NotJSON("size", f"{size} bytes, more than {limit}")
    if too_deep(text):
        raise NotJSON("depth", f"nested deeper than {MAX_DEPTH} levels")
    return text


_STRICT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Checked(dict):
    """A response frame whose result already passed `check_json`: `encode` reuses that text
    instead of encoding the result a second time. Otherwise it is the frame dict itself."""

    def __init__(self, msg_id, result, result_text):
        super().__init__(response(msg_id, result))
        head = str(msg_id) if isinstance(msg_id, int) else json.dumps(msg_id, ensure_ascii=False)
        self.text = f'{{"jsonrpc":"2.0","id":{head},"result":{result_text}}}'


def encode(msg):
    """One line of UTF-8. A string that cannot be UTF-8 (a lone surrogate) is sent escaped."""
    text = msg.text if isinstance(msg, Checked) else \
        json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
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
