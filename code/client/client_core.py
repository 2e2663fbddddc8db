"""The lesson's MCP client as a sans-I/O core: lines in; frames, deferred calls and questions out.

It mirrors session.py from the other end of the wire. `receive(line)` takes one frame from the
server; everything the core does comes out through what its driver gave it: `send(msg)` writes
one frame, `clock.call_soon(fn)` runs `fn` once what was sent has been read, and `ask(question)`
hands a question to the user. The core never blocks, never waits and never starts a thread;
sync_client.py (blocking) and async_client.py (asyncio) are the drivers.

One tools/call with a form, start to end, all in this file:

1. `call_tool(name, arguments)` sends `tools/call` and returns a `ToolCall`, an `Outcome` the
   driver waits for.
2. 2025-11-25: the server sends `elicitation/create` in the middle of the call. `receive`
   checks the mode is one we declared and makes a `Question` with the request's id; the driver
   asks its user and calls `question.answer(result)`, which sends the response (unless the
   server cancelled the request meanwhile). After a consent in URL mode, the user opens the
   page once the consent is on the wire (`clock.call_soon`).
   2026-07-28: the result is `input_required` instead. `_round` refuses a method it cannot
   answer, answers `roots/list` itself and makes a `Question` for each `elicitation/create`;
   when the last one is answered (and, after a consent, its page opened) it sends the same
   call again with `inputResponses` and the `requestState` echoed untouched.
3. The final result settles the `ToolCall`; the driver returns it.

The user behind `ask` has one contract in both drivers: `elicit(params, question_id)` returns
an ElicitResult dict and `open_url(url)` visits a page after a consent (in the asyncio driver
both may be coroutines). simulated_user.py has a scripted user and browser. An accepted form
gets the declared defaults of the fields the user left out, here in the core (SEP-1034), so
every user and driver sends them.

Versions: at 2026-07-28 a -32022 that lists 2026-07-28 is retried once; one that lists only
older revisions makes `connect` fall back to the newest of them that this client speaks.

Deliberate simplifications: no sampling; notifications are recorded (up to MAX_NOTIFICATIONS),
not shown; a request that timed out or was abandoned is forgotten, its late answer dropped.
"""

import json
import os

from notes.roots import path_to_uri
from shared import wire
from shared.protocol import (
    CLIENT_INFO,
    FORM_MODE,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_SERVER_INFO,
    META_VERSION,
    STATELESS_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_MODE,
)

ALL_ELICITATION = {FORM_MODE: {}, URL_MODE: {}}
MAX_NOTIFICATIONS = 10_000  # kept for inspection; beyond, they are no longer recorded
CANCEL = {"action": "cancel"}  # what a client with nobody to ask answers


class Outcome:
    """Something the driver waits for: a request, a tool call, a handshake, a roots change.

    `settle(result)` or `fail(error)` ends it once; `then(fn)` runs `fn(outcome)` when it
    ends (at once if it already has). `request_id` is the id of the request on the wire now.
    """

    def __init__(self, what):
        self.what = what
        self.done, self.result, self.error = False, None, None
        self.request_id = None
        self._then = []

    def then(self, fn):
        if self.done:
            fn(self)
        else:
            self._then.append(fn)
        return self

    def settle(self, result=None):
        self._end(result, None)

    def fail(self, error):
        self._end(None, error)

    def _end(self, result, error):
        if self.done:
            return
        self.done, self.result, self.error = True, result, error
        callbacks, self._then = self._then, []
        for fn in callbacks:
            fn(self)


class ToolCall(Outcome):
    """One tools/call through its 2026-07-28 `input_required` rounds, to its final result."""

    def __init__(self, name, arguments, max_rounds):
        super().__init__("tools/call")
        self.name, self.arguments, self.max_rounds = name, arguments, max_rounds
        self.rounds = 0
        self.responses = {}     # inputRequests key -> our answer, this round
        self.waiting = set()    # questions of this round not settled yet
        self.asked_all = False  # every question of this round was handed to the user
        self.state = None       # the round's result (its requestState goes back untouched)


