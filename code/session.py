"""Sessions: the MCP lifecycle on one connection, in both protocol revisions.

2025-11-25 (and 2025-06-18): the client sends `initialize`, declares its capabilities once,
and the server may send *it* requests mid-call: `roots/list`, `elicitation/create`. The roots
are fetched after `notifications/initialized` and again after every
`notifications/roots/list_changed`.

2026-07-28: no handshake. Every request carries `_meta` (protocol version, client
capabilities); the server cannot send requests. When a tool needs the user or the roots, the
call answers `input_required`, and the client retries it with `inputResponses` and the sealed
`requestState` (request_state.py).

Tools do not care which revision is spoken: see context.py for what they see.

Deliberate simplifications: one client per connection; a 2026-07-28 request may use the same
pipe as a 2025 session (each request is judged by its own `_meta`).
"""

import secrets
import threading

import wire
from context import NO_ROOTS, STATELESS_VERSION, LiveContext, NeedInput, RetryContext
from request_state import Sealer, StateError
from roots import RootError, RootSet
from server import (
    SERVER_INFO,
    SOLUTION_META_KEY,
    Boundary,
    MissingCapability,
    ToolError,
    error_result,
    ok,
)

HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


# -- the session ------------------------------------------------------------------------------
class Session:
    """One client on one connection. Call `attach(connection)` before feeding it lines."""

    def __init__(self, server):
        self.server = server
        self.id = secrets.token_hex(8)
        self.conn = None
        self.boundary = Boundary()
        self.protocol_version = None  # negotiated by initialize (2025 revisions)
        self.client_capabilities = {}
        self._initialized = False
        self._refresh_order = threading.Lock()  # one roots/list at a time, answers in order
        self.sealer = Sealer(ttl_seconds=server.config.state_ttl)

    def attach(self, connection):
        self.conn = connection

    @staticmethod
    def blocking(method):
        return method == "tools/call"

    def close(self):
        with self.boundary.lock:
            self.boundary.handles.close_all()

    # -- dispatch ------------------------------------------------------------------------
    def handle(self, msg):
        method, params = msg["method"], msg.get("params") or {}
        if msg["kind"] == "notification":
            return self._notification(method)
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if method == "server/discover" or META_VERSION in meta:
            return self._stateless(method, params, meta)
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if self.protocol_version is None:
            raise wire.RpcError(wire.INVALID_REQUEST, "Send initialize first")
        if method == "tools/list":
            return {"tools": [t.describe() for t in self.server.tools.values()]}
        if method == "tools/call":
            return self._call(params, LiveContext(self, self.protocol_version,
                                                  self.client_capabilities))
        raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found: {method}")

    def _notification(self, method):
        if method == "notifications/initialized" and not self._initialized:
            self._initialized = True
            self._start(self.refresh_roots)  # the first fetch, already counted as pending
        elif method == "notifications/roots/list_changed" and self._initialized:
            self.boundary.refresh_announced()
            self._start(self.refresh_roots)
        return None  # cancelled and unknown notifications: nothing to do

    @staticmethod
    def _start(target):
        threading.Thread(target=target, daemon=True).start()

    # -- 2025-11-25 ----------------------------------------------------------------------
    def _initialize(self, params):
        capabilities = params.get("capabilities")
        if self.protocol_version is not None:
            raise wire.RpcError(wire.INVALID_REQUEST, "Already initialized")
        if not isinstance(capabilities, dict) or not isinstance(params.get("protocolVersion"),
                                                                str):
            raise wire.RpcError(wire.INVALID_PARAMS,
                                "initialize needs protocolVersion and capabilities")
        requested = params["protocolVersion"]
        self.protocol_version = requested if requested in HANDSHAKE_VERSIONS \
            else HANDSHAKE_VERSIONS[0]
        self.client_capabilities = capabilities
        result = {"protocolVersion": self.protocol_version,
                  "capabilities": self.server.capabilities(), "serverInfo": SERVER_INFO,
                  "instructions": INSTRUCTIONS}
        if self.server.solution is not None:
            result["_meta"] = {SOLUTION_META_KEY: self.server.solution}
        return result

    def notify_complete(self, elicitation_id):
        """Tell this client its URL elicitation finished (only 2025-11-25 has the message)."""
        if self.protocol_version == "2025-11-25":
            try:
                self.conn.notify("notifications/elicitation/complete",
                                 {"elicitationId": elicitation_id})
            except wire.ConnectionClosed:
                pass

    def refresh_roots(self):
        """Ask roots/list and swap the boundary; on any failure, fail closed (no roots)."""
        try:
            with self._refresh_order:
                self.boundary.swap(self._fetch_roots(), self.server.roots_reaction,
                                   self.server.log)
        finally:
            self.boundary.refresh_finished()

    def _fetch_roots(self):
        if not isinstance(self.client_capabilities.get("roots"), dict):
            return self.server.config.configured_roots() or RootSet(source="none")
        try:
            result = self.conn.request("roots/list", timeout=self.server.config.roots_timeout)
            return self.server.config.limit(RootSet.from_list_result(result))
        except (wire.RpcError, wire.ConnectionClosed, TimeoutError, RootError) as exc:
            self.server.log(f"roots/list failed ({exc}); allowing no folder until it works")
            return RootSet(source="error")

    # -- 2026-07-28 ----------------------------------------------------------------------
    def _stateless(self, method, params, meta):
        version = meta.get(META_VERSION)
        if method == "server/discover" and version is None:
            version = STATELESS_VERSION
        if version != STATELESS_VERSION:
            raise wire.RpcError(wire.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                                {"supported": [STATELESS_VERSION, *HANDSHAKE_VERSIONS],
                                 "requested": str(version)})
        capabilities = meta.get(META_CAPABILITIES)
        if method != "server/discover" and not isinstance(capabilities, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, f"_meta needs {META_CAPABILITIES}")
        server_meta = {META_SERVER_INFO: SERVER_INFO}
        if method == "server/discover":
            solution = {} if self.server.solution is None \
                else {SOLUTION_META_KEY: self.server.solution}
            return {"resultType": "complete", "supportedVersions": [STATELESS_VERSION],
                    "capabilities": self.server.capabilities(), "instructions": INSTRUCTIONS,
                    "ttlMs": 0, "cacheScope": "private", "_meta": {**server_meta, **solution}}
        if method == "tools/list":
            return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                    "tools": [t.describe() for t in self.server.tools.values()],
                    "_meta": server_meta}
        if method == "tools/call":
            return self._call_stateless(params, capabilities)
        raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found at 2026-07-28: {method}")

    def _call_stateless(self, params, capabilities):
        name, arguments = params.get("name"), params.get("arguments") or {}
        saved = {"answers": {}, "asked": {}, "memos": {}}
        if "requestState" in params:
            try:
                saved = self.sealer.open(params["requestState"], name, arguments)
            except StateError as exc:
                self.server.log(f"refused requestState: {exc}")
                raise wire.RpcError(wire.INVALID_PARAMS, "Invalid or expired requestState",
                                    {"reason": "invalid_request_state"}) from None
        responses = params.get("inputResponses") or {}
        if not isinstance(responses, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, "inputResponses must be an object")
        answers = {**saved["answers"], **{k: v for k, v in responses.items()
                                          if k in saved["asked"]}}  # unknown keys: ignored
        ctx = RetryContext(self, capabilities, answers, saved["asked"], saved["memos"])
        try:
            result = self._call(params, ctx)
        except NeedInput as need:
            state = self.sealer.seal(name, arguments, {"answers": ctx.answers,
                                                       "asked": ctx.asked, "memos": ctx.memos})
            return {"resultType": "input_required", "inputRequests": {need.key: need.request},
                    "requestState": state}
        return {**result, "resultType": "complete"}

    def request_roots(self, ctx):
        """The roots for one 2026-07-28 request: asked as an input request when declared."""
        if not isinstance(ctx.client_capabilities.get("roots"), dict):
            configured = self.server.config.configured_roots()
            if configured is None:
                raise MissingCapability(NO_ROOTS, {"roots": {}})
            return configured
        try:
            return self.server.config.limit(RootSet.from_list_result(ctx.ask_roots()))
        except RootError as exc:
            raise ToolError(f"La lista de roots no es válida: {exc}") from None

    # -- both ----------------------------------------------------------------------------
    def _call(self, params, ctx):
        name, arguments = params.get("name"), params.get("arguments", {})
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise wire.RpcError(wire.INVALID_PARAMS, f"Unknown tool: {name!r}")
        if not isinstance(arguments, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, "arguments must be an object")
        problem = tool.argument_problem(arguments)
        if problem:
            return error_result(f"Argumentos no válidos para {name}: {problem}.")
        try:
            result = tool.handler(ctx, **arguments)
        except MissingCapability as exc:
            if ctx.stateless:
                raise wire.RpcError(wire.MISSING_CLIENT_CAPABILITY, str(exc),
                                    {"requiredCapabilities": exc.required}) from None
            return error_result(str(exc))
        except ToolError as exc:
            return error_result(str(exc))
        except (wire.RpcError, NeedInput):
            raise
        except Exception as exc:  # a bug in a tool is reported, never shown in detail
            self.server.log(f"tool {name} crashed: {type(exc).__name__}: {exc}")
            return error_result(f"Error interno en la herramienta {name}.")
        if isinstance(result, str):
            return ok(result)
        if isinstance(result, dict) and isinstance(result.get("content"), list):
            return result
        self.server.log(f"tool {name} returned {type(result).__name__}, not a result")
        return error_result(f"La herramienta {name} devolvió un resultado no válido.")


def run(server, lines, write_bytes):
    """Serve one client: read `lines` until EOF, write frames with `write_bytes`."""
    session = Session(server)
    session.attach(wire.Connection(write_bytes, session.handle, session.blocking, server.log))
    try:
        session.conn.serve(lines)
    finally:
        session.close()


def start_in_process(server):
    """Run a session on a thread; returns (send, lines, close) for a client in this process."""
    to_server, to_client = wire.LinePipe(), wire.LinePipe()

    def serve():
        try:
            run(server, to_server, to_client.write)
        finally:
            to_client.close()
    threading.Thread(target=serve, daemon=True).start()
    return to_server.write, to_client, to_server.close


INSTRUCTIONS = ("Servidor de notas de la lección 'Roots y Elicitación'. Solo toca archivos "
                "dentro de las roots del cliente y pregunta al usuario cuando una acción es "
                "ambigua o necesita configuración.")
