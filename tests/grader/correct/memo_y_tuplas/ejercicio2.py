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
    found = ctx.memo("found", lambda: [[n.id, n.title, n.created, n.path]
                                       for n in ctx.find_notes(title)])
    if not found:
        raise ToolError("No encontré esa nota dentro de tus roots; no archivé nada.")
    options = [(note_id, f"{created} · {name}") for note_id, name, created, _ in found]
    answer = ctx.elicit_form(
        "Confirma qué nota quieres archivar.",
        {"note_id": choice(options, title="Nota", protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Archivar"}},
        required=["note_id", "confirm"])
    if answer.action != "accept":
        return ok("No se archivó nada.")
    if answer.content["confirm"] is not True:
        return ok("Sin confirmación no se archivó nada.")
    chosen = next(store.Note(*f) for f in found if f[0] == answer.content["note_id"])
    with ctx.hold() as roots:
        root = roots.root_of(chosen.path)
        current = store.read_note(chosen.path)
        if root is None or current is None or current.id != chosen.id:
            raise ToolError("La nota ya no está dentro de tus roots; no archivé nada.")
        try:
            where = store.archive(current, root.path)
        except store.StoreError as exc:
            raise ToolError(f"No archivé nada: {exc}") from None
    return ok(f"Archivada en {where}.")