class Question:
    """One `elicitation/create` for the user: a server request (2025-11-25, `request_id`) or
    an entry of an `input_required` result (2026-07-28, `key` in `call`)."""

    def __init__(self, core, params, mode, request_id=None, key=None, call=None):
        self.core, self.params, self.mode = core, params, mode
        self.request_id, self.key, self.call = request_id, key, call
        self.url = params.get("url")
        self.settled = False

    def answer(self, result):
        """The user's ElicitResult. An accepted form gets the declared default of every
        field the user left out (SEP-1034). After a consent in URL mode the user opens the
        page next (the core asks for it through the clock, once the answer is on its way)."""
        if self.settled or (self.call is not None and self.call.done):
            return  # answered already, or its call ended (out of time, failed, abandoned)
        self.settled = True
        if self.mode == FORM_MODE:
            result = with_defaults(self.params.get("requestedSchema"), result)
        consented = self.mode == URL_MODE and isinstance(result, dict) \
            and result.get("action") == "accept"
        if self.call is None:
            if self.request_id in self.core.cancelled:
                return  # the server voided this question while the user was answering it
            self.core.send(wire.response(self.request_id, result))
        else:
            self.call.responses[self.key] = result
        if consented:
            self.core.clock.call_soon(lambda: self.core.visit(self))
        else:
            self.core._question_done(self)

    def fail(self, error):
        """The question could not be answered: an error response (2025-11-25), or the whole
        call fails with `error` (2026-07-28)."""
        if self.settled:
            return
        self.settled = True
        if self.call is not None:
            self.call.fail(error)
        elif self.request_id not in self.core.cancelled:
            if not isinstance(error, wire.RpcError):
                error = wire.RpcError(wire.INTERNAL_ERROR, f"{type(error).__name__}: {error}")
            self.core.send(wire.error_response(self.request_id, error))

    def opened(self, error=None):
        """The user has been to the page after consenting (the 2026 retry waits for this)."""
        if error is not None and self.call is not None:
            self.call.fail(error)
        self.core._question_done(self)


