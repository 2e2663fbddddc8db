"""Ejercicio 3 (solución de referencia): autorizar Nube de Copias por modo URL, tras la guarda."""
import re
import secrets
import time
from dataclasses import dataclass

import nube_copias
from elicitation import supports_url
from extension import Extension
from server import URLElicitationRequired, ok

extension = Extension()

MESSAGE = ("Autoriza a Nube de Copias (simulado) a guardar copias de tus notas. Se abrirá su "
           "página: lo que escribas allí no pasa por este chat.")
MANUAL = ("Este cliente no puede abrir la página de autorización (modo URL), así que no te "
          "pediré nada aquí. Autoriza Nube de Copias desde un cliente que declare "
          "elicitation.url, o configúralo a mano en el servidor.")
URL_MODE_SDK = (1, 23, 1)
STATELESS_SDK = (2, 0, 0)


@dataclass
class Flow:
    """Un intento de autorización. Vive solo en el servidor."""
    user: str        # quién lo empezó (ctx.user)
    state: str       # el state de OAuth: entre el navegador, el proveedor y el servidor
    expires: float   # time.monotonic() en que caduca
    notify: object   # ctx.completion_notifier() en 2025-11-25; None en 2026-07-28
    status: str = "pending"  # pending -> done | denied | retired


FLOWS = {}   # elicitationId -> Flow
STATES = {}  # state -> elicitationId (solo mientras el flujo está pendiente)
TOKENS = {}  # usuario -> token de Nube de Copias: nunca sale del servidor


# -- 1. la guarda ----------------------------------------------------------------------------
def sdk_version(text):
    """'1.23.1' -> ((1, 23, 1), True); '2.0.0b1' -> ((2, 0, 0), False); None si no se lee."""
    if not isinstance(text, str):
        return None
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?((?:a|b|rc)\d+)?", text)
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups()[:3]), match.group(4) is None


def at_least(version, minimum):
    numbers, final = version
    return numbers > minimum or (numbers == minimum and final)  # 2.0.0b1 < 2.0.0


@extension.url_mode_guard
def allow_url_mode(sdk_version_text, protocol_version, client_capabilities):
    version = sdk_version(sdk_version_text)
    if version is None or not at_least(version, URL_MODE_SDK):
        return False
    if protocol_version == "2026-07-28":
        if not at_least(version, STATELESS_SDK):
            return False
    elif protocol_version != "2025-11-25":
        return False
    return supports_url(client_capabilities)  # elicitation.url declarado (un objeto)


# -- 2. la herramienta -------------------------------------------------------------------------
@extension.tool(
    "notes_backup", description="Copia tus notas en Nube de Copias (simulado). La primera vez "
    "hay que autorizarlo en la página del proveedor (modo URL).",
    annotations={"readOnlyHint": True, "openWorldHint": True})
def notes_backup(ctx):
    if ctx.user in TOKENS:
        return backup(ctx)
    if not ctx.url_mode_allowed():
        return ok(MANUAL, {"status": "manual"})
    flow_id = ctx.memo("flow", lambda: start_flow(ctx))
    url = ctx.page_url("/copias/conectar", flujo=flow_id)
    if not ctx.stateless:  # 2025-11-25: no puedo seguir sin esta URL (−32042)
        raise URLElicitationRequired([ctx.url_params(MESSAGE, url, flow_id)])
    answer = ctx.elicit_url(MESSAGE, url, flow_id)  # 2026-07-28: input_required
    flow = FLOWS.get(flow_id)
    if answer.action != "accept":  # decline o cancel: ese enlace queda anulado
        retire(flow_id)
        return ok("No se hizo ninguna copia: no autorizaste Nube de Copias.",
                  {"status": "not_authorized", "reason": answer.action})
    if flow is None or flow.status != "done":  # accept es consentimiento, no el final
        return ok("La autorización sigue pendiente: termina en la página de Nube de Copias y "
                  "vuelve a llamar a notes_backup.", {"status": "pending"})
    return backup(ctx)


def backup(ctx):
    notes = ctx.notes()
    copied = ctx.provider.backup(TOKENS[ctx.user], notes)
    return ok(f"Copia hecha en Nube de Copias: {copied} nota(s).",
              {"status": "done", "notes": copied})


def start_flow(ctx):
    flow_id, state = secrets.token_urlsafe(24), secrets.token_urlsafe(32)
    FLOWS[flow_id] = Flow(ctx.user, state, time.monotonic() + ctx.url_ttl,
                          None if ctx.stateless else ctx.completion_notifier())
    STATES[state] = flow_id
    return flow_id


def retire(flow_id):
    flow = FLOWS.get(flow_id)
    if flow is not None and flow.status == "pending":
        flow.status = "retired"
        STATES.pop(flow.state, None)


def usable(flow, user):
    return flow is not None and flow.status == "pending" and flow.user == user \
        and time.monotonic() < flow.expires


# -- 3. la página de conexión ------------------------------------------------------------------
@extension.page_route("/copias/conectar")
def connect(page):
    flow = FLOWS.get(page.query.get("flujo", ""))
    if not usable(flow, page.user):
        return page.reply(410, "Enlace no válido", "Este enlace no existe, caducó, ya se usó "
                          "o no es tuyo. No se autorizó nada.")
    return page.redirect(page.provider.authorize_url(flow.state))


# -- 4. la vuelta del proveedor ----------------------------------------------------------------
@extension.page_route(nube_copias.REDIRECT_PATH)
def callback(page):
    flow_id = STATES.pop(page.query.get("state", ""), None)  # el state se gasta aquí, una vez
    flow = FLOWS.get(flow_id)
    if not usable(flow, page.user):
        return page.reply(400, "No se pudo completar", "Esta vuelta no corresponde a ningún "
                          "flujo pendiente tuyo. No se autorizó nada.")
    if "code" not in page.query:  # error=access_denied: el usuario rechazó en el proveedor
        flow.status = "denied"
        return page.reply(403, "No autorizado", "Rechazaste la autorización. No se guardó nada.")
    try:
        token = page.provider.exchange(page.query["code"])
    except nube_copias.ProviderError:
        flow.status = "denied"
        return page.reply(400, "No se pudo completar", "Nube de Copias no aceptó el código.")
    TOKENS[flow.user] = token  # solo en el servidor
    flow.status = "done"
    if flow.notify is not None:
        flow.notify(flow_id)
    return page.reply(200, "Listo", "Nube de Copias quedó autorizado. Vuelve a tu cliente MCP.")
