"""Shared paths and readers for the notebook tests (imported as `notebook_helpers`)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat

from course_notebooks import notebook_text

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
GRADED = {"ejercicio2": "02_formularios.ipynb", "ejercicio3a": "03_modo_url.ipynb",
          "ejercicio3b": "03_modo_url.ipynb", "ejercicio4": "01_roots.ipynb"}
CHALLENGE = {"reto": "06_revision_2026.ipynb"}  # optional, graded apart from the exercises
# optional parts of a graded exercise: graded apart, written on that exercise's starter
OPTIONAL_PARTS = {"ejercicio3b_2026": ("06_revision_2026.ipynb", "ejercicio3b")}
WRITEFILE = re.compile(r"^%%writefile soluciones/(ejercicio(?:[24]|3[ab])|reto)\.py\s*$")


def read(name: str) -> nbformat.NotebookNode:
    """A lesson notebook as the course has it (in the student edition, its last commit, not a
    learner's workspace: tests/course_notebooks.py)."""
    return nbformat.reads(notebook_text(name), as_version=4)


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


def lab_run(body):
    """Run `await body(lab)` on a fresh practice lab (mcp_ui.NotesLab); closed afterwards."""
    async def go():
        lab = import_mcp_ui().NotesLab(quiet=True)
        try:
            return await body(lab)
        finally:
            lab.close()
    return asyncio.run(go())


def against_both(attack, sealer, **config):
    """(notebook 06's `attack` Outcome on a 2026-07-28 server using `sealer`, the same attack's
    on a server using its own sealer); `config` goes to both lab.connect calls."""
    async def body(lab):
        broken = await lab.connect("2026-07-28", sealer=sealer, quiet=True, **config)
        server = await lab.connect("2026-07-28", quiet=True, **config)
        return await attack(broken), await attack(server)
    return lab_run(body)


# -- the clock: each notebook's stated times, and the rule that computes them -----------------
CORE = NOTEBOOKS[:3]
# title number, notebook number, kind, class (core) or reading (deep dive) minutes, lab
# exercises (or «reto (opcional)», notebook 06's optional challenge), lab minutes
HEADER = re.compile(r"^# (\d) · .+?\n\n\*.*?cuaderno (\d) de 8\s+·\s+\*\*(núcleo|para profundizar)"
                    r"\*\*\s+·\s+(?:clase|lectura): unos (\d+) minutos(?:\s+·\s+laboratorio:\s+"
                    r"((?:ejercicios? [\dAB, y]+?(?: \(parte opcional\))?(?: y )?)?"
                    r"(?:reto \(opcional\))?), unos (\d+) minutos)?\*",
                    re.S | re.I)


def header(name: str) -> re.Match:
    """The first cell's title line and times (HEADER's groups)."""
    first = read(name).cells[0]
    assert first.cell_type == "markdown", name
    match = HEADER.match(first.source)
    assert match, f"{name}: the first cell must say title, number, kind and times"
    return match


def _clock_tool():
    """tools/clock.py, the one place the rule lives (registered under its own name: its
    dataclasses need their module in sys.modules, and `clock` alone could shadow another)."""
    spec = importlib.util.spec_from_file_location("lesson_clock", REPO / "tools" / "clock.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CLOCK = _clock_tool()


close_enough = CLOCK.close_enough  # a stated time is honest within 10 % of the rule's
