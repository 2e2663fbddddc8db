"""Transcripts: the JSON-RPC frames that crossed, one readable line each, or in full.

`summarize_frame` gives one line per frame: who sent it (`C→S` / `S→C`), its id, its method
and the gist of its params or result (the form's fields, the URL, input_required's requests,
the tool's answer). `side_by_side` puts two transcripts next to each other; `peek_state` opens
a 2026-07-28 requestState without the key, to show it is signed, not encrypted.

Deliberate simplifications: long values are cut (`requestState`, ids, instructions), and the
gist only knows the methods this lesson uses.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

import ipywidgets as w
from IPython.display import display

from shared.protocol import FORM_MODE, URL_MODE

from .text import abbrev, esc, short_json

LONG = {"requestState": 16, "elicitationId": 10, "instructions": 30}


def abbreviate(value, key=None):
    if isinstance(value, dict):
        return {k: abbreviate(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [abbreviate(v) for v in value]
    if isinstance(value, str) and key in LONG:
        return abbrev(value, LONG[key])
    return value


def hidden(value, hide):
    """`value` with `hide` applied to every string in it (before anything is shortened, so a
    cut never shows part of what should be hidden)."""
    if isinstance(value, dict):
        return {hide(k): hidden(v, hide) for k, v in value.items()}
    if isinstance(value, list):
        return [hidden(v, hide) for v in value]
    return hide(value) if isinstance(value, str) else value


def who(direction: str) -> str:
    return "C→S" if direction == "→" else "S→C"


def frame_json(direction: str, msg: dict, indent=None, hide=lambda text: text,
               whole: bool = False) -> str:
    """One frame as JSON; long tokens shortened with … unless `whole`."""
    shown = hidden(msg, hide)
    return f"{who(direction)} " + json.dumps(shown if whole else abbreviate(shown),
                                             ensure_ascii=False, indent=indent)


def summarize_frame(direction: str, msg: dict, hide=lambda text: text) -> str:
    """One readable line for a JSON-RPC frame (who sent it, id, method, the gist)."""
    msg = hidden(msg, hide)
    ident = f"#{msg['id']} " if "id" in msg else ""
    if "method" in msg:
        gist = _params_gist(msg["method"], msg.get("params") or {})
        return f"{who(direction)} {ident}{msg['method']} {gist}".rstrip()
    if "error" in msg:
        err = msg["error"] if isinstance(msg["error"], dict) else {}
        return f"{who(direction)} {ident}⤷ error {err.get('code')}: {err.get('message')}"
    return f"{who(direction)} {ident}⤷ {_result_gist(msg.get('result'))}"


def _params_gist(method: str, params: dict) -> str:
    meta = " +_meta" if "_meta" in params else ""
    if method == "tools/call":
        text = f"{params.get('name')} {short_json(params.get('arguments', {}), 90)}"
        if "inputResponses" in params:
            text += f" +inputResponses{short_json(params['inputResponses'], 110)}"
        if "requestState" in params:
            text += f" +requestState={abbrev(str(params['requestState']), 12)}"
        return text + meta
    if method == "elicitation/create":
        return _elicitation_gist(params)
    if method == "initialize":
        return (f"protocolo {params.get('protocolVersion')} capacidades "
                f"{short_json(params.get('capabilities', {}))}")
    if method == "notifications/elicitation/complete":
        return f"elicitationId={abbrev(str(params.get('elicitationId', '')), 10)}"
    rest = {k: v for k, v in params.items() if k != "_meta"}
    return (short_json(rest, 100) if rest else "") + meta


def _elicitation_gist(params: dict) -> str:
    mode = params.get("mode", FORM_MODE)
    message = abbrev(str(params.get("message", "")), 60)
    if mode == URL_MODE:
        eid = params.get("elicitationId")
        tail = f" elicitationId={abbrev(eid, 10)}" if eid else " (sin elicitationId)"
        url = str(params.get("url", ""))
        scheme, _, rest = url.partition("://")  # no scheme: JupyterLab would make it a link
        return f"[{URL_MODE}] «{message}» {rest or url} ({scheme}){tail}"
    schema = params.get("requestedSchema") or {}
    required = set(schema.get("required") or [])
    fields = ", ".join(n + ("*" if n in required else "")
                       for n in (schema.get("properties") or {}))
    return f"[{mode}] «{message}» campos: {fields}"


def _result_gist(result) -> str:
    if not isinstance(result, dict):
        return short_json(result)
    if result.get("resultType") == "input_required":
        asks = ", ".join(f"{k}: {v.get('method')}"
                         + (f" [{v['params'].get('mode', FORM_MODE)}]"
                            if v.get("method") == "elicitation/create" else "")
                         for k, v in (result.get("inputRequests") or {}).items())
        state = result.get("requestState")
        return (f"input_required {{{asks}}}"
                + (f" requestState={abbrev(str(state), 12)}" if state else ""))
    if "protocolVersion" in result:
        return (f"initialize ok: protocolo {result['protocolVersion']}, servidor "
                f"{(result.get('serverInfo') or {}).get('name')}")
    if "supportedVersions" in result:
        return f"discover: versiones {result['supportedVersions']}"
    if "roots" in result:
        return "roots: " + ", ".join(r.get("uri", "?") for r in result["roots"])
    if "action" in result:
        content = result.get("content")
        return result["action"] + (f" {short_json(content)}" if content else "")
    if "tools" in result:
        return "herramientas: " + ", ".join(t.get("name", "?") for t in result["tools"])
    if "content" in result:
        mark = "✗" if result.get("isError") else "✓"
        text = ((result.get("content") or [{}])[0]).get("text", "")
        return f"{mark} {abbrev(' '.join(str(text).split()), 90)}"
    return short_json(result) if result else "{}"


def side_by_side(left_title: str, left: list[str], right_title: str,
                 right: list[str]) -> None:
    """Two transcripts next to each other (e.g. 2025-11-25 and 2026-07-28)."""
    def column(title, lines):
        body = esc("\n".join(lines))
        return w.HTML(f"<b>{esc(title)}</b><pre style='font-size:11px;white-space:pre-wrap;"
                      f"max-height:420px;overflow:auto;border:1px solid #ddd;padding:6px'>"
                      f"{body}</pre>", layout=w.Layout(width="49%"))
    display(w.HBox([column(left_title, left), column(right_title, right)]))


def when(exp) -> str:
    """A token's `exp` (seconds since 1970, UTC) as a person reads it, the raw value after."""
    try:
        moment = datetime.fromtimestamp(float(exp), timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return f"en {exp!r} (no es una hora)"
    return f"el {moment:%Y-%m-%d} a las {moment:%H:%M:%S} UTC (exp={float(exp):.0f}, en segundos " \
        "desde 1970)"


def peek_state(token: str) -> None:
    """Open a requestState *without* the key: it is signed, not encrypted, so anyone can
    read it, but nobody can change it without breaking the HMAC tag."""
    def unb64(text):
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    try:
        _, payload, tag = token.split(".")
        body = json.loads(unb64(payload))
    except ValueError:
        print("No es un requestState de este servidor.")
        return
    print(f"versión v1 · herramienta {body.get('tool')!r} · argumentos (huella) "
          f"{body.get('args')} · caduca {when(body.get('exp'))} · "
          f"firma HMAC de {len(unb64(tag))} bytes")
    print("datos: " + short_json(body.get("data"), 300))
