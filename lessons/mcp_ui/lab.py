"""The lab: a private notes folder for one notebook, and the connections it opened.

    lab = NotesLab()                   # Notas/, Notas-privadas/, Trabajo/ with the lesson's notes
    conn = await lab.connect()         # a NotesServer in this kernel + the lesson's client
    lab.show("Notas"); lab.snapshot()  # what is on disk
    await lab.try_backup()             # exercise 3B: your flow, −32042 followed with clicks
    lab.close()                        # stop every server and delete the folder

Notas-privadas/ shares a prefix with Notas/ and is never shared; Trabajo/ is shared later.
The notes are `demo.LESSON_NOTES`. The first NotesLab also creates lessons/soluciones/ (the
`%%writefile soluciones/...` cells need it) and closes every lab when the kernel exits.
`sdk_target` is the server for the official SDK's `Client` (notebook 5): `stdio_server` starts
it as a process (`stdio_client`, with `server_argv`) where processes exist; in JupyterLite it
runs in this page and the SDK talks to it over memory (sdk.py).

After `close()` the lab is closed for good: connecting, showing or changing its folder stops
the cell with one line (stops.LabClosed) that says how to open a new one.

Environment: LESSON_KEEP_LAB (any value) makes `close()` keep the folder (the browser tests
inspect it on disk).

Deliberate simplifications: each connection has a server of its own (like a process each), so
what one server remembers (a configured sync) is not seen by another.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import extension
import store
from cli.demo import LESSON_NOTES, write_lesson_notes
from roots import path_to_uri
from server import MAX_SETUP_WAIT, Config, NotesServer
from shared.protocol import LATEST_HANDSHAKE

from . import cells, checks, sdk, try_flow
from .env import MAIN, REPO, SOLUTIONS, current_kernel, scripted_mode, solution_path
from .lab_client import LabClient
from .pages import PAGES
from .stops import LabClosed
from .users import CallPanel, WidgetUser

FOLDERS = ("Notas", "Notas-privadas", "Trabajo")
LAB_CLOSED = ("✗ Este laboratorio está cerrado: lab.close() paró sus servidores y borró su "
              "carpeta de práctica. Para seguir, abre uno nuevo: vuelve a ejecutar la celda de "
              "lab = ui.NotesLab() y después la de lab.connect(...).")
_LABS: list[NotesLab] = []
_closing_at_exit = False


def note_body(note_id: str) -> str:
    return f"Nota {note_id}.\n"


class NotesLab:
    def __init__(self, notes=LESSON_NOTES, quiet: bool = False, kernel=None):
        _first_use()
        self.kernel = kernel or current_kernel()  # env.Kernel: what this kernel can do
        if self.kernel.cells_as_tasks:  # JupyterLite (course_lite.setup() did it already)
            cells.install()
        self.base = Path(tempfile.mkdtemp(prefix="notas-leccion-")).resolve()
        self.clients: list[LabClient] = []
        self.closed = False  # close() was called: see _still_open
        self._sdk_log = None
        self._sdk_servers: list = []  # servers sdk_target made in this kernel (JupyterLite)
        for folder in FOLDERS:
            (self.base / folder).mkdir()
        write_lesson_notes(str(self.base), notes, body=note_body)
        _LABS.append(self)
        if not quiet:
            print(f"Carpeta de práctica: {self.base}  (en lo que sigue se muestra como …)")
            self.show()

    def _still_open(self) -> None:
        """Stop the cell with one line when the lab was closed (its folder is gone)."""
        if self.closed:
            raise LabClosed(LAB_CLOSED)

    # -- paths -----------------------------------------------------------------------------
    def path(self, *parts: str) -> str:
        return str(self.base.joinpath(*parts))

    def uri(self, *parts: str) -> str:
        return path_to_uri(self.path(*parts))

    def hide(self, text: str) -> str:
        """Replace the temporary folder by … so that printed output does not change."""
        for prefix in (str(self.base), path_to_uri(str(self.base))[len("file://"):]):
            text = text.replace(prefix, "…")
        return text

    # -- what is on disk ------------------------------------------------------------------
    def snapshot(self) -> dict:
        """{relative path: note id} of every note file under the lab, archived ones too."""
        self._still_open()
        found = {}
        for path in sorted(self.base.rglob("*.md")):
            note = store.read_note(str(path))
            found[str(path.relative_to(self.base))] = note.id if note else "?"
        return found

    def show(self, *folders: str) -> None:
        self._still_open()
        for folder in folders or FOLDERS:
            names = sorted(p.name for p in (self.base / folder).glob("*.md"))
            print(f"  📁 {folder}/: " + (", ".join(names) or "(vacía)"))
            archived = self.base / folder / store.ARCHIVE_DIR
            if archived.is_dir():
                inside = sorted(p.name for p in archived.glob("*.md"))
                print(f"     📦 {store.ARCHIVE_DIR}/: " + (", ".join(inside) or "(vacía)"))

    def add_note(self, folder: str, name: str, note_id: str, title: str, created: str) -> None:
        """Write one more note into the lab (folder relative to the lab)."""
        self._still_open()
        write_lesson_notes(str(self.base), [(folder, name, note_id, title, created)],
                           body=note_body)

    def symlink(self, link: str, target: str) -> None:
        """Create `link` (inside the lab) pointing at `target` (inside the lab)."""
        self._still_open()
        os.symlink(self.path(*target.split("/")), self.path(*link.split("/")))

    # -- the swap attack (notebook 1) ---------------------------------------------------------
    def swap_folder(self, folder: str, decoy: str = "Fuera") -> None:
        """What anyone who can write to the disk may do while a form is open: rename `folder`
        to `<folder>-movida` and put in its place a link to `decoy`, a folder outside the
        roots holding a copy of each of its notes (same names, same ids)."""
        self._still_open()
        real, outside = self.base / folder, self.base / decoy
        outside.mkdir(exist_ok=True)
        for note in sorted(real.glob("*.md")):
            shutil.copyfile(note, outside / note.name)
        real.rename(self.base / f"{folder}-movida")
        real.symlink_to(outside)

    def restore_folder(self, folder: str) -> None:
        """Undo `swap_folder`: the link goes and the real folder is back in its place."""
        (self.base / folder).unlink()
        (self.base / f"{folder}-movida").rename(self.base / folder)

    def swap_during_form(self, folder: str, then: dict, decoy: str = "Fuera"):
        """A scripted answer: while the form is open, `swap_folder(folder)`; then `then`."""
        def answer(params):
            self.swap_folder(folder, decoy)
            print(f"🕵 Con el formulario abierto, alguien renombra {folder}/ a "
                  f"{folder}-movida/ y pone en su lugar un enlace a {decoy}/, fuera de las "
                  "roots, con archivos del mismo nombre (y el mismo id).")
            return then
        return answer

    # -- servers and clients ----------------------------------------------------------------
    def server_argv(self, solution=None, sdk_version=None, server_roots=(),
                    setup_wait=None) -> list[str]:
        """`python code/main.py serve ...` for this server (the demo's URL guard; a solution's
        own url_mode_guard replaces it); options left at `server.Config`'s defaults are
        left out."""
        argv = [sys.executable, str(MAIN), "serve", "--demo-url-guard"]
        if setup_wait is not None and setup_wait != Config().setup_wait:
            argv += ["--setup-wait", f"{setup_wait:g}"]
        if solution:
            argv += ["--solution", str(solution_path(solution))]
        if sdk_version is not None:
            argv += ["--sdk-version", sdk_version]
        for name in server_roots:
            argv += ["--root", self.path(name)]
        return argv

    async def connect(self, protocol: str = LATEST_HANDSHAKE, *, roots=("Notas",),
                      elicitation=None, solution=None, sdk_version=None, server_roots=(),
                      setup_wait: float = MAX_SETUP_WAIT, quiet: bool = False,
                      report_errors: bool = True, sealer=None, **config) -> LabClient:
        """A notes server in this kernel and the lesson's client connected to it.

        roots: folder names of the lab (or file:// URIs) the client shares; None declares no
        roots capability. elicitation: None = form and url, {} = bare (form only), False =
        none. solution: a file or folder with a learner's solution (`--solution`).
        sdk_version: the simulated SDK for the URL guard ("" = unknown). setup_wait: how long
        a call waits for the setup page after consent (a person needs a moment). sealer: an
        object with seal/open that seals this server's 2026-07-28 requestState, as a solution's
        `@extension.request_state` would (notebook 6 plugs in weak_sealers.py's). Any other
        keyword is a `server.Config` field (e.g. elicit_timeout=5, state_ttl=1).
        """
        self._still_open()
        settings = Config(roots=[self.path(name) for name in server_roots],
                          demo_url_guard=True, setup_wait=setup_wait,
                          page_transport=self.kernel.page_transport, **config)
        if sdk_version is not None:
            settings.sdk_version = sdk_version or None
        shared = None if roots is None else [r if r.startswith("file:") else self.path(r)
                                              for r in roots]
        conn = LabClient(self, settings, protocol, shared, elicitation,
                         solution=None if solution is None else solution_path(solution),
                         argv=self.server_argv(solution, sdk_version, server_roots, setup_wait),
                         sealer=sealer)
        self.clients.append(conn)
        await conn.start()
        if report_errors:
            conn.describe(full=not quiet)
        return conn

    def stdio_server(self, solution=None, sdk_version=None, server_roots=()):
        """The same server as a process, started by the official SDK (`stdio_client`).

        The server's log goes to a file in the lab: inside a kernel, sys.stderr is not a real
        file and cannot be handed to a child process.
        """
        self._still_open()
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        argv = self.server_argv(solution, sdk_version, server_roots)
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))
        if self._sdk_log is None:
            self._sdk_log = open(self.base / "servidor-sdk.log", "a", encoding="utf-8")
        return stdio_client(params, errlog=self._sdk_log)

    def sdk_target(self, solution=None, sdk_version=None, server_roots=()):
        """The lesson's server for the official SDK's `Client`: a process over stdio
        (`stdio_server`) where processes exist; in JupyterLite, the same server in this page,
        over memory (sdk.memory_transport: the same JSON-RPC lines, no process)."""
        self._still_open()
        if not self.kernel.cells_as_tasks:
            return self.stdio_server(solution, sdk_version, server_roots)
        config = Config(roots=[self.path(name) for name in server_roots], demo_url_guard=True,
                        page_transport=self.kernel.page_transport)
        if sdk_version is not None:
            config.sdk_version = sdk_version or None
        loaded = None if solution is None else extension.load(str(solution_path(solution)))
        server = NotesServer(config, loaded)
        PAGES.add(server)
        self._sdk_servers.append(server)
        print("En el navegador no hay procesos: el SDK habla con el servidor de la lección en "
              "esta misma página, en memoria, con los mismos mensajes JSON-RPC que por stdio.")
        return sdk.memory_transport(server)

    def sdk_roots(self, roots=("Notas",)):
        """A `list_roots_callback` for the official SDK's Client sharing these folders."""
        import mcp.types as types

        async def list_roots(context):
            return types.ListRootsResult(roots=[
                types.Root(uri=self.uri(name), name=name) for name in roots])
        return list_roots

    def user(self, scripted=(), simulate: bool = False) -> WidgetUser:
        """A WidgetUser for the official SDK's Client; its forms appear in the running cell."""
        user = WidgetUser(CallPanel(), fetch=PAGES.fetch)
        if simulate or scripted_mode():
            user.begin(user.panel, list(scripted))
        return user

    # -- exercise helpers --------------------------------------------------------------------
    async def guard_table(self, solution=SOLUTIONS / "ejercicio3a.py",
                          cases=checks.GUARD_CASES) -> None:
        await checks.guard_table(self, solution, cases)

    async def try_backup(self, protocol: str = LATEST_HANDSHAKE,
                         solution=SOLUTIONS / "ejercicio3b.py",
                         scripted=({"action": "accept"},), browser: str = "allow"):
        """Exercise 3B with your clicks: a server with your `ejercicio3b.py` alone (the
        course's guard decides, as when 3B is graded) and a client of `protocol` that calls
        notes_backup, following its −32042 at 2025-11-25 (try_flow.py); returns the last
        result."""
        conn = await self.connect(protocol, solution=solution, quiet=True)
        return await try_flow.call_following_url(conn, "notes_backup", scripted=scripted,
                                                 browser=browser)

    def check_chosen_note_deleted(self, conn: LabClient) -> None:
        checks.check_chosen_note_deleted(conn)

    def check_url_flow(self, conn: LabClient) -> None:
        checks.check_url_flow(conn)

    guard_table.__doc__ = checks.guard_table.__doc__
    check_chosen_note_deleted.__doc__ = checks.check_chosen_note_deleted.__doc__
    check_url_flow.__doc__ = checks.check_url_flow.__doc__

    def close(self) -> None:
        """Stop every server this lab started and delete its folder (kept with
        LESSON_KEEP_LAB). The lab stays closed: using it again says so."""
        self.closed = True
        for conn in self.clients:
            conn.close()
        self.clients.clear()
        for server in self._sdk_servers:
            server.close()
            PAGES.remove(server)
        self._sdk_servers.clear()
        if self._sdk_log is not None:
            self._sdk_log.close()
            self._sdk_log = None
        if os.environ.get("LESSON_KEEP_LAB"):
            print(f"Servidores detenidos; la carpeta se conserva (LESSON_KEEP_LAB): {self.base}")
        else:
            shutil.rmtree(self.base, ignore_errors=True)
        if self in _LABS:
            _LABS.remove(self)


def _first_use() -> None:
    """What the package does not do on import: the solutions folder (%%writefile does not
    create folders) and closing every lab when the kernel exits."""
    global _closing_at_exit
    SOLUTIONS.mkdir(exist_ok=True)
    if not _closing_at_exit:
        atexit.register(_close_all_labs)
        _closing_at_exit = True


def _close_all_labs() -> None:
    for lab in list(_LABS):
        lab.close()
