"""The lab's connection: the notes server running in this kernel and the lesson's client.

`LabClient` builds a `server.NotesServer` (with the demo URL guard and, if asked, a learner's
solution loaded by `extension.load`, or a requestState sealer the notebook hands it) and an
`async_client.AsyncClient.local` on the kernel's event loop: no process, no thread of ours, the
same single-threaded core as `main.py serve`. The frames still cross as JSON lines and are kept
for the transcripts. `call` shows each question in the call's panel (users.py) and prints the
result, the server's warnings (⚠ servidor, in Spanish: server_log.py) and what the solution
printed (│), each under the call or request that caused it. A page of the solution that fails
(its route raised, in a browser tab or in the notebook's simulated browser) is shown at once,
with its exception and line, in the panel of the call that waits on it.

`await conn.call(...)` waits for the call to end, clicks included. In JupyterLite, where a cell
that awaits cannot get a click, the cell itself runs as a task (cells.py), so the call still
waits for the answer and what the cell prints after it reflects the answer. Stopping a cell
(■ in JupyterLab, at once: interrupt.py; «⏹ Detener» in JupyterLite) cancels the call on the
wire (AsyncClient sends notifications/cancelled); a question the server withdraws closes.
`cancel_after` plays a client that stops waiting (an SDK's request timeout): the same
cancellation, said as such, and the call returns once the server has withdrawn its question.
After `lab.close()` a call says the connection is closed and how to start again.

Deliberate simplifications: one call at a time per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
from pathlib import Path

import extension
from client.async_client import AsyncClient
from server import NotesServer
from shared import wire
from shared.protocol import SOLUTION_META_KEY, STATELESS_VERSION

from . import checks, server_log
from .env import LESSONS, scripted_mode
from .hub import HubAccess
from .interrupt import waking_on_interrupt
from .pages import PAGES
from .prereqs import missing_exercise_hint
from .records import CallRecord, Recorded, ToolResult
from .stops import CellStopped
from .text import esc, short_json
from .transcript import summarize_frame
from .users import CallPanel, WidgetUser

ENDED = "La llamada terminó sin esta respuesta; el formulario se cerró."
GAVE_UP = "El cliente dejó de esperar: pasó su tiempo máximo por petición."  # on the wire too
STOPPED_CELL = ("⏹ Detuviste la celda: el cliente canceló la llamada (notifications/cancelled) y "
                "el servidor la descarta.")
CLOSED = ("✗ Esta conexión está cerrada: ejecutaste lab.close(), que para los servidores y "
          "borra la carpeta de práctica. Vuelve a ejecutar la celda de ui.NotesLab() y la de "
          "lab.connect(...).")


class LabClient(Recorded):
    """One NotesServer in this kernel and the lesson's AsyncClient talking to it."""

    def __init__(self, lab, config, protocol, roots, elicitation_caps, solution=None,
                 argv=(), sealer=None):
        self.lab, self.config, self.protocol = lab, config, protocol
        self.solution = solution  # a path, or None
        self.sealer = sealer      # a requestState sealer given by the notebook, or None
        self.argv = list(argv)    # the `main.py serve` command this server stands for
        self.frames: list[tuple[str, dict]] = []
        self.log: list[str] = []
        self.calls: list[CallRecord] = []
        self.user = WidgetUser(fetch=PAGES.fetch, pages="inline"
                               if config.page_transport == "inline" else "link")
        self.user.wait_after_open = protocol == STATELESS_VERSION
        self.solution_info: dict | None = None
        self.server = self.client = None
        self._roots, self._elicitation = roots, elicitation_caps
        self._task: asyncio.Task | None = None   # the call in progress
        self._loop: asyncio.AbstractEventLoop | None = None  # the kernel's, once started
        self._after_cancel: set = set()           # _server_side_of_the_cancel tasks
        self.closed = False                       # lab.close() stopped it
        self._asked_before = 0                    # len(user.history) when it started
        self._shown_before = 0                    # len(user.shown) when it started
        self._log_shown = 0

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        solution = None if self.solution is None else self._load(self.solution)
        if self.sealer is not None:  # installed as a solution's @extension.request_state is
            solution = solution or extension.Extension()
            solution.request_state(self.sealer)
        self._loop = asyncio.get_running_loop()
        self.server = NotesServer(self.config, solution, log=self._logged)
        if self.config.page_transport == "http":  # JupyterLab: this driver serves a real page
            hub_url = getattr(self.lab.kernel, "hub_url", "")  # a JupyterHub: through its proxy
            self.server.serve_page_http(HubAccess(hub_url).exposure() if hub_url else None)
        PAGES.add(self.server)
        self.client = AsyncClient.local(
            self.server, loop=asyncio.get_running_loop(), roots=self._roots,
            elicitation=self._elicitation, protocol=self.protocol, user=self.user,
            on_frame=self._on_frame)
        self.client.on_notification = self._on_notification
        await self.client.connect()
        for direction, msg in self.frames:  # the initialize / server/discover answer
            result = msg.get("result")
            if direction == "←" and isinstance(result, dict) and (
                    "protocolVersion" in result or "supportedVersions" in result):
                self.solution_info = (result.get("_meta") or {}).get(SOLUTION_META_KEY)
                break

    def _load(self, path: Path):
        """The learner's solution, loaded here; what its code prints is shown as │ lines."""
        with self._captured():
            solution = extension.load(str(path))
        for tool in solution.tools:
            tool.handler = self._printing(tool.handler)
        for hook in ("url_guard", "roots_reaction"):
            if getattr(solution, hook) is not None:
                setattr(solution, hook, self._printing(getattr(solution, hook)))
        return solution

    def _logged(self, line: str) -> None:
        """The server's log (from any thread: a page runs on the HTTP server's); a page route
        that raised is shown at once (`_page_failed`), not only under the next call."""
        self.log.append(line)
        if line.startswith("page route ") and self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self._page_failed)
            except RuntimeError:  # the kernel's loop is closed: the kernel is ending
                pass

    def _page_failed(self) -> None:
        """The log lines not shown yet, in the panel of the call that waits on the page (the
        last one, if none waits now), when that panel is already on screen (a panel displayed
        from here, outside its cell's run, could land under another cell); otherwise the next
        call or request shows them."""
        panel = self.user.panel
        if not self.closed and panel.visible and panel.shown:
            self._show_log(panel)

    def _printing(self, function):
        @functools.wraps(function)
        def run(*args, **kwargs):
            with self._captured():
                return function(*args, **kwargs)
        return run

    @contextlib.contextmanager
    def _captured(self):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                yield
        finally:
            for line in out.getvalue().splitlines():
                self._show(f"  │ {self.lab.hide(line)}")

    def close(self) -> None:
        self.closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self.client is not None:
            self.client.close()
        if self.server is not None:
            self.server.close()
            PAGES.remove(self.server)

    def describe(self, full: bool = True) -> None:
        """What was started; a solution file that did not load is reported even when quiet."""
        info = self.solution_info
        if full:
            shown = " ".join(_relative(self.lab.hide(a)) for a in self.argv[2:])
            caps = json.dumps(self.client.capabilities, ensure_ascii=False,
                              separators=(",", ":"))
            print(f"Servidor: en este kernel, como `python code/main.py {shown}`")
            print(f"Cliente: protocolo {self.protocol}, capacidades {caps}")
            if info is not None:
                loaded = ", ".join(info.get("files") or []) or "ningún archivo"
                extra = info.get("tools", []) + info.get("hooks", [])
                print(f"Solución cargada: {loaded}" + (f" → {', '.join(extra)}" if extra else ""))
        for file, problem in ((info or {}).get("errors") or {}).items():
            print(f"⚠ No se cargó {file}: {self.lab.hide(problem)}")

    # -- calling tools -----------------------------------------------------------------------
    @property
    def last(self) -> CallRecord:
        return self.calls[-1]

    async def call(self, tool: str, arguments: dict | None = None, *, scripted=(),
                   simulate: bool = False, browser: str = "allow", echo: bool = True,
                   cancel_after: float | None = None) -> ToolResult:
        """Call a tool; forms appear below and the call waits for your answer.

        scripted: the answers (ElicitResult dicts, `Raw(...)`, or `NoAnswer()` to leave the
        form open) a simulated user gives, in order; used only with LESSON_USER=scripted or
        simulate=True. browser: what the simulated browser does on the setup page ("allow",
        "deny", or "later": it never opens it). cancel_after: this client gives up after that
        many seconds, like an SDK's request timeout, and cancels the call on the wire.
        """
        arguments = dict(arguments or {})
        if self.closed:
            print(CLOSED)
            return ToolResult({}, {"code": None, "message": CLOSED})
        panel = CallPanel(visible=echo)
        if echo:
            print(f"» {tool} {self.lab.hide(short_json(arguments, 200))}")
        self.user.begin(panel, list(scripted) if (simulate or scripted_mode()) else None,
                        browser)
        record = CallRecord(tool, arguments, self.lab.snapshot(), frames=(len(self.frames), 0),
                            panel=panel)
        self.calls.append(record)
        self._asked_before = len(self.user.history)
        self._shown_before = len(self.user.shown)
        loop = asyncio.get_running_loop()
        self._task = task = loop.create_task(self._run(record, echo))
        with waking_on_interrupt(loop):  # ■ stops the call at once, not at the next click
            if cancel_after is None:
                try:
                    return await task  # stopping the cell cancels the task, and so the call
                except asyncio.CancelledError:
                    stop = self._cell_stop()
                    if stop is not None:
                        raise stop from None  # one short trace, as ■ gives anywhere else
                    print(CLOSED)  # the cell goes on: lab.close() ended the call
                    return ToolResult({}, {"code": None, "message": CLOSED})
            timer = loop.call_later(cancel_after, task.cancel, GAVE_UP)
            task.add_done_callback(lambda _: timer.cancel())
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                stop = self._cell_stop()
                if stop is not None:  # the cell itself was stopped: the call goes too
                    task.cancel()
                    raise stop from None
        await self._server_side_of_the_cancel(record)  # its retraction, in the transcript
        if echo:
            print(f"« ⏹ El cliente dejó de esperar a los {cancel_after:g} s y canceló la "
                  "llamada: el servidor no hará nada más con ella.")
            self._show_log()
        return ToolResult({}, {"code": None, "message": "cancelada por el cliente"})

    @staticmethod
    def _cell_stop() -> asyncio.CancelledError | None:
        """What to raise when the call was cancelled under the cell: None if the cell is not
        being stopped (lab.close() ended the call); else the cell's cancellation, raised
        afresh as a stops.CellStopped, which IPython shows as its one Spanish line (not a
        trace through the client's insides)."""
        cell = asyncio.current_task()
        if cell is None or not cell.cancelling():
            return None
        return CellStopped(STOPPED_CELL)

    async def _run(self, record: CallRecord, echo: bool) -> ToolResult:
        try:
            raw = await self.client.call_tool(record.tool, record.arguments)
            result = ToolResult(raw)
        except wire.RpcError as exc:
            result = ToolResult({}, {"code": exc.code, "message": exc.message,
                                     "data": exc.data})
        except asyncio.CancelledError as exc:
            gave_up = exc.args[:1] == (GAVE_UP,)
            who = "El cliente dejó de esperar" if gave_up else "Detuviste la celda"
            how = " y canceló" if gave_up else ": el cliente canceló"
            record.panel.note(f"⏹ {who}{how} la llamada con <code>notifications/cancelled"
                              "</code> (con su id); el servidor la descarta sin hacer nada.",
                              "#8a6d00")
            self.user.end(f"{who}: el formulario se cerró sin enviar nada.", answer=False)
            record.stopped = "client" if gave_up else "cell"
            self._finish(record, None)
            if not gave_up:  # call() is gone with the cell: the server's side shows later
                task = asyncio.get_running_loop().create_task(
                    self._server_side_of_the_cancel(record, show_log=True))
                self._after_cancel.add(task)
                task.add_done_callback(self._after_cancel.discard)
            raise
        except BaseException:
            self.user.end(ENDED)
            raise
        self.user.end(ENDED)
        self._finish(record, result)
        if echo:
            self._show(f"« {'✗' if result.is_error else '✓'} {self.lab.hide(result.text)}")
            hint = missing_exercise_hint(record.tool, result.error, self.solution)
            if hint:
                self._show(hint)
            self._show_log()
        return result

    async def _server_side_of_the_cancel(self, record: CallRecord,
                                         show_log: bool = False) -> None:
        """Once the server has read a cancellation: its retraction of the question it had
        asked (the form closes with it) joins the call's frames, and (for a stopped cell,
        whose output is gone) its log goes into the call's panel."""
        for _ in range(3):  # the loopback: our notification in, the server's retraction out
            await asyncio.sleep(0)
        await self.user.settled()  # withdrawn, or given up after users.WITHDRAW_GRACE
        record.frames = (record.frames[0], len(self.frames))
        if show_log:
            self._show_log(record.panel)

    def _finish(self, record: CallRecord, result: ToolResult | None) -> None:
        record.after = self.lab.snapshot()
        record.questions = self.user.history[self._asked_before:]
        record.shown = self.user.shown[self._shown_before:]
        record.result = result
        record.frames = (record.frames[0], len(self.frames))

    def _show(self, line: str, panel: CallPanel | None = None) -> None:
        """A line of the call's output: printed, or into `panel` (after a cancellation)."""
        if panel is not None:
            panel.note(f"<pre style='margin:0'>{esc(line)}</pre>")
        else:
            print(line)

    def _show_log(self, panel: CallPanel | None = None) -> None:
        """The server's log lines not shown yet (a crashed tool, a hook that failed...), in
        Spanish (server_log.py)."""
        lines, self._log_shown = self.log[self._log_shown:], len(self.log)
        for line in lines:
            said = server_log.spanish(line) if line.strip() else None
            if said:
                self._show(f"  ⚠ servidor: {self.lab.hide(said)}", panel)

    async def set_roots(self, roots) -> None:
        """The user changes what they share; at 2025-11-25 the server is told and re-asks."""
        shared = [r if r.startswith("file:") else self.lab.path(r) for r in roots]
        start = len(self.frames)
        await self.client.set_roots(shared)
        await asyncio.sleep(0)  # the server takes in the answer (queued before us)
        print("Roots ahora: " + ", ".join(roots))
        for line in self.transcript_lines(start=start):
            print(line)
        self._show_log()

    async def read_handles(self) -> None:
        """Try notes_read on every handle this client opened; print what still works."""
        await checks.read_handles(self)

    async def request(self, method: str, params: dict | None = None) -> dict:
        """One raw JSON-RPC request (no input_required loop); prints the answer's gist and
        what the server logged about it."""
        if self.closed:
            print(CLOSED)
            return {"error": {"code": None, "message": CLOSED}}
        start = len(self.frames)
        try:
            result = await self.client.request(method, params or {})
        except wire.RpcError as exc:
            result = {"error": {"code": exc.code, "message": exc.message, "data": exc.data}}
        answer = [summarize_frame(d, m, hide=self.lab.hide) for d, m in self.frames[start:]
                  if d == "←"]
        print(self.lab.hide(answer[-1] if answer else short_json(result)))
        self._show_log()  # under this request, not under the next call
        return result

    # -- what crossed ------------------------------------------------------------------------
    def _on_frame(self, direction: str, msg: dict) -> None:
        self.frames.append((direction, msg))
        result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
        if direction == "←" and result.get("resultType") == "input_required" and self._busy():
            asked = ", ".join(f"{k} ({v.get('method')})"
                              for k, v in (result.get("inputRequests") or {}).items())
            self.last.panel.note(f"↩ input_required: el servidor pide {esc(asked)}; el "
                                 "cliente responderá y repetirá la llamada con el "
                                 "requestState firmado.", "#555")

    def _on_notification(self, note: dict) -> None:
        params = note.get("params") or {}
        if note["method"] == "notifications/cancelled":
            self.user.withdraw(params.get("requestId"), params.get("reason"))
        elif note["method"] == "notifications/elicitation/complete" and self._busy():
            eid = str(params.get("elicitationId", ""))
            self.last.panel.note(
                "📨 Llegó <code>notifications/elicitation/complete</code> (elicitationId "
                f"<code>{esc(eid[:10])}…</code>): la página confirmó el resultado al "
                "servidor.", "#1e6b30")

    def _busy(self) -> bool:
        return self._task is not None and not self._task.done()


def _relative(arg: str) -> str:
    try:
        return str(Path(arg).relative_to(LESSONS)) + ("/" if Path(arg).is_dir() else "")
    except ValueError:
        return arg
