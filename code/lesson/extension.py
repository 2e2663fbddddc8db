"""The extension point: how a learner's solution adds to the server without editing code/.

A solution is a Python file (or a folder of them) that creates an `Extension` and registers
what it brings:

    from lesson.extension import Extension

    extension = Extension()

    @extension.tool("notes_archive", description="...", input_schema={...},
                    annotations={"destructiveHint": True})
    def notes_archive(ctx, title):              # exercise 2: a new tool
        ...

    @extension.url_mode_guard                   # exercise 3: may we use URL mode?
    def allow_url_mode(sdk_version, protocol_version, client_capabilities):
        ...

    @extension.page_route("/copias/conectar")   # exercise 3: a page of the server
    def connect(page):
        ...

    @extension.on_roots_changed                 # exercise 4: re-check open handles
    def recheck(change):
        ...

    @extension.request_state                    # the challenge: seal and verify requestState
    class MiSello:
        def seal(self, payload, binding): ...   # -> a text token
        def open(self, token, binding): ...     # -> the payload, or raise to refuse

`python3 code/main.py serve --solution PATH` loads it inside the server process; the demo,
the notebooks and the grader all run solutions that way. A file that fails to load is
reported (in `initialize` under `_meta`, and on stderr) and the server starts without it.

What a tool receives (`ctx`, see context.py):

- finding notes: `ctx.notes()`, `ctx.find_notes(title)` (case and surrounding spaces
  ignored), `ctx.find_note(id)`; each gives `store.Note`s (id, title, created, path, and the
  file's device and inode). `list(note)` goes through `ctx.memo`; `store.Note(*fields)`
  rebuilds it.
- right before acting, after the user answered: `ctx.recheck(note)` (the same file, still
  inside the current roots, same id; else ToolError saying nothing was done), then
  `ctx.archive(note)` or `ctx.delete(note)`, which check again and act on the same folder
  held open since the roots were accepted. Never act on `note.path` yourself: a path is
  text, and the folder it names may have been swapped while the form was open.
- `ctx.roots` (a RootSet: `contains(path)`, `root_of(path)`, `resolve(uri)`; the same during
  one run, its root folders held open), `ctx.handles`,
  `ctx.elicit_form(message, properties, required)`, `ctx.elicit_url(...)`,
  `ctx.memo(key, make)`, `ctx.protocol_version`, `ctx.client_capabilities`.

It returns `ok(text, data)` or a string, or raises `ToolError(message)` (both importable from
`server` or `tooling`), or `URLElicitationRequired([params])` (the -32042 error, 2025-11-25
only). A tool runs again from the start after each answer the user gives, so it asks before it
changes anything.

For URL mode and the simulated OAuth provider of exercise 3 (nube_copias.py):
`ctx.url_mode_allowed()` (asks the solution's guard about this call), `ctx.user` (who uses this
connection), `ctx.provider` (the server's Nube de Copias: `backup(token, notes)`),
`ctx.page_url(path, **params)` (an absolute URL of the server's own pages), `ctx.url_ttl`
(how long a link may live, `--url-ttl`), `ctx.url_params(message, url, elicitation_id)` (the
URL-mode params of this revision), `ctx.elicit_url(message, url, elicitation_id)` and
`ctx.completion_notifier()` (a function that sends `notifications/elicitation/complete` to this
client, callable from a page). The lesson's own `notes_setup` and `notes_sync` (tools.py) use
the server's flow store through the same `ctx`: `ctx.start_flow(provider)`, `ctx.flow(id)`,
`ctx.flow_url(id)`, `ctx.wait_flow(record)`, `ctx.retire_flow(id)`,
`ctx.is_configured(provider)` and `ctx.sdk_version`.

A page route gets a `setup_page.PageRequest` (`page.method`, `page.query`, `page.form`,
`page.user`: who is at the browser, `page.provider`: Nube de Copias with
`authorize_url(state)` and `exchange(code)`, `page.url_for(path, **params)`) and returns
`page.reply(status, title, text)` or `page.redirect(url)`. It runs on the thread that serves
the page (an HTTP thread, the notebook, the core for the grader's rpc page), never inside a
tool run: keep what it shares with the tools in simple containers and take a single-use value
out of them in one step (`dict.pop`).

A guard receives the simulated SDK version (`--sdk-version`, or the NOTES_SDK_VERSION
variable), the negotiated protocol version and the client's capabilities, and returns True
only when URL mode may be used. A roots reaction receives a `server.RootsChange` (old and new
RootSet, the open handles) and calls `change.revoke(handle)`; the server applies the new roots
and the revocations together, between two tool runs, when it returns. A handle's `path` is
the text it was opened with and may be stale; `handle.current_path()` is where its file
really is now (asked through its descriptor; None when nobody can tell, e.g. deleted): that is
the path to compare with `change.new_roots.contains(...)`.

A requestState sealer (2026-07-28 only) is used by every tool that asks: the server hands it
the payload to seal (a JSON dict) and, on the retry, the token to open, each time with a
`request_state.Binding`: the server's key (`binding.key`, bytes: the key is the server's, never
a constant in the solution) and its `key_id`, the `tool`, a digest of its `arguments`, the
`principal`, the clock `now`, the lifetime `ttl` (`expires_at`) and `one_time` (the tool changes
things: each of its states may be opened once, and keeping track is the sealer's job). `open`
returns exactly what was sealed or raises anything to refuse: the client then gets -32602 and
nothing runs. Without one, the server's own `request_state.Sealer` seals.

Deliberate simplifications: a solution runs inside the server process with its full power
(the grader isolates the whole process instead); a file that fails is skipped, not retried.
"""

