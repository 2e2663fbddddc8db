"""Sessions: the MCP lifecycle of one client, as a single-threaded core.

The core never blocks, never starts a thread and opens no socket. `receive(line)` takes one
incoming frame; everything the session does comes out through what the driver gave it:
`send(frame)` writes one frame, and `clock.call_later(seconds, fn)` / `clock.call_soon(fn)`
ask to be called back (a timeout, a progress tick, a setup page that finished, wherever the
driver shows that page). Drivers (transport.py) call it from one thread at a time: the stdio
server from its reader and timer threads under one lock, the browser from the kernel's event
loop, the loopback from whoever pumps it.

One guarded way in: frames (`receive`), timers (`later`) and page completions (`soon`) all
enter through `_enter`, where anything unexpected is logged and ends only what it was doing:
a request gets -32603, a tool call a tool error, and the session goes on. No frame, answer,
tool or timer ends the process.

This file is the entry and the dispatch: each request gets its revision from
`revisions.classify` (2025-11-25 after `initialize`, or 2026-07-28 by its own `_meta`), its
handler from METHODS (at the end of this file) if the revision has that method, and its
result wrapped by the revision. A tools/call goes to the call cycle (calls.py), which runs,
parks and answers it. What stays here is what belongs to the connection: the handshake, the
2025-11-25 roots and our own requests' ids.

2025-11-25 (and 2025-06-18): `initialize` negotiates; after `notifications/initialized` and
after every `notifications/roots/list_changed` the server asks `roots/list`. A call that needs
the roots waits while a roots/list is unanswered, and a roots change (the new RootSet and the
reaction's revocations) happens between two runs, never during one: no call sees half of each.

Deliberate simplifications: one client per session; a 2026-07-28 request may share the pipe
of a 2025 session (each request is judged by its own `_meta`); answers are kept in memory.
"""

import secrets
import threading

from core import revisions
from core.calls import Calls
from core.tooling import crash_text
from notes.handles import RootsChange
from notes.roots import RootError, RootSet
from notes.store import Handles
from shared import wire
from shared.protocol import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    SERVER_INFO,
    SETUP_PAGE_METHOD,
    SOLUTION_META_KEY,
    STATELESS_VERSION,
)

REACTION_FAILED = "la reacción al cambio de roots falló"  # server.py re-exports it

INSTRUCTIONS = ("Servidor de notas de la lección 'Roots y Elicitación'. Solo toca archivos "
                "dentro de las roots del cliente y pregunta al usuario cuando una acción es "
                "ambigua o necesita configuración.")


