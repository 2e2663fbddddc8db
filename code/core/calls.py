"""The calls of one session: run a tool, park it until what it needs, answer it.

A tools/call becomes a `Call` record; `Calls.run` runs its tool from the start. The run ends
one of four ways: a result (the call is answered); questions for the client (`NeedInput`:
its revision sends them or ends the round with `input_required`, revisions.py); the roots
still being asked (`NeedRoots`, 2025-11-25); or a URL flow to wait for (`WaitFlow`). A
parked call runs again, from the start, when its answers, its roots, its flow's end or a
timeout come. Whatever comes back in (an answer, a timer, a page's completion) has entered
through the session's guarded `_enter`; whatever goes out goes through the session's `send`
and `request`, so this file opens no pipe and starts no thread.

Cancellation: `notifications/cancelled` drops a parked call. Nothing of it runs again, no
result is sent, and (2025-11-25) the client is told that the server's own pending questions
for that call are void, so it can close the form.

Deliberate simplifications: answers, question digests and memos are kept in memory (at
2026-07-28 they travel sealed in `requestState` instead); MAX_RUNS is a plain count.
"""

from core.context import NeedInput, NeedRoots, ToolContext, WaitFlow
from core.tooling import (
    NOT_JSON_PROBLEMS,
    MissingCapability,
    ToolError,
    URLElicitationRequired,
    crash_text,
    error_result,
    json_problem,
    ok,
)
from shared import wire

PROGRESS_EVERY = 2.0  # seconds between notifications/progress while a call waits for a page
MAX_RUNS = 64         # runs of one call: far above what any lesson tool needs

ROOTS_LATE = "El cliente no respondió a roots/list a tiempo: no toco ningún archivo."
NOBODY_ANSWERED = "Nadie respondió a tiempo; no hice nada."
NOT_JSON = ("La herramienta {name} devolvió algo que no se puede enviar como JSON ({problem}), "
            "así que no lo envié. Devuelve solo texto, números, booleanos, None, listas y "
            "diccionarios.")


class Call:
    """One tools/call in progress: what its tool asked so far and what it waits for.

    `request_id` is the client's JSON-RPC id; `revision` how it is spoken (revisions.py:
    its `protocol`, the client's `capabilities`, whether it is `stateless`);
    `progress_token` the client's, if any. `answers` maps a question key to the client's
    result, `asked` a question key to the digest of the question, `failed` a question key to
    why no answer will come, `timers` a name to a handle with .cancel(), and `memos` keeps
    the tool's ctx.memo values.

    Records in code/ are plain classes or namedtuples, never dataclasses: importing those
    would double the demo's start-up (README, "Speed")."""

    stale = 0
    runs = 0
    done = False

    def __init__(self, request_id, name, arguments, revision, progress_token=None):
        self.request_id, self.progress_token = request_id, progress_token
        self.name, self.arguments, self.revision = name, arguments, revision
        self.answers, self.asked, self.memos, self.failed, self.timers = {}, {}, {}, {}, {}
        self.pin_keys = set()  # 2026-07-28: the roots it accepted (their pins travel sealed)

    @property
    def protocol(self):
        return self.revision.protocol

    @property
    def capabilities(self):
        return self.revision.capabilities

    @property
    def stateless(self):
        return self.revision.stateless


