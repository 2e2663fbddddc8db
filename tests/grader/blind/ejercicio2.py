"""Ejercicio 2, escrito a ciegas desde el enunciado (otro estilo): notes_archive."""
import store
from elicitation import choice
from extension import Extension
from server import ToolError, ok

extension = Extension()

ENTRADA = {"type": "object", "required": ["title"],
           "properties": {"title": {"type": "string", "description": "Título de la nota"}}}


@extension.tool("notes_archive",
                description="Mueve una nota a la carpeta .archive/ de su root, preguntando "
                            "antes cuál y si de verdad quieres archivarla.",
                input_schema=ENTRADA,
                annotations={"readOnlyHint": False, "destructiveHint": True})
def notes_archive(ctx, title):
    # las candidatas se deciden una vez por llamada: al volver a ejecutarse, la misma pregunta
    candidatas = [store.Note(*c) for c in ctx.memo("candidatas", lambda: ctx.find_notes(title))]
    if len(candidatas) == 0:
        raise ToolError("No hay ninguna nota con ese título en las carpetas compartidas.")
    opciones = [(nota.id, f"{nota.title} ({nota.created})") for nota in candidatas]
    respuesta = ctx.elicit_form(
        "¿Qué nota archivo? Marca la casilla para confirmarlo.",
        {"note_id": choice(opciones, title="Nota", protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    if respuesta.action == "decline":
        return ok("Has dicho que no: no archivo nada.")
    if respuesta.action == "cancel":
        return ok("Cancelado: no archivo nada.")
    if respuesta.content.get("confirm") is not True:
        return ok("Sin confirmar no archivo nada.")
    elegida = None
    for nota in candidatas:
        if nota.id == respuesta.content.get("note_id"):
            elegida = nota
    if elegida is None:
        raise ToolError("Esa nota no estaba entre las opciones; no archivo nada.")
    nota = ctx.recheck(elegida)  # ¿sigue siendo la misma, dentro de las roots de ahora?
    destino = ctx.archive(nota)
    return ok(f"Archivada en {destino}.")
