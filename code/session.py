"""Sessions: the MCP lifecycle of one client, as a single-threaded core.

The core never blocks, never starts a thread and opens no socket. `receive(line)` takes one
incoming frame; everything the session does comes out through what the driver gave it:
`send(frame)` writes one frame, and `clock.call_later(seconds, fn)` / `clock.call_soon(fn)`
ask to be called back (a timeout, a progress tick, a setup page that finished, wherever the
driver shows that page). A tool that needs the user or the roots is *parked*: the session
sends (or returns) the question, keeps the call aside, and runs the tool again from the start
when the answer comes (context.py). Drivers (transport.py) call it from one thread at a time:
the stdio server from its reader and timer threads under one lock, the browser from the
kernel's event loop, the loopback from whoever pumps it.

One guarded way in: frames (`receive`), timers (`later`) and page completions (`soon`) all
enter through `_enter`, where anything unexpected is logged and ends only what it was doing:
a request gets -32603, a tool call a tool error, and the session goes on. No frame, answer,
tool or timer ends the process. Requests are routed by one dispatch table per revision
(HANDSHAKE_METHODS, STATELESS_METHODS, at the end of this file), and every 2026-07-28 result
gets its envelope in one place (`stateless_result`). What a tool returns (results, error data,
`ctx.memo` values) is checked as strict JSON at every revision before it is sent or kept.

2025-11-25 (and 2025-06-18): `initialize` negotiates; after `notifications/initialized` and
after every `notifications/roots/list_changed` the server asks `roots/list`. A call that needs
the roots waits while a roots/list is unanswered, and a roots change (the new RootSet and the
reaction's revocations) happens between two runs, never during one: no call sees half of each.
Questions are requests sent mid-call (`elicitation/create`, `sampling/createMessage`); the
questions of one round go out together and the call runs again once all are answered (if one
fails, the call ends and the others are withdrawn with `notifications/cancelled`).

2026-07-28: no handshake; every request carries `_meta` with the version and the client's
capabilities, and the server sends no requests. The questions of a round end the request
with one `input_required` result; the client retries with `inputResponses` and the sealed
`requestState` (request_state.py: the server's sealer, or the one a solution brings).
Every request's `_meta` must carry its version and capabilities (server/discover too: -32602
otherwise), and -32022 lists only 2026-07-28, the one version this path accepts.

Cancellation: `notifications/cancelled` drops a parked call. Nothing of it runs again, no
result is sent, and (2025-11-25) the client is told that the server's own pending questions
for that call are void, so it can close the form.

Deliberate simplifications: one client per session; a 2026-07-28 request may share the pipe
of a 2025 session (each request is judged by its own `_meta`); answers are kept in memory.
"""

import secrets
import threading
from collections import namedtuple

import wire
from context import NeedInput, NeedRoots, ToolContext, WaitFlow
from protocol import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    META_CAPABILITIES,
    META_SERVER_INFO,
    META_VERSION,
    MISSING_CLIENT_CAPABILITY,
    SERVER_INFO,
    SETUP_PAGE_METHOD,
    SOLUTION_META_KEY,
    STATELESS_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
)
from request_state import StateError
from roots import RootError, RootSet
from server import REACTION_FAILED, RootsChange
from store import Handles
from tooling import (
    NOT_JSON_PROBLEMS,
    MissingCapability,
    ToolError,
    URLElicitationRequired,
    error_result,
    json_problem,
    ok,
)

PROGRESS_EVERY = 2.0  # seconds between notifications/progress while a call waits for a page
MAX_RUNS = 64         # runs of one call: far above what any lesson tool needs

NO_ROOTS = ("Tu cliente no declaró la capacidad 'roots' y el servidor no tiene ninguna carpeta "
            "configurada con --root: no puedo tocar ningún archivo. Declara roots en el cliente "
            "o arranca el servidor con --root /ruta/a/tus/notas.")
EMPTY_ROOTS = ("Tu cliente no compartió ninguna carpeta (su lista de roots está vacía), así que "
               "no puedo tocar ningún archivo. Comparte la carpeta de tus notas como root en el "
               "cliente. Si el cliente declara roots, --root solo limita lo que comparte; si no "
               "las declara, arranca el servidor con --root /ruta/a/tus/notas.")
