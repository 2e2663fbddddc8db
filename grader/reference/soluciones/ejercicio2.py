"""Ejercicio 2 (solución de referencia): notes_archive pide confirmación cada vez."""
import store
from elicitation import choice
from extension import Extension
from server import ToolError, ok

extension = Extension()


@extension.tool(
    "notes_archive",
    description="Archiva una nota: la mueve a la carpeta .archive/ de su root. Pregunta "
                "siempre cuál y pide confirmación antes de tocar nada.",
    input_schema={"type": "object", "required": ["title"],
                  "properties": {"title": {"type": "string",
                                           "description": "Título de la nota"}}},
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                 "openWorldHint": False},
    title="Archivar nota")
def notes_archive(ctx, title):
    # solo notas dentro de las roots, decididas una vez por llamada: si las roots cambian con
    # el formulario abierto, la herramienta vuelve a ejecutarse y pregunta exactamente lo mismo
    matches = [store.Note(*n) for n in ctx.memo("matches", lambda: ctx.find_notes(title))]
    if not matches:
        raise ToolError(f"Ninguna nota de tus roots se titula {title!r}; no archivé nada.")
    answer = ctx.elicit_form(
        f"¿Archivar la nota {title!r}? Elige cuál y confirma.",
        {"note_id": choice([(n.id, f"{n.title} · {n.created} · {n.id}") for n in matches],
                           title="Nota que se archiva", protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    if answer.action != "accept" or answer.content.get("confirm") is not True:
        return ok("No se archivó nada.", {"archived": None, "reason": answer.action})
    note = next((n for n in matches if n.id == answer.content.get("note_id")), None)
    if note is None:
        raise ToolError("Esa nota no estaba entre las opciones; no se archivó nada.")
    # justo antes de actuar: ¿sigue siendo el mismo archivo, dentro de las roots de ahora?
    current = ctx.recheck(note)
    target = ctx.archive(current)  # lo comprueba otra vez y lo mueve en un solo paso
    return ok(f"Archivada la nota {note.id} en {target}.", {"archived": note.summary()})