class Calls:
    """The tools/calls of one session in progress, and the questions and waits they park on.

    `session` gives `send`, `request` (our own request id), `later` (a timer through the
    guarded entry), `server`, `config` and `user`. `by_id` maps the client's request id to
    its parked Call (the session's `calls`)."""

    def __init__(self, session):
        self.session, self.server = session, session.server
        self.by_id = {}                    # client request id -> parked Call
        self._questions = {}               # our request id -> (Call, question key)
        self._roots_waiters = []           # calls parked until the roots settle
        self._flow_waiters = {}            # elicitation id -> [(Call, wait key)]

    # -- a call starts ----------------------------------------------------------------------------
    def start(self, msg, params, revision):
        """tools/call: check it, let its revision restore what it carries, and run it.
        Returns None: the call is answered by `run`, now or once it is no longer parked."""
        name, arguments = params.get("name"), params.get("arguments", {})
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise wire.RpcError(wire.INVALID_PARAMS, f"Unknown tool: {name!r}")
        if not isinstance(arguments, dict):
            raise wire.RpcError(wire.INVALID_PARAMS, "arguments must be an object")
        if msg["id"] in self.by_id:  # its answer and its cancellation would be ambiguous
            raise wire.RpcError(wire.INVALID_REQUEST, "Request id already used by a call in "
                                "progress")
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        token = meta.get("progressToken")
        call = Call(msg["id"], name, arguments, revision,
                    progress_token=token if wire.valid_id(token) else None)
        revision.start(self, call, params)
        self.by_id[call.request_id] = call
        self.run(call)

    def run(self, call):
        """Run the call's tool from the start; answer it, or park it until what it needs.

        Whatever goes wrong in here ends this call only, with a tool error."""
        if call.done:
            return
        try:
            self._run_once(call)
        except (Exception, SystemExit) as exc:
            self.server.log(f"internal error running {call.name}: {type(exc).__name__}: {exc}")
            if not call.done:
                self.answer(call, error_result(f"Error interno en la herramienta {call.name}."))

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
                self.answer(call, self._not_json(call, problem))
            else:
                call.revision.ask(self, call, need)
            return
        except NeedRoots:
            self._roots_waiters.append(call)
            self._set_timer(call, "roots", self.session.config.roots_timeout,
                            lambda: self._roots_late(call))
            return
        except WaitFlow as wait:
            self._park_on_flow(call, wait)
            return
        except wire.RpcError as err:
            self.answer(call, err)
            return
        self.answer(call, result)

    def _invoke(self, call):
        tool = self.server.tools[call.name]
        problem = tool.argument_problem(call.arguments)
        if problem:
            return error_result(f"Argumentos no válidos para {call.name}: {problem}.")
        ctx = ToolContext(self.session, call)
        try:
            result = tool.handler(ctx, **call.arguments)
        except (MissingCapability, URLElicitationRequired) as exc:  # each revision its own way
            return call.revision.refused(self, call, exc)
        except ToolError as exc:
            return error_result(str(exc))
        except (wire.RpcError, NeedInput, NeedRoots, WaitFlow):
            raise
        except (Exception, SystemExit) as exc:  # a bug in a tool is reported, never shown
            self.server.log(f"tool {call.name} crashed: {crash_text(exc, tool.handler)}")
            return error_result(f"Error interno en la herramienta {call.name}.")
        finally:
            ctx.release()
        if isinstance(result, str):
            return ok(result)
        if isinstance(result, dict) and isinstance(result.get("content"), list):
            return result
        self.server.log(f"tool {call.name} returned {type(result).__name__}, not a result")
        return error_result(f"La herramienta {call.name} devolvió un resultado no válido.")

    # -- a call ends ------------------------------------------------------------------------------
    def answer(self, call, result, result_type="complete"):
        """End the call with `result` (a tool result, or an RpcError) and forget it.

        What would not travel as strict JSON (a tool's own result, error data or question)
        becomes a tool error that says so, the same at every revision."""
        try:
            if isinstance(result, wire.RpcError):
                wire.check_json(result.to_dict())
                frame = wire.error_response(call.request_id, result)
            else:
                result = call.revision.wrap(result, result_type)
                frame = wire.Checked(call.request_id, result, wire.check_json(result))
        except wire.NotJSON as exc:
            error = self._not_json(call, NOT_JSON_PROBLEMS[exc.kind])
            frame = wire.response(call.request_id, call.revision.wrap(error))
        self._void(self._finish(call), "La llamada que hacía esta pregunta ya terminó.")
        self.session.send(frame)

    def _not_json(self, call, problem):
        self.server.log(f"tool {call.name}: what it would send is not JSON ({problem})")
        return error_result(NOT_JSON.format(name=call.name, problem=problem))

    def _finish(self, call):
        """The call is over (answered, failed or cancelled): forget it and its timers.
        Returns the ids of our questions it left unanswered (the caller voids them)."""
        call.done = True
        self.by_id.pop(call.request_id, None)
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

    def _void(self, questions, reason):
        """Tell the client our `questions` need no answer any more (it may close them)."""
        for question in questions:
            self.session.send(wire.notification("notifications/cancelled",
                                                {"requestId": question, "reason": reason}))

    def cancel(self, request_id, reason):
        """`notifications/cancelled` for a call: drop it, and void its questions."""
        call = self.by_id.get(request_id) if wire.valid_id(request_id) else None
        if call is None:
            return  # finished already, or never parked: nothing to stop
        self.server.log(f"tools/call {request_id!r} ({call.name}) cancelled by the client"
                        + (f": {reason}" if isinstance(reason, str) else ""))
        self._void(self._finish(call),  # our own pending questions for it are void now
                   "La llamada que hacía esta pregunta se canceló.")

    def close(self):
        for call in list(self.by_id.values()):
            self._finish(call)

    # -- parked on questions (2025-11-25: our own requests to the client) ---------------------
    def keys_asked(self, call):
        """The question keys of `call` still waiting for the client's answer."""
        return {key for owner, key in self._questions.values() if owner is call}

    def ask_client(self, call, key, request):
        """Send the question as our own request; the answer re-runs the call."""
        question = self.session.request(request["method"], request.get("params"))
        self._questions[question] = (call, key)
        self._set_timer(call, f"question-{question}", self.session.config.elicit_timeout,
                        lambda: self._question_late(question))

    def answered(self, msg_id, result, error):
        """The client answered one of our questions: True, or False if it was none of them.
        The call runs again once the round's last answer is in (or at once, on an error)."""
        if msg_id not in self._questions:
            return False
        call, key = self._questions.pop(msg_id)
        self._cancel_timer(call, f"question-{msg_id}")
        if error is not None:
            call.failed[key] = f"El cliente no pudo responder: {error.message}"
        else:
            call.answers[key] = result
        if error is not None or not self.keys_asked(call):  # a round's last answer
            self.run(call)
        return True

    def _question_late(self, question):
        if question not in self._questions:
            return
        call, key = self._questions.pop(question)
        self.session.send(wire.notification("notifications/cancelled", {
            "requestId": question, "reason": "Nadie respondió a tiempo."}))
        call.failed[key] = NOBODY_ANSWERED
        self.run(call)

    # -- parked on the roots (2025-11-25: while roots/list is unanswered) -----------------------
    def roots_settled(self):
        """The session's roots are known again: run every call that waited for them."""
        waiters, self._roots_waiters = self._roots_waiters, []
        for call in waiters:
            self._cancel_timer(call, "roots")
            self.run(call)

    def _roots_late(self, call):
        if call in self._roots_waiters:
            self._roots_waiters.remove(call)
            call.failed["roots"] = ROOTS_LATE
            self.run(call)

    # -- parked on a URL flow (the setup page) ----------------------------------------------------
    def _park_on_flow(self, call, wait):
        self._flow_waiters.setdefault(wait.elicitation_id, []).append((call, wait.key))
        self._set_timer(call, wait.key, wait.seconds, lambda: self._flow_late(call, wait.key))
        if call.progress_token is not None:
            self._progress(call, wait, 0)

    def _flow_late(self, call, key):
        if not call.done:
            call.answers[key] = "timeout"
            self._unwait(call)
            self.run(call)

    def _progress(self, call, wait, ticks):
        """Every PROGRESS_EVERY seconds while the call waits for the page: seconds waited."""
        if (call, wait.key) not in self._flow_waiters.get(wait.elicitation_id, ()):
            return  # the wait is over (the page finished, the time ran out or the call ended)
        self.session.send(wire.notification("notifications/progress", {
            "progressToken": call.progress_token, "progress": ticks * PROGRESS_EVERY,
            "total": wait.seconds,
            "message": "Esperando a que termines en la página de configuración…"}))
        self._set_timer(call, "progress", PROGRESS_EVERY,
                        lambda: self._progress(call, wait, ticks + 1))

    def flow_finished(self, elicitation_id):
        """A URL flow ended on its page: run every call that waited for it."""
        for call, key in self._flow_waiters.pop(elicitation_id, []):
            self._cancel_timer(call, key)
            self.run(call)

    def _unwait(self, call):
        """Take the call off every flow it waits for; a flow nobody waits for is forgotten."""
        for elicitation_id, waiters in list(self._flow_waiters.items()):
            waiters[:] = [(c, k) for c, k in waiters if c is not call]
            if not waiters:
                del self._flow_waiters[elicitation_id]

    # -- timers -----------------------------------------------------------------------------------
    def _set_timer(self, call, name, seconds, fn):
        self._cancel_timer(call, name)
        call.timers[name] = self.session.later(seconds, fn, f"timer {name} of {call.name}")

    @staticmethod
    def _cancel_timer(call, name):
        timer = call.timers.pop(name, None)
        if timer is not None:
            timer.cancel()
