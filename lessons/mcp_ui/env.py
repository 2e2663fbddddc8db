"""Where the course lives and what this kernel can do.

Importing this module puts `code/` on `sys.path` (the notebooks then `import roots`,
`store`...): that is the package's only import-time effect. Nothing is created on disk here;
`soluciones/` is made when the first NotesLab starts (see lab.py).

`Kernel` says what the running kernel can do:
- ipykernel (JupyterLab, CPython): a cell that awaits a click gets it, and the setup page is
  a real local web page (`Config(setup_page="http")`);
- JupyterLite (Pyodide, `sys.platform == "emscripten"`): a click reaches the kernel only after
  the running cell ends, so cells that await run as tasks (`cells.py`), and there are no
  sockets, so the setup page is drawn inside the notebook (`setup_page="inline"`).
LESSON_KERNEL=lite gives the JupyterLite behaviour on CPython (the tests use it).

Deliberate simplifications: the kernel is recognised by the platform, not by probing it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent
REPO = LESSONS.parent
CODE = REPO / "code"
SOLUTIONS = LESSONS / "soluciones"
MAIN = CODE / "main.py"

if str(CODE) not in sys.path:  # JupyterLite's first cell may have put it there already
    sys.path.insert(0, str(CODE))


def scripted_mode() -> bool:
    """True when an unattended run asked for the scripted user (LESSON_USER=scripted)."""
    return os.environ.get("LESSON_USER", "").strip().lower() == "scripted"


def solution_path(solution) -> Path:
    """A solution file or folder; relative paths are relative to lessons/."""
    path = Path(solution)
    return path if path.is_absolute() else (LESSONS / path).resolve()


@dataclass(frozen=True)
class Kernel:
    cells_as_tasks: bool  # awaiting cells run as tasks (cells.py): a waiting cell gets no click
    setup_page: str       # "http" (a real page on 127.0.0.1) or "inline" (drawn in the cell)


JUPYTERLAB = Kernel(cells_as_tasks=False, setup_page="http")
JUPYTERLITE = Kernel(cells_as_tasks=True, setup_page="inline")


def current_kernel() -> Kernel:
    lite = sys.platform == "emscripten" or os.environ.get("LESSON_KERNEL", "") == "lite"
    return JUPYTERLITE if lite else JUPYTERLAB
