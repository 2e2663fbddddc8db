"""The notes server: its tools, its hooks, and the boundary every side effect goes through.

`NotesServer` is shared by every connection (the demo opens several, `serve` one). It holds
the configuration, the tool registry (the four lesson tools, the handle tools, and whatever a
learner's solution adds), the two hooks a solution may replace (the URL-mode guard and the
reaction to roots changing), and the URL flow records.

`Boundary` is one client's view of the world: its current RootSet and the notes it holds
open. Every read, write, delete or archive runs inside `with boundary.hold() as roots:`, and a
roots change swaps the set and re-checks the handles inside the same lock, so no call ever sees
half of the old boundary and half of the new one.

Deliberate simplifications: tool arguments are checked against a small subset of JSON Schema
(required keys, primitive types); everything is in one process and in memory.
"""

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import url_mode
from roots import RootSet
from store import Handles

SERVER_INFO = {"name": "notas-roots-elicitacion", "title": "Notas (lección Roots y Elicitación)",
               "version": "1.0.0"}
SIMULATED_SDK_VERSION = "2.3.0"  # what the stdlib server pretends to run on (see the guard)
SOLUTION_META_KEY = "io.github.curso-mcp/solution"


class ToolError(Exception):
    """Raised by a tool: the call ends with `isError: true` and this message."""


class MissingCapability(ToolError):
    """The tool needs a client capability that was not declared.

    A tool error at 2025-11-25; a -32021 protocol error at 2026-07-28.
    """

    def __init__(self, message, required):
        super().__init__(message)
        self.required = required


def ok(text, structured=None):
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def error_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": True}


@dataclass
class Tool:
    name: str
    description: str
    handler: object  # handler(ctx, **arguments) -> result dict or str
    input_schema: dict = field(default_factory=lambda: {"type": "object", "properties": {}})
    annotations: dict = field(default_factory=dict)
    output_schema: dict | None = None
    title: str | None = None
    origin: str = "base"  # "base" or the solution file it came from

    def describe(self):
        entry = {"name": self.name, "description": self.description,
                 "inputSchema": self.input_schema}
        if self.title:
            entry["title"] = self.title
        if self.annotations:
            entry["annotations"] = self.annotations
        if self.output_schema:
            entry["outputSchema"] = self.output_schema
        return entry

    def argument_problem(self, arguments):
        """A Spanish sentence describing what is wrong with the arguments, or None."""
        properties = self.input_schema.get("properties", {})
        for name in self.input_schema.get("required", []):
            if name not in arguments:
                return f"falta el argumento obligatorio {name!r}"
        for name, value in arguments.items():
            if name not in properties:
                return f"argumento desconocido {name!r}"
            expected = properties[name].get("type")
            if expected and not _has_type(value, expected):
                return f"el argumento {name!r} debe ser de tipo {expected}"
        return None