from __future__ import annotations

import os

from core.tooling import Tool

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from collections.abc import Callable
    from typing import Any, TypeVar

    from notes.handles import RootsChange
    from urlflow.setup_page import PageRequest

    # Each decorator gives back what it got, so a decorated function keeps its own type.
    ToolHandler = TypeVar("ToolHandler", bound=Callable[..., Any])  # (ctx, **arguments)
    Guard = TypeVar("Guard", bound=Callable[[str, str, dict[str, Any]], Any])
    Route = TypeVar("Route", bound=Callable[[PageRequest], Any])
    Reaction = TypeVar("Reaction", bound=Callable[[RootsChange], Any])
    Sealer = TypeVar("Sealer")  # a class, or an object, with seal() and open()


class Extension:
    """What one solution brings: its tools, its page routes and, at most once each, the three
    hooks.

    Create one at the top level of a solution file (`extension = Extension()`) and register with
    its decorators; the server finds it when it loads the file (`load`). The lesson's own tools
    are declared the same way (tools.py), with `origin="base"`.
    """

    def __init__(self, origin: str = "solution") -> None:
        self.origin = origin  # whose tools: a solution's (named by its file once loaded), "base"
        self.tools = []
        self.page_routes = []  # (path, handler, origin)
        self.url_guard = None
        self.roots_reaction = None
        self.state_sealer = None
        self.files = []
        self.errors = {}  # file -> why it did not load

    def tool(self, name: str, description: str, input_schema: dict[str, Any] | None = None,
             annotations: dict[str, Any] | None = None, title: str | None = None,
             output_schema: dict[str, Any] | None = None
             ) -> Callable[[ToolHandler], ToolHandler]:
        """Decorator: register `handler(ctx, **arguments)` as the tool `name`.

        `description`, `input_schema` (a JSON Schema object; default: no arguments),
        `annotations` (e.g. `{"destructiveHint": True}`), `title` and `output_schema` (the
        JSON Schema of the result's `data`, if you promise one) are what `tools/list` shows.
        The handler gets a `ctx` (context.py) and the call's arguments by name, and returns
        `ok(text, data)` or a string, or raises `ToolError(message)`. It may run again from
        the start after each answer the user gives, so it asks before it changes anything.
        The function itself is returned unchanged.
        """
        def register(handler: ToolHandler) -> ToolHandler:
            self.tools.append(Tool(name, description, handler,
                                   input_schema or {"type": "object", "properties": {}},
                                   annotations or {}, output_schema, title, self.origin))
            return handler
        return register

    def url_mode_guard(self, function: Guard) -> Guard:
        """Decorator: `function(sdk_version, protocol_version, client_capabilities)` decides
        whether URL mode may be used (True) or the manual fallback is given (anything else).

        `sdk_version` is the SDK version the server simulates (a string, maybe empty or
        unreadable), `protocol_version` the revision of this request, `client_capabilities`
        what the client declared (a dict). Exercise 3.
        """
        self.url_guard = function
        return function

    def page_route(self, path: str) -> Callable[[Route], Route]:
        """Decorator: serve `path` (e.g. "/copias/conectar") on the server's pages with
        `handler(page)`, a `setup_page.PageRequest`; it returns `page.reply(status, title,
        text)` or `page.redirect(url)`. Exercise 3: the connect page and the provider's
        callback. The function itself is returned unchanged."""
        if not isinstance(path, str) or not path.startswith("/") or "?" in path:
            raise ValueError(f"page_route necesita una ruta que empiece por /: {path!r}")

        def register(handler: Route) -> Route:
            self.page_routes.append((path, handler, "solution"))
            return handler
        return register

    def on_roots_changed(self, function: Reaction) -> Reaction:
        """Decorator: `function(change)` reacts to a roots change (a `server.RootsChange`).

        It reads `change.old_roots`, `change.new_roots` and `change.handles` and calls
        `change.revoke(handle)` for each handle that must close; the server applies the new
        roots and those revocations together once it returns (if it raises, every handle is
        revoked). Exercise 4.
        """
        self.roots_reaction = function
        return function

    def request_state(self, sealer: Sealer) -> Sealer:
        """Decorator: `sealer` seals and opens every 2026-07-28 requestState of this server.

        A class (created once, when the solution is loaded, so `self` may keep what it needs,
        such as the states already used) or an object, with `seal(payload, binding)` -> a text token
        and `open(token, binding)` -> the payload, raising anything to refuse the token
        (request_state.py describes `binding`). The challenge of notebook 6.
        """
        made = sealer() if isinstance(sealer, type) else sealer
        if not all(callable(getattr(made, name, None)) for name in ("seal", "open")):
            raise TypeError("@extension.request_state necesita un objeto (o una clase) con los "
                            "métodos seal(payload, binding) y open(token, binding)")
        self.state_sealer = made
        return sealer