NO_OVERLAP = ("Ninguna de las carpetas que compartió tu cliente está dentro de las carpetas de "
              "--root del servidor, así que no puedo tocar ningún archivo. Comparte una carpeta "
              "que esté dentro de --root (o arranca el servidor con otra --root).")
ROOTS_FAILED = "No pude leer tus roots (roots/list falló): no toco ningún archivo."
ROOTS_LATE = "El cliente no respondió a roots/list a tiempo: no toco ningún archivo."
NOBODY_ANSWERED = "Nadie respondió a tiempo; no hice nada."
NOT_JSON = ("La herramienta {name} devolvió algo que no se puede enviar como JSON ({problem}), "
            "así que no lo envié. Devuelve solo texto, números, booleanos, None, listas y "
            "diccionarios.")

NOT_SEALED = ("No pude sellar el estado de {name} para el siguiente paso (el sellador de "
              "requestState falló), así que no pregunté nada y no hice nada.")

RETIRED_32042 = ("La herramienta {name} intentó responder el error -32042, que la revisión "
                 "2026-07-28 retiró (no debe emitirse): en 2026-07-28 el modo URL se pide "
                 "dentro de input_required (ctx.elicit_url). No se envió.")

INSTRUCTIONS = ("Servidor de notas de la lección 'Roots y Elicitación'. Solo toca archivos "
                "dentro de las roots del cliente y pregunta al usuario cuando una acción es "
                "ambigua o necesita configuración.")


class Revision(namedtuple("Revision", "protocol capabilities stateless")):
    """How one request is spoken: its `protocol`, the client's `capabilities` (a dict), and
    whether it is a 2026-07-28 request (`stateless`: every request carries its own `_meta`).

    Records in code/ are namedtuples or plain classes, never typing.NamedTuple or dataclasses:
    importing those (and the code dataclasses compiles) would double the demo's start-up
    (README, "Speed")."""

    __slots__ = ()


class Call:
    """One tools/call in progress: what its tool asked so far and what it waits for.

    `request_id` is the client's JSON-RPC id; `protocol`, `capabilities` and `stateless` are
    the call's Revision; `progress_token` the client's, if any. `answers` maps a question key
    to the client's result, `asked` a question key to the digest of the question, `failed` a
    question key to why no answer will come, `timers` a name to a handle with .cancel(), and
    `memos` keeps the tool's ctx.memo values."""

    stale = 0
    runs = 0
    done = False

    def __init__(self, request_id, name, arguments, protocol, capabilities, stateless,
                 progress_token=None):
        self.request_id, self.progress_token = request_id, progress_token
        self.name, self.arguments = name, arguments
        self.protocol, self.capabilities, self.stateless = protocol, capabilities, stateless
        self.answers, self.asked, self.memos, self.failed, self.timers = {}, {}, {}, {}, {}


