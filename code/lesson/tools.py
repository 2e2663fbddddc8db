"""The lesson's tools: list, write, delete (with disambiguation), setup and sync (URL mode),
and the handles of exercise 4.

Each tool asks before it acts: the roots first, then the user when the request is ambiguous or
needs an out-of-band step, and only then re-checks what it is about to touch and does it, on
the same held folder (store.py: the note must still be the same file inside the current
roots). A tool runs again from the start after each answer (context.py), so asking first is
also what makes that safe. The tool contract (names, arguments, results) is what the
notebooks, the grader and external clients rely on.

Each tool is declared with the decorator a learner's solution uses (`Extension.tool`,
extension.py) and reaches the server only through `ctx` (context.py): this file is the model
a solution can copy.

Deliberate simplifications: the "sync" is simulated (it counts the notes it would send), and
the provider's credential never leaves url_mode.FlowStore.
"""

import datetime
import json

from core import elicitation
from core.tooling import ToolError, ok
from lesson.extension import Extension
from notes import store
from notes.roots import RootError
from shared.protocol import SYNC_PROVIDER
from urlflow import url_mode

LESSON = Extension(origin="base")  # the lesson's tools, declared as a solution declares its own
NOTE_OUT = {"type": "object", "required": ["id", "title", "created", "uri"],
            "properties": {k: {"type": "string"} for k in ("id", "title", "created", "uri")}}
STRING = {"type": "string"}
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}  # the handle tools'


@LESSON.tool("notes_list", "Lista las notas que hay dentro de las roots del cliente.",
             annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
             output_schema={"type": "object", "required": ["notes"],
                            "properties": {"notes": {"type": "array", "items": NOTE_OUT}}},
             title="Listar notas")
def notes_list(ctx):
    skipped = []
    notes = ctx.notes(skipped)
    # one line and one summary per note, as many as fit in one answer; a listing that does not
    # fit is said to be partial, never cut silently (nor turned into an error)
    room = Room(LISTING_BYTES)
    shown = room.take([(f"- {n.id}: {n.title} ({n.created})", n.summary()) for n in notes])
    lines = [line for line, _ in shown] or ["(no hay notas)"]
    text = f"{len(notes)} nota(s) dentro de las roots:\n" + "\n".join(lines)
    data = {"notes": [summary for _, summary in shown]}
    if len(shown) < len(notes):
        text += "\n\n" + PARTIAL_LISTING.format(shown=len(shown), total=len(notes))
        data["partial"] = {"shown": len(shown), "total": len(notes)}
    if skipped:  # what the listing left out, and why
        reasons = [reason for reason, _ in room.take([(r, r) for r in skipped])]
        if len(reasons) < len(skipped):
            reasons.append(MORE_SKIPPED.format(more=len(skipped) - len(reasons)))
        text += "\n\nNo listé todo:\n" + "\n".join(f"- {reason}" for reason in reasons)
        data["skipped"] = reasons
    return ok(text, data)


LISTING_BYTES = 3 * 1024 * 1024  # a listing's text and data together (a frame holds 4 MiB)
PARTIAL_LISTING = ("[Listado parcial: se muestran {shown} de las {total} notas; las demás no "
                   "caben en una respuesta. Comparte una carpeta más concreta para verlas.]")
MORE_SKIPPED = "y {more} aviso(s) más, que no caben en esta respuesta"


class Room:
    """How much of an answer is still free, in bytes of JSON (as the frame will carry it)."""

    def __init__(self, size):
        self.left = size

    def take(self, items):
        """The first of `items` ((text, data) pairs, each shown twice: as text and as data)
        that fit in the room left, which they then use up."""
        taken = []
        for text, data in items:
            cost = len(json.dumps(text, ensure_ascii=False).encode()) + \
                len(json.dumps(data, ensure_ascii=False).encode())
            if cost > self.left:
                break
            self.left -= cost
            taken.append((text, data))
        return taken


@LESSON.tool("notes_write",
             "Escribe (o reemplaza) una nota en una URI file:// dentro de las roots.",
             {"type": "object", "required": ["uri", "title", "body"],
              "properties": {"uri": {"type": "string",
                                     "description": "URI file:// o ruta absoluta"},
                             "title": STRING, "body": STRING,
                             "created": {"type": "string", "description": "AAAA-MM-DD"}}},
             {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
              "openWorldHint": False}, title="Escribir nota")
