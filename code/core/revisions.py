"""Protocol revisions: what 2025-11-25 and 2026-07-28 do differently, one class each.

Every request is judged by `classify` (method, `_meta`, what `initialize` negotiated) and gets
an instance of its revision: `Handshake` (2025-11-25, and the older revisions it negotiates)
or `Stateless` (2026-07-28). The session and the call cycle never ask which revision they
speak; they ask the instance, which answers the questions where the revisions part:

- which methods it has, and how a result is wrapped (`wrap`: the 2026-07-28 envelope);
- how a tools/call starts (`start`: a 2026-07-28 retry brings its sealed `requestState`);
- how the questions of a round leave (`ask`: requests sent mid-call, or one
  `input_required` result with the state sealed for the retry);
- what a missing capability and the -32042 error become (`refused`);
- where a run's roots come from (`roots_request`: the session's, or an input request);
- what a URL-mode elicitation carries (`url_params`, `require_url`).

So a new revision is one class here, its constant in protocol.py, and its tests.

Deliberate simplifications: every handshake revision (2025-11-25, 2025-06-18 and older) is
one class; what they differ in (URL mode, the form schema, the completion notification) is
read from the negotiated `protocol` where it is used. A revision holds nothing beyond the
request's `protocol` and `capabilities`; what a call gathers lives in its `Call` (calls.py).
"""

from core.context import ROOTS_REQUEST, InputRequest, NeedRoots
from core.request_state import StateError
from core.tooling import MissingCapability, ToolError, URLElicitationRequired, error_result
from notes.roots import RootError, RootSet
from shared import wire
from shared.protocol import (
    META_CAPABILITIES,
    META_SERVER_INFO,
    META_VERSION,
    MISSING_CLIENT_CAPABILITY,
    SERVER_INFO,
    STATELESS_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
    URL_MODE,
)

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

NOT_SEALED = ("No pude sellar el estado de {name} para el siguiente paso (el sellador de "
              "requestState falló), así que no pregunté nada y no hice nada.")

RETIRED_32042 = ("La herramienta {name} intentó responder el error -32042, que la revisión "
                 "2026-07-28 retiró (no debe emitirse): en 2026-07-28 el modo URL se pide "
                 "dentro de input_required (ctx.elicit_url). No se envió.")

BEFORE_INITIALIZE = {"initialize", "ping"}


def classify(method, meta, negotiated, capabilities):
    """The revision of one request, or RpcError when it cannot be served as sent.

    A request with `_meta` carrying a version (and server/discover, always) is 2026-07-28;
    anything else belongs to the handshake this session `negotiated` (None before
    `initialize`, when only initialize and ping are allowed)."""
    if method == "server/discover" or META_VERSION in meta:
        return Stateless.from_meta(method, meta)
    if method not in BEFORE_INITIALIZE and negotiated is None:
        raise wire.RpcError(wire.INVALID_REQUEST, "Send initialize first")
    return Handshake(negotiated, capabilities)


def usable(roots):
    """`roots` if a tool may act inside them; ToolError saying why not otherwise."""
    if roots.source == "none":
        raise ToolError(NO_ROOTS)
    if roots.source == "error":
        raise ToolError(ROOTS_FAILED)
    if not roots.roots:
        raise ToolError(NO_OVERLAP if "+" in roots.source else EMPTY_ROOTS)
    return roots


class Revision:
    """How one request is spoken: its `protocol` and the client's `capabilities` (a dict)."""

    stateless = False
    methods = frozenset()
    not_found = "Method not found: {method}"

    def __init__(self, protocol, capabilities):
        self.protocol, self.capabilities = protocol, capabilities

    def declared(self, capability):
        return isinstance(self.capabilities.get(capability), dict)


