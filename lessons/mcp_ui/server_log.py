"""The server's log, as a learner reads it: in Spanish.

The lesson's server writes its log in English (it is an operator's stderr under `main.py
serve`). Under a call, a notebook shows the lines a learner needs (your tool crashed, your
guard failed, a requestState was refused, the client cancelled the call), so `spanish(line)`
translates each line the server can write; routine lines (the setup page's own requests) give
None and are not repeated. A line this table does not know yet is shown as it is, introduced as
the server's own words. tests/notebooks/test_mcp_ui_package.py reads every log call in code/
and fails when one has no rule here.

A line that ends with where a solution's code failed (` (at ejercicio3b.py:88)`, what
tooling.crash_text adds) says it in Spanish: ` (línea 88 de ejercicio3b.py)`.

Deliberate simplifications: one regular expression per line the server can write; the parts the
server fills in (names, ids, Python's own error text) stay as they are.
"""

from __future__ import annotations

import re

from tooling import CRASH_WHERE, where_in_spanish

ROUTINE = ("setup page: ",)  # the page's HTTP requests: not repeated under each call
UNKNOWN = "(en inglés, tal cual)"  # a line with no rule below

# why the server refused a 2026-07-28 requestState (request_state.py's StateError)
STATE_REASONS = (
    (r"malformed", "no se puede leer"),
    (r"seal", "el sello no cuadra: lo alteraron o no lo selló este servidor"),
    (r"expired", "caducó"),
    (r"bound to another request", "pertenece a otra petición (otros argumentos u otra "
                                   "herramienta)"),
    (r"bound to another user", "se selló para otro usuario"),
    (r"sealed for another client|not this client's state", "es de otro cliente"),
    (r"already used \(spent on this or another replica\)",
     "ya se usó (en esta réplica o en otra)"),
    (r"cannot record the spent state: (.*)",
     "no se pudo apuntar que se usó ({0}), así que se rechaza"),
    (r"the sealer failed: (.*)", "el sellador falló: {0}"),
    (r"the sealer gave (\S+), not a text token", "el sellador devolvió {0}, no un texto"),
    (r"not a text token", "no es un texto"),
)

RULES = (
    (r"tool (\S+) crashed: (.*)", "la herramienta {0} falló: {1}"),
    (r"page route (\S+) crashed: (.*)", "la página {0} falló: {1}"),
    (r"tool (\S+) returned (\S+), not a result",
     "la herramienta {0} devolvió {1}, que no es un resultado"),
    (r"tool (\S+): what it would send is not JSON \((.*)\)",
     "la herramienta {0} iba a enviar algo que no es JSON ({1})"),
    (r"tool (\S+): could not seal its requestState \((.*)\)",
     "la herramienta {0}: no se pudo sellar su requestState ({1})"),
    (r"tool (\S+) raised -32042 at 2026-07-28",
     "la herramienta {0} lanzó el error −32042, que en 2026-07-28 ya no existe"),
    (r"tools/call (\S+) \((\S+)\) cancelled by the client(?:: (.*))?",
     "el cliente canceló la llamada {0} ({1}); no se hace nada más con ella{2}"),
    (r"refused requestState: (.*)", "rechazó un requestState: {0}"),
    (r"url guard failed: (.*)", "tu guarda del modo URL falló ({0}): se trata como un no"),
    (r"roots reaction failed \((.*)\); revoking every handle",
     "tu reacción al cambio de roots falló ({0}): se revocan todos los handles (fallo seguro)"),
    (r"roots/list failed \((.*)\); allowing no folder until it works",
     "roots/list falló ({0}): ninguna carpeta permitida hasta que funcione"),
    (r"roots/list answer not understood \((.*)\); allowing no folder",
     "no se entendió la respuesta a roots/list ({0}): ninguna carpeta permitida"),
    (r"roots/list answer refused \((.*)\); allowing no folder",
     "se rechazó la respuesta a roots/list ({0}): ninguna carpeta permitida"),
    (r"internal error running (\S+): (.*)", "error interno al ejecutar {0}: {1}"),
    (r"internal error in (.*?): (.*)", "error interno en {0}: {1}"),
    (r"could not send a frame: (.*)", "no se pudo enviar un mensaje: {0}"),
    (r"ignored a response to unknown id (.*)",
     "se ignoró una respuesta a un id que nadie esperaba: {0}"),
    (r"a timer failed: (.*)", "falló un temporizador: {0}"),
    (r"http: cannot accept a connection now: (.*)",
     "no se pudo aceptar una conexión HTTP ahora: {0}"),
    (r"http: dispatch failed: (.*)", "falló el reparto de una petición HTTP: {0}"),
    (r"client (\S+): unused for (\S+) s, its handles closed",
     "el cliente {0} no se usó en {1} s: se cerraron sus handles"),
)


def _state_reason(reason: str) -> str:
    for pattern, text in STATE_REASONS:
        found = re.fullmatch(pattern, reason)
        if found:
            return text.format(*found.groups())
    return reason


def spanish(line: str) -> str | None:
    """The learner's version of one server log line; None for a routine one."""
    if line.startswith(ROUTINE):
        return None
    where = CRASH_WHERE.fullmatch(line)
    if where:  # where a solution's code raised (tooling.crash_text), at the end of the line
        said = spanish(where[1])
        return None if said is None else where_in_spanish(f"{said} (at {where[2]}:{where[3]})")
    for pattern, text in RULES:
        found = re.fullmatch(pattern, line, re.S)
        if not found:
            continue
        parts = [where_in_spanish(part or "") for part in found.groups()]
        if pattern.startswith("refused requestState"):
            parts = [_state_reason(parts[0])]
        if pattern.startswith("tools/call"):
            parts[2] = f". Motivo: {parts[2]}" if parts[2] else ""
        return text.format(*parts)
    return f"{UNKNOWN} {line}"
