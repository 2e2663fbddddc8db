"""The lesson's tools: list, write, delete (with disambiguation), setup (URL mode), handles.

Each tool asks before it acts: the roots first, then the user when the request is ambiguous or
needs an out-of-band step, and only then, inside `ctx.hold()`, re-checks what it is about to
touch and does it. The tool contract (names, arguments, results) is what the notebooks, the
grader and external clients rely on.
"""

import datetime
import secrets

import elicitation
import store
import url_mode
from roots import RootError
from server import Tool, ToolError, ok

SYNC_PROVIDER = "notas-sync"


def notes_list(ctx):
    notes = ctx.notes()
    lines = [f"- {n.id}: {n.title} ({n.created})" for n in notes] or ["(no hay notas)"]
    return ok(f"{len(notes)} nota(s) dentro de las roots:\n" + "\n".join(lines),
              {"notes": [n.summary() for n in notes]})


def notes_write(ctx, uri, title, body, created=None):
    created = created or datetime.date.today().isoformat()
    if not store.valid_date(created):
        raise ToolError(f"'created' debe ser una fecha AAAA-MM-DD (llegó {created!r}).")
    if not title.strip():
        raise ToolError("El título no puede estar vacío.")
    with ctx.hold() as roots:
        try:
            path = roots.resolve(uri)
        except RootError as exc:
            raise ToolError(f"No escribí nada: {exc}") from None
        if not path.endswith(store.SUFFIX):
            raise ToolError(f"Las notas son archivos {store.SUFFIX}; no escribí nada.")
        existing = store.read_note(path)
        note_id = existing.id if existing else "note-" + secrets.token_hex(4)
        try:
            store.write_atomic(path, store.render(note_id, title.strip(), created, body))
        except (store.StoreError, OSError) as exc:
            raise ToolError(f"No escribí nada: {exc}") from None
    note = store.Note(note_id, title.strip(), created, path)
    return ok(f"Nota {note_id} guardada en {note.uri}.", {"note": note.summary()})


def notes_delete(ctx, title):
    matches = ctx.find_notes(title)
    if not matches:
        raise ToolError(f"No hay ninguna nota titulada {title!r} dentro de las roots.")
    target = matches[0]
    if len(matches) > 1:
        answer = ctx.elicit_form(
            f"Hay {len(matches)} notas tituladas {title!r}. Elige cuál borrar y confirma.",
            {"note_id": elicitation.choice([(n.id, f"{n.created} · {n.id}") for n in matches],
                                           title="Nota", protocol=ctx.protocol_version),
             "confirm": {"type": "boolean", "title": "Sí, bórrala",
                         "description": "Borrar la nota elegida no se puede deshacer."}},
            required=["note_id", "confirm"])
        refusal = refusal_of(answer, "No se borró nada")
        if refusal:
            return refusal
        target = next(n for n in matches if n.id == answer.content["note_id"])
    with ctx.hold() as roots:
        current = store.read_note(target.path)
        if current is None or current.id != target.id or not roots.contains(target.path):
            raise ToolError(f"La nota {target.id} ya no existe o quedó fuera de las roots; "
                            "no se borró nada.")
        store.delete(current)
    return ok(f"Borrada la nota {target.id} ({target.title}, {target.created}).",
              {"deleted": target.summary()})


def refusal_of(answer, nothing_done):
    """The result for every answer that is not an explicit yes; None when it is one."""
    reasons = {"decline": ("declined", "rechazaste el formulario"),
               "cancel": ("cancelled", "cancelaste la operación")}
    if answer.action in reasons:
        code, text = reasons[answer.action]
    elif answer.content.get("confirm") is not True:
        code, text = "not_confirmed", "no marcaste la confirmación"
    else:
        return None
    return ok(f"{nothing_done}: {text}.", {"deleted": None, "reason": code})