class Handshake(Revision):
    """2025-11-25 (and 2025-06-18, older): `initialize` negotiates once per session; the
    server sends its questions as its own requests in the middle of a call
    (`elicitation/create`, `sampling/createMessage`). The questions of one round go out
    together and the call runs again once all are answered; if one fails, the call ends and
    the others are withdrawn with `notifications/cancelled`."""

    methods = frozenset({"initialize", "ping", "tools/list", "tools/call"})

    def wrap(self, result, result_type="complete", cacheable=False):
        return result

    def start(self, calls, call, params):
        """Nothing to restore: a parked call keeps what it gathered in the session."""

    def ask(self, calls, call, need):
        """Send each question of the round not already waiting for its answer."""
        asking = calls.keys_asked(call)
        for key, request in need.requests.items():
            if key not in asking:
                calls.ask_client(call, key, request)

    def refused(self, calls, call, exc):
        """A missing capability is a tool error; -32042 ends the request as an error."""
        if isinstance(exc, MissingCapability):
            return error_result(str(exc))
        raise wire.RpcError(URL_ELICITATION_REQUIRED, "URL elicitation required",
                            {"elicitations": exc.elicitations}) from None

    def roots_request(self, ctx):
        """The session's roots (asked with roots/list after `initialized` and every
        `list_changed`): never asked by a call, which waits while they are being asked."""
        def local():
            if "roots" in ctx.call.failed:
                raise ToolError(ctx.call.failed["roots"])
            roots = ctx.session.settled_roots()
            if roots is None:
                raise NeedRoots
            return usable(roots)
        return InputRequest(local=local)

    def url_params(self, message, url, elicitation_id):
        return {"mode": URL_MODE, "message": message, "url": url, "elicitationId": elicitation_id}

    def require_url(self, params, request):
        """The request cannot go on without the page: it ends with -32042 instead of asking."""
        def local():
            raise URLElicitationRequired([params])
        return InputRequest(local=local)


