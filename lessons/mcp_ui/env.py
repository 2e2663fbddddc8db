"""Where the course lives and what this kernel can do.

Importing this module puts `code/` on `sys.path` (the notebooks then `import roots`,
`store`...): that is the package's only import-time effect. MCP_UI_LESSONS names the folder
of the notebooks when the package is imported from elsewhere (JupyterLite: see PACKAGED).
Nothing is created on disk here; `soluciones/` is made when the first NotesLab starts.

`Kernel` says what the running kernel can do:
- ipykernel (JupyterLab, CPython): a cell that awaits a click gets it, and the setup page is
  a real local web page (`Config(page_transport="http")`);
- JupyterLite (Pyodide, `sys.platform == "emscripten"`): a click reaches the kernel only after
  the running cell ends, so cells that await run as tasks (`cells.py`), and there are no
  sockets, so the setup page is drawn inside the notebook (`page_transport="inline"`);
- a JupyterHub with jupyter-server-proxy: the real page, reached through the hub (`hub_url`);
- a kernel the browser cannot reach (Colab, Codespaces, a remote server): ipykernel, with
  the page drawn inside the notebook (where.py decides, and says why).
LESSON_KERNEL=lite gives the JupyterLite behaviour on CPython (the tests use it).

Deliberate simplifications: the kernel is recognised by the platform, not by probing it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

# The course this package was imported from (its code/ and grader/ are imported from there),
# and where the notebooks and the learner's soluciones/ are. They are one folder, except in
# JupyterLite, where course_lite.setup() imports the course from its packed copy in memory (a
# lookup in the browser's storage is a request to the service worker: slow, for every import)
# and says where the notebooks are with MCP_UI_LESSONS.
PACKAGED = Path(__file__).resolve().parent.parent.parent
LESSONS = Path(os.environ.get("MCP_UI_LESSONS") or PACKAGED / "lessons").resolve()
REPO = LESSONS.parent
CODE = REPO / "code"
SOLUTIONS = LESSONS / "soluciones"
MAIN = CODE / "main.py"

if str(PACKAGED / "code") not in sys.path:  # JupyterLite's first cell put it there already
    sys.path.insert(0, str(PACKAGED / "code"))


def import_grader() -> None:
    """Make `import grader` work (from the course this package came from)."""
    if str(PACKAGED) not in sys.path:
        sys.path.append(str(PACKAGED))


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
    page_transport: str   # "http" (a real page on 127.0.0.1) or "inline" (drawn in the cell)
    hub_url: str = ""     # a JupyterHub's public URL of this server: the real page is reached
    #                       through the hub's proxy (hub.py); "" otherwise


JUPYTERLAB = Kernel(cells_as_tasks=False, page_transport="http")
JUPYTERLITE = Kernel(cells_as_tasks=True, page_transport="inline")
ELSEWHERE = Kernel(cells_as_tasks=False, page_transport="inline")  # Colab, Codespaces, ...


def current_kernel() -> Kernel:
    """What this kernel can do, from where it runs (where.py; `ui.diagnostico()` says why)."""
    from .where import HUB, INLINE, where

    place = where()
    if place.name == "JupyterLite":
        return JUPYTERLITE
    if place.page == HUB:
        return Kernel(cells_as_tasks=False, page_transport="http", hub_url=place.public_url)
    return ELSEWHERE if place.page == INLINE else JUPYTERLAB