# Solution files compiled beforehand: path -> (SHA-256 of the source, marshal data of its
# code). Only a grader's sandbox fills it: it compiles a submission once, and each of its many
# servers loads the result instead of compiling the same files again (a file whose source
# changed since is compiled afresh). Everywhere else it stays empty.
COMPILED: dict[str, tuple[bytes, bytes]] = {}


def load(path: str) -> Extension:
    """Load a solution file or every .py file in a folder; never raises for learner errors."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".py"))
    else:
        files = [path]
    merged = Extension()
    for file in files:
        name = os.path.basename(file)
        try:
            namespace = run_file(file)
        except BaseException as exc:  # SyntaxError, SystemExit, anything: report, go on
            merged.errors[name] = _describe(exc, file)
            continue
        found = [v for v in namespace.values()  # not the lesson's own, if a file imports it
                 if isinstance(v, Extension) and v.origin == "solution"]
        if not found:
            merged.errors[name] = "no define ningún Extension() (extension = Extension())"
            continue
        merged.files.append(name)
        for ext in found:
            _merge(merged, ext, name)
    return merged


def run_file(file: str) -> dict:
    """Run one file as the module `solution` (what `runpy.run_path(file, run_name="solution")`
    does for a .py file) and return its globals. The module is in sys.modules while it runs
    (dataclasses look their module up there) and sys.argv[0] names the file."""
    import sys
    import types

    with open(file, "rb") as handle:
        source = handle.read()
    code = None
    if COMPILED:
        import hashlib
        import marshal
        digest, data = COMPILED.get(os.path.normpath(file), (None, None))
        if digest == hashlib.sha256(source).digest():
            code = marshal.loads(data)
    if code is None:
        code = compile(source, file, "exec", dont_inherit=True)
    module = types.ModuleType("solution")
    module.__file__, module.__cached__, module.__package__ = file, None, ""
    saved_module, saved_argv = sys.modules.get("solution"), list(sys.argv)
    sys.modules["solution"] = module
    sys.argv[:1] = [file]
    try:
        exec(code, module.__dict__)
    finally:
        if saved_module is None:
            sys.modules.pop("solution", None)
        else:
            sys.modules["solution"] = saved_module
        sys.argv[:] = saved_argv
    return dict(module.__dict__)


def _merge(merged, ext, name):
    for tool in ext.tools:
        tool.origin = name
        merged.tools.append(tool)
    for path, handler, _ in ext.page_routes:
        merged.page_routes.append((path, handler, name))
    for attr in ("url_guard", "roots_reaction", "state_sealer"):
        value = getattr(ext, attr)
        if value is None:
            continue
        if getattr(merged, attr) is not None and getattr(merged, attr) is not value:
            merged.errors[name] = f"{attr} se registró dos veces"
        setattr(merged, attr, value)


def _describe(exc, file):
    import traceback  # only when a solution fails to load

    if isinstance(exc, SyntaxError):
        return f"SyntaxError en la línea {exc.lineno}: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == file]
    where = f" (línea {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}{where}: {exc}"
