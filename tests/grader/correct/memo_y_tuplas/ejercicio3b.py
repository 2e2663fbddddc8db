"""Ejercicio 3B (y su parte opcional), otro estilo: tuplas inmutables, ctx.require_url en las
dos revisiones."""
import secrets
import threading
import time

import nube_copias
from extension import Extension
from server import ok

extension = Extension()

LOCK = threading.Lock()
PENDING = {}    # id del flujo -> (usuario, state, fin, avisar); sale de aquí al terminar
BY_STATE = {}   # state -> id del flujo
FINISHED = {}   # id del flujo -> "hecho" | "rechazado" | "anulado"
GRANTS = {}     # usuario -> token (solo en el servidor)


def open_flow(ctx):
    flow_id, state = secrets.token_hex(20), secrets.token_hex(20)
    notify = None if ctx.stateless else ctx.completion_notifier()
    with LOCK:
        PENDING[flow_id] = (ctx.user, state, time.monotonic() + ctx.url_ttl, notify)
        BY_STATE[state] = flow_id
    return flow_id


def close_flow(flow_id, outcome):
    with LOCK:
        record = PENDING.pop(flow_id, None)
        if record is not None:
            BY_STATE.pop(record[1], None)
            FINISHED[flow_id] = outcome
    return record


def alive(record, user):
    return record is not None and record[0] == user and time.monotonic() < record[2]


@extension.tool("notes_backup", description="Copia tus notas en Nube de Copias.",
                annotations={"readOnlyHint": True, "openWorldHint": True})
def notes_backup(ctx):
    if ctx.user not in GRANTS:
        if not ctx.url_mode_allowed():
            return ok("Sin modo URL no te pido nada aquí: autoriza Nube de Copias desde un "
                      "cliente con modo URL.", {"status": "manual"})
        flow_id = ctx.memo("flujo", lambda: open_flow(ctx))
        answer = ctx.require_url("Autoriza Nube de Copias en su página.",
                                 ctx.page_url("/copias/conectar", f=flow_id), flow_id)
        if answer.action != "accept":
            close_flow(flow_id, "anulado")
            return ok("No autorizaste: no copio nada.", {"status": "not_authorized"})
        if FINISHED.get(flow_id) != "hecho":
            return ok("Aún no terminaste en la página; vuelve a llamarme.",
                      {"status": "pending"})
    copied = ctx.provider.backup(GRANTS[ctx.user], ctx.notes())
    return ok(f"{copied} nota(s) copiadas.", {"status": "done", "notes": copied})


@extension.page_route("/copias/conectar")
def connect(page):
    with LOCK:
        record = PENDING.get(page.query.get("f", ""))
    if not alive(record, page.user):
        return page.reply(404, "Nada que hacer", "Enlace desconocido, caducado o ajeno.")
    return page.redirect(page.provider.authorize_url(record[1]))


@extension.page_route(nube_copias.REDIRECT_PATH)
def back(page):
    with LOCK:
        flow_id = BY_STATE.pop(page.query.get("state", ""), None)
        record = PENDING.get(flow_id)
    if not alive(record, page.user):
        close_flow(flow_id, "anulado")
        return page.reply(400, "Nada que hacer", "Esta vuelta no es de ningún flujo tuyo.")
    code = page.query.get("code")
    if not code:
        close_flow(flow_id, "rechazado")
        return page.reply(403, "Rechazado", "No autorizaste nada.")
    try:
        token = page.provider.exchange(code)
    except nube_copias.ProviderError:
        close_flow(flow_id, "rechazado")
        return page.reply(400, "Error", "El proveedor no aceptó el código.")
    GRANTS[record[0]] = token
    close_flow(flow_id, "hecho")
    if record[3] is not None:
        record[3](flow_id)
    return page.reply(200, "Listo", "Autorizado. Vuelve a tu cliente.")
