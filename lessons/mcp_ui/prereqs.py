"""Which exercise builds a tool that a later cell calls, and what to say when it is missing.

Notebook 6 calls `notes_archive`, the tool the learner writes in exercise 2 (notebook 2), and
`notes_backup`, exercise 3B's (notebook 3).
Opened first, the server answers `Unknown tool: 'notes_archive'` (−32602), which says nothing
about what to do. `missing_exercise_hint(tool, error, solution)` turns that error into a
Spanish sentence: which notebook and exercise build the tool, and what is wrong with the
solution the server loaded (no file, or a file that registers no such tool). LabClient.call
prints it under the error.

Deliberate simplifications: only the tools the exercises add are known (two today); a
solution that loaded but fails is left to the server's own message and `ui.revisar`.
"""

from __future__ import annotations

from pathlib import Path

# tool -> (exercise, its notebook, its section)
EXERCISE_TOOLS = {"notes_archive": ("ejercicio2", "02_formularios", "«6. Ejercicio 2»"),
                  "notes_backup": ("ejercicio3b", "03_modo_url", "«6. Ejercicio 3B»")}


def missing_exercise_hint(tool: str, error: dict | None, solution: Path | None) -> str | None:
    """The hint for a call to an exercise's tool that the server does not know, else None."""
    if tool not in EXERCISE_TOOLS or not error or "Unknown tool" not in str(error.get("message")):
        return None
    exercise, notebook, section = EXERCISE_TOOLS[tool]
    number = exercise.removeprefix("ejercicio").upper()
    if solution is None:
        problem = "este servidor se arrancó sin ninguna solución (falta solution=\"soluciones/\")"
    else:
        file = solution / f"{exercise}.py" if solution.is_dir() else solution
        problem = (f"no existe {file.parent.name}/{file.name}" if not file.is_file() else
                   f"{file.parent.name}/{file.name} no registra ninguna herramienta {tool}")
    return (f"💡 {tool} es la herramienta que escribes tú en el ejercicio {number} (cuaderno "
            f"{notebook}, apartado {section}), y {problem}. Haz antes ese ejercicio: ejecuta su "
            f"celda %%writefile y vuelve aquí a ejecutar esta celda.")
