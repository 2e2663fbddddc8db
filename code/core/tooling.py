"""What a tool is: its description, its result, and the ways it can stop.

A `Tool` is a name, a description, JSON Schemas for its input (and output) and a handler
`handler(ctx, **arguments)` that returns `ok(text, data)` (or a plain string), or raises:

- `ToolError(message)`: the call ends with `isError: true` and that message;
- `MissingCapability(message, required)`: the client did not declare something the tool needs
  (a tool error at 2025-11-25, a -32021 protocol error at 2026-07-28);
- `URLElicitationRequired(elicitations)`: the request cannot go on until the user finishes a
  URL-mode step (the -32042 error; 2025-11-25 only).

Both the server (server.py) and the lesson's tools (tools.py) import this module, and a
solution may too (`from server import ToolError, ok` keeps working). Two helpers say what went
wrong in a solution's code: `crash_text(exc, function)`, an exception and the line of the
solution where it happened, for the server's log (`where_in_spanish` says that line in
Spanish); and `url_entry_problem(elicitations)`, why the `data.elicitations` of a -32042 holds
no URL-mode elicitation, in Spanish (the notebook's client and the grader both say it).
"""

from __future__ import annotations

import os
import re

from shared import wire
from shared.protocol import URL_MODE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from typing import Any


class ToolError(Exception):
    """Raised by a tool: the call ends with `isError: true` and this message."""


class MissingCapability(ToolError):
    """The tool needs a client capability that was not declared."""

    def __init__(self, message: str, required: dict[str, Any]) -> None:
        super().__init__(message)
        self.required = required


class URLElicitationRequired(Exception):
    """The request needs a URL-mode elicitation finished first (-32042, 2025-11-25 only).

    `elicitations` is a list of URL-mode `elicitation/create` params, each with its
    `elicitationId`. Tools raise it through `ctx.require_url(...)`, which asks in-band instead
    at 2026-07-28, where -32042 is retired.
    """

    def __init__(self, elicitations: list[dict[str, Any]]) -> None:
        super().__init__("URL elicitation required")
        self.elicitations = elicitations


NOT_JSON_PROBLEMS = {  # wire.NotJSON.kind -> what a learner reads
    "type": "lleva un valor que JSON no representa, como un set, una tupla como clave o un "
            "objeto",
    "number": "lleva NaN o Infinity, que JSON no admite",
    "depth": f"anida más de {wire.MAX_DEPTH} niveles",
    "size": "es demasiado grande para un mensaje",
}


def json_problem(value, limit=wire.MAX_LINE_BYTES - 1024):
    """Why `value` cannot travel as strict JSON (in Spanish), or None when it can.

    Results, error data and `ctx.memo` values are checked with it at every revision, so a
    tool that works at one revision does not break (or hang) at another."""
    try:
        wire.check_json(value, limit)
    except wire.NotJSON as exc:
        return NOT_JSON_PROBLEMS[exc.kind]
    return None


def crash_text(exc: BaseException, function: Any = None) -> str:
    """`Type: message` of an exception a solution's code raised (the message cut to
    CRASH_MESSAGE characters), and where: ` (at file.py:88)`, the innermost line of its
    traceback in the file that defines `function` (a tool's handler, a page route), when the
    traceback passes through that file. Never raises."""
    try:
        message = str(exc)
    except Exception:  # an exception whose own __str__ fails
        message = "(sin texto)"
    if len(message) > CRASH_MESSAGE:  # a log line, a page's failure: never a flood
        message = message[:CRASH_MESSAGE - 1] + "…"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    file, line = _defined_in(function), None
    tb = exc.__traceback__
    while tb is not None and file is not None:
        if tb.tb_frame.f_code.co_filename == file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return text + (f" (at {os.path.basename(file)}:{line})" if line else "")


CRASH_MESSAGE = 300  # characters of an exception's message that crash_text keeps
CRASH_WHERE = re.compile(r"(.*) \(at ([^\s():]+):(\d+)\)", re.S)  # crash_text's ending


def where_in_spanish(text: str) -> str:
    """`text` with crash_text's ending ` (at ejercicio3b.py:88)` said as a learner reads it:
    ` (línea 88 de ejercicio3b.py)`; any other text as it is."""
    where = CRASH_WHERE.fullmatch(text)
    return f"{where[1]} (línea {where[3]} de {where[2]})" if where else text