class Session:
    """One client. `receive(line)` for each incoming frame; `close()` at the end."""

    def __init__(self, server, send, clock, user=None):
        self.server = server
        self.config = server.config
        self.send = send
        self.clock = clock
        self.id = secrets.token_hex(8)
        self.user = user or self.config.subject  # who uses this connection (ctx.user)
        self.handles = Handles()
        self.protocol_version = None       # negotiated by initialize (2025 revisions)
        self.client_capabilities = {}
        self.initialized = False
        self.roots = RootSet(source="pending")
        self._pins = {}                    # root URI's path -> the folder it named (roots.py)
        self.calls = {}                    # client request id -> parked Call
        self._questions = {}               # our request id -> (Call, question key)
        self._roots_request = None         # our roots/list request id while unanswered
        self._roots_timer = None
        self._roots_again = False          # a list_changed came while it was unanswered
        self._roots_waiters = []           # calls parked until the roots settle
        self._flow_waiters = {}            # elicitation id -> [(Call, wait key)]
        self._next_id = 0
        self._private = PRIVATE_METHODS if self.config.setup_page == "rpc" else {}
        self._core_thread = None           # the thread inside `_enter` now, if any

    # -- the one way in ---------------------------------------------------------------------------
    def receive(self, line):
        """Handle one incoming frame (bytes or str, with or without its newline). Never raises."""
        if line.strip():
            self._enter("frame", self._on_frame, line)

    def later(self, seconds, fn, what="timer"):
        """`clock.call_later` for the core: the callback comes back in through `_enter`."""
        return self.clock.call_later(seconds, lambda: self._enter(what, fn))

    def soon(self, fn, what="page"):
        """`clock.call_soon` for the core (any thread may call this, e.g. a setup page)."""
        return self.clock.call_soon(lambda: self._enter(what, fn))

    def _enter(self, what, fn, *args, reply_to=None):
        """The one guarded way into the core: frames, timers and page completions.

        Anything unexpected (a bug, a tool or hook that escaped its own checks, a send that
        failed) is logged and ends only what it was doing: a request gets -32603 for its id
        (`reply_to`), anything else is dropped. The session goes on.
        """
        outer, self._core_thread = self._core_thread, threading.get_ident()
        try:
            fn(*args)
        except (Exception, SystemExit) as exc:
            self.server.log(f"internal error in {what}: {type(exc).__name__}: {exc}")
            if reply_to is not None:
                self._send_safely(wire.error_response(reply_to, wire.RpcError(
                    wire.INTERNAL_ERROR, "Internal error")))
        finally:
            self._core_thread = outer

    def _send_safely(self, frame):
        try:
            self.send(frame)
        except (Exception, SystemExit) as exc:
            self.server.log(f"could not send a frame: {type(exc).__name__}: {exc}")

    def close(self):
        for call in list(self.calls.values()):
            self._finish(call)
        self.handles.close_all()
        self.roots.close()

    def _on_frame(self, line):
        try:
            msg = wire.parse(line)
        except wire.RpcError as err:
            self.send(wire.error_response(err.msg_id, err))
            return
        if msg["kind"] == "response":
            self._on_response(msg)
        elif msg["kind"] == "notification":
            self._on_notification(msg["method"], msg.get("params"))
        else:
            self._enter(msg["method"], self._on_request, msg, reply_to=msg["id"])

    def _on_request(self, msg):
        try:
            result = self._dispatch(msg)
        except wire.RpcError as err:
            self.send(wire.error_response(msg["id"], err))
            return
        if result is not None:  # None: a tools/call that answers later (or never)
            self.send(wire.response(msg["id"], result))

    # -- dispatch: one table per revision ------------------------------------------------------
    def _dispatch(self, msg):
        """Route a request to its revision's table. A handler gets (msg, params, revision) and
        returns the result, or None when a tools/call answers by itself (now or later)."""
        method, params = msg["method"], msg.get("params") or {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if method in self._private:
            return self._private[method](self, msg, params, None)
        if method == "server/discover" or META_VERSION in meta:
            return self._stateless(msg, method, params, meta)
        if method not in BEFORE_INITIALIZE and self.protocol_version is None:
            raise wire.RpcError(wire.INVALID_REQUEST, "Send initialize first")
        handler = HANDSHAKE_METHODS.get(method)
        if handler is None:
            raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found: {method}")
        return handler(self, msg, params, Revision(self.protocol_version,
                                                   self.client_capabilities, False))

    def _ping(self, msg, params, revision):
        return {}

    def _list_tools(self, msg, params, revision):
        return {"tools": [t.describe() for t in self.server.tools.values()]}

    def _discover(self, msg, params, revision):
        solution = {} if self.server.solution is None \
            else {"_meta": {SOLUTION_META_KEY: self.server.solution}}
        return {"supportedVersions": [STATELESS_VERSION],
                "capabilities": self.server.capabilities(), "instructions": INSTRUCTIONS,
                **solution}

    def _page_request(self, msg, params, revision):
        """`serve --setup-page rpc`: one request to the setup page, over this same pipe.

        params {"method": "GET"|"POST", "target": "/connect?...", "body": "<form data>"} ->
        {"status", "title", "body"} (and "location" for a redirect): what a browser would get
        over HTTP (body is the whole page). The browser is this session's user's
        (`request.user` in a route). A completion it causes reaches the waiting call through
        `soon`, as from HTTP.
        """
        method, target, body = params.get("method"), params.get("target"), params.get("body", "")
        if method not in ("GET", "POST") or not isinstance(target, str) or \
                not target.startswith("/") or not isinstance(body, str):
            raise wire.RpcError(wire.INVALID_PARAMS, "setupPage needs method GET or POST, a "
                                "target path and a string body")
        page = self.server.setup_page()
        answer = page.handle(method, target, body, user=self.user)
        result = {"status": answer.status, "title": answer.title,
                  "body": page.render(answer.status, answer.title, answer.html)}
        if answer.location is not None:
            result["location"] = answer.location
        return result

    def _on_notification(self, method, params):
        params = params if isinstance(params, dict) else {}
        if method == "notifications/initialized" and self.protocol_version and \
                not self.initialized:
            self.initialized = True
            if self._declared_roots():
                self._ask_roots()
        elif method == "notifications/roots/list_changed" and self.initialized and \
                self._declared_roots():
            self._ask_roots()
        elif method == "notifications/cancelled":
            self._cancel(params.get("requestId"), params.get("reason"))
        # anything else (progress, unknown methods): nothing to do, never answered

    # -- frames out ----------------------------------------------------------------------------
    def _request(self, method, params=None):
        self._next_id += 1
        self.send(wire.request(self._next_id, method, params))
        return self._next_id

    def _on_response(self, msg):
        msg_id = msg["id"]
        error = wire.RpcError.from_dict(msg["error"]) if "error" in msg else None
        if msg_id == self._roots_request:
            try:
                self._roots_answered(msg.get("result"), error)
            except Exception as exc:  # an answer nobody foresaw: fail closed, never crash
                self.server.log(f"roots/list answer not understood ({type(exc).__name__}: "
                                f"{exc}); allowing no folder")
                self._roots_answered(None, exc)
        elif msg_id in self._questions:
            call, key = self._questions.pop(msg_id)
            self._cancel_timer(call, f"question-{msg_id}")
            if error is not None:
                call.failed[key] = f"El cliente no pudo responder: {error.message}"
            else:
                call.answers[key] = msg["result"]
            if error is not None or not self._asking(call):  # a round's last answer
                self._run(call)
        else:  # a late answer (the call was cancelled or timed out) or a stray id
            self.server.log(f"ignored a response to unknown id {msg_id!r}")

    # -- 2025-11-25: the handshake and the roots ------------------------------------------------
    def _initialize(self, msg, params, revision):
        capabilities = params.get("capabilities")
        if self.protocol_version is not None:
            raise wire.RpcError(wire.INVALID_REQUEST, "Already initialized")
        if not isinstance(capabilities, dict) or not isinstance(params.get("protocolVersion"),
                                                                str):
            raise wire.RpcError(wire.INVALID_PARAMS,
                                "initialize needs protocolVersion and capabilities")
        requested = params["protocolVersion"]
        self.protocol_version = requested if requested in HANDSHAKE_VERSIONS \
            else LATEST_HANDSHAKE
        self.client_capabilities = capabilities
        if not self._declared_roots():  # nothing to ask: the server's own folders, or none
            self.roots = (self.config.configured_roots() or RootSet(source="none")).open(
                self._pins)
        result = {"protocolVersion": self.protocol_version,
                  "capabilities": self.server.capabilities(), "serverInfo": SERVER_INFO,
                  "instructions": INSTRUCTIONS}
        if self.server.solution is not None:
            result["_meta"] = {SOLUTION_META_KEY: self.server.solution}
        return result

    def _declared_roots(self):
        return isinstance(self.client_capabilities.get("roots"), dict)

    def _ask_roots(self):
        if self._roots_request is not None:  # answers come in order: ask again after this one
            self._roots_again = True
            return
        self._roots_request = self._request("roots/list")
        request_id = self._roots_request
        self._roots_timer = self.later(
            self.config.roots_timeout, lambda: self._roots_answered(None, TimeoutError(),
                                                                    request_id))

    def _roots_answered(self, result, error, request_id=None):
        if request_id is not None and request_id != self._roots_request:
            return  # a timer for a roots/list that was answered in time
        self._roots_request = None
        self._roots_timer.cancel()
        if error is not None:
            self.server.log(f"roots/list failed ({error or 'no answer in time'}); allowing "
                            "no folder until it works")
            new = RootSet(source="error")
        else:
            try:
                new = self.config.limit(RootSet.from_list_result(result))
            except RootError as exc:
                self.server.log(f"roots/list answer refused ({exc}); allowing no folder")
                new = RootSet(source="error")
        self._swap(new.open(self._pins))  # accepted: the folders are held from now on
        if self._roots_again:
            self._roots_again = False
            self._ask_roots()
            return
        waiters, self._roots_waiters = self._roots_waiters, []
        for call in waiters:
            self._cancel_timer(call, "roots")
            self._run(call)

    def _swap(self, new_roots):
        """Install `new_roots` and the reaction's revocations together, between two runs."""
        change = RootsChange(self.roots, new_roots, self.handles.live())
        try:
            self.server.roots_reaction(change)
            revoked = change.revoked.values()
        except Exception as exc:  # fail closed: a broken reaction keeps nothing open
            self.server.log(f"roots reaction failed ({type(exc).__name__}: {exc}); revoking "
                            "every handle")
            revoked = [(h, REACTION_FAILED) for h in change.handles]
        for handle, reason in revoked:
            self.handles.revoke(handle, reason)
        self.handles.judged_now()
        old, self.roots = self.roots, new_roots
        old.close()

    def roots_for(self, ctx):
        """The RootSet one run acts against; parks the run while the roots are being asked."""
        if ctx.stateless:
            return self._request_roots(ctx)
        if "roots" in ctx.call.failed:
            raise ToolError(ctx.call.failed["roots"])
        if self._roots_request is not None or self.roots.source == "pending":
            raise NeedRoots
        return self._usable(self.roots)

    def _usable(self, roots):
        if roots.source == "none":
            raise ToolError(NO_ROOTS)
        if roots.source == "error":
            raise ToolError(ROOTS_FAILED)
        if not roots.roots:
            raise ToolError(NO_OVERLAP if "+" in roots.source else EMPTY_ROOTS)
        return roots

    # -- 2026-07-28 ----------------------------------------------------------------------------
    def _stateless(self, msg, method, params, meta):
        """A 2026-07-28 request, server/discover included: its `_meta` must carry the version
        and the client's capabilities (-32602 otherwise, as the schema requires), and -32022
        lists only what this path accepts, so a client retrying as told is not refused
        again (the handshake revisions are reached through `initialize`, not here)."""
        if META_VERSION not in meta:  # only server/discover comes here without it
            raise wire.RpcError(wire.INVALID_PARAMS, f"{method} needs _meta with "
                                f"{META_VERSION} and {META_CAPABILITIES}")
        version = meta[META_VERSION]
        if version != STATELESS_VERSION:
            raise wire.RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                                {"supported": [STATELESS_VERSION], "requested": str(version)})
        capabilities = meta.get(META_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, f"_meta needs {META_CAPABILITIES}")
        handler = STATELESS_METHODS.get(method)
        if handler is None:
            raise wire.RpcError(wire.METHOD_NOT_FOUND,
                                f"Method not found at 2026-07-28: {method}")
        result = handler(self, msg, params, Revision(STATELESS_VERSION, capabilities, True))
        return None if result is None else stateless_result(result, cacheable=True)

    def _restore(self, call, params):
        """A 2026-07-28 retry: open the sealed state and take the answers it asked for.

        Everything else is checked first, so a refused retry reaches the sealer last and a
        sealer's one-time use (request_state.py) is spent only by a retry that goes on."""
        responses = params.get("inputResponses") or {}
        if not isinstance(responses, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, "inputResponses must be an object")
        saved = {"answers": {}, "asked": {}, "memos": {}}
        if "requestState" in params:
            try:
                saved = self.server.states.open(params["requestState"],
                                                self.server.tools[call.name], call.arguments,
                                                self.user)
                if not _restorable(saved):
                    raise StateError("the sealer gave back something this server never sealed")
            except StateError as exc:
                self.server.log(f"refused requestState: {exc}")
                raise wire.RpcError(wire.INVALID_PARAMS, "Invalid or expired requestState",
                                    {"reason": "invalid_request_state"}) from None
        call.asked, call.memos = saved["asked"], saved["memos"]
        pending = saved.get("pending", [])  # only the questions of the last round may be
        call.answers = {**saved["answers"], **{k: v for k, v in responses.items()  # answered
                                               if k in pending}}  # anything else is ignored

    def _request_roots(self, ctx):
        """The roots of one 2026-07-28 request: asked as an input request when declared."""
        if not isinstance(ctx.client_capabilities.get("roots"), dict):
            roots = self.config.configured_roots()
            if roots is None:
                raise MissingCapability(NO_ROOTS, {"roots": {}})
        else:
            try:
                roots = self.config.limit(RootSet.from_list_result(ctx.ask_roots()))
            except RootError as exc:
                raise ToolError(f"La lista de roots no es válida: {exc}") from None
        # accepted for this request only (ctx.release closes them at its end); what each URI
        # named is pinned in the session, which a retry after input_required must reach too
        # (its requestState is sealed with this session's key)
        return ctx.accepted(self._usable(roots).open(self._pins))

    # -- calls -----------------------------------------------------------------------------------
    def _call_tool(self, msg, params, revision):
        name, arguments = params.get("name"), params.get("arguments", {})
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise wire.RpcError(wire.INVALID_PARAMS, f"Unknown tool: {name!r}")
        if not isinstance(arguments, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, "arguments must be an object")
        if msg["id"] in self.calls:  # its answer and its cancellation would be ambiguous
            raise wire.RpcError(wire.INVALID_REQUEST, "Request id already used by a call in "
                                "progress")
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        token = meta.get("progressToken")
        call = Call(msg["id"], name, arguments, *revision,
                    progress_token=token if wire.valid_id(token) else None)
        if call.stateless:
            self._restore(call, params)
        self.calls[call.request_id] = call
        self._run(call)
        return None  # _run answered, or parked the call

    def _run(self, call):
        """Run the call's tool from the start; answer it, or park it until what it needs.

        Whatever goes wrong in here ends this call only, with a tool error."""
        if call.done:
            return
        try:
            self._run_once(call)
        except (Exception, SystemExit) as exc:
            self.server.log(f"internal error running {call.name}: {type(exc).__name__}: {exc}")
            if not call.done:
                self._answer(call, error_result(f"Error interno en la herramienta {call.name}."))

    def _run_once(self, call):
        call.runs += 1
        try:
            if call.runs > MAX_RUNS:  # a backstop: no lesson tool runs again this often
                result = error_result("La herramienta se ejecutó demasiadas veces sin terminar.")
            else:
                result = self._invoke(call)
        except NeedInput as need:
            problem = json_problem(need.requests)
            if problem is not None:  # the same refusal at both revisions
                self._answer(call, self._not_json(call, problem))
            elif call.stateless:
                self._input_required(call, need)
            else:
                asking = {key for owner, key in self._questions.values() if owner is call}
                for key, request in need.requests.items():
                    if key not in asking:
                        self._ask_client(call, key, request)
            return
        except NeedRoots:
            self._roots_waiters.append(call)
            self._set_timer(call, "roots", self.config.roots_timeout,
                            lambda: self._roots_late(call))
            return
        except WaitFlow as wait:
            self._park_on_flow(call, wait)
            return
        except wire.RpcError as err:
            self._answer(call, err)
            return
        self._answer(call, result)

    def _input_required(self, call, need):
        """2026-07-28: end this round with the questions and the state sealed for the retry."""
        try:
            state = self.server.states.seal(self.server.tools[call.name], call.arguments, {
                "answers": call.answers, "asked": call.asked, "memos": call.memos,
                "pending": list(need.requests)}, self.user)
        except StateError as exc:
            self.server.log(f"tool {call.name}: could not seal its requestState ({exc})")
            self._answer(call, error_result(NOT_SEALED.format(name=call.name)))
            return
        self._answer(call, {"inputRequests": need.requests, "requestState": state},
                     "input_required")

    def _invoke(self, call):
        tool = self.server.tools[call.name]
        problem = tool.argument_problem(call.arguments)
        if problem:
            return error_result(f"Argumentos no válidos para {call.name}: {problem}.")
        ctx = ToolContext(self, call)
        try:
            result = tool.handler(ctx, **call.arguments)
        except MissingCapability as exc:
            if call.stateless:
                raise wire.RpcError(MISSING_CLIENT_CAPABILITY, str(exc),
                                    {"requiredCapabilities": exc.required}) from None
            return error_result(str(exc))
        except ToolError as exc:
            return error_result(str(exc))
        except URLElicitationRequired as exc:
            if call.stateless:  # retired at 2026-07-28: ctx.require_url asks in-band there
                self.server.log(f"tool {call.name} raised -32042 at 2026-07-28")
                return error_result(RETIRED_32042.format(name=call.name))
            raise wire.RpcError(URL_ELICITATION_REQUIRED, "URL elicitation required",
                                {"elicitations": exc.elicitations}) from None
        except (wire.RpcError, NeedInput, NeedRoots, WaitFlow):
            raise
        except (Exception, SystemExit) as exc:  # a bug in a tool is reported, never shown
            self.server.log(f"tool {call.name} crashed: {type(exc).__name__}: {exc}")
            return error_result(f"Error interno en la herramienta {call.name}.")
        finally:
            ctx.release()
        if isinstance(result, str):
            return ok(result)
        if isinstance(result, dict) and isinstance(result.get("content"), list):
            return result
        self.server.log(f"tool {call.name} returned {type(result).__name__}, not a result")
        return error_result(f"La herramienta {call.name} devolvió un resultado no válido.")

    def _answer(self, call, result, result_type="complete"):
        """End the call with `result` (a tool result, or an RpcError) and forget it.

        What would not travel as strict JSON (a tool's own result, error data or question)
        becomes a tool error that says so, the same at every revision."""
        try:
            if isinstance(result, wire.RpcError):
                wire.check_json(result.to_dict())
                frame = wire.error_response(call.request_id, result)
            else:
                if call.stateless:
                    result = stateless_result(result, result_type)
                frame = wire.Checked(call.request_id, result, wire.check_json(result))
        except wire.NotJSON as exc:
            error = self._not_json(call, NOT_JSON_PROBLEMS[exc.kind])
            frame = wire.response(call.request_id,
                                  stateless_result(error) if call.stateless else error)
        self._void(self._finish(call), "La llamada que hacía esta pregunta ya terminó.")
        self.send(frame)

    def _not_json(self, call, problem):
        self.server.log(f"tool {call.name}: what it would send is not JSON ({problem})")
        return error_result(NOT_JSON.format(name=call.name, problem=problem))

    def _finish(self, call):
        """The call is over (answered, failed or cancelled): forget it and its timers.
        Returns the ids of our questions it left unanswered (the caller voids them)."""
        call.done = True
        self.calls.pop(call.request_id, None)
        for timer in call.timers.values():
            timer.cancel()
        call.timers.clear()
        left = [question for question, (owner, _) in self._questions.items() if owner is call]
        for question in left:
            del self._questions[question]
        if call in self._roots_waiters:
            self._roots_waiters.remove(call)
        self._unwait(call)
        return left

    def _asking(self, call):
        """Does `call` still wait for an answer to one of our questions?"""
        return any(owner is call for owner, _ in self._questions.values())

    def _void(self, questions, reason):
        """Tell the client our `questions` need no answer any more (it may close them)."""
        for question in questions:
            self.send(wire.notification("notifications/cancelled",
                                        {"requestId": question, "reason": reason}))

    def _unwait(self, call):
        """Take the call off every flow it waits for; a flow nobody waits for is forgotten."""
        for elicitation_id, waiters in list(self._flow_waiters.items()):
            waiters[:] = [(c, k) for c, k in waiters if c is not call]
            if not waiters:
                del self._flow_waiters[elicitation_id]

    # -- parking --------------------------------------------------------------------------------
    def _ask_client(self, call, key, request):
        """2025-11-25: send the question as our own request; the answer re-runs the call."""
        question = self._request(request["method"], request.get("params"))
        self._questions[question] = (call, key)
        self._set_timer(call, f"question-{question}", self.config.elicit_timeout,
                        lambda: self._question_late(question))

    def _question_late(self, question):
        if question not in self._questions:
            return
        call, key = self._questions.pop(question)
        self.send(wire.notification("notifications/cancelled", {
            "requestId": question, "reason": "Nadie respondió a tiempo."}))
        call.failed[key] = NOBODY_ANSWERED
        self._run(call)

    def _roots_late(self, call):
        if call in self._roots_waiters:
            self._roots_waiters.remove(call)
            call.failed["roots"] = ROOTS_LATE
            self._run(call)

    def _park_on_flow(self, call, wait):
        self._flow_waiters.setdefault(wait.elicitation_id, []).append((call, wait.key))
        self._set_timer(call, wait.key, wait.seconds, lambda: self._flow_late(call, wait.key))
        if call.progress_token is not None:
            self._progress(call, wait, 0)

    def _flow_late(self, call, key):
        if not call.done:
            call.answers[key] = "timeout"
            self._unwait(call)
            self._run(call)

    def _progress(self, call, wait, ticks):
        """Every PROGRESS_EVERY seconds while the call waits for the page: seconds waited."""
        if (call, wait.key) not in self._flow_waiters.get(wait.elicitation_id, ()):
            return  # the wait is over (the page finished, the time ran out or the call ended)
        self.send(wire.notification("notifications/progress", {
            "progressToken": call.progress_token, "progress": ticks * PROGRESS_EVERY,
            "total": wait.seconds,
            "message": "Esperando a que termines en la página de configuración…"}))
        self._set_timer(call, "progress", PROGRESS_EVERY,
                        lambda: self._progress(call, wait, ticks + 1))

    def flow_finished(self, elicitation_id, notify):
        """A URL flow of this session ended on its page (called via clock.call_soon)."""
        if notify and self.protocol_version == LATEST_HANDSHAKE:
            self.send(wire.notification("notifications/elicitation/complete",
                                        {"elicitationId": elicitation_id}))
        for call, key in self._flow_waiters.pop(elicitation_id, []):
            self._cancel_timer(call, key)
            self._run(call)

    def flow_listener(self, stateless):
        """What FlowStore calls (from whatever thread drives the page) when a flow started by
        this session ends: the completion enters the core later, through `soon`."""
        def finished(elicitation_id):
            self.soon(lambda: self.flow_finished(elicitation_id, not stateless))
        return finished

    def completion_notifier(self):
        """`ctx.completion_notifier()` (exercise 3): a function `notify(elicitation_id)` that
        sends `notifications/elicitation/complete` to this session's client. Any thread may
        call it (a page's, typically): called on the core (a page served on the pipe, a tool)
        the frame goes at once, before whatever answers that page or call; from another thread
        it is sent from the core, through `soon`. It sends what it is told; whether and when
        is the caller's decision."""
        def notify(elicitation_id):
            if not isinstance(elicitation_id, str) or not elicitation_id:
                raise TypeError("notify necesita el elicitationId del flujo (un texto)")
            frame = wire.notification("notifications/elicitation/complete",
                                      {"elicitationId": elicitation_id})
            if self._core_thread == threading.get_ident():
                self.send(frame)
            else:
                self.soon(lambda: self.send(frame), "completion notification")
        return notify

    # -- cancellation -------------------------------------------------------------------------
    def _cancel(self, request_id, reason):
        call = self.calls.get(request_id) if wire.valid_id(request_id) else None
        if call is None:
            return  # finished already, or never parked: nothing to stop
        self.server.log(f"tools/call {request_id!r} ({call.name}) cancelled by the client"
                        + (f": {reason}" if isinstance(reason, str) else ""))
        self._void(self._finish(call),  # our own pending questions for it are void now
                   "La llamada que hacía esta pregunta se canceló.")

    # -- timers ---------------------------------------------------------------------------------
    def _set_timer(self, call, name, seconds, fn):
        self._cancel_timer(call, name)
        call.timers[name] = self.later(seconds, fn, f"timer {name} of {call.name}")

    @staticmethod
    def _cancel_timer(call, name):
        timer = call.timers.pop(name, None)
        if timer is not None:
            timer.cancel()