class ClientCore:
    """The client's side of the protocol, with no I/O: see the module docstring."""

    def __init__(self, send, clock, ask, visit, *, roots=(), elicitation=None,
                 protocol=LATEST_HANDSHAKE, client_info=None, on_frame=None):
        """`roots=None` declares no roots capability; `elicitation=None` means form and url;
        pass `{}` for a bare (form-only, 2025-06-18 style) declaration or False for none.
        `ask(question)` and `visit(question)` are the driver's way to its user."""
        self._send, self.clock, self.ask, self.visit = send, clock, ask, visit
        self.roots = None if roots is None else [as_uri(r) for r in roots]
        self.capabilities = {}
        self.speak(protocol)
        if elicitation is not False:
            self.capabilities["elicitation"] = ALL_ELICITATION if elicitation is None \
                else elicitation
        self.client_info = client_info or CLIENT_INFO
        self.on_frame = on_frame or (lambda direction, msg: None)
        self.on_notification = None   # called with each notification recorded
        self.handlers = {}            # method -> fn(params): more server requests this client
        #                               answers (a result, or raise wire.RpcError)
        self.notifications = []
        self.server_info = None
        self.roots_asked = 0          # how many times we answered roots/list
        self.cancelled = set()        # server request ids the server told us to drop
        self._pending = {}            # id of a request we sent -> fn(result, error)
        self._roots_waiters = []      # Outcomes settled when the server next asks roots/list
        self._next_id = 0

    @property
    def stateless(self):
        """2026-07-28: every request carries the envelope (the protocol may be switched)."""
        return self.protocol == STATELESS_VERSION

    def speak(self, protocol):
        """Speak `protocol` from now on (how the roots capability is declared depends on it)."""
        self.protocol = protocol
        if self.roots is not None:
            self.capabilities["roots"] = {} if protocol == STATELESS_VERSION \
                else {"listChanged": True}

    # -- what goes out -----------------------------------------------------------------------
    def send(self, msg):
        self.on_frame("→", msg)
        self._send(msg)

    def request(self, method, params=None, outcome=None, on_answer=None, retry=True):
        """Send a request; its answer settles `outcome` (a new one by default), or goes to
        `on_answer(result, error)` when given.

        At 2026-07-28, a -32022 whose `supported` lists this revision is retried once, as
        the server said (a server may refuse a first request it could not place)."""
        outcome = outcome or Outcome(method)
        answered = on_answer or (lambda result, error: outcome.fail(error)
                                 if error is not None else outcome.settle(result))
        sent = params
        if self.stateless:
            sent = {**(params or {}), "_meta": {
                META_VERSION: STATELESS_VERSION, META_CAPABILITIES: self.capabilities,
                META_CLIENT_INFO: self.client_info}}

        def answer(result, error):
            listed = supported_versions(error)
            if retry and self.stateless and listed and STATELESS_VERSION in listed:
                return self.request(method, params, outcome, on_answer, retry=False)
            answered(result, error)
        self._next_id += 1
        outcome.request_id = self._next_id
        self._pending[self._next_id] = answer
        self.send(wire.request(self._next_id, method, sent))
        return outcome

    def notify(self, method, params=None):
        self.send(wire.notification(method, params))

    def forget(self, outcome):
        """Stop waiting for `outcome` (it timed out): a late answer is dropped, and a tool
        call sends no further round."""
        self._pending.pop(outcome.request_id, None)
        outcome.fail(TimeoutError(f"no answer to {outcome.what}"))

    def abandon(self, outcome, reason):
        """Give up on `outcome` and tell the server (notifications/cancelled)."""
        if self._pending.pop(outcome.request_id, None) is not None:
            self.notify("notifications/cancelled",
                        {"requestId": outcome.request_id, "reason": reason})
        outcome.fail(wire.ConnectionClosed("abandoned"))

    def connect(self, wait_for_roots=True):
        """The handshake (2025 revisions), or `server/discover` at 2026-07-28. At 2025 it
        settles once the server has also asked for our roots (when we declared some)."""
        done = Outcome("connect")
        if self.stateless:
            def discovered(result, error):
                handshake = older_listed(error)
                if handshake is not None:  # the server only speaks an older revision
                    self.speak(handshake)
                    return self._handshake(done, wait_for_roots)
                if error is not None:
                    return done.fail(error)
                self.server_info = (result.get("_meta") or {}).get(META_SERVER_INFO) \
                    if isinstance(result, dict) else None
                done.settle()
            self.request("server/discover", {}, done, discovered)
            return done
        return self._handshake(done, wait_for_roots)

    def _handshake(self, done, wait_for_roots):
        """`initialize` and `notifications/initialized` (2025 revisions), settling `done`."""
        asked = self._roots_asked_again() if wait_for_roots and self.roots is not None \
            else None

        def initialized(result, error):
            if error is not None:
                return done.fail(error)
            self.server_info = result
            self.notify("notifications/initialized")
            if asked is None:
                done.settle()
            else:
                asked.then(lambda _: done.settle())
        self.request("initialize", {"protocolVersion": self.protocol,
                                    "capabilities": self.capabilities,
                                    "clientInfo": self.client_info}, done, initialized)
        return done

    def set_roots(self, roots):
        """Change our roots; at 2025-11-25 tell the server, settled once it re-asked."""
        self.roots = [as_uri(r) for r in roots]
        if self.stateless:
            done = Outcome("roots")
            done.settle()
            return done
        done = self._roots_asked_again()
        self.notify("notifications/roots/list_changed")
        return done

    def cancel(self, request_id, reason=None):
        params = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        self.notify("notifications/cancelled", params)

    # -- a tool call, through its input_required rounds -------------------------------------
    def call_tool(self, name, arguments=None, max_rounds=10):
        """Call a tool; at 2026-07-28 answer `input_required` rounds until a final result."""
        call = ToolCall(name, arguments or {}, max_rounds)
        self._send_round(call, {"name": name, "arguments": call.arguments})
        return call

    def _send_round(self, call, params):
        call.rounds += 1
        self.request("tools/call", params, call, lambda result, error: self._round(
            call, result, error))

    def _round(self, call, result, error):
        if error is not None:
            return call.fail(error)
        if not isinstance(result, dict) or result.get("resultType") != "input_required":
            return call.settle(result)
        if call.rounds >= call.max_rounds:
            return call.fail(RuntimeError(
                f"{call.name}: still input_required after {call.max_rounds} rounds"))
        call.state, call.responses, call.asked_all = result, {}, False
        questions = []
        try:  # everything is checked before anything is answered
            for key, method, params in input_requests(result):
                if method == "roots/list":
                    call.responses[key] = self._roots_result()
                else:
                    mode = self._check_elicitation(params)
                    questions.append(Question(self, params, mode, key=key, call=call))
        except wire.RpcError as err:
            return call.fail(err)
        call.waiting = set(questions)
        for question in questions:
            if not call.done:
                self.ask(question)
        call.asked_all = True
        self._retry_when_answered(call)

    def _question_done(self, question):
        call = question.call
        if call is not None:
            call.waiting.discard(question)
            if call.asked_all:
                self._retry_when_answered(call)

    def _retry_when_answered(self, call):
        if call.done or call.waiting:
            return
        params = {"name": call.name, "arguments": call.arguments,
                  "inputResponses": call.responses}
        if "requestState" in call.state:
            params["requestState"] = call.state["requestState"]
        self._send_round(call, params)

    # -- what comes in -----------------------------------------------------------------------
    def receive(self, line):
        """One frame from the server. Garbage is recorded through `on_frame` and ignored."""
        if not line.strip():
            return
        try:
            msg = self._parse(line)
        except (wire.RpcError, RecursionError):
            return
        if msg["kind"] == "response":
            answered = self._pending.pop(msg["id"], None)  # one nobody asked for is dropped
            if answered is not None:
                error = wire.RpcError.from_dict(msg["error"]) if "error" in msg else None
                answered(None if error is not None else msg["result"], error)
        elif msg["kind"] == "notification":
            self._note(msg)
        else:
            self._serve(msg)

    def _parse(self, line):
        """The message in `line` (wire.parse), after recording the frame through `on_frame`;
        a subclass that already parsed the frame (the grader's intake) overrides this."""
        try:
            self.on_frame("←", json.loads(line))
        except ValueError:
            self.on_frame("←", {"unparseable": line[:200].decode("utf-8", "replace")
                                if isinstance(line, bytes) else line[:200]})
        except RecursionError:
            raise wire.RpcError(wire.PARSE_ERROR, "nested too deep to read") from None
        return wire.parse(line)

    def _note(self, msg):
        if len(self.notifications) >= MAX_NOTIFICATIONS:
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        self.notifications.append({"method": msg["method"], "params": params})
        if msg["method"] == "notifications/cancelled" and wire.valid_id(params.get("requestId")):
            self.cancelled.add(params["requestId"])
        if self.on_notification is not None:
            self.on_notification(self.notifications[-1])

    def _serve(self, msg):
        """A request from the server (2025 revisions): ping and roots/list are answered here,
        a method of `handlers` by its function, an elicitation goes to the user."""
        method = msg["method"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            if method == "ping":
                return self.send(wire.response(msg["id"], {}))
            if method == "roots/list":
                return self.send(wire.response(msg["id"], self._roots_result()))
            if method in self.handlers:
                return self.send(wire.response(msg["id"], self.handlers[method](params)))
            if method != "elicitation/create":
                raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found: {method}")
            mode = self._check_elicitation(params)
        except wire.RpcError as err:
            return self.send(wire.error_response(msg["id"], err))
        self.ask(Question(self, params, mode, request_id=msg["id"]))

    def _roots_result(self):
        if self.roots is None:
            raise wire.RpcError(wire.METHOD_NOT_FOUND, "Roots not supported")
        self.roots_asked += 1
        waiters, self._roots_waiters = self._roots_waiters, []
        for waiter in waiters:
            waiter.settle()
        return {"roots": [{"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1]}
                          for uri in self.roots]}

    def _roots_asked_again(self):
        waiter = Outcome("roots/list")
        self._roots_waiters.append(waiter)
        return waiter

    def _check_elicitation(self, params):
        """The mode must be one we declared (a bare `{}` is form only)."""
        mode = params.get("mode", FORM_MODE)
        declared = self.capabilities.get("elicitation")
        if declared is None or (mode == URL_MODE and URL_MODE not in declared) or (
                mode == FORM_MODE and FORM_MODE not in declared and URL_MODE in declared):
            raise wire.RpcError(wire.INVALID_PARAMS, f"Elicitation mode {mode!r} not declared")
        return mode


def with_defaults(schema, result):
    """`result` (an ElicitResult) with, when it accepts a form, the declared `default` of
    every field its content leaves out (SEP-1034: a client that knows defaults applies
    them). Anything else comes back as it was."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(result, dict) or result.get("action") != "accept" or \
            not isinstance(properties, dict):
        return result
    content = result.get("content") if isinstance(result.get("content"), dict) else {}
    defaults = {name: prop["default"] for name, prop in properties.items()
                if isinstance(prop, dict) and "default" in prop and name not in content}
    return {**result, "content": {**defaults, **content}} if defaults else result


def supported_versions(error):
    """The versions a -32022 error lists (`data.supported`), or None for any other error."""
    if not isinstance(error, wire.RpcError) or error.code != UNSUPPORTED_PROTOCOL_VERSION:
        return None
    listed = error.data.get("supported") if isinstance(error.data, dict) else None
    return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []


def older_listed(error):
    """The newest handshake revision a -32022 lists that this client speaks, when it does
    not list 2026-07-28 (a server of the older revisions only), else None."""
    listed = supported_versions(error)
    if listed is None or STATELESS_VERSION in listed:
        return None
    return next((v for v in HANDSHAKE_VERSIONS if v in listed), None)


def input_requests(result):
    """(key, method, params) of each request in an `input_required` result; a method we
    cannot answer is refused here, before anything is answered."""
    requests, found = result.get("inputRequests"), []
    for key, request in (requests if isinstance(requests, dict) else {}).items():
        request = request if isinstance(request, dict) else {}
        params = request.get("params") if isinstance(request.get("params"), dict) else {}
        if request.get("method") not in ("roots/list", "elicitation/create"):
            raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Cannot answer {request.get('method')}")
        found.append((key, request["method"], params))
    return found


def questions_in(frames):
    """The elicitation params the server sent in these (direction, msg) frames, in order:
    `elicitation/create` requests (2025-11-25) and `input_required` entries (2026-07-28)."""
    found = []
    for direction, msg in frames:
        if direction != "←" or not isinstance(msg, dict):
            continue
        if msg.get("method") == "elicitation/create":
            found.append(msg.get("params") if isinstance(msg.get("params"), dict) else {})
        result = msg.get("result")
        if isinstance(result, dict) and isinstance(result.get("inputRequests"), dict):
            for request in result["inputRequests"].values():
                if isinstance(request, dict) and request.get("method") == "elicitation/create":
                    params = request.get("params")
                    found.append(params if isinstance(params, dict) else {})
    return found


def as_uri(root):
    root = os.fspath(root)
    return root if root.startswith("file:") else path_to_uri(root)


def _of_core(name):
    return property(lambda self: getattr(self.core, name),
                    lambda self, value: setattr(self.core, name, value))


class Driver:
    """What both drivers show of their core (the drivers add the waiting and the user)."""

    core: ClientCore
    protocol, capabilities, roots = _of_core("protocol"), _of_core("capabilities"), \
        _of_core("roots")
    notifications, server_info = _of_core("notifications"), _of_core("server_info")
    roots_asked, on_notification = _of_core("roots_asked"), _of_core("on_notification")
    stateless = property(lambda self: self.core.stateless)
