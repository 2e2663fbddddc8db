"""Make the course importable in JupyterLite (Pyodide); never used on CPython.

`editions/lite/build.py` packs this module, as ``course_lite/__init__.py``, into a wheel
together with every non-notebook file of the site's content folder (``code/``, the lessons' UI
module, ...), and puts that wheel in the site's own package index. A notebook's first cell then
does::

    import sys
    if sys.platform == "emscripten":  # only in JupyterLite; does nothing on CPython
        import piplite
        await piplite.install(["ipywidgets", "course-lite"])
        import course_lite
        course_lite.setup()

Two cases:

- Usual: the browser's storage is mounted at ``/drive`` (JupyterLite does that when its
  service worker runs, which needs https or localhost/127.0.0.1) and the kernel starts in the
  notebook's folder. The course root is the nearest folder at or above it holding ``code/``;
  files the notebook writes (``soluciones/``) persist in the browser and show in the file
  browser.
- No ``/drive`` (service workers blocked: a private window, or the site served over plain http
  from an address other than localhost): the packed files are copied to ``MEMORY_ROOT`` and
  the kernel moves to its ``lessons/`` folder, so the same relative paths work. What the
  notebook writes there is lost when the page is reloaded.

Either way the course is imported from its packed copy in memory (``FILES``: its ``code/`` and
``lessons/`` go to the front of ``sys.path``, and the notebook's own folder, IPython's ``''``
entry, leaves it): in ``/drive`` every lookup of every import is a request to the service
worker, which made importing the lessons' modules take seconds. MCP_UI_LESSONS tells
``mcp_ui`` where the notebooks and ``soluciones/`` are (that root's ``lessons/``). Then
``mcp_ui.cells.install()`` makes the cells that await run as tasks from the next cell on: in
JupyterLite a cell that awaits never gets a click (see lessons/mcp_ui/cells.py).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

FILES = Path(__file__).resolve().parent / "files"
MEMORY_ROOT = Path("/home/pyodide/curso")
NOTEBOOK_FOLDER = "lessons"
PATH_FOLDERS = ("code", "lessons")
PINS_FILE = "piplite-wheels.txt"
SDK_PINS_FILES = ("sdk-wheels.txt", "sdk-wasm-wheels.txt")
SHIM_DIST = "course-lite-shims"


def pins() -> str:
    """The pins of the wheels this site serves (editions/lite/piplite-wheels.txt, packed
    into this wheel by the build): what `ui.diagnostico()` compares with."""
    return (Path(__file__).resolve().parent / PINS_FILE).read_text(encoding="utf-8")


def sdk_requirements() -> list[str]:
    """What `ui.install_sdk()` installs, without dependencies, from the site's own index: the
    pinned wheels of the official MCP SDK (editions/lite/sdk-wheels.txt and
    sdk-wasm-wheels.txt, packed here by the build) and the stand-ins of editions/lite/shims/."""
    found = []
    for name in SDK_PINS_FILES:
        text = (Path(__file__).resolve().parent / name).read_text(encoding="utf-8")
        found += [line.split()[0] for line in text.splitlines()
                  if line.strip() and not line.startswith("#")]
    return [*found, SHIM_DIST]


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds the course's ``code/``."""
    for folder in (start, *start.parents):
        if (folder / "code").is_dir() and (folder / NOTEBOOK_FOLDER).is_dir():
            return folder
    return None


def setup() -> Path:
    """Import the course from its packed copy, run awaiting cells as tasks; return the root
    (where the notebooks are)."""
    root = find_root(Path.cwd())
    if root is None:
        root = MEMORY_ROOT
        if not root.exists():
            shutil.copytree(FILES, root)
        os.chdir(root / NOTEBOOK_FOLDER)
    os.environ["MCP_UI_LESSONS"] = str(root / NOTEBOOK_FOLDER)
    for entry in ("", os.getcwd()):
        while entry in sys.path:
            sys.path.remove(entry)
    for name in reversed(PATH_FOLDERS):
        folder = str(FILES / name)
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)
    run_cells_as_tasks()
    return root


def run_cells_as_tasks() -> None:
    """From the next cell on, a cell that awaits runs as a task (lessons/mcp_ui/cells.py)."""
    from mcp_ui import cells

    cells.install()
