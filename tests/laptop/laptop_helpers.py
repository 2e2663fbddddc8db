"""Shared paths for the laptop tests: the repository, the lessons' starters, mcp_ui."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from course_notebooks import starter_files

REPO = Path(__file__).resolve().parents[2]
LESSONS = REPO / "lessons"
WRITEFILE = re.compile(r"^%%writefile soluciones/(ejercicio[234])\.py\s*$")
EXERCISES = ("ejercicio2", "ejercicio3", "ejercicio4")

for _folder in (REPO / "code", LESSONS):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


def import_mcp_ui():
    import mcp_ui

    return mcp_ui


def write_starters(folder: Path) -> Path:
    """The notebooks' starter cells (`%%writefile soluciones/ejercicioN.py`) as a learner's
    soluciones/ folder, exactly as a learner who ran them without changing them has it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in starter_files().items():
        if WRITEFILE.match(f"%%writefile soluciones/{name}"):
            (folder / name).write_text(text, encoding="utf-8")
    return folder
