"""What a tool sees: the roots, the notes and the user, the same in both protocol revisions.

A tool calls `ctx.roots`, `ctx.notes()`, `ctx.elicit_form(...)`, `ctx.elicit_url(...)` and
never asks which revision is spoken, nor waits for anything. A question the tool has no answer
for yet stops the run (`NeedInput`); the session sends it to the client and runs the tool
again, from the start, when the answer comes. On that run the same question returns the
answer. So a tool must ask before it changes anything (the rule anyway), and must ask the same
way on every run: what it decides from the disk or the roots before asking (which notes
match) and values that must not change (a flow id) go through `ctx.memo(...)`. What it is
about to touch is checked again right before acting, because the world may have changed
while the user was answering: `ctx.recheck(note)` says whether the chosen note is still the
same file inside the current roots, and `ctx.delete(note)` / `ctx.archive(note)` check that
again and act on the same held folder, so the check and the action can never be about two
different files (store.py, roots.py).

- At 2025-11-25 a question is a real request to the client (`elicitation/create`) and the
  roots are the session's (asked with `roots/list`, kept up to date by `list_changed`).
- At 2026-07-28 a question is an entry of an `input_required` result, and the roots are asked
  the same way, once per request.

Several questions that do not depend on each other can go in one round: build each with
`ctx.form_request(...)`, `ctx.url_request(...)`, `ctx.sampling_request(...)` or
`ctx.roots_request()`, and ask them with `ctx.ask_together(name=request, ...)`, which returns
{name: answer}. At 2026-07-28 they are the entries of one `input_required` result (the names are
its `inputRequests` keys); at 2025-11-25 each is its own request to the client, all sent at
once, and the tool runs again once every one is answered (roots are the session's: never
asked again).

An answer is bound to a digest of its question: if the question changed between two runs (the
roots changed while the form was open, so other notes match), the old answer is stale and the
question is asked again.

Deliberate simplifications: the single questions (`elicit_form`, `elicit_url`) are keyed by
the order in which the tool asks (`ask-1`, `ask-2`, ...; `roots` for the roots, `wait-1` ...
for waits); only `ask_together` names its keys.
"""

from __future__ import annotations

import json
import unicodedata
from urllib.parse import urlencode

from core import elicitation
from core.request_state import digest
from core.tooling import MissingCapability, ToolError, json_problem
from notes import store
from shared import wire
from shared.protocol import FORM_MODE, URL_MODE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    # Only what lies below this module: the session, the call and the revision that use a
    # context, and the URL flow above it, are named in the docstrings instead, so that no
    # import (not even an editor's) goes back up.
    from collections.abc import Callable, Iterable
    from typing import Any

    from notes.roots import RootSet

MAX_STALE_ANSWERS = 3  # a tool whose question changes on every run is stopped after this
MAX_MEMO_BYTES = 1024 * 1024  # all memos of one call, encoded: requestState must fit a frame
NO_URL_CAPABILITY = "Este cliente no declaró elicitation.url."


def title_key(title):
    """What two titles must share to be the same title: NFKC, ignoring case and the spaces
    around it."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", title).casefold()).strip()


class NeedInput(BaseException):
    """Stops a tool run at the questions it has no answer for yet: `requests`, {key: request
    object}, asked together in one round.

    A BaseException, like KeyboardInterrupt, so that a tool's `except Exception` cannot
    swallow it by accident. The same holds for the two below.
    """

    def __init__(self, requests):
        super().__init__(*requests)
        self.requests = requests


class InputRequest:
    """One thing a tool may ask (made by `ctx.form_request` and friends, for `ask_together`).

    `request` is what goes to the client ({"method", "params"}) and `read(result)` turns the
    client's answer into what the tool gets; or, when nothing needs asking (the 2025-11-25
    roots, the server's own folders), `request` is None and `local()` gives the value."""

    def __init__(self, request: dict[str, Any] | None = None,
                 read: Callable[[Any], Any] | None = None,
                 local: Callable[[], Any] | None = None) -> None:
        self.request, self.read, self.local = request, read, local