def notes_write(ctx, uri, title, body, created=None):
    created = created or datetime.date.today().isoformat()
    if not store.valid_date(created):
        raise ToolError(f"'created' debe ser una fecha AAAA-MM-DD (llegó {created!r}).")
    if not title.strip():
        raise ToolError("El título no puede estar vacío.")
    roots = ctx.roots
    try:
        path = roots.resolve(uri)
    except RootError as exc:
        raise ToolError(f"No escribí nada: {exc}") from None
    if not path.endswith(store.SUFFIX):
        raise ToolError(f"Las notas son archivos {store.SUFFIX}; no escribí nada.")
    try:
        note = store.write_note(roots, path, title.strip(), created, body)
    except (store.StoreError, OSError) as exc:
        raise ToolError(f"No escribí nada: {exc}") from None
    return ok(f"Nota {note.id} guardada en {note.uri}.", {"note": note.summary()})


@LESSON.tool("notes_delete", "Borra la nota con ese título; si hay varias, pregunta cuál.",
             {"type": "object", "required": ["title"], "properties": {"title": STRING}},
             {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
              "openWorldHint": False}, title="Borrar nota")
def notes_delete(ctx, title):
    # Which notes match is decided once per call: every run after an answer follows the same
    # path (a roots change while the form is open must not turn "ask" into "delete the one
    # left"); what changed meanwhile is caught by the re-check below.
    matches = [store.Note(*fields) for fields in ctx.memo("matches", lambda: [
        list(n) for n in ctx.find_notes(title)])]
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
            required=["note_id", "confirm"], quoted=[title])
        refusal = refusal_of(answer, "No se borró nada")
        if refusal:
            return refusal
        target = next(n for n in matches if n.id == answer.content["note_id"])
    try:  # the same file, inside the current roots, checked and deleted on one held folder
        store.delete(ctx.roots, target)
    except store.StoreError as exc:
        raise ToolError(f"No se borró nada: {exc}.") from None
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


@LESSON.tool("notes_setup", "Configura la sincronización de notas (primer uso) por modo URL.",
             annotations={"readOnlyHint": False, "destructiveHint": False,
                          "idempotentHint": True, "openWorldHint": True},
             title="Configurar sincronización")
def notes_setup(ctx):
    """First-run setup of the (simulated) sync service, through URL mode when allowed."""
    # decided once per call: a later run must not mistake its own success for "already"
    if ctx.memo("configured_before", lambda: configured(ctx)):
        return ok("La sincronización ya estaba configurada.",
                  {"status": "configured", "already": True})
    if not ctx.url_mode_allowed():
        return ok(manual_setup(ctx), {"status": "manual", "reason": "url_mode_not_available"})
    record, url = start_flow(ctx)
    answer = ctx.elicit_url(CONNECT_MESSAGE, url, record.elicitation_id)
    if answer.action != "accept":
        ctx.retire_flow(record.elicitation_id)  # that link is dead from now on
        return ok("No se configuró nada: " + ("rechazaste abrir la página."
                                               if answer.action == "decline"
                                               else "cancelaste la configuración."),
                  {"status": "not_configured", "reason": answer.action})
    # accept only means "I agreed to open it": the page itself confirms the end. Wait a little
    # (parked, never blocking) so a quick user gets the final answer in this same call.
    status = ctx.wait_flow(record)  # up to the server's --setup-wait
    if status == "completed":
        return ok(CONFIGURED, {"status": "configured"})
    if status == "denied":
        return ok("Rechazaste la autorización en el proveedor; no se configuró nada.",
                  {"status": "not_configured", "reason": "denied"})
    return ok(pending(ctx, "notes_setup"), {"status": "pending"})


@LESSON.tool("notes_sync", "Sincroniza las notas con Notas Sync; antes hace falta "
             "configurarla (modo URL).",
             annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True},
             title="Sincronizar notas")
def notes_sync(ctx):
    """Send the notes to the (simulated) sync service; it needs notes_setup done first.

    Before the setup, at 2025-11-25 the request ends with the -32042 error carrying the URL
    elicitation (the client opens the page and retries); at 2026-07-28 it asks in-band, and
    asks the roots (which the sync needs anyway) in the same round.
    """
    if not configured(ctx):
        if not ctx.url_mode_allowed():
            raise ToolError("La sincronización aún no está configurada y este cliente no puede "
                            "usar el modo URL: " + manual_setup(ctx))
        record, url = start_flow(ctx)
        answer = ctx.ask_together(
            consent=ctx.url_request(CONNECT_MESSAGE, url, record.elicitation_id, required=True),
            roots=ctx.roots_request())["consent"]
        if answer.action != "accept":
            ctx.retire_flow(record.elicitation_id)
            return ok("No se sincronizó nada: antes hay que autorizar Notas Sync.",
                      {"synced": None, "reason": answer.action})
        if ctx.wait_flow(record) != "completed":
            return ok(pending(ctx, "notes_sync"), {"synced": None, "status": "pending"})
    notes = ctx.notes()
    return ok(f"Sincronizadas {len(notes)} nota(s) con Notas Sync (simulado).",
              {"synced": len(notes), "ids": [n.id for n in notes]})


