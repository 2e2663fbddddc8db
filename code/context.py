"""What a tool sees: the roots, the notes and the user, the same in both protocol revisions.

A tool calls `ctx.roots`, `ctx.notes()`, `ctx.elicit_form(...)`, `ctx.elicit_url(...)` and
never asks which revision is spoken:

- `LiveContext` (2025-11-25): a question is a real request to the client (`roots/list`,
  `elicitation/create`) and the call waits for the answer.
- `RetryContext` (2026-07-28): the tool is run again on every retry of the call. Questions
  already answered (in `inputResponses`, or carried in the sealed `requestState`) return their
  answer; the first unanswered one stops the run with `NeedInput`, which the session turns into
  an `input_required` result. So a tool must ask before it changes anything, which is the rule
  anyway, and a question must be asked the same way on every run.

Deliberate simplifications: one question per round (no batching), keyed by the order in
which the tool asks (`ask-1`, `ask-2`, ...; `roots` for the roots).
"""

from contextlib import nullcontext

import elicitation
import wire
from request_state import digest
from server import MissingCapability, ToolError
from store import scan

STATELESS_VERSION = "2026-07-28"
NO_ROOTS = ("Tu cliente no declaró la capacidad 'roots' y el servidor no tiene ninguna carpeta "
            "configurada con --root: no puedo tocar ningún archivo. Declara roots en el cliente "
            "o arranca el servidor con --root /ruta/a/tus/notas.")


class NeedInput(BaseException):
    """Stops a 2026-07-28 tool run at a question it has no answer for yet.

    A BaseException, like KeyboardInterrupt, so that a tool's `except Exception` cannot
    swallow it by accident.
    """

    def __init__(self, key, request):
        super().__init__(key)
        self.key, self.request = key, request


# -- what a tool sees -------------------------------------------------------------------------
class ToolContext:
    """Everything a tool may use: the roots, the notes, the user (through elicitation)."""

    stateless = False

    def __init__(self, session, protocol_version, client_capabilities):
        self.session = session
        self.server = session.server
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.handles = session.boundary.handles

    # roots and notes
    @property
    def roots(self):
        raise NotImplementedError

    def hold(self):
        """`with ctx.hold() as roots:` do a side effect against roots that cannot change."""
        return self.session.boundary.hold(self.server.config.roots_timeout)

    def notes(self):
        return scan(self.roots)

    def find_notes(self, title):
        wanted = title.strip().casefold()
        return [note for note in self.notes() if note.title.strip().casefold() == wanted]

    def find_note(self, note_id):
        note = next((n for n in self.notes() if n.id == note_id), None)
        if note is None:
            raise ToolError(f"No hay ninguna nota con id {note_id!r} dentro de las roots.")
        return note

    # the user
    def elicit_form(self, message, properties, required=()):
        """Ask the user to fill a form; returns an elicitation.Answer, checked on our side."""
        if not elicitation.supports_form(self.client_capabilities):
            raise MissingCapability(
                "Este cliente no declaró la capacidad elicitation (modo formulario): no puedo "
                "preguntarte, así que no hice nada.", {"elicitation": {"form": {}}})
        try:
            params = elicitation.form(message, properties, required, self.protocol_version)
        except elicitation.SchemaError as exc:
            raise ToolError(f"El servidor se negó a enviar este formulario: {exc}") from None
        return self._answer(params["requestedSchema"], self._ask("elicitation/create", params))

    def elicit_url(self, message, url, elicitation_id):
        """Ask the user to open a URL; `accept` only means they agreed to open it."""
        if not elicitation.supports_url(self.client_capabilities):
            raise MissingCapability("Este cliente no declaró elicitation.url.",
                                    {"elicitation": {"url": {}}})
        params = {"mode": "url", "message": message, "url": url}
        if not self.stateless:
            params["elicitationId"] = elicitation_id  # gone in 2026-07-28
        return self._answer(None, self._ask("elicitation/create", params))

    def memo(self, key, make):
        """A value that stays the same on every retry of this call (e.g. a flow id)."""
        return make()

    def _answer(self, schema, result):
        try:
            return elicitation.check_answer(schema, result)
        except elicitation.AnswerError as exc:
            raise ToolError(f"La respuesta del formulario no es válida ({exc}); no hice nada.") \
                from None

    def _ask(self, method, params):
        raise NotImplementedError


class LiveContext(ToolContext):
    """2025-11-25: questions are real requests to the client, and the call waits."""

    @property
    def roots(self):
        roots = self.session.boundary.current(self.server.config.roots_timeout)
        if roots.source == "none":
            raise ToolError(NO_ROOTS)
        if roots.source == "error":
            raise ToolError("No pude leer tus roots (roots/list falló): no toco ningún archivo.")
        return roots

    def hold(self):
        self.roots  # noqa: B018 -- raises the clear error when there is no boundary at all
        return super().hold()

    def _ask(self, method, params):
        try:
            return self.session.conn.request(method, params,
                                              timeout=self.server.config.elicit_timeout)
        except wire.RpcError as exc:
            raise ToolError(f"El cliente no pudo responder a {method}: {exc.message}") from None
        except TimeoutError:
            raise ToolError("Nadie respondió al formulario a tiempo; no hice nada.") from None


class RetryContext(ToolContext):
    """2026-07-28: the tool re-runs on every retry; answers come from the client."""

    stateless = True

    def __init__(self, session, client_capabilities, answers, asked, memos):
        super().__init__(session, STATELESS_VERSION, client_capabilities)
        self.answers, self.asked, self.memos = answers, asked, memos
        self._roots = None
        self._asked = 0  # questions asked so far in this run: keys ask-1, ask-2, ...

    @property
    def roots(self):
        if self._roots is None:
            self._roots = self.session.request_roots(self)
        return self._roots

    def hold(self):
        return nullcontext(self.roots)  # one request, one RootSet: nothing can swap it

    def memo(self, key, make):
        if key not in self.memos:
            self.memos[key] = make()
        return self.memos[key]

    def ask_roots(self):
        return self._ask_keyed("roots", {"method": "roots/list", "params": {}})

    def _ask(self, method, params):
        self._asked += 1
        return self._ask_keyed(f"ask-{self._asked}", {"method": method, "params": params})

    def _ask_keyed(self, key, request):
        question = digest(request)
        if key in self.answers and self.asked.get(key) == question:
            return self.answers[key]
        self.asked[key] = question
        self.answers.pop(key, None)  # an answer to another question is stale
        raise NeedInput(key, request)
