"""Ejercicio 3B (solución de referencia): autorizar Nube de Copias en modo URL (2025-11-25) y,
al final, la parte opcional del cuaderno 6 (2026-07-28)."""
import secrets
import time
from dataclasses import dataclass

import nube_copias
from extension import Extension
from server import URLElicitationRequired, ok

extension = Extension()
MESSAGE = "Autoriza a Nube de Copias a guardar copias de tus notas (se abrirá su página)."
MANUAL = "Tu cliente no abre páginas (modo URL): autoriza Nube de Copias desde otro cliente."


@dataclass
class Flow:
    """Un intento de autorización. Vive solo en el servidor."""
    user: str       # quién lo empezó (ctx.user)
    state: str      # el state de OAuth: viaja entre el navegador, Nube de Copias y tu servidor
    expires: float  # time.monotonic() en que caduca
    notify: object  # ctx.completion_notifier(): la notificación de fin (None: no hay)
    status: str = "pending"  # pending -> done | denied | retired


FLOWS = {}   # identificador del flujo -> Flow
STATES = {}  # state -> identificador del flujo, mientras espera
TOKENS = {}  # usuario -> token de Nube de Copias: nunca sale del servidor


@extension.tool("notes_backup", description="Copia tus notas en Nube de Copias (simulado).",
                annotations={"readOnlyHint": True, "openWorldHint": True})
def notes_backup(ctx):
    if ctx.user in TOKENS:
        copied = ctx.provider.backup(TOKENS[ctx.user], ctx.notes())
        return ok(f"Copia hecha: {copied} nota(s).", {"status": "done", "notes": copied})
    if not ctx.url_mode_allowed():  # la guarda: sin modo URL, la alternativa manual
        return ok(MANUAL, {"status": "manual"})
    flow_id = ctx.memo("flujo", lambda: start_flow(ctx))  # el mismo flujo si se repite
    url = ctx.page_url("/copias/conectar", flujo=flow_id)
    if ctx.stateless:  # 2026-07-28: la parte opcional del cuaderno 6
        return ask_in_2026(ctx, flow_id, url)
    raise URLElicitationRequired([ctx.url_params(MESSAGE, url, flow_id)])


def start_flow(ctx):
    """Un flujo nuevo, guardado solo en el servidor; devuelve su identificador."""
    flow_id = secrets.token_urlsafe(24)
    state = secrets.token_urlsafe(32)
    FLOWS[flow_id] = Flow(ctx.user, state, time.monotonic() + ctx.url_ttl,
                          ctx.completion_notifier())
    STATES[state] = flow_id
    return flow_id


def usable(flow, user):
    """¿Puede seguir este flujo en el navegador de `user`?"""
    if flow is None or flow.status != "pending":
        return False
    return flow.user == user and time.monotonic() < flow.expires


@extension.page_route("/copias/conectar")
def connect(page):
    flow = FLOWS.get(page.query.get("flujo", ""))
    if not usable(flow, page.user):
        return page.reply(410, "Enlace no válido", "No existe, caducó, ya se usó o no es tuyo.")
    return page.redirect(page.provider.authorize_url(flow.state))


@extension.page_route(nube_copias.REDIRECT_PATH)
def callback(page):
    flow_id = STATES.pop(page.query.get("state", ""), None)
    flow = FLOWS.get(flow_id)
    if not usable(flow, page.user):
        return page.reply(400, "No se pudo completar", "No es un flujo pendiente tuyo.")
    if "code" not in page.query:  # error=access_denied: pulsaste «Rechazar»
        flow.status = "denied"
        return page.reply(403, "No autorizado", "Rechazaste la autorización.")
    try:
        token = page.provider.exchange(page.query["code"])
    except nube_copias.ProviderError:
        flow.status = "denied"
        return page.reply(400, "No se pudo completar", "Nube de Copias no aceptó el código.")
    TOKENS[flow.user] = token
    flow.status = "done"
    if flow.notify is not None:
        flow.notify(flow_id)
    return page.reply(200, "Listo", "Nube de Copias quedó autorizado. Vuelve a tu cliente MCP.")


# -- Parte opcional (cuaderno 6): el mismo flujo en 2026-07-28 ------------------------------------
def ask_in_2026(ctx, flow_id, url):
    """2026-07-28: sin −32042 ni notificación de fin; la URL viaja en input_required."""
    flow = FLOWS[flow_id]
    flow.notify = None  # 2026-07-28 no tiene notificación de fin
    answer = ctx.elicit_url(MESSAGE, url, flow_id)
    if answer.action != "accept":  # decline o cancel: ese enlace ya no autoriza nada
        flow.status = "retired"
        return ok("No autorizaste Nube de Copias: no hice ninguna copia.",
                  {"status": "not_authorized", "reason": answer.action})
    return ok("Sigue pendiente: termina en Nube de Copias y vuelve a pedir la copia.",
              {"status": "pending"})