def configured(ctx):
    """Did this call's user (never another one of a shared server) authorize Notas Sync?"""
    return ctx.is_configured(SYNC_PROVIDER)


def start_flow(ctx):
    """The URL flow of this call (the same one on every run) and its checked URL."""
    flow_id = ctx.memo("flow", lambda: ctx.start_flow(SYNC_PROVIDER).elicitation_id)
    record = ctx.flow(flow_id)
    if record is None:
        raise ToolError("Este intento de configuración ya no existe; vuelve a llamar a la "
                        "herramienta.")
    url = ctx.flow_url(flow_id)
    problems = url_mode.url_problems(url)
    if problems:
        raise ToolError("No envío esta URL: " + "; ".join(problems))
    return record, url


def manual_setup(ctx):
    return MANUAL_SETUP.format(version=ctx.sdk_version or "desconocida",
                               protocol=ctx.protocol_version)


def pending(ctx, tool):
    if ctx.stateless:
        then = (f"cuando termines en la página, vuelve a llamar a {tool} (en 2026-07-28 no hay "
                "notificación de fin: el cliente se entera reintentando).")
    else:
        then = (f"cuando la página lo confirme te llegará notifications/elicitation/complete; "
                f"entonces vuelve a llamar a {tool}.")
    return "La autorización sigue pendiente: nada está configurado todavía. " + then[0].upper() \
        + then[1:]


CONNECT_MESSAGE = ("Conecta tus notas con Notas Sync (simulado). Se abrirá la página de "
                   "autorización del proveedor: tu clave se escribe allí, nunca en este chat.")
CONFIGURED = ("Sincronización configurada. La credencial del proveedor queda guardada en el "
              "servidor: nunca pasa por el cliente ni por el modelo.")
MANUAL_SETUP = (
    "Este cliente no puede usar el modo URL (SDK simulado {version}, protocolo {protocol}), así "
    "que no te pediré ninguna clave aquí. Configura la sincronización fuera de esta "
    "conversación: usa un cliente que declare elicitation.url o configura el servicio a mano "
    "en el servidor.")


@LESSON.tool("notes_open", "Abre una nota y devuelve un handle para leerla luego.",
             {"type": "object", "required": ["note_id"], "properties": {"note_id": STRING}},
             READ_ONLY)
def notes_open(ctx, note_id):
    note = ctx.find_note(note_id)
    try:
        handle = ctx.handles.open(ctx.roots, note)
    except store.StoreError as exc:
        raise ToolError(f"No abrí la nota: {exc}.") from None
    return ok(f"Abierta la nota {note_id} como {handle.id}.", handle.summary())


@LESSON.tool("notes_read", "Lee una nota a través de su handle abierto.",
             {"type": "object", "required": ["handle"], "properties": {"handle": STRING}},
             READ_ONLY)
def notes_read(ctx, handle):
    roots = ctx.roots
    try:
        # where the note's file is now (asked through its descriptor), not where it was:
        # 2026-07-28 has no list_changed, so every request checks it against its roots;
        # at 2025-11-25 a roots change judges the handles it keeps (exercise 4), and a
        # note moved out of the roots in between stops reading here
        ctx.handles.recheck(roots, handle, OUTSIDE_2026 if ctx.stateless else OUTSIDE,
                            always=ctx.stateless)
        text, size = ctx.handles.read_part(handle)
    except store.StoreError as exc:
        raise ToolError(str(exc)) from None
    if size is None:
        return ok(text, {"handle": handle, "body": text})
    return ok(f"{text}\n\n[{PARTIAL_NOTE.format(shown=store.MAX_READ_BYTES, size=size)}]",
              {"handle": handle, "body": text,
               "partial": {"shownBytes": store.MAX_READ_BYTES, "sizeBytes": size}})


OUTSIDE = "su nota salió de las roots (la movieron fuera o la borraron)"
OUTSIDE_2026 = "su nota está fuera de las roots de esta petición"
PARTIAL_NOTE = ("Nota parcial: solo caben en una respuesta los primeros {shown} bytes de sus "
                "{size}; el resto no se muestra.")


@LESSON.tool("notes_close", "Cierra un handle.",
             {"type": "object", "required": ["handle"], "properties": {"handle": STRING}},
             READ_ONLY)
def notes_close(ctx, handle):
    # the roots first, as for every handle tool (a roots change under way may revoke it)
    ctx.roots  # noqa: B018
    try:
        ctx.handles.close(handle)
    except store.StoreError as exc:
        raise ToolError(str(exc)) from None
    return ok(f"Cerrado {handle}.", {"handle": handle, "closed": True})


def register(server):
    """Add the lesson's tools, declared above with the decorator a solution uses, to `server`."""
    for tool in LESSON.tools:
        server.add_tool(tool)
