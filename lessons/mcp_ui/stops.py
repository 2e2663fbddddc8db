"""A cell that stops with one Spanish line, not with a traceback of this package's insides.

IPython draws an exception that has `_render_traceback_()` as the lines that method returns,
instead of its traceback (JupyterLab's kernel does, as any IPython shell; cells.py, the cell
runner of JupyterLite, does the same). Two stops use it:

- `LabClosed`: a NotesLab used after `lab.close()`; the line says how to open a new one;
- `CellStopped`: the cancellation of a cell stopped (■ in JupyterLab, «⏹ Detener» in
  JupyterLite) while a call waited, raised afresh from the cell's own cancellation: it is an
  `asyncio.CancelledError`, so the cell still ends cancelled, as ■ ends it anywhere else.

Deliberate simplifications: the line is the exception's text; nothing else of it is shown.
"""

from __future__ import annotations

import asyncio


class OneLine:
    """An exception IPython shows as its own text, in one line."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


class LabClosed(OneLine, Exception):
    """A NotesLab was used after `lab.close()`."""


class CellStopped(OneLine, asyncio.CancelledError):
    """The cell was stopped while a lab call waited (for a form, a page...)."""
