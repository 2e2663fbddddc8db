"""The notes server: its configuration, its tools, and the hooks a solution may bring.

`NotesServer` is shared by every connection (the demo opens several, `serve` one). It holds
the configuration, the tool registry (the lesson's tools from tools.py and whatever a
learner's solution adds), the URL flow records of Notas Sync, the simulated OAuth provider of
exercise 3 (`provider`: nube_copias.Provider, or with `Config.provider == "rpc"` a
RemoteProvider that a driver attaches to someone else's), the page routes a solution adds,
and the two hooks of the exercises:

- the URL-mode guard (exercise 3): may the server send a URL-mode elicitation, given the SDK
  it runs on, the negotiated protocol and what the client declared? Without a guard the
  answer is always no; `--demo-url-guard` installs the demo's fixed one (url_mode.demo_guard).
- the reaction to a roots change (exercise 4): which open handles stop working. Without a
  reaction the server revokes every open handle on any change, which is safe but coarse.
- the requestState sealer (the challenge of notebook 6): how a 2026-07-28 state is sealed and
  verified (request_state.py). Without one the server uses its own `Sealer`, which signs but
  neither encrypts, nor binds to the user, nor stops replays. Its key is the server's
  (`ServerKey`: new at each start, or a fleet's with --state-key), never the solution's.

A roots change is applied by the session between two tool runs: the reaction sees a
`RootsChange` (old and new RootSet, the open handles) and stages revocations; the session
applies them together with the new roots, so no call sees half of each.

The server also owns the setup page of URL mode (setup_page.SetupPage, pure: no socket, no
thread): Notas Sync's `/connect`, Nube de Copias's authorization page, and the routes of a
solution (`@extension.page_route`, exercise 3). Showing it is a driver's job, never the
core's: `serve` calls `serve_page_http()` (a thread on 127.0.0.1), the notebooks in JupyterLab
too, and the in-process drivers (the browser, the loopback) leave it inline.

Deliberate simplifications: everything is in one process and in memory; one page per server.
"""

from __future__ import annotations

import os
import threading

from core.request_state import Sealer, ServerKey, States
from core.session import REACTION_FAILED  # noqa: F401  (re-exported: the graders read it)
from core.tooling import (  # noqa: F401  (re-exported for solutions)
    MissingCapability,
    Tool,
    ToolError,
    URLElicitationRequired,
    crash_text,
    error_result,
    ok,
)
from lesson import tools
from notes.handles import RootsChange  # noqa: F401  (re-exported: a reaction's argument)
from notes.roots import RootSet
from shared.protocol import SIMULATED_SDK_VERSION, SOLUTION_META_KEY, SYNC_PROVIDER  # noqa: F401
from urlflow import nube_copias, url_mode

MAX_SETUP_WAIT = 45.0  # seconds; TypeScript-SDK clients give up on a request after 60 s


class Config:
    """How a NotesServer runs: every setting, each with its default (main.py's options take
    their defaults from here)."""

    def __init__(self, roots=None, sdk_version=SIMULATED_SDK_VERSION, demo_url_guard=False,
                 elicit_timeout=600.0, roots_timeout=30.0, setup_wait=10.0, url_ttl=600.0,
                 state_ttl=600.0, state_key=None, state_sealer="solution",
                 page_transport="http", subject=None, second_user=None, provider="local"):
        self.roots = [] if roots is None else roots  # --root: the boundary for clients
        #                                      that do not declare roots
        self.sdk_version = sdk_version        # the simulated SDK version (None: unknown)
        self.demo_url_guard = demo_url_guard  # use url_mode.demo_guard when no solution
        #                                       brings a guard
        self.elicit_timeout = elicit_timeout  # how long a form may stay open
        self.roots_timeout = roots_timeout    # how long the client may take to answer roots/list
        self.setup_wait = setup_wait          # how long a call waits for the setup page (<= 45 s)
        self.url_ttl = url_ttl                # lifetime of a URL elicitation record
        self.state_ttl = state_ttl            # lifetime of a 2026-07-28 requestState
        self.state_key = state_key            # hex: a fleet's shared requestState key (None:
        #                                       a new one at every start)
        self.state_sealer = state_sealer      # who seals requestState: a solution's sealer when
        #                                       it brings one, or always the server's ("server")
        self.page_transport = page_transport  # how a driver shows the server's page(): "http"
        #                                       (127.0.0.1, the stdio driver), "inline" (no
        #                                       socket) or "rpc" (SETUP_PAGE_METHOD on the MCP
        #                                       pipe), `serve --setup-page`: setup_page.py
        self.subject = "local:" + _os_user() if subject is None else subject  # who uses it
        self.second_user = second_user        # `serve --second-user`: a second session (grader)
        self.provider = provider              # Nube de Copias: "local" (in this server) or "rpc"
        #                                       (someone else's, asked by the driver: graders)

    def configured_roots(self):
        return RootSet.from_paths(self.roots) if self.roots else None

    def limit(self, client_roots):
        """The client's roots, narrowed to the --root folders when the server has any."""
        configured = self.configured_roots()
        return client_roots.intersect(configured) if configured else client_roots


def _os_user():
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        return "anon"


RESERVED_PATHS = ("/connect", nube_copias.AUTHORIZE_PATH)  # the server's own pages

NO_REACTION_REASON = "las roots cambiaron y el servidor no sabe re-comprobar handles"


def revoke_every_handle(change):
    """The server's own reaction when no solution brings one: coarse but safe. Any roots
    change closes every open handle (re-checking them one by one is exercise 4)."""
    for handle in change.handles:
        change.revoke(handle, NO_REACTION_REASON)


