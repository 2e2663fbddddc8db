"""Reference solution for exercises 2, 3 and 4 (Roots y Elicitación)."""
import os

import store
from elicitation import choice
from extension import Extension
from server import ToolError, ok
from url_mode import parse_sdk_version

extension = Extension()


@extension.tool(
    "notes_archive",
    description="Archiva una nota (la mueve a .archive/ dentro de su root). Pide confirmación "
                "cada vez.",
    input_schema={"type": "object", "required": ["title"],
                  "properties": {"title": {"type": "string"}}},
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                 "openWorldHint": False})
def notes_archive(ctx, title):
    matches = ctx.find_notes(title)
    if not matches:
        raise ToolError(f"No hay ninguna nota titulada {title!r} dentro de las roots.")
    answer = ctx.elicit_form(
        f"¿Archivar la nota {title!r}? Elige cuál y confirma.",
        {"note_id": choice([(n.id, f"{n.created} · {n.id}") for n in matches], title="Nota",
                           protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    if answer.action != "accept" or answer.content.get("confirm") is not True:
        return ok("No se archivó nada.", {"archived": None, "reason": answer.action})
    note = next(n for n in matches if n.id == answer.content["note_id"])
    with ctx.hold() as roots:
        current = store.read_note(note.path)
        root = roots.root_of(note.path)
        if current is None or current.id != note.id or root is None:
            raise ToolError("La nota ya no existe o quedó fuera de las roots.")
        store.archive(current, root.path)
    return ok(f"Archivada la nota {note.id}.", {"archived": note.summary()})


@extension.url_mode_guard
def allow_url_mode(sdk_version, protocol_version, client_capabilities):
    version = parse_sdk_version(sdk_version)
    if version is None or version < (1, 23, 1, 1):
        return False
    if protocol_version == "2026-07-28":
        if version < (2, 0, 0, 1):
            return False
    elif protocol_version != "2025-11-25":
        return False
    elicitation = (client_capabilities or {}).get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)


@extension.on_roots_changed
def recheck(change):
    for handle in change.handles:
        if not change.new_roots.contains(os.path.realpath(handle.path)):
            change.revoke(handle)