def _restorable(saved):
    """A payload of the shape `_input_required` seals (a sealer may give back anything)."""
    return isinstance(saved, dict) and all(isinstance(saved.get(key), dict)
                                           for key in ("answers", "asked", "memos")) \
        and isinstance(saved.get("pending", []), list) \
        and all(isinstance(key, str) for key in saved.get("pending", []))


def stateless_result(result, result_type="complete", cacheable=False):
    """The one place a 2026-07-28 result gets its envelope: `resultType` always; a cacheable
    result (server/discover, tools/list) also `ttlMs`, `cacheScope` and the server's info in
    `_meta`, next to whatever `_meta` it brings."""
    if not cacheable:
        return {**result, "resultType": result_type}
    return {"resultType": result_type, **result, "ttlMs": 0, "cacheScope": "private",
            "_meta": {META_SERVER_INFO: SERVER_INFO, **result.get("_meta", {})}}


# -- the dispatch tables: method -> Session handler(self, msg, params, revision) -------------
BEFORE_INITIALIZE = {"initialize", "ping"}
HANDSHAKE_METHODS = {  # 2025-11-25, 2025-06-18 and older: after `initialize`
    "initialize": Session._initialize,
    "ping": Session._ping,
    "tools/list": Session._list_tools,
    "tools/call": Session._call_tool,
}
STATELESS_METHODS = {  # 2026-07-28: each request judged by its own `_meta`
    "server/discover": Session._discover,
    "tools/list": Session._list_tools,
    "tools/call": Session._call_tool,
}
PRIVATE_METHODS = {  # `serve --setup-page rpc` only; any revision, no `_meta` needed
    SETUP_PAGE_METHOD: Session._page_request,
}