class NeedRoots(BaseException):
    """Stops a 2025-11-25 run while the client's roots are being asked (roots/list)."""


class WaitFlow(BaseException):
    """Stops a run until a URL-mode flow finishes or `seconds` pass (never blocking)."""

    def __init__(self, key, elicitation_id, seconds):
        super().__init__(key)
        self.key, self.elicitation_id, self.seconds = key, elicitation_id, seconds


class ToolContext:
    """Everything a tool may use: the roots, the notes, the user (through elicitation).

    `call` is the session's record of this tools/call (calls.py): its revision
    (revisions.py, which answers where 2025-11-25 and 2026-07-28 differ), the client's
    capabilities, and the answers, question digests and memos gathered so far.
    """

    protocol_version: str                 # this call's revision, e.g. "2025-11-25"
    client_capabilities: dict[str, Any]   # what the client declared
    stateless: bool                       # a 2026-07-28 request (no session)
    revision: Any                         # where the revisions differ (revisions.Revision)

    def __init__(self, session: Any, call: Any) -> None:  # session.Session, calls.Call
        self.session = session
        self.server = session.server
        self.call = call
        self.protocol_version = call.protocol
        self.client_capabilities = call.capabilities
        self.stateless = call.stateless
        self.revision = call.revision
        self.handles = session.handles
        self._roots = None
        self._roots_answer = None  # 2026-07-28: a roots/list answer got in a batch
        self._opened = []          # 2026-07-28: the RootSets this run accepted (released)
        self._counters = {}

    # -- roots and notes ---------------------------------------------------------------------
    @property
    def roots(self) -> RootSet:
        """The RootSet this call acts against. It cannot change during one run (a roots change
        is applied between two runs), and it holds its root folders open: an action through
        it (`ctx.recheck`, `ctx.delete`, `ctx.archive`, `store.write_note(ctx.roots, ...)`)
        checks and acts on those held folders, never on a path that may have been swapped."""
        if self._roots is None:
            request = self.roots_request()
            if request.request is not None and self._roots_answer is not None:
                request.read(self._roots_answer)  # a batch of this run already got them
            else:
                self._ask_one(request, "roots")
        return self._roots

    def notes(self, skipped: list[str] | None = None) -> list[store.Note]:
        """Every note inside the roots (a list of store.Note, sorted by title and date).

        What the listing had to leave out (names that are not UTF-8, links, ids claimed by
        two files) is explained in `skipped`, when you pass a list. ToolError when the notes
        cannot be listed truthfully (a shared folder was replaced, say)."""
        try:
            return store.scan(self.roots, skipped)
        except store.StoreError as exc:
            raise ToolError(f"No pude leer las notas: {exc}.") from None

    def find_notes(self, title: str) -> list[store.Note]:
        """Notes inside the roots whose title matches, ignoring case, surrounding spaces and
        how its characters are encoded (Unicode NFKC: «Café» typed as one character or as
        «e» plus a combining accent is the same title)."""
        wanted = title_key(title)
        return [note for note in self.notes() if title_key(note.title) == wanted]

    def find_note(self, note_id: str) -> store.Note:
        """The note with this id inside the roots; ToolError when there is none."""
        note = next((n for n in self.notes() if n.id == note_id), None)
        if note is None:
            raise ToolError(f"No hay ninguna nota con id {note_id!r} dentro de las roots.")
        return note

    def recheck(self, note: store.Note | list[Any]) -> store.Note:
        """The note as it is right now, if it is still the one that was listed.

        `note` is a store.Note, or its fields as `ctx.memo` gives them back. It must still be
        inside the current roots (its root still shared, that folder neither moved nor
        replaced by a link), the same file (device and inode: another file put in its place
        does not count) and keep its id. Otherwise ToolError, with the reason, saying that
        nothing was done. Call it right before acting, after the user answered."""
        return self._on_note(store.recheck, note)

    def delete(self, note: store.Note | list[Any]) -> store.Note:
        """Delete the note: re-checked as `recheck` does, on the same held folder; returns
        the note as it was. ToolError (nothing changed) when the re-check fails."""
        return self._on_note(store.delete, note)

    def archive(self, note: store.Note | list[Any]) -> str:
        """Move the note into the `.archive/` folder of its root in one rename, never
        overwriting; re-checked as `recheck` does, on the same held folder. Returns the
        archived file's path. ToolError (nothing changed) when it cannot."""
        return self._on_note(store.archive, note)

    def _on_note(self, action, note):
        try:
            return action(self.roots, note)
        except store.StoreError as exc:
            raise ToolError(f"No hice nada: {exc}.") from None

    def release(self) -> None:
        """The run is over: close what this run opened (2026-07-28: its request's roots)."""
        for roots in self._opened:
            roots.close()

    # -- the user ------------------------------------------------------------------------------
    def elicit_form(self, message: str, properties: dict[str, dict[str, Any]],
                    required: Iterable[str] = (), quoted: Iterable[str] = ()
                    ) -> elicitation.Answer:
        """Ask the user to fill a form; returns an elicitation.Answer, checked on our side.

        `quoted`: texts from the user's data that `message` quotes (a note's title), which
        the secret-word check leaves out (elicitation.check_schema)."""
        return self._ask_one(self.form_request(message, properties, required, quoted))

    def elicit_url(self, message: str, url: str, elicitation_id: str) -> elicitation.Answer:
        """Ask the user to open a URL; `accept` only means they agreed to open it."""
        return self._ask_one(self.url_request(message, url, elicitation_id))

    # -- several questions in one round ---------------------------------------------------------
    def ask_together(self, **requests: InputRequest) -> dict[str, Any]:
        """Ask several independent things in one round; returns {name: answer}.

            answers = ctx.ask_together(
                nota=ctx.form_request("¿Qué nota nueva escribo?", {"titulo": {"type": "string"}}),
                carpetas=ctx.roots_request())

        Each keyword is a name of your choice (at 2026-07-28, its `inputRequests` key) and each
        value an InputRequest from `form_request`, `url_request`, `sampling_request` or
        `roots_request`. What is already answered comes back; everything else is asked at once
        (one `input_required` result at 2026-07-28; separate requests sent together at
        2025-11-25) and the tool runs again when all are answered. Ask together only what does
        not depend on another answer (a form that lists the notes found in the roots needs the
        roots first)."""
        for name, request in requests.items():
            if not name.isidentifier() or not isinstance(request, InputRequest) or (
                    name == "roots" and request.request not in (None, ROOTS_REQUEST)):
                raise ToolError(f"ctx.ask_together: {name!r} no es un nombre válido o su valor "
                                "no viene de ctx.form_request, url_request, sampling_request o "
                                "roots_request ('roots' se reserva para las roots).")
        values, missing = {}, {}
        for name, request in requests.items():
            if request.request is None:
                values[name] = request.local()
                continue
            answer = self._answered(name, request.request)
            if answer is UNANSWERED:
                missing[name] = request.request
            else:
                values[name] = request.read(answer)
        if missing:
            raise NeedInput(missing)
        return values

    def form_request(self, message: str, properties: dict[str, dict[str, Any]],
                     required: Iterable[str] = (), quoted: Iterable[str] = ()
                     ) -> InputRequest:
        """A form to ask with `ask_together` (as `elicit_form`); its answer is an
        elicitation.Answer, checked on our side."""
        if not elicitation.supports_form(self.client_capabilities):
            raise MissingCapability(
                "Este cliente no declaró la capacidad elicitation (modo formulario): no puedo "
                "preguntarte, así que no hice nada.", {"elicitation": {FORM_MODE: {}}})
        try:
            params = elicitation.form(message, properties, required, self.protocol_version,
                                      quoted)
        except elicitation.SchemaError as exc:
            raise ToolError(f"El servidor se negó a enviar este formulario: {exc}") from None
        return InputRequest({"method": "elicitation/create", "params": params},
                            lambda result: self._answer(params["requestedSchema"], result))

    def url_request(self, message: str, url: str, elicitation_id: str,
                    required: bool = False) -> InputRequest:
        """A URL to open, to ask with `ask_together` (as `elicit_url`); its answer is an
        elicitation.Answer. `required=True`: the request cannot go on without it (as
        `require_url`: at 2025-11-25 the call ends with -32042 instead of asking)."""
        if not elicitation.supports_url(self.client_capabilities):
            raise MissingCapability(NO_URL_CAPABILITY, {"elicitation": {URL_MODE: {}}})
        params = self.url_params(message, url, elicitation_id)
        request = InputRequest({"method": "elicitation/create", "params": params},
                               lambda result: self._answer(None, result))
        return self.revision.require_url(params, request) if required else request

    def sampling_request(self, prompt: str | list[dict[str, Any]], max_tokens: int = 100,
                         system_prompt: str | None = None) -> InputRequest:
        """A completion the client's model writes (`sampling/createMessage`), to ask with
        `ask_together`. `prompt` is the user message's text (or a list of sampling messages);
        the answer is the client's CreateMessageResult (a dict with `role`, `content`,
        `model`). The client must have declared `sampling`."""
        if not isinstance(self.client_capabilities.get("sampling"), dict):
            raise MissingCapability("Este cliente no declaró la capacidad sampling.",
                                    {"sampling": {}})
        messages = prompt if isinstance(prompt, list) else [
            {"role": "user", "content": {"type": "text", "text": prompt}}]
        if not all(_is_text_message(m) for m in messages) or not messages or \
                not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or \
                max_tokens < 1 or not isinstance(system_prompt, (str, type(None))):
            raise ToolError("ctx.sampling_request necesita un texto (o mensajes {role: user o "
                            "assistant, content: {type: text, text}}), max_tokens un entero "
                            "positivo y system_prompt un texto.")
        params = {"messages": messages, "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        return InputRequest({"method": "sampling/createMessage", "params": params},
                            _sampled)

    def roots_request(self) -> InputRequest:
        """The client's roots, to ask with `ask_together`; the answer is this call's RootSet
        (`ctx.roots`, which then needs no round of its own). Asked only at 2026-07-28 from a
        client that declared roots: otherwise they are already known (the session's roots,
        or the server's own folders) and nothing is sent. Where they come from is the
        revision's to say (revisions.py); the first RootSet a run gets is kept as `ctx.roots`."""
        made = self.revision.roots_request(self)
        if made.request is None:
            return InputRequest(local=lambda: self._keep_roots(made.local))

        def read(result):
            self._roots_answer = result  # for ctx.ask_roots, without another round
            return self._keep_roots(lambda: made.read(result))
        return InputRequest(made.request, read)

    def _keep_roots(self, make: Callable[[], RootSet]) -> RootSet:
        if self._roots is None:
            self._roots = make()
        return self._roots

    # -- URL mode and the provider of exercise 3 ------------------------------------------------
    @property
    def user(self) -> str:
        """Who uses this connection: the identity a flow and a credential are bound to (in a
        remote server, the `sub` of MCP authorization; here the server's local user, or the
        grader's second simulated user)."""
        return self.session.user

    @property
    def provider(self) -> Any:
        """The server's Nube de Copias (nube_copias.Provider or RemoteProvider): `backup(token,
        notes)`."""
        return self.server.provider

    @property
    def url_ttl(self) -> float:
        """Seconds a URL-mode link (and its state) may live on this server (`--url-ttl`)."""
        return self.server.config.url_ttl

    @property
    def sdk_version(self) -> str | None:
        """The SDK version this server says it runs on (`--sdk-version`; None: unknown): the
        one the URL-mode guard is given."""
        return self.server.config.sdk_version

    def url_mode_allowed(self) -> bool:
        """Does the solution's URL-mode guard allow URL mode for this call (SDK version,
        protocol, declared capabilities)? No guard, or a guard that fails, means no."""
        return self.server.allow_url_mode(self.protocol_version, self.client_capabilities)

    def page_url(self, path: str, **params: str) -> str:
        """The absolute URL of `path` on the server's own pages (where a driver serves them
        now), with `params` as its query."""
        page = self.server.page()
        return page.base + path + ("?" + urlencode(params) if params else "")

    # -- the server's own URL flows (url_mode.FlowStore: the lesson's notes_setup and sync) -----
    def start_flow(self, provider: str) -> Any:  # url_mode.FlowRecord
        """A new URL-mode flow of this call's user with `provider`, kept by the server
        (url_mode.FlowStore: an unguessable `elicitation_id`, single use, expiring after
        `url_ttl`). When its page ends it, this connection hears of it (the tool's parked run
        wakes; at 2025-11-25 the client gets `notifications/elicitation/complete`). Keep its
        id with `ctx.memo`: every run of the call must use the same flow."""
        return self.server.flows.start(self.session.id, self.user, provider,
                                       self.session.flow_listener(self.stateless))

    def flow(self, elicitation_id: str) -> Any:  # url_mode.FlowRecord or None
        """The server's flow with this id; None when it expired or never existed."""
        return self.server.flows.get(elicitation_id)

    def flow_url(self, elicitation_id: str) -> str:
        """The absolute URL of the server's consent page for this flow (where a driver
        serves the page now)."""
        return self.server.page().url_for(elicitation_id)

    def retire_flow(self, elicitation_id: str) -> None:
        """The user said no: this flow's link stops working now."""
        self.server.flows.retire(elicitation_id)

    def is_configured(self, provider: str) -> bool:
        """Did this call's user (never another user of a shared server) finish a flow with
        `provider`?"""
        return self.server.flows.is_configured(self.user, provider)

    def completion_notifier(self) -> Callable[[str], None]:
        """A function `notify(elicitation_id)` that sends `notifications/elicitation/complete`
        to this connection's client, from any thread (a page's): keep it with the flow and
        call it when the flow really ended. It sends whatever it is told, at any revision."""
        return self.session.completion_notifier()

    def url_params(self, message: str, url: str, elicitation_id: str) -> dict[str, str]:
        """The params of a URL-mode elicitation/create for this call's revision (2026-07-28
        dropped `elicitationId`)."""
        return self.revision.url_params(message, url, elicitation_id)

    def require_url(self, message: str, url: str, elicitation_id: str) -> elicitation.Answer:
        """This request cannot go on until the user finishes a URL-mode step.

        2025-11-25: ends the request with the -32042 error carrying the URL elicitation (the
        client opens it, and retries once the page is done). 2026-07-28, where -32042 is
        retired: asks in-band, like `elicit_url`, and returns the Answer.
        """
        return self._ask_one(self.url_request(message, url, elicitation_id, required=True))

    def wait_flow(self, record: Any, seconds: float | None = None) -> str:  # a FlowRecord
        """Give the user up to `seconds` (None: the server's `--setup-wait`) to finish the URL
        flow `record`; returns its status.

        The run is parked, never blocked: it runs again when the page completes the flow or
        the time is up, whichever comes first, and then this returns "completed", "denied"
        or "pending".
        """
        if record.status != "pending":
            return record.status
        key = self._next("wait")
        if key in self.call.answers:  # this wait is over: the time ran out
            return record.status
        if seconds is None:
            seconds = self.server.config.setup_wait
        raise WaitFlow(key, record.elicitation_id, seconds)

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """A value that stays the same on every run of this call (e.g. a flow id).

        `key` is a string and the value JSON (text, numbers, booleans, None, lists, dicts with
        text keys), at most MAX_MEMO_BYTES for all of a call's memos: at 2026-07-28 they travel
        sealed in `requestState`. It is checked when it is set, at every revision (a ToolError
        says what is wrong), and every run gets its JSON copy back (a tuple is a list), so a
        tool sees the same value at both revisions.
        """
        if key not in self.call.memos:
            value = make()
            problem = "su clave no es un texto" if not isinstance(key, str) else \
                json_problem({**self.call.memos, key: value}, MAX_MEMO_BYTES)
            if problem is not None:
                raise ToolError(f"ctx.memo({key!r}) no puede guardar ese valor: {problem}. "
                                "Guarda solo texto, números, booleanos, None, listas y "
                                "diccionarios con claves de texto.")
            self.call.memos[key] = json.loads(json.dumps(value))
        return self.call.memos[key]

    # -- progress (the conformance suite's test tools use it too) ------------------------------
    def progress(self, progress: float, total: float | None = None,
                 message: str | None = None) -> bool:
        """Tell the client how far this call got (`notifications/progress`), when it asked
        for progress (a `progressToken`); returns whether it was sent. A run starts again
        after each answer, so what a run sent before its question is sent again."""
        if self.call.progress_token is None:
            return False
        params = {"progressToken": self.call.progress_token, "progress": progress}
        params.update({k: v for k, v in (("total", total), ("message", message))
                       if v is not None})
        self.session.send(wire.notification("notifications/progress", params))
        return True

    # -- questions -----------------------------------------------------------------------------
    def ask_roots(self) -> dict[str, Any]:
        """2026-07-28: this request's roots as the client sent them (a roots/list result),
        asked as an input request unless a batch of this run already got them."""
        if self._roots_answer is not None:
            return self._roots_answer
        return self._ask_one(InputRequest(ROOTS_REQUEST, lambda result: result), "roots")

    def accepted(self, roots: RootSet) -> RootSet:

        """`roots`, opened for this run only (2026-07-28): closed when the run is over."""
        self._opened.append(roots)
        return roots

    def _answer(self, schema, result):
        try:
            return elicitation.check_answer(schema, result)
        except elicitation.AnswerError as exc:
            raise ToolError(f"La respuesta del formulario no es válida ({exc}); no hice nada.") \
                from None

    def _ask_one(self, request, key=None):
        """One question in its own round, keyed `key` or by the order of asking (`ask-N`)."""
        if request.request is None:
            return request.local()
        key = key or self._next("ask")
        answer = self._answered(key, request.request)
        if answer is UNANSWERED:
            raise NeedInput({key: request.request})
        return request.read(answer)

    def _next(self, kind):
        self._counters[kind] = self._counters.get(kind, 0) + 1
        return f"{kind}-{self._counters[kind]}"

    def _answered(self, key, request):
        """The client's answer to `request` under `key`, or UNANSWERED (then it is recorded
        as asked). ToolError when no answer will come, or the tool keeps changing it."""
        call, question = self.call, digest(request)
        if key in call.failed:
            raise ToolError(call.failed[key])
        if key in call.answers:
            if call.asked.get(key) == question:
                return call.answers[key]
            call.stale += 1  # answered, but to another question: ask again
            del call.answers[key]
            if call.stale > MAX_STALE_ANSWERS:
                raise ToolError("La herramienta cambia su pregunta en cada ejecución (¿usa la "
                                "hora o valores al azar? guárdalos con ctx.memo): no sigo "
                                "preguntando y no hice nada.")
        call.asked[key] = question
        return UNANSWERED


ROOTS_REQUEST = {"method": "roots/list", "params": {}}
UNANSWERED = object()


def _is_text_message(message):
    """A sampling message this server may send: a user's or assistant's text."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return False
    content = message.get("content")
    return isinstance(content, dict) and content.get("type") == "text" and \
        isinstance(content.get("text"), str)


def _sampled(result):
    """A sampling answer as the tool gets it: the client's CreateMessageResult, checked."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), (dict, list)):
        raise ToolError("La respuesta de sampling no es válida (falta su content); no hice "
                        "nada.")
    return result