class Stateless(Revision):
    """2026-07-28: no handshake; every request carries `_meta` with the version and the
    client's capabilities; the server sends no requests. The questions of a round end the
    request with `input_required`, and the retry brings the answers and the sealed state
    (request_state.py: the server's sealer, or the one a solution brings)."""

    stateless = True
    methods = frozenset({"server/discover", "tools/list", "tools/call"})
    not_found = "Method not found at 2026-07-28: {method}"

    @classmethod
    def from_meta(cls, method, meta):
        """Its `_meta` must carry the version and the client's capabilities (-32602
        otherwise, as the schema requires), and -32022 lists only what this path accepts, so
        a client retrying as told is not refused again (the handshake revisions are reached
        through `initialize`, not here)."""
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
        return cls(STATELESS_VERSION, capabilities)

    def wrap(self, result, result_type="complete", cacheable=False):
        """The one place a 2026-07-28 result gets its envelope: `resultType` always; a
        cacheable result (server/discover, tools/list) also `ttlMs`, `cacheScope` and the
        server's info in `_meta`, next to whatever `_meta` it brings."""
        if not cacheable:
            return {**result, "resultType": result_type}
        return {"resultType": result_type, **result, "ttlMs": 0, "cacheScope": "private",
                "_meta": {META_SERVER_INFO: SERVER_INFO, **result.get("_meta", {})}}

    def start(self, calls, call, params):
        """A retry: open the sealed state and take the answers it asked for.

        Everything else is checked first, so a refused retry reaches the sealer last and a
        sealer's one-time use (request_state.py) is spent only by a retry that goes on."""
        responses = params.get("inputResponses") or {}
        if not isinstance(responses, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, "inputResponses must be an object")
        saved = {"answers": {}, "asked": {}, "memos": {}}
        server, session = calls.server, calls.session
        if "requestState" in params:
            try:
                token = _unprefixed(params["requestState"], session.client)
                saved = server.states.open(token, server.tools[call.name], call.arguments,
                                           session.user)
                if not _restorable(saved):
                    raise StateError("the sealer gave back something this server never sealed")
                if session.client is not None and saved.get("client") != session.client:
                    raise StateError("sealed for another client")
            except StateError as exc:
                server.log(f"refused requestState: {exc}")
                raise wire.RpcError(wire.INVALID_PARAMS, "Invalid or expired requestState",
                                    {"reason": "invalid_request_state"}) from None
        call.asked, call.memos = saved["asked"], saved["memos"]
        pins = saved.get("pins", {})  # what this call's roots named: checked again here,
        session.pins.update(pins)     # on whichever replica or client space serves it
        call.pin_keys = set(pins)
        pending = saved.get("pending", [])  # only the questions of the last round may be
        call.answers = {**saved["answers"], **{k: v for k, v in responses.items()  # answered
                                               if k in pending}}  # anything else is ignored

    def ask(self, calls, call, need):
        """End this round with the questions and the state sealed for the retry."""
        server, session = calls.server, calls.session
        payload = {"answers": call.answers, "asked": call.asked, "memos": call.memos,
                   "pending": list(need.requests)}
        pins = {key: session.pins[key] for key in sorted(call.pin_keys) if key in session.pins}
        if pins:
            payload["pins"] = pins
        if session.client is not None:
            payload["client"] = session.client
        try:
            state = server.states.seal(server.tools[call.name], call.arguments, payload,
                                       session.user)
        except StateError as exc:
            server.log(f"tool {call.name}: could not seal its requestState ({exc})")
            calls.answer(call, error_result(NOT_SEALED.format(name=call.name)))
            return
        if session.client is not None:  # which client's it is, readable by the transport
            state = f"{session.client}{CLIENT_MARK}{state}"
        calls.answer(call, {"inputRequests": need.requests, "requestState": state},
                     "input_required")

    def refused(self, calls, call, exc):
        """A missing capability is -32021 naming it; -32042 is retired, so never sent."""
        if isinstance(exc, MissingCapability):
            raise wire.RpcError(MISSING_CLIENT_CAPABILITY, str(exc),
                                {"requiredCapabilities": exc.required}) from None
        calls.server.log(f"tool {call.name} raised -32042 at 2026-07-28")
        return error_result(RETIRED_32042.format(name=call.name))

    def roots_request(self, ctx):
        """This request's roots: asked as an input request when the client declared roots,
        the server's own folders (`--root`) otherwise. Accepted for this request only
        (`ctx.release` closes them at its end); what each URI named is pinned in the
        session, which a retry after input_required must reach too (its requestState is
        sealed with this session's key)."""
        config = ctx.server.config

        def accept(roots):
            opened = usable(roots).open(ctx.session.pins)
            ctx.call.pin_keys.update(opened.pin_keys())
            return ctx.accepted(opened)

        def configured():
            roots = config.configured_roots()
            if roots is None:
                raise MissingCapability(NO_ROOTS, {"roots": {}})
            return accept(roots)

        def listed(result):
            try:
                roots = config.limit(RootSet.from_list_result(result))
            except RootError as exc:
                raise ToolError(f"La lista de roots no es válida: {exc}") from None
            return accept(roots)

        if not self.declared("roots"):
            return InputRequest(local=configured)
        return InputRequest(ROOTS_REQUEST, listed)

    def url_params(self, message, url, elicitation_id):
        return {"mode": URL_MODE, "message": message, "url": url}  # no elicitationId any more

    def require_url(self, params, request):
        """-32042 is retired: the URL is asked in-band, like any question."""
        return request


def _restorable(saved):
    """A payload of the shape `Stateless.ask` seals (a sealer may give back anything)."""
    return isinstance(saved, dict) and all(isinstance(saved.get(key), dict)
                                           for key in ("answers", "asked", "memos")) \
        and isinstance(saved.get("pending", []), list) \
        and all(isinstance(key, str) for key in saved.get("pending", [])) \
        and isinstance(saved.get("pins", {}), dict) \
        and all(isinstance(key, str) and _pin(pin) for key, pin in saved.get("pins", {}).items())


def _pin(pin):
    """A pin as roots.py keeps one: [real path, device, inode] (device and inode None while
    the folder was not there yet)."""
    return isinstance(pin, list) and len(pin) == 3 and isinstance(pin[0], str) and (
        pin[1:] == [None, None] or all(isinstance(n, int) and not isinstance(n, bool)
                                       for n in pin[1:]))


CLIENT_MARK = "~"  # over HTTP at 2026-07-28, a requestState is `<client>~<sealed token>`


def _unprefixed(token, client):
    """The sealed token of a state this client (None: no client space) was given."""
    if client is None:
        return token
    if not isinstance(token, str) or not token.startswith(client + CLIENT_MARK):
        raise StateError("not this client's state")
    return token[len(client) + len(CLIENT_MARK):]
