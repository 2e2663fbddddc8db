"""Ejercicio 2, otro estilo: las coincidencias se deciden una vez (ctx.memo) y se re-comprueban
justo antes de mover la nota."""
import store
from elicitation import choice
from extension import Extension
from server import ToolError, ok

extension = Extension()


@extension.tool(
    "notes_archive",
    description="Mueve una nota a la carpeta .archive/ de su root, siempre con confirmación.",
    input_schema={"type": "object", "required": ["title"],
                  "properties": {"title": {"type": "string"}}},
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False})
def notes_archive(ctx, title):
    found = ctx.memo("found", lambda: [list(n) for n in ctx.find_notes(title)])
    if not found:
        raise ToolError("No encontré esa nota dentro de tus roots; no archivé nada.")
    notes = [store.Note(*fields) for fields in found]
    options = [(note.id, f"{note.created} · {note.title}") for note in notes]
    answer = ctx.elicit_form(
        "Confirma qué nota quieres archivar.",
        {"note_id": choice(options, title="Nota", protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Archivar"}},
        required=["note_id", "confirm"])
    if answer.action != "accept":
        return ok("No se archivó nada.")
    if answer.content["confirm"] is not True:
        return ok("Sin confirmación no se archivó nada.")
    chosen = next(note for note in notes if note.id == answer.content["note_id"])
    where = ctx.archive(chosen)  # re-comprueba el mismo archivo en las roots de ahora y lo mueve
    return ok(f"Archivada en {where}.")