TYPE_CHECKS = {"string": lambda v: isinstance(v, str),
               "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
               "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
               "boolean": lambda v: isinstance(v, bool),
               "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list)}


def _has_type(value, expected):
    return TYPE_CHECKS.get(expected, lambda v: True)(value)


@dataclass
class Config:
    roots: list = field(default_factory=list)  # --root: the boundary for clients without roots
    sdk_version: str | None = SIMULATED_SDK_VERSION
    elicit_timeout: float = 600.0   # how long a form may stay open
    roots_timeout: float = 30.0     # how long the client may take to answer roots/list
    setup_wait: float = 300.0       # how long notes_setup waits for the setup page
    url_ttl: float = 600.0          # lifetime of a URL elicitation record
    state_ttl: float = 600.0        # lifetime of a 2026-07-28 requestState
    demo_url_guard: bool = False    # use url_mode.demo_guard when no solution brings a guard
    subject: str = field(default_factory=lambda: "local:" + _os_user())

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
    except (ImportError, KeyError):
        return str(os.getuid())


# -- the boundary ------------------------------------------------------------------------------
class RootsChange:
    """What a roots-change reaction sees. It stages revocations; the server applies them
    together with the new RootSet, atomically, once the reaction returns."""

    def __init__(self, old_roots, new_roots, handles):
        self.old_roots, self.new_roots = old_roots, new_roots
        self.handles = list(handles)
        self.revoked = {}

    def revoke(self, handle, reason="su nota quedó fuera de las roots"):
        self.revoked[handle.id] = (handle, reason)


def revoke_every_handle(change):
    """The server's own reaction when no solution brings one: coarse but safe. Any roots
    change closes every open handle (re-checking them one by one is exercise 4)."""
    for handle in change.handles:
        change.revoke(handle, "las roots cambiaron y el servidor no sabe re-comprobar handles")


class Boundary:
    def __init__(self):
        self.roots = RootSet(source="pending")
        self.handles = Handles()
        self.lock = threading.RLock()          # held by every side effect and every swap
        self._changed = threading.Condition()
        self._pending = 1                      # roots re-asks not finished (1: the first one)
        self._inside = threading.local()       # how deep this thread is inside hold()

    def refresh_announced(self):
        """Called on the reader thread as soon as list_changed arrives, before any later
        request is read: calls that come after it wait for the new roots."""
        with self._changed:
            self._pending += 1

    def refresh_finished(self):
        with self._changed:
            self._pending -= 1
            self._changed.notify_all()

    def current(self, timeout):
        """The RootSet to act on; waits until no roots re-ask is in flight."""
        if getattr(self._inside, "depth", 0):  # inside hold(): the set cannot change now
            return self.roots
        with self._changed:
            if not self._changed.wait_for(lambda: self._pending == 0, timeout):
                raise ToolError("el cliente no respondió a roots/list a tiempo")
            return self.roots

    @contextmanager
    def hold(self, timeout):
        """`with boundary.hold(t) as roots:` run a side effect against a stable RootSet."""
        self.current(timeout)
        with self.lock:
            self._inside.depth = getattr(self._inside, "depth", 0) + 1
            try:
                yield self.roots
            finally:
                self._inside.depth -= 1

    def swap(self, new_roots, reaction, log):
        """Install `new_roots`; the reaction re-checks open handles inside the same lock."""
        with self.lock:
            change = RootsChange(self.roots, new_roots, self.handles.live())
            try:
                reaction(change)
                revoked = change.revoked.values()
            except Exception as exc:  # fail closed: a broken reaction keeps nothing open
                log(f"roots reaction failed ({type(exc).__name__}: {exc}); revoking every handle")
                revoked = [(h, "la reacción al cambio de roots falló") for h in change.handles]
            for handle, reason in revoked:
                self.handles.revoke(handle, reason)
            self.roots = new_roots


# -- the server ------------------------------------------------------------------------------
class NotesServer:
    def __init__(self, config=None, extension=None, log=None):
        import tools  # the lesson's tools register themselves on the server
        self.config = config or Config()
        self.log = log or (lambda text: None)
        self.tools = {}
        self.url_guard = url_mode.demo_guard if self.config.demo_url_guard else None
        self.roots_reaction = revoke_every_handle
        self.flows = url_mode.FlowStore(ttl_seconds=self.config.url_ttl)
        self.solution = None  # what a learner's solution brought, reported in initialize
        self._setup_page = None
        self._setup_lock = threading.Lock()
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
        if extension.url_guard is not None:
            self.url_guard = extension.url_guard
            self.solution["hooks"].append("url_mode_guard")
        if extension.roots_reaction is not None:
            self.roots_reaction = extension.roots_reaction
            self.solution["hooks"].append("on_roots_changed")

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
            self.log(f"url guard failed: {type(exc).__name__}: {exc}")
            return False
        return answer is True

    def setup_page(self):
        """The local stand-in for the provider's consent page, started on first use."""
        with self._setup_lock:
            if self._setup_page is None:
                from setup_page import SetupPage
                self._setup_page = SetupPage(self.flows, log=self.log)
            return self._setup_page

    def close(self):
        with self._setup_lock:
            if self._setup_page is not None:
                self._setup_page.close()
                self._setup_page = None
