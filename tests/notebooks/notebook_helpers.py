"""Shared paths and readers for the notebook tests (imported as `notebook_helpers`)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
LESSONS = REPO / "lessons"
CHECK_TAG = "nbval-check-output"
CHECKED_OUTPUTS = REPO / "tests" / "notebooks" / "checked_outputs.json"  # what nbval compares
NOTEBOOKS = (
    "01_roots.ipynb",
    "02_formularios.ipynb",
    "03_modo_url.ipynb",
    "04_seguridad.ipynb",
    "05_sdk_oficial.ipynb",
    "06_revision_2026.ipynb",
    "07_terminos_clave.ipynb",
    "08_lecturas.ipynb",
)
# Where each graded exercise lives: its starter cell and its revisar() cell.
GRADED = {"ejercicio2": "02_formularios.ipynb", "ejercicio3": "03_modo_url.ipynb",
          "ejercicio4": "01_roots.ipynb"}
WRITEFILE = re.compile(r"^%%writefile soluciones/(ejercicio[234])\.py\s*$")


def read(name: str) -> nbformat.NotebookNode:
    return nbformat.read(LESSONS / name, as_version=4)


def with_checked_outputs(name: str) -> nbformat.NotebookNode:
    """The notebook with the outputs nbval compares put back into its checked cells (the
    stored notebook has none: tools/strip_outputs.py)."""
    nb = read(name)
    expected = json.loads(CHECKED_OUTPUTS.read_text(encoding="utf-8")).get(name, {})
    for cell in nb.cells:
        if cell.get("id") in expected:
            cell.outputs = nbformat.from_dict(expected[cell.id]["outputs"])
            cell.execution_count = expected[cell.id]["execution_count"]
    return nb


def code_cells(name: str) -> list:
    return [c for c in read(name).cells if c.cell_type == "code"]


# A kernel in lessons/ finds mcp_ui there, and mcp_ui puts code/ on the path; the tests import
# code/'s modules (client, demo...) directly too.
for _folder in (REPO / "code", LESSONS):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


def import_mcp_ui():
    """The notebooks' UI package, imported the way a kernel in lessons/ imports it."""
    import mcp_ui

    return mcp_ui