class Session:
    """One client. `receive(line)` for each incoming frame; `close()` at the end."""

    def __init__(self, server, send, clock, user=None, client=None):
        self.server = server
        self.config = server.config
        self.send = send
        self.clock = clock
        self.id = secrets.token_hex(8)
        self.user = user or self.config.subject  # who uses this connection (ctx.user)
        self.client = client  # over HTTP at 2026-07-28: the client's name (streamable_http.py),
        #                       in its handle ids and bound into its requestStates
        self.handles = Handles(f".{client}" if client else "")
        self.protocol_version = None       # negotiated by initialize (2025 revisions)
        self.client_capabilities = {}
        self.initialized = False
        self.roots = RootSet(source="pending")
        self.pins = {}                     # root URI's path -> the folder it named (roots.py)
        self.cycle = Calls(self)           # the tools/calls in progress (calls.py)
        self.calls = self.cycle.by_id      # client request id -> parked Call
        self._roots_request = None         # our roots/list request id while unanswered
        self._roots_timer = None
        self._roots_again = False          # a list_changed came while it was unanswered
        self._next_id = 0
        self._private = PRIVATE_METHODS if self.config.page_transport == "rpc" else {}
        self._core_thread = None           # the thread inside `_enter` now, if any

    # -- the one way in ---------------------------------------------------------------------------
    def receive(self, line):
        """Handle one incoming frame (bytes or str, with or without its newline). Never raises."""
        if line.strip():
            self._enter("frame", self._on_frame, line)

    def deliver(self, msg):
        """Handle one frame a driver already read with wire.parse (to route it), without
        parsing it again: a frame is parsed once. Never raises."""
        self._enter("frame", self._on_message, msg)

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
        self.cycle.close()
        self.handles.close_all()
        self.roots.close()

    def _on_frame(self, line):
        try:
            msg = wire.parse(line)
        except wire.RpcError as err:
            self.send(wire.error_response(err.msg_id, err))
            return
        self._on_message(msg)

    def _on_message(self, msg):
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

    # -- dispatch: the request's revision, then its method -----------------------------------
    def _dispatch(self, msg):
        """Route a request: its revision (revisions.classify) must have the method. A handler
        gets (msg, params, revision) and returns the result, which the revision wraps, or
        None when a tools/call answers by itself (now or later)."""
        method, params = msg["method"], msg.get("params") or {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if method in self._private:
            return self._private[method](self, msg, params, None)
        revision = revisions.classify(method, meta, self.protocol_version,
                                      self.client_capabilities)
        if method not in revision.methods:
            raise wire.RpcError(wire.METHOD_NOT_FOUND, revision.not_found.format(method=method))
        result = METHODS[method](self, msg, params, revision)
        return None if result is None else revision.wrap(result, cacheable=True)

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

    def _call_tool(self, msg, params, revision):
        return self.cycle.start(msg, params, revision)  # None: answered now, or parked

    def _page_request(self, msg, params, revision):
        """`serve --setup-page rpc`: one request to the setup page, over this same pipe.

        params {"method": "GET"|"POST", "target": "/connect?...", "body": "<form data>"} ->
        {"status", "title", "body"} (and "location" for a redirect): what a browser would get
        over HTTP (body is the whole page), and "failure" when a route raised
        (setup_page.PageResponse). The browser is this session's user's
        (`request.user` in a route). A completion it causes reaches the waiting call through
        `soon`, as from HTTP.
        """
        method, target, body = params.get("method"), params.get("target"), params.get("body", "")
        if method not in ("GET", "POST") or not isinstance(target, str) or \
                not target.startswith("/") or not isinstance(body, str):
            raise wire.RpcError(wire.INVALID_PARAMS, "setupPage needs method GET or POST, a "
                                "target path and a string body")
        page = self.server.page()
        answer = page.handle(method, target, body, user=self.user)
        result = {"status": answer.status, "title": answer.title,
                  "body": page.render(answer.status, answer.title, answer.html)}
        if answer.location is not None:
            result["location"] = answer.location
        if answer.failure is not None:  # the route raised: what and where, for the grader
            result["failure"] = answer.failure
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
            self.cycle.cancel(params.get("requestId"), params.get("reason"))
        # anything else (progress, unknown methods): nothing to do, never answered

    # -- frames out, and their answers -------------------------------------------------------
    def request(self, method, params=None):
        """Send our own request; returns its id (the answer comes to `_on_response`)."""
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
        elif not self.cycle.answered(msg_id, msg.get("result"), error):
            # a late answer (the call was cancelled or timed out) or a stray id
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
                self.pins)
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
        self._roots_request = self.request("roots/list")
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
        self._swap(new.open(self.pins))  # accepted: the folders are held from now on
        if self._roots_again:
            self._roots_again = False
            self._ask_roots()
            return
        self.cycle.roots_settled()

    def _swap(self, new_roots):
        """Install `new_roots` and the reaction's revocations together, between two runs."""
        change = RootsChange(self.roots, new_roots, self.handles.live())
        try:
            self.server.roots_reaction(change)
            revoked = change.revoked.values()
        except Exception as exc:  # fail closed: a broken reaction keeps nothing open
            self.server.log(f"roots reaction failed ({crash_text(exc, self.server.roots_reaction)}"
                            "); revoking every handle")
            # the client learns the exception's type only (its text may name paths)
            revoked = [(h, f"{REACTION_FAILED} ({type(exc).__name__})") for h in change.handles]
        for handle, reason in revoked:
            self.handles.revoke(handle, reason)
        self.handles.judged_now()
        old, self.roots = self.roots, new_roots
        old.close()

    def settled_roots(self):
        """The session's RootSet, or None while the roots are being asked (a run that needs
        them parks until they settle: revisions.Handshake.roots_request)."""
        if self._roots_request is not None or self.roots.source == "pending":
            return None
        return self.roots

    # -- URL flows that end on a page ---------------------------------------------------------
    def flow_finished(self, elicitation_id, notify):
        """A URL flow of this session ended on its page (called via clock.call_soon)."""
        if notify and self.protocol_version == LATEST_HANDSHAKE:
            self.send(wire.notification("notifications/elicitation/complete",
                                        {"elicitationId": elicitation_id}))
        self.cycle.flow_finished(elicitation_id)

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


# -- the handlers: method -> Session handler(self, msg, params, revision) ----------------------
METHODS = {  # each revision has the ones in its `methods` (revisions.py)
    "initialize": Session._initialize,
    "ping": Session._ping,
    "server/discover": Session._discover,
    "tools/list": Session._list_tools,
    "tools/call": Session._call_tool,
}
PRIVATE_METHODS = {  # `serve --setup-page rpc` only; any revision, no `_meta` needed
    SETUP_PAGE_METHOD: Session._page_request,
}