# -- the server ------------------------------------------------------------------------------
def installed(sealer):
    """Which code opens the requestStates: the sealer's class and where its `open` was written
    ({"class", "file", "line"}: the file's name and the line its code starts on), for the
    report of what a solution loaded (the grader reads only reto.py's code for that `open`)."""
    try:
        kind = type(sealer)
        opener = getattr(kind, "open", None)
        code = getattr(opener, "__code__", None) or getattr(
            getattr(opener, "__func__", None), "__code__", None)
        return {"class": str(kind.__qualname__),
                "file": os.path.basename(code.co_filename) if code is not None else "",
                "line": code.co_firstlineno if code is not None else 0}
    except Exception:  # a solution's class may raise on any attribute
        return {"class": "", "file": "", "line": 0}


class NotesServer:
    def __init__(self, config=None, extension=None, log=None):
        self.config = config or Config()
        self.log = log or (lambda text: None)
        self.tools = {}
        self.url_guard = url_mode.demo_guard if self.config.demo_url_guard else None
        self.roots_reaction = revoke_every_handle
        key = ServerKey.from_hex(self.config.state_key) if self.config.state_key \
            else ServerKey.new()
        self.states = States(Sealer(), key, self.config.state_ttl)
        self.flows = url_mode.FlowStore(ttl_seconds=self.config.url_ttl)
        base = lambda: self.page().base  # noqa: E731  (where the callback is served)
        self.provider = nube_copias.RemoteProvider(base) if self.config.provider == "rpc" \
            else nube_copias.Provider(base)
        self.page_routes = {}  # path -> handler, from solutions (exercise 3)
        self.solution = None  # what a learner's solution brought, reported in initialize
        self._page = None
        self._http_page = None  # the HttpPage a driver started, if any
        self._page_lock = threading.Lock()
        tools.register(self)
        if extension is not None:
            self.install(extension)

    def add_tool(self, tool):
        if tool.name in self.tools:
            raise ValueError(f"ya existe una herramienta llamada {tool.name!r}")
        self.tools[tool.name] = tool

    def install(self, extension):
        """Add a learner's solution (see extension.py): its tools and hooks."""
        self.solution = self.solution or {"files": [], "errors": {}, "tools": [], "hooks": []}
        self.solution["files"] += extension.files
        self.solution["errors"].update(extension.errors)
        for tool in extension.tools:
            try:
                self.add_tool(tool)
                self.solution["tools"].append(tool.name)
            except ValueError as exc:
                self.solution["errors"][tool.origin] = str(exc)
        for path, handler, origin in extension.page_routes:
            if path in RESERVED_PATHS or path in self.page_routes:
                self.solution["errors"][origin] = f"la ruta {path} ya existe en el servidor"
                continue
            self.page_routes[path] = handler
            self.solution["hooks"].append(f"page_route {path}")
            if self._page is not None:
                self._page.route(path, handler)
        if extension.url_guard is not None:
            self.url_guard = extension.url_guard
            self.solution["hooks"].append("url_mode_guard")
        if extension.roots_reaction is not None:
            self.roots_reaction = extension.roots_reaction
            self.solution["hooks"].append("on_roots_changed")
        if extension.state_sealer is not None and self.config.state_sealer == "solution":
            self.states.sealer = extension.state_sealer
            self.solution["hooks"].append("request_state")
            self.solution["sealer"] = installed(extension.state_sealer)

    def capabilities(self):
        return {"tools": {"listChanged": False}}

    def allow_url_mode(self, protocol_version, client_capabilities):
        """Ask the guard; no guard, a guard that crashes or answers something odd mean no."""
        if self.url_guard is None:
            return False
        try:
            answer = self.url_guard(self.config.sdk_version, protocol_version,
                                    client_capabilities)
        except Exception as exc:
            self.log(f"url guard failed: {crash_text(exc, self.url_guard)}")
            return False
        return answer is True

    def page(self):
        """The server's pages: Notas Sync's consent page, Nube de Copias's authorization page
        and a solution's routes. Pure, created on first use; its URLs point wherever a driver
        serves it (`inline` until one does)."""
        with self._page_lock:
            if self._page is None:
                from urlflow import setup_page
                page = setup_page.SetupPage(self.flows, SYNC_PROVIDER, user=self.config.subject,
                                            oauth=self.provider,
                                            log=lambda text: self.log(text))
                if isinstance(self.provider, nube_copias.Provider):  # else: not ours to serve
                    page.route(nube_copias.AUTHORIZE_PATH, self.provider.authorize)
                for path, handler in self.page_routes.items():
                    page.route(path, handler)
                self._page = page
            return self._page

    def serve_page_http(self, exposure=None):
        """For drivers (`serve`, JupyterLab, the demo), never the core: serve the setup page on
        127.0.0.1 from a background thread, once per server; closed by `close()`. If no socket
        can be opened here, the page stays inline and the reason is logged. `exposure`: how
        browsers reach it through someone else's proxy (page_http.Exposure; a JupyterHub)."""
        page = self.page()
        with self._page_lock:
            if self._http_page is None:
                from transports import page_http
                try:
                    self._http_page = page_http.serve_http(page, log=self.log,
                                                           exposure=exposure)
                except OSError as exc:
                    self.log(f"setup page: no HTTP here ({exc}); it stays inline")
            return self._http_page

    def close(self):
        with self._page_lock:
            served, self._http_page = self._http_page, None
        if served is not None:
            served.close()
