"""The 2026-07-28 request headers of Streamable HTTP (SEP-2243), for both ends of the wire.

A 2026-07-28 POST repeats parts of its body in headers, so that whatever routes a request
(a load balancer reading headers) and whatever runs it (the server reading the body) cannot
disagree: `MCP-Protocol-Version` (the `_meta` version), `Mcp-Method` (the method), `Mcp-Name`
(the tool or prompt name, or the resource URI) and `Mcp-Param-{Name}` for each tool parameter
whose schema says `"x-mcp-header": "{Name}"`. A value that is not plain visible ASCII (or that
starts or ends with a space) travels as `=?base64?<its UTF-8 in Base64>?=`.

`request_headers(msg, marks)` builds them (the client, http_client.py); `mismatch(msg,
headers, tools)` says why the headers of a received request do not repeat its body (the
server, streamable_http.py; None when they do); `marked(schema)` finds a tool's `x-mcp-header`
marks and refuses marks that break the rules (a client leaves such a tool out).
`stateless_request(msg, version_header)` says whether a request is spoken at 2026-07-28.

Deliberate simplifications: header values are compared after trimming spaces and tabs; an
integer parameter is compared as a number.
"""

import base64
import binascii
import re

from shared.protocol import META_VERSION, STATELESS_VERSION

NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # Mcp-Name
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")       # an HTTP field name (RFC 9110)
PLAIN = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")  # sent as it is
ALLOWED = re.compile(r"[\t\x20-\x7e]*")                  # what a received value may hold
SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.S)
MARKABLE = ("string", "integer", "boolean")


def encode(value):
    """A parameter value as a header value: plain when it can be, else the Base64 form."""
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    if PLAIN.fullmatch(text) and not SENTINEL.fullmatch(text):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def decode(value):
    """A received header value as text (trimmed; the Base64 form decoded, strictly), or None
    when it is missing or malformed."""
    if value is None or not ALLOWED.fullmatch(value):
        return None
    value = value.strip(" \t")
    wrapped = SENTINEL.fullmatch(value)
    if wrapped is None:
        return value
    try:
        return base64.b64decode(wrapped[1], validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def marked(schema):
    """[(path, Name)] for each `x-mcp-header` mark in a tool's inputSchema; `path` is the
    chain of `properties` keys that reaches the parameter. ValueError (with the reason) when a
    mark breaks the rules: empty or not a header-name token, repeated (ignoring case), on a
    type other than string, integer or boolean, or not reachable through `properties` alone."""
    found, seen = [], set()

    def walk(node, path, reachable):
        if isinstance(node, list):
            for item in node:
                walk(item, path, False)
            return
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            mark = node["x-mcp-header"]
            if not reachable or not path:
                raise ValueError("x-mcp-header fuera de una cadena de 'properties'")
            if not isinstance(mark, str) or not TOKEN.fullmatch(mark):
                raise ValueError(f"x-mcp-header {mark!r} no es un nombre de cabecera válido")
            if node.get("type") not in MARKABLE:
                raise ValueError(f"x-mcp-header {mark!r} en un parámetro de tipo "
                                 f"{node.get('type')!r}")
            if mark.lower() in seen:
                raise ValueError(f"x-mcp-header {mark!r} repetido")
            seen.add(mark.lower())
            found.append((path, mark))
        for key, child in node.items():
            if key == "properties" and isinstance(child, dict):
                for name, sub in child.items():
                    walk(sub, path + (name,), reachable)
            elif key != "x-mcp-header":
                walk(child, path, False)

    walk(schema, (), True)
    return found


def value_at(arguments, path):
    for key in path:
        if not isinstance(arguments, dict) or key not in arguments:
            return None
        arguments = arguments[key]
    return arguments


def request_headers(msg, marks=()):
    """The headers of a 2026-07-28 POST carrying `msg` (a request); `marks` are the called
    tool's `marked(...)`, when it is a tools/call of a tool we listed."""
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    headers = {"Mcp-Method": msg["method"]}
    if isinstance(meta.get(META_VERSION), str):
        headers["MCP-Protocol-Version"] = meta[META_VERSION]
    name = params.get(NAMED.get(msg["method"], ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = encode(name)
    for path, mark in marks:
        value = value_at(params.get("arguments"), path)
        if value is not None:
            headers[f"Mcp-Param-{mark}"] = encode(value)
    return headers


def mismatch(msg, headers, tools):
    """Why the headers of a received 2026-07-28 request (a mapping read case-insensitively)
    do not repeat its body, in Spanish; None when they do. `tools`: name -> tooling.Tool."""
    repeated = [name for name in {k.lower() for k in headers.keys()}
                if name.startswith("mcp-") and len(headers.get_all(name)) > 1] \
        if hasattr(headers, "get_all") else []
    if repeated:  # two values: each reader of the request might take a different one
        return f"cabecera repetida: {', '.join(sorted(repeated))}"
    version = headers.get("MCP-Protocol-Version")
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    if version is None:
        return "falta la cabecera MCP-Protocol-Version"
    if META_VERSION in meta and version.strip() != meta[META_VERSION]:
        return (f"MCP-Protocol-Version {version.strip()!r} no es la versión del _meta "
                f"({meta[META_VERSION]!r})")
    method = headers.get("Mcp-Method")
    if method is None or method.strip() != msg["method"]:
        return f"Mcp-Method {method!r} no es el método del cuerpo ({msg['method']!r})"
    name = params.get(NAMED.get(msg["method"], ""))
    if isinstance(name, str) and decode(headers.get("Mcp-Name")) != name:
        return f"Mcp-Name no repite el cuerpo ({name!r})"
    tool = tools.get(name) if msg["method"] == "tools/call" and isinstance(name, str) else None
    try:
        marks = marked(tool.input_schema) if tool is not None else []
    except ValueError:
        marks = []  # a tool with broken marks: clients leave it out, and nothing is expected
    for path, mark in marks:
        value = value_at(params.get("arguments"), path)
        if value is not None and not _same(decode(headers.get(f"Mcp-Param-{mark}")), value):
            return f"Mcp-Param-{mark} no repite el argumento {'.'.join(path)!r} del cuerpo"
    return None


def _same(text, value):
    if text is None:
        return False
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return float(text) == value
        except ValueError:
            return False
    return text == value


# -- which revision a request speaks (the server, streamable_http.py) ---------------------------
def stateless_request(msg, version_header):
    """Is this request spoken at 2026-07-28 (or meant to be: its version decides)?"""
    return (version_header or "").strip() == STATELESS_VERSION or META_VERSION in meta_of(msg) \
        or msg.get("method") == "server/discover"


def meta_of(msg):
    """The `_meta` of a request's params (empty when there is none, or it is not an object)."""
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    return params["_meta"] if isinstance(params.get("_meta"), dict) else {}
