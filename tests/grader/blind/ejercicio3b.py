"""Ejercicio 3B, escrito a ciegas desde el enunciado: Nube de Copias por modo URL (y, en 2026-07-28,
la parte opcional del cuaderno 6)."""
import secrets
import threading
import time

import nube_copias
from extension import Extension
from server import URLElicitationRequired, ok

extension = Extension()

MESSAGE = "Autoriza a Nube de Copias a guardar copias de tus notas (se abrirá su página)."
FLOWS = {}   # identificador del flujo -> lo que el servidor sabe de él
STATES = {}  # state -> identificador del flujo, mientras espera
TOKENS = {}  # usuario -> token de Nube de Copias: nunca sale del servidor
LOCK = threading.Lock()


def _nuevo_flujo(ctx):
    flujo = secrets.token_urlsafe(24)
    state = secrets.token_urlsafe(24)
    with LOCK:
        _olvida_caducados()
        FLOWS[flujo] = {
            "user": ctx.user,
            "state": state,
            "expires": time.monotonic() + ctx.url_ttl,
            "status": "pending",
            "notify": None if ctx.protocol_version == "2026-07-28"
            else ctx.completion_notifier(),
        }
        STATES[state] = flujo
    return flujo


def _olvida_caducados():
    ahora = time.monotonic()
    for flujo, datos in list(FLOWS.items()):
        if datos["expires"] < ahora - 3600:  # mucho después de caducar, ya no hace falta
            FLOWS.pop(flujo, None)
            STATES.pop(datos["state"], None)


def _anula(flujo):
    with LOCK:
        datos = FLOWS.get(flujo)
        if datos is not None and datos["status"] == "pending":
            datos["status"] = "retired"
            datos["notify"] = None
            STATES.pop(datos["state"], None)


def _problema(datos, usuario):
    """Por qué este flujo no puede seguir en el navegador de `usuario` (None: puede)."""
    if datos is None:
        return 404, "Enlace desconocido", "Este enlace no corresponde a ninguna autorización."
    if datos["status"] != "pending":
        return 410, "Enlace ya usado", "Este enlace ya se usó o se anuló."
    if time.monotonic() > datos["expires"]:
        return 410, "Enlace caducado", "Este enlace caducó: vuelve a pedir la copia."
    if usuario is None or datos["user"] != usuario:
        return 403, "No es tu enlace", "Esta autorización la empezó otra persona."
    return None


@extension.tool(
    "notes_backup", description="Copia tus notas en Nube de Copias (simulado). La primera vez "
    "hay que autorizarlo en la página del proveedor (modo URL).",
    annotations={"readOnlyHint": True, "openWorldHint": True})
def notes_backup(ctx):
    if ctx.user in TOKENS:
        copied = ctx.provider.backup(TOKENS[ctx.user], ctx.notes())
        return ok(f"Copia hecha: {copied} nota(s).", {"status": "done", "notes": copied})
    if not ctx.url_mode_allowed():
        return ok("Tu cliente no admite el modo URL. Para autorizar Nube de Copias, hazlo fuera "
                  "de la conversación (en la configuración del servidor) y vuelve a pedir la "
                  "copia.", {"status": "manual"})
    flujo = ctx.memo("flujo", lambda: _nuevo_flujo(ctx))
    url = ctx.page_url("/copias/conectar", flujo=flujo)
    if ctx.protocol_version != "2026-07-28":
        raise URLElicitationRequired([ctx.url_params(MESSAGE, url, flujo)])
    respuesta = ctx.elicit_url(MESSAGE, url, flujo)
    if respuesta.action != "accept":
        _anula(flujo)
        return ok("No has autorizado Nube de Copias: no se copió nada.",
                  {"status": "not_authorized"})
    return ok("La autorización sigue pendiente: termina en la página y vuelve a pedir la copia.",
              {"status": "pending"})


@extension.page_route("/copias/conectar")
def connect(page):
    flujo = page.query.get("flujo")
    datos = FLOWS.get(flujo) if isinstance(flujo, str) else None
    problema = _problema(datos, page.user)
    if problema:
        return page.reply(*problema)
    return page.redirect(page.provider.authorize_url(datos["state"]))


@extension.page_route(nube_copias.REDIRECT_PATH)
def callback(page):
    campos = page.query if page.method == "GET" else page.form
    state = campos.get("state")
    flujo = STATES.pop(state, None) if isinstance(state, str) else None  # sirve una vez
    datos = FLOWS.get(flujo) if flujo is not None else None
    problema = _problema(datos, page.user)
    if problema:
        return page.reply(*problema)
    code = campos.get("code")
    if not code:
        with LOCK:
            datos["status"], datos["notify"] = "denied", None
        return page.reply(403, "Autorización rechazada", "No autorizaste Nube de Copias: no "
                          "se configuró nada.")
    try:
        token = page.provider.exchange(code)
    except nube_copias.ProviderError:
        with LOCK:
            datos["status"], datos["notify"] = "failed", None
        return page.reply(400, "No se pudo autorizar", "Nube de Copias no aceptó el código.")
    with LOCK:
        TOKENS[datos["user"]] = token
        datos["status"] = "completed"
        aviso, datos["notify"] = datos["notify"], None
    if aviso is not None:
        aviso(flujo)
    return page.reply(200, "Listo", "Nube de Copias quedó autorizada. Vuelve a tu cliente.")
