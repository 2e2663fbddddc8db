"""Validate MCP JSON-RPC frames against the vendored official JSON Schemas.

Usage from any test (``tests/`` is on ``sys.path`` via pytest.ini)::

    from mcp_schema import validate_frame, validate_def

    validate_frame(frame, "2025-11-25", "server")                       # request/notification
    validate_frame(resp, "2025-11-25", "server", result_of="tools/call")  # response to tools/call
    validate_def(obj, "2026-07-28", "InputRequiredResult")              # any named definition

``direction`` is who *wrote* the frame: ``"server"`` or ``"client"``. Everything is
derived from the schema itself (the ``method`` consts, the ``ClientRequest`` /
``ServerNotification`` / ... unions, the ``JSONRPCMessage`` envelope, the error
``code`` consts), so there is no hand-maintained method table. On failure an
``AssertionError`` lists every schema error with its instance path and schema path.

The schema files live in ``tests/vendor/mcp-schema/<revision>/schema.json`` (see the README
there). They are never modified on disk; the one workaround is applied to an
in-memory copy in ``_patch``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from jsonschema.exceptions import ValidationError

SCHEMA_DIR = Path(__file__).resolve().parent / "vendor" / "mcp-schema"
SCHEMA_REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")  # the folders under SCHEMA_DIR
DIRECTIONS = ("server", "client")
# Formats we check. jsonschema silently ignores a format whose checker library is
# missing, so we name them and fail loudly instead (see _format_checker).
CHECKED_FORMATS = ("uri", "uri-template")


@dataclass(frozen=True)
class _Revision:
    name: str
    uri: str  # base URI under which the schema is registered
    defs_key: str  # "definitions" (draft-07) or "$defs" (2020-12)
    defs: dict[str, Any]
    validator_cls: type
    registry: referencing.Registry
    requests: dict[str, str]  # method -> *Request def name
    notifications: dict[str, str]  # method -> *Notification def name
    envelopes: dict[str, str]  # "request" | "notification" | "result" | "error" -> def name
    error_codes: dict[int, tuple[str, str]]  # code -> (def name, "object" | "response")


def _patch(defs: dict[str, Any]) -> None:
    """Work around known generator bugs, in place, on an in-memory copy.

    Quirk 1 (tests/vendor/mcp-schema/README.md): the JSON files type ``ElicitResult.content``
    values as ``string | integer | boolean | string[]`` while ``schema.ts`` says
    ``number``, so a float answer like ``{"score": 30.5}`` would be rejected. Widen
    ``integer`` to ``number`` everywhere under that property.
    """

    def widen(node: Any) -> None:
        if isinstance(node, dict):
            t = node.get("type")
            if t == "integer":
                node["type"] = "number"
            elif isinstance(t, list) and "integer" in t:
                node["type"] = ["number" if x == "integer" else x for x in t]
            for value in node.values():
                widen(value)
        elif isinstance(node, list):
            for value in node:
                widen(value)

    widen(defs["ElicitResult"]["properties"]["content"])


def _format_checker(validator_cls: type) -> jsonschema.FormatChecker:
    known = validator_cls.FORMAT_CHECKER.checkers
    missing = [f for f in CHECKED_FORMATS if f not in known]
    if missing:
        raise RuntimeError(
            f"jsonschema cannot check formats {missing}: install the pinned requirements "
            "(rfc3986-validator, uri-template) with `make venv`"
        )
    return jsonschema.FormatChecker(formats=CHECKED_FORMATS)


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _method_const(schema: dict[str, Any]) -> str | None:
    return schema.get("properties", {}).get("method", {}).get("const")


@cache
def _revision(revision: str) -> _Revision:
    if revision not in SCHEMA_REVISIONS:
        raise ValueError(f"unknown MCP revision {revision!r}; expected one of {SCHEMA_REVISIONS}")
    raw = json.loads((SCHEMA_DIR / revision / "schema.json").read_text(encoding="utf-8"))
    schema = copy.deepcopy(raw)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    defs = schema[defs_key]
    _patch(defs)

    validator_cls = jsonschema.validators.validator_for(schema)
    expected = jsonschema.Draft7Validator if defs_key == "definitions" else (
        jsonschema.Draft202012Validator
    )
    assert validator_cls is expected, (revision, validator_cls)
    uri = f"https://mcp-schema.invalid/{revision}/schema.json"
    resource = referencing.Resource.from_contents(schema)
    registry = referencing.Registry().with_resource(uri, resource)

    # Unions that group definitions by direction; they also carry "method" consts
    # when the generator inlined a one-member union, so keep them out of the index.
    unions = {f"{side}{kind}" for side in ("Client", "Server")
              for kind in ("Request", "Notification", "Result")}
    requests: dict[str, str] = {}
    notifications: dict[str, str] = {}
    for name, d in defs.items():
        method = _method_const(d)
        if method is None or name in unions:
            continue
        table = requests if name.endswith("Request") else (
            notifications if name.endswith("Notification") else None
        )
        if table is None:
            continue
        assert method not in table, f"{revision}: {method} defined by {table[method]} and {name}"
        table[method] = name

    # The JSON-RPC envelopes are the members of JSONRPCMessage, told apart by "required".
    envelopes: dict[str, str] = {}
    for member in defs["JSONRPCMessage"]["anyOf"]:
        name = _ref_name(member["$ref"])
        required = set(defs[name].get("required", []))
        kind = ("error" if "error" in required else "result" if "result" in required
                else "request" if "id" in required else "notification")
        envelopes[kind] = name
    assert set(envelopes) == {"request", "notification", "result", "error"}, envelopes

    # Specific error definitions keyed by their "code" const: either an error object
    # (2026 ParseError...) or a whole error response (URLElicitationRequiredError...).
    error_codes: dict[int, tuple[str, str]] = {}
    for name, d in defs.items():
        props = d.get("properties", {})
        if "const" in props.get("code", {}):
            error_codes[props["code"]["const"]] = (name, "object")
        for part in props.get("error", {}).get("allOf", []):
            code = part.get("properties", {}).get("code", {})
            if "const" in code:
                error_codes[code["const"]] = (name, "response")

    return _Revision(revision, uri, defs_key, defs, validator_cls, registry,
                     requests, notifications, envelopes, error_codes)


@cache
def _validator(revision: str, def_name: str):
    rev = _revision(revision)
    if def_name not in rev.defs:
        raise KeyError(f"MCP {revision} schema has no definition {def_name!r}")
    return rev.validator_cls(
        {"$ref": f"{rev.uri}#/{rev.defs_key}/{def_name}"},
        registry=rev.registry,
        format_checker=_format_checker(rev.validator_cls),
    )


def _union_methods(revision: str, union: str) -> set[str]:
    """Methods of the requests/notifications in a direction union (empty if absent)."""
    defs = _revision(revision).defs
    if union not in defs:
        return set()
    d = defs[union]
    if _method_const(d):  # one-member union that the generator inlined
        return {_method_const(d)}
    members = (defs[_ref_name(m["$ref"])] for m in d.get("anyOf", []) if "$ref" in m)
    return {m for m in map(_method_const, members) if m}


def _describe(err: ValidationError, indent: str = "  ") -> list[str]:
    where = err.json_path
    schema_path = "/".join(str(p) for p in err.schema_path)
    lines = [f"{indent}- at {where}: {_short(err.message)}  [schema: {schema_path}]"]
    # For anyOf/oneOf, show why each alternative failed, labelled with its $ref.
    for sub in sorted(err.context or [], key=lambda e: _path_key(e.schema_path)):
        branch = ""
        alternatives = err.schema.get(err.validator) if isinstance(err.schema, dict) else None
        if isinstance(alternatives, list) and sub.schema_path:
            alt = alternatives[sub.schema_path[0]]
            if isinstance(alt, dict) and "$ref" in alt:
                branch = f"({_ref_name(alt['$ref'])}) "
        sub_path = "/".join(str(p) for p in sub.schema_path)
        lines.append(f"{indent}    {branch}at {sub.json_path}: {_short(sub.message)}"
                     f"  [schema: .../{sub_path}]")
    return lines


def _path_key(path) -> list[tuple[int, int | str]]:
    return [(0, p) if isinstance(p, int) else (1, str(p)) for p in path]


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _check(instance: Any, revision: str, def_name: str, label: str, problems: list[str]) -> None:
    errors = list(_validator(revision, def_name).iter_errors(instance))
    if errors:
        problems.append(f"{label} does not match {def_name}:")
        for err in sorted(errors, key=lambda e: _path_key(e.path)):
            problems.extend(_describe(err))


def _fail(revision: str, direction: str, frame: Any, problems: list[str]) -> None:
    if problems:
        shown = _short(json.dumps(frame, sort_keys=True, default=repr), 2000)
        raise AssertionError(
            f"MCP {revision} frame written by the {direction} is invalid:\n"
            + "\n".join(problems) + f"\nframe: {shown}"
        )


# From the 2026-07-28 ResultType / InputRequiredResult descriptions (prose, not encoded in
# the JSON): resultType is "complete" or "input_required"; an "input_required" result is an
# InputRequiredResult with at least one of inputRequests / requestState; a "complete" one is
# the method's own result. Without this, {"resultType": "complete"} with no `content` would
# pass as a tools/call result, because it matches InputRequiredResult (which requires only
# resultType).
RESULT_TYPES = ("complete", "input_required")


def _check_input_required(result: Any, rev: _Revision, response_def: str,
                          problems: list[str]) -> None:
    alternatives = [_ref_name(a["$ref"]) for a in
                    rev.defs[response_def]["properties"]["result"].get("anyOf", [])]
    if "InputRequiredResult" not in alternatives or not isinstance(result, dict):
        return
    result_type = result.get("resultType")
    if result_type not in RESULT_TYPES:
        problems.append(f"  - result.resultType must be one of {RESULT_TYPES}, "
                        f"got {result_type!r}")
    elif result_type == "input_required":
        _check(result, rev.name, "InputRequiredResult", "result", problems)
        if "inputRequests" not in result and "requestState" not in result:
            problems.append("  - an input_required result needs inputRequests or requestState")
    else:
        for name in alternatives:
            if name != "InputRequiredResult":
                _check(result, rev.name, name, "result", problems)


def validate_def(instance: Any, revision: str, def_name: str) -> None:
    """Assert that ``instance`` matches the schema definition ``def_name``."""
    problems: list[str] = []
    _check(instance, revision, def_name, "value", problems)
    _fail(revision, "caller", instance, problems)


def validate_frame(
    frame: dict, revision: str, direction: str, *, result_of: str | None = None
) -> None:
    """Assert that one JSON-RPC frame is valid MCP at ``revision``.

    direction: ``"server"`` for frames the server writes, ``"client"`` for frames the
    client writes. Requests and notifications are checked against the JSON-RPC
    envelope, the definition whose ``method`` const matches, and the direction's
    union (``ServerRequest``, ``ClientNotification``, ...). Responses are checked
    against the JSON-RPC envelope; pass
    ``result_of`` (the method of the request being answered, e.g. ``"tools/call"``)
    to also check the specific result (``CallToolResult``; at 2026-07-28 the
    ``CallToolResultResponse`` union, i.e. ``CallToolResult`` or ``InputRequiredResult``;
    ``EmptyResult`` for methods without a result type). Error responses are checked
    against the error envelope and, if the code has its own definition, that too.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
    rev = _revision(revision)
    peer = "client" if direction == "server" else "server"
    problems: list[str] = []
    if not isinstance(frame, dict):
        problems.append(f"  - a frame must be a JSON object, got {type(frame).__name__}")
        _fail(revision, direction, frame, problems)

    if "method" in frame:
        kind = "request" if "id" in frame else "notification"
        _check(frame, revision, rev.envelopes[kind], "frame", problems)
        method = frame["method"]
        table = rev.requests if kind == "request" else rev.notifications
        def_name = table.get(method) if isinstance(method, str) else None
        if def_name is None:
            problems.append(f"  - unknown {kind} method {method!r} at {revision}")
        else:
            _check(frame, revision, def_name, "frame", problems)
            union = f"{direction.capitalize()}{kind.capitalize()}"
            if method not in _union_methods(revision, union):
                problems.append(
                    f"  - {method!r} ({def_name}) is not a {kind} the {direction} may send at "
                    f"{revision} (not in {union})"
                )
        if result_of is not None:
            problems.append("  - result_of is only meaningful for responses")

    elif "result" in frame:
        _check(frame, revision, rev.envelopes["result"], "frame", problems)
        if result_of is not None:
            request_def = rev.requests.get(result_of)
            if request_def is None:
                problems.append(f"  - result_of={result_of!r} is not a request method at "
                                f"{revision}")
            elif result_of not in _union_methods(revision, f"{peer.capitalize()}Request"):
                problems.append(f"  - the {direction} never answers {result_of!r} at "
                                f"{revision}: the {peer} does not send it as a JSON-RPC request")
            else:
                base = request_def.removesuffix("Request")
                if f"{base}ResultResponse" in rev.defs:  # 2026: whole-response definitions
                    _check(frame, revision, f"{base}ResultResponse", "frame", problems)
                    _check_input_required(frame["result"], rev, f"{base}ResultResponse",
                                          problems)
                elif f"{base}Result" in rev.defs:
                    _check(frame["result"], revision, f"{base}Result", "result", problems)
                else:
                    _check(frame["result"], revision, "EmptyResult", "result", problems)

    elif "error" in frame:
        _check(frame, revision, rev.envelopes["error"], "frame", problems)
        error = frame.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, int) and code in rev.error_codes:
            def_name, shape = rev.error_codes[code]
            if shape == "object":
                _check(error, revision, def_name, "error", problems)
            else:
                _check(frame, revision, def_name, "frame", problems)

    else:
        problems.append("  - not a JSON-RPC message: no 'method', 'result' or 'error' member")

    _fail(revision, direction, frame, problems)


def request_methods(revision: str, direction: str) -> set[str]:
    """The request methods that ``direction`` may send at ``revision`` (from the schema)."""
    return _union_methods(revision, f"{direction.capitalize()}Request")
