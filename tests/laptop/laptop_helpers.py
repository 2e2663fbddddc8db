"""Shared paths for the laptop tests: the repository, the lessons' starters, mcp_ui."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LESSONS = REPO / "lessons"
WRITEFILE = re.compile(r"^%%writefile soluciones/(ejercicio(?:[24]|3[ab]))\.py\s*$")
EXERCISES = ("ejercicio2", "ejercicio3a", "ejercicio3b", "ejercicio4")

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
    for notebook in sorted(LESSONS.glob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            first, _, body = source.partition("\n")
            match = WRITEFILE.match(first) if cell["cell_type"] == "code" else None
            if match:
                (folder / f"{match[1]}.py").write_text(body + "\n", encoding="utf-8")
    return folder