def notes_setup(ctx):
    """First-run setup of the (simulated) sync service, through URL mode when allowed."""
    config = ctx.server.config
    # decided once per call: a 2026-07-28 retry must not mistake its own success for "already"
    if ctx.memo("configured_before", lambda: ctx.server.flows.is_configured(config.subject,
                                                                             SYNC_PROVIDER)):
        return ok("La sincronización ya estaba configurada.",
                  {"status": "configured", "already": True})
    if not ctx.server.allow_url_mode(ctx.protocol_version, ctx.client_capabilities):
        return ok(MANUAL_SETUP.format(version=config.sdk_version or "desconocida",
                                      protocol=ctx.protocol_version),
                  {"status": "manual", "reason": "url_mode_not_available"})
    page = ctx.server.setup_page()
    notify = None if ctx.stateless else ctx.session.notify_complete
    flow_id = ctx.memo("flow", lambda: ctx.server.flows.start(
        ctx.session.id, config.subject, SYNC_PROVIDER, notify).elicitation_id)
    record = ctx.server.flows.get(flow_id)
    if record is None:
        raise ToolError("Este intento de configuración ya no existe; vuelve a llamar a "
                        "notes_setup.")
    url = page.url_for(flow_id)
    problems = url_mode.url_problems(url)
    if problems:
        raise ToolError("No envío esta URL: " + "; ".join(problems))
    answer = ctx.elicit_url("Conecta tus notas con Notas Sync (simulado). Se abrirá la página "
                            "de autorización del proveedor; el servidor nunca verá tu clave.",
                            url, flow_id)
    if answer.action != "accept":
        return ok("No se configuró nada: " + ("rechazaste abrir la página."
                                               if answer.action == "decline"
                                               else "cancelaste la configuración."),
                  {"status": "not_configured", "reason": answer.action})
    # accept only means "I agreed to open it"; completion is confirmed by the page itself.
    # At 2026-07-28 the retry comes after the user says they finished: do not hold it.
    record.done.wait(0 if ctx.stateless else config.setup_wait)
    if record.status == "completed":
        return ok("Sincronización configurada. La credencial queda guardada en el servidor "
                  "y no se muestra aquí.", {"status": "configured"})
    if record.status == "denied":
        return ok("Rechazaste la autorización en el proveedor; no se configuró nada.",
                  {"status": "not_configured", "reason": "denied"})
    return ok("La autorización sigue pendiente: termina en la página y vuelve a llamar a "
              "notes_setup.", {"status": "pending"})


MANUAL_SETUP = (
    "Este cliente no puede usar el modo URL (SDK simulado {version}, protocolo {protocol}), así "
    "que no te pediré ninguna clave aquí. Configura la sincronización fuera de esta "
    "conversación: usa un cliente que declare elicitation.url o configura el servicio a mano "
    "en el servidor.")


def notes_open(ctx, note_id):
    note = ctx.find_note(note_id)
    with ctx.hold() as roots:
        if not roots.contains(note.path):
            raise ToolError(f"La nota {note_id} está fuera de las roots.")
        handle = ctx.handles.open(note)
    return ok(f"Abierta la nota {note_id} como {handle.id}.", handle.summary())


def notes_read(ctx, handle):
    with ctx.hold() as roots:
        try:
            opened = ctx.handles.get(handle)
            if ctx.stateless and not roots.contains(opened.path):
                # 2026-07-28 has no list_changed: every request re-checks against its roots
                ctx.handles.revoke(opened, "su nota está fuera de las roots de esta petición")
            text = ctx.handles.read(handle)
        except store.StoreError as exc:
            raise ToolError(str(exc)) from None
    return ok(text, {"handle": handle, "body": text})


def notes_close(ctx, handle):
    with ctx.hold():
        try:
            ctx.handles.close(handle)
        except store.StoreError as exc:
            raise ToolError(str(exc)) from None
    return ok(f"Cerrado {handle}.", {"handle": handle, "closed": True})


NOTE_OUT = {"type": "object", "required": ["id", "title", "created", "uri"],
            "properties": {k: {"type": "string"} for k in ("id", "title", "created", "uri")}}
STRING = {"type": "string"}


def register(server):
    server.add_tool(Tool(
        "notes_list", "Lista las notas que hay dentro de las roots del cliente.", notes_list,
        annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
        output_schema={"type": "object", "required": ["notes"],
                       "properties": {"notes": {"type": "array", "items": NOTE_OUT}}},
        title="Listar notas"))
    server.add_tool(Tool(
        "notes_write", "Escribe (o reemplaza) una nota en una URI file:// dentro de las roots.",
        notes_write,
        {"type": "object", "required": ["uri", "title", "body"],
         "properties": {"uri": {"type": "string", "description": "URI file:// o ruta absoluta"},
                        "title": STRING, "body": STRING,
                        "created": {"type": "string", "description": "AAAA-MM-DD"}}},
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
         "openWorldHint": False}, title="Escribir nota"))
    server.add_tool(Tool(
        "notes_delete", "Borra la nota con ese título; si hay varias, pregunta cuál.",
        notes_delete, {"type": "object", "required": ["title"], "properties": {"title": STRING}},
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
         "openWorldHint": False}, title="Borrar nota"))
    server.add_tool(Tool(
        "notes_setup", "Configura la sincronización de notas (primer uso) por modo URL.",
        notes_setup, annotations={"readOnlyHint": False, "destructiveHint": False,
                                  "idempotentHint": True, "openWorldHint": True},
        title="Configurar sincronización"))
    for name, handler, text, props in (
            ("notes_open", notes_open, "Abre una nota y devuelve un handle para leerla luego.",
             {"note_id": STRING}),
            ("notes_read", notes_read, "Lee una nota a través de su handle abierto.",
             {"handle": STRING}),
            ("notes_close", notes_close, "Cierra un handle.", {"handle": STRING})):
        server.add_tool(Tool(name, text, handler,
                             {"type": "object", "required": list(props), "properties": props},
                             {"readOnlyHint": True, "openWorldHint": False}))
