"""JupyterLite: a cell that waits for a person runs on as a task, and shows it all in its cell.

In JupyterLite a widget click reaches the kernel only once the running cell has ended (the page
queues the click behind the cell). A cell that awaits a form would wait for ever, and a cell
that stops waiting would show, under the call, results from before the answer. `install()`
(called by `course_lite.setup()` in every notebook's first cell there, and by the first
NotesLab when LESSON_KERNEL=lite) adds an IPython input transformer that changes how cells run:

- a cell with a top-level `await` runs as an asyncio task: the cell itself ends at once, so
  clicks get through, and the task's panel, a `CellPanel` in that cell, shows what it prints
  and displays (its forms, its result, the listing after it), in order, as it happens, and the
  value of its last expression, as a cell would;
- while such a task is unfinished, every later cell (awaiting or not) waits its turn behind it,
  as cells wait in JupyterLab's queue: its panel says which cell it waits for, and fills in
  when its turn comes. No cell shows a state from before an earlier cell finished;
- the panel's «⏹ Detener» button cancels the running cell and every cell queued behind it,
  which is what ■ (interrupt the kernel) does in JupyterLab, where the button is not shown.
  A call stopped that way is cancelled on the wire (`notifications/cancelled`);
- a failure shows its traceback in the panel (or, for an exception that renders itself as
  IPython allows, its own lines: stops.py); cells queued behind it still run, as they would if
  run one by one.

What a task prints goes to its panel through a stdout/stderr proxy and a wrapped display
publisher that look up the running cell in a context variable, so work the task spawned (a
call's question, a server's timer) writes to the same panel. The panel is a VBox with the
class `mcp-cell`; it gets `mcp-cell-done` when the cell has finished (tests wait for that).

Deliberate simplifications: cells are told apart by IPython's execution count; a queued cell
whose predecessor failed still runs; `Out[n]` and `_` are not set by a cell run as a task;
`clear_output` inside a task is not supported.
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
import inspect
import linecache
import sys
import traceback
from collections import deque

import ipywidgets as w
from IPython import get_ipython
from IPython.display import display

from .focus import keep_selection
from .text import esc

_running: contextvars.ContextVar[CellPanel | None] = contextvars.ContextVar(
    "mcp_ui_cell", default=None)
_queue: list[tuple[asyncio.Task, int]] = []  # unfinished cells (task, number), in order
_installed = False
recent: deque[CellPanel] = deque(maxlen=20)  # the last panels made (tests read them)
ENTRY = "__import__('mcp_ui.cells', fromlist=['run']).run"


def installed() -> bool:
    return _installed


def install(shell=None) -> bool:
    """Run awaiting cells as tasks from the next cell on (idempotent); False without IPython."""
    global _installed
    shell = shell or get_ipython()
    if shell is None:
        return False
    if transform not in shell.input_transformers_post:
        shell.input_transformers_post.append(transform)
    publisher = shell.display_pub
    if getattr(publisher.publish, "_mcp_ui", None) is None:
        publisher.publish = _publisher(publisher.publish)
    _route_streams()
    _installed = True
    return True


def uninstall(shell=None) -> None:
    """Back to ordinary cells, streams and display (tests)."""
    global _installed
    shell = shell or get_ipython()
    if shell is not None:
        if transform in shell.input_transformers_post:
            shell.input_transformers_post.remove(transform)
        original = getattr(shell.display_pub.publish, "_mcp_ui", None)
        if original is not None:
            shell.display_pub.publish = original
    for name in ("stdout", "stderr"):
        current = getattr(sys, name)
        if isinstance(current, _Stream):
            setattr(sys, name, current.fallback)
    _installed = False


def pending() -> list[tuple[asyncio.Task, int]]:
    """Cells still running or waiting their turn: (task, execution count), in order."""
    _queue[:] = [entry for entry in _queue if not entry[0].done()]
    return list(_queue)


def awaits(source: str) -> bool:
    """Does this (already transformed) cell use a top-level `await`?"""
    try:
        code = compile(source, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                       dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return bool(code.co_flags & inspect.CO_COROUTINE)


def transform(lines: list[str]) -> list[str]:
    """IPython input transformer: a cell that awaits, or that comes while another still runs,
    becomes `run(its source, its number)`. The number is read here, before the cell runs:
    IPython 9 counts the cell as run (execution_count + 1) before it executes it."""
    _route_streams()  # a kernel that replaced sys.stdout since gets the proxy back
    source = "".join(lines)
    if not _installed or not source.strip() or not (pending() or awaits(source)):
        return lines
    return [f"{ENTRY}({source!r}, {get_ipython().execution_count})\n"]


def run(source: str, number: int) -> None:
    """Start the cell (its prompt's `number`) as a task behind the unfinished ones; its panel
    goes in the cell now."""
    shell = get_ipython()
    panel = CellPanel(number)
    recent.append(panel)
    display(panel.box)
    before = pending()
    task = asyncio.get_running_loop().create_task(
        _run(source, number, panel, before[-1] if before else None, shell.user_ns))
    _queue.append((task, number))


async def _run(source, number, panel, before, namespace) -> None:
    _running.set(panel)
    try:
        if before is not None:
            task, earlier = before
            panel.status(f"⏳ Espera su turno: la celda [{earlier}] sigue en curso (¿espera "
                         "tu respuesta en un formulario?). Esta se ejecutará cuando termine.")
            await asyncio.wait({task})
        panel.status("")
        await _execute(source, number, panel, namespace)
    except asyncio.CancelledError:
        panel.status("⏹ Detuviste esta celda.", "#8a6d00")
    except BaseException as error:  # shown, like a cell's traceback
        panel.failed(error)
    finally:
        panel.finish()


async def _execute(source: str, number: int, panel: CellPanel, namespace: dict) -> None:
    filename = f"<celda {number}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.parse(source, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    outcome = eval(compile(tree, filename, "exec", flags=flags), namespace)
    if inspect.iscoroutine(outcome):
        await outcome
    if last is not None:
        value = eval(compile(last, filename, "eval", flags=flags), namespace)
        if inspect.iscoroutine(value):
            value = await value
        if value is not None:
            panel.show(value)


class CellPanel:
    """The output of a cell that runs as a task: a status line with «⏹ Detener» while it
    runs, then everything the cell printed and displayed, in order."""

    def __init__(self, number: int):
        self.number = number
        self.out = w.Output()
        self.line = w.HTML()
        self.stop = w.Button(description="⏹ Detener", tooltip="Detiene esta celda y las que "
                             "esperan detrás (lo que hace ■ en JupyterLab)",
                             layout=w.Layout(width="auto"))
        self.stop.on_click(lambda _: stop_all())
        # a plain Box (a row): tests tell an open dialog by a VBox > HBox of enabled buttons
        self.bar = w.Box([self.stop, self.line], layout=w.Layout(align_items="center"))
        self.box = w.VBox([self.bar, self.out])
        self.box.add_class("mcp-cell")
        keep_selection(self.box)

    def status(self, text: str, color: str = "#555") -> None:
        self.line.value = f"<span style='color:{color};font-size:92%'>{esc(text)}</span>" \
            if text else ""

    def write(self, name: str, text: str) -> None:
        outputs = list(self.out.outputs)
        if outputs and outputs[-1].get("output_type") == "stream" \
                and outputs[-1].get("name") == name:
            outputs[-1] = {**outputs[-1], "text": outputs[-1]["text"] + text}
        else:
            outputs.append({"output_type": "stream", "name": name, "text": text})
        self.out.outputs = tuple(outputs)

    def display(self, data: dict, metadata: dict | None = None) -> None:
        self.out.outputs = (*self.out.outputs, {"output_type": "display_data", "data": data,
                                                "metadata": metadata or {}})

    def show(self, value) -> None:
        data, metadata = get_ipython().display_formatter.format(value)
        self.display(data, metadata)

    def failed(self, error: BaseException) -> None:
        """The traceback from the cell's own code on (this module's frames left out), with
        every sub-exception of an exception group; an exception that renders itself
        (`_render_traceback_`, as IPython honours it: stops.py) shows its own lines."""
        render = getattr(error, "_render_traceback_", None)
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        lines = [f"{line}\n" for line in render()] if callable(render) \
            else traceback.format_exception(type(error), error, tb)
        self.out.outputs = (*self.out.outputs, {
            "output_type": "error", "ename": type(error).__name__, "evalue": str(error),
            "traceback": ["".join(lines)]})

    def finish(self) -> None:
        self.stop.layout.display = "none"
        self.box.add_class("mcp-cell-done")


def stop_all() -> None:
    """Cancel every cell still running or waiting its turn (JupyterLab's ■)."""
    for task, _ in pending():
        task.cancel()


# -- where a task's output goes --------------------------------------------------------------
class _Stream:
    """sys.stdout/sys.stderr: the running cell's panel inside a task, the kernel's otherwise."""

    def __init__(self, name: str, fallback):
        self.name, self.fallback = name, fallback

    def write(self, text: str) -> int:
        panel = _running.get()
        if panel is None:
            return self.fallback.write(text)
        panel.write(self.name, text)
        return len(text)

    def flush(self) -> None:
        if _running.get() is None:
            self.fallback.flush()

    def __getattr__(self, name):
        return getattr(self.fallback, name)


def _route_streams() -> None:
    for name in ("stdout", "stderr"):
        current = getattr(sys, name)
        if not isinstance(current, _Stream):
            setattr(sys, name, _Stream(name, current))


def _publisher(publish):
    def routed(data, metadata=None, *args, **kwargs):
        panel = _running.get()
        if panel is None:
            return publish(data, metadata, *args, **kwargs)
        panel.display(data, metadata)
        return None
    routed._mcp_ui = publish  # the original, for uninstall()
    return routed