def _defined_in(function: Any) -> str | None:
    """The file of `function`'s code, through the wrappers of functools.wraps."""
    for _ in range(10):
        wrapped = getattr(function, "__wrapped__", None)
        if wrapped is None:
            break
        function = wrapped
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return getattr(code, "co_filename", None)


URL_ENTRY_FIX = ("cada elemento de la lista es una elicitación en modo URL, la que da "
                 "ctx.url_params(MESSAGE, url, flow_id) (flow_id es el elicitationId que "
                 "después pasas a notify)")


def url_entry_problem(elicitations: Any) -> str | None:
    """Why the `data.elicitations` of a -32042 error holds no URL-mode elicitation (one
    Spanish sentence that says how to build one), or None when one of its entries is a dict
    with mode "url" and a text url."""
    if not isinstance(elicitations, list):
        return (f"data.elicitations es {_kind(elicitations)}, no una lista: "
                f"raise URLElicitationRequired([...]), donde {URL_ENTRY_FIX}")
    if not elicitations:
        return f"data.elicitations es una lista vacía: {URL_ENTRY_FIX}"
    if any(isinstance(e, dict) and e.get("mode") == URL_MODE and isinstance(e.get("url"), str)
           for e in elicitations):
        return None
    first = elicitations[0]
    if not isinstance(first, dict):
        what = f"es {_kind(first)}"
    elif first.get("mode") != URL_MODE:
        what = f"no lleva mode \"{URL_MODE}\""
    else:
        what = "no lleva url (un texto)"
    return (f"data.elicitations no trae ninguna elicitación en modo URL (su primer elemento "
            f"{what}): {URL_ENTRY_FIX}")


def _kind(value: Any) -> str:
    """How a JSON value reads in a sentence: «un texto («https://…»)», «un número»..."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"un texto («{shown}»)"
    if isinstance(value, bool):
        return "un booleano"
    if isinstance(value, (int, float)):
        return "un número"
    if isinstance(value, list):
        return "una lista"
    if isinstance(value, dict):
        return "un objeto"
    return "null" if value is None else "otra cosa"


def ok(text: str, structured: dict[str, Any] | None = None) -> dict[str, Any]:

    """A successful tool result: `text` for the model and, if given, `structured` as the
    result's `structuredContent` (a dict)."""
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def error_result(text):
    """A tool result that reports a failure (`isError: true`): what `ToolError` becomes."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


TYPE_CHECKS = {"string": lambda v: isinstance(v, str),
               "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
               "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
               "boolean": lambda v: isinstance(v, bool),
               "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list)}


class Tool:
    """One tool: `handler(ctx, **arguments)` returns a result dict or a str; the schemas are
    JSON Schema dicts. `origin` is "base" or the solution file the tool came from."""

    def __init__(self, name, description, handler, input_schema=None, annotations=None,
                 output_schema=None, title=None, origin="base"):
        self.name, self.description, self.handler = name, description, handler
        self.input_schema = {"type": "object", "properties": {}} if input_schema is None \
            else input_schema
        self.annotations = {} if annotations is None else annotations
        self.output_schema, self.title, self.origin = output_schema, title, origin

    def __repr__(self):
        return f"Tool({self.name!r}, origin={self.origin!r})"

    def describe(self):
        entry = {"name": self.name, "description": self.description,
                 "inputSchema": self.input_schema}
        if self.title:
            entry["title"] = self.title
        if self.annotations:
            entry["annotations"] = self.annotations
        if self.output_schema:
            entry["outputSchema"] = self.output_schema
        return entry

    def argument_problem(self, arguments):
        """A Spanish sentence describing what is wrong with the arguments, or None."""
        properties = self.input_schema.get("properties", {})
        for name in self.input_schema.get("required", []):
            if name not in arguments:
                return f"falta el argumento obligatorio {name!r}"
        for name, value in arguments.items():
            if name not in properties:
                return f"argumento desconocido {name!r}"
            expected = properties[name].get("type")
            if expected and not TYPE_CHECKS.get(expected, lambda v: True)(value):
                return f"el argumento {name!r} debe ser de tipo {expected}"
        return None
