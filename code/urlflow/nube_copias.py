"""Nube de Copias: a simulated OAuth 2.0 provider (authorization code), local, for exercise 3.

The provider's side only, so that a learner writes the server's side of a real OAuth shape:

1. the server's own connect page sends the browser to `authorize_url(state)`: this provider's
   authorization page (`/nube-copias/autorizar`), with `client_id`, `redirect_uri`,
   `response_type=code` and the server's `state`;
2. there the user presses «Autorizar» (or «Rechazar»); the provider sends the browser back to
   the server's registered callback, `REDIRECT_PATH`, with a one-time `code` and the same
   `state` (or `error=access_denied` and the `state`);
3. the server, never the browser, exchanges that code for an access token (`exchange(code)`)
   and keeps the token;
4. the token is what the provider's API wants (`backup(token, notes)`).

Codes are single-use and expire after CODE_TTL seconds; both codes and tokens start with a
fixed prefix (CODE_PREFIX, TOKEN_PREFIX) so that a grader can recognise one wherever it shows
up (it must never reach the MCP client). A code and its token belong to the account of whoever
pressed «Autorizar» (the user at the browser); every copy is recorded with that account
(`copies`), which is how a third party can tell a copy really made for a user from a tool that
only says it made one.

Where the provider lives:
- `Provider`, inside the server (the lesson, the notebooks): its page is served by the
  server's page router (setup_page.py), over HTTP or inline;
- `RemoteProvider` (`serve --provider rpc`, graders only): the provider is someone else's, out
  of the server's process. The server keeps only its address (`authorize_url` is computed
  here); `exchange` and `backup` are asked on a channel the driver attaches (`attach(call)`:
  in `serve`, the private request PROVIDER_METHOD on the MCP pipe, answered by the client,
  transport.py), and whoever answers runs a `Provider` (`answer(params)`) and its page. A
  solution in the server can then neither mint a token nor fake a copy.

Deliberate simplifications: no login at the provider (whoever is at the browser is the
provider's account holder), one registered client (this server) with one redirect URI on the
same page base, no scopes, no refresh tokens; codes, tokens and copies live in memory, bounded.
"""

from __future__ import annotations

import html
import secrets
import threading
import time
from collections import OrderedDict
from urllib.parse import urlencode

from shared.protocol import SERVER_INFO

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from collections.abc import Callable, Iterable
    from typing import Any

    from notes.store import Note
    from urlflow.setup_page import PageRequest, PageResponse

PROVIDER = "nube-copias"                 # its name in paths
TITLE = "Nube de Copias"                 # its name for people
AUTHORIZE_PATH = "/nube-copias/autorizar"
REDIRECT_PATH = "/copias/vuelta"         # the server's callback, registered with the provider
CLIENT_ID = SERVER_INFO["name"]          # this server, as the provider knows it
CODE_PREFIX, TOKEN_PREFIX = "ncc_code_", "ncc_tok_"
CODE_TTL = 60.0                          # seconds a code may wait to be exchanged
MAX_CODES, MAX_TOKENS = 1000, 1000       # the oldest go first beyond these
MAX_COPIES = 1000                        # copies recorded, the oldest go first
MAX_STATE = 512                          # characters of `state` the provider accepts
MAX_NOTES = 10_000                       # note ids one copy may carry (RemoteProvider)
PROVIDER_ERROR = -32001                  # a refusal, as a JSON-RPC error on the channel


class ProviderError(Exception):
    """What the provider refuses (a code unknown, used or expired; a token it never issued)."""


class Address:
    """Where a server sends the browser, and where the provider sends it back: computed, not
    asked. `base()` gives the base URL of the server's page router (where the server's callback
    is served), so the registered redirect URI is `base() + REDIRECT_PATH`."""

    def __init__(self, base: Callable[[], str]) -> None:
        self.base = base

    def redirect_uri(self) -> str:
        return self.base() + REDIRECT_PATH

    def authorize_url(self, state: str) -> str:
        """Where the server's connect page sends the browser: this provider's authorization
        page, for this server, coming back to its callback with this `state`."""
        if not isinstance(state, str) or not state:
            raise ValueError("authorize_url necesita el state del flujo (un texto no vacío)")
        return self.base() + AUTHORIZE_PATH + "?" + urlencode({
            "response_type": "code", "client_id": CLIENT_ID,
            "redirect_uri": self.redirect_uri(), "state": state})


class Provider(Address):
    """Nube de Copias itself: its authorization page, its token endpoint, its API, and the
    record of every copy made (`copies`: (account, note ids), oldest first)."""

    def __init__(self, base: Callable[[], str],
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(base)
        self.clock = clock
        self._codes = OrderedDict()   # code -> (redirect_uri, expires_at, account), oldest first
        self._tokens = OrderedDict()  # token -> the account that authorized it
        self.copies = []              # (account, note ids) of every copy, oldest first
        self._lock = threading.Lock()

    # -- for the server ------------------------------------------------------------------------
    def exchange(self, code: str) -> str:
        """The token endpoint: a valid, unexpired, unused `code` becomes an access token,
        once. ProviderError otherwise. Only the server calls this; the token goes nowhere
        else."""
        with self._lock:
            issued = self._codes.pop(code, None) if isinstance(code, str) else None
            if issued is None:
                raise ProviderError("código desconocido o ya canjeado")
            redirect_uri, expires_at, account = issued
            if self.clock() > expires_at:
                raise ProviderError("código caducado")
            if redirect_uri != self.redirect_uri():
                raise ProviderError("el código se emitió para otra dirección de vuelta")
            token = TOKEN_PREFIX + secrets.token_urlsafe(32)
            self._tokens[token] = account
            while len(self._tokens) > MAX_TOKENS:
                self._tokens.popitem(last=False)
            return token

    def backup(self, token: str, notes: Iterable[Note | str]) -> int:
        """The provider's API: store a copy of `notes` (store.Note, or their ids) with `token`,
        in the account that authorized it; returns how many. ProviderError for a token this
        provider never issued."""
        ids = [str(getattr(note, "id", note)) for note in notes]
        with self._lock:
            if not isinstance(token, str) or token not in self._tokens:
                raise ProviderError("token no válido para Nube de Copias")
            self.copies.append((self._tokens[token], ids))
            del self.copies[:-MAX_COPIES]
        return len(ids)

    def revoke(self, code: str) -> None:
        """Forget an unused `code`: the provider will refuse it (a grader's way to make the
        exchange fail after «Autorizar»)."""
        with self._lock:
            self._codes.pop(code, None)

    def copies_of(self, account: str | None) -> list[list[str]]:
        """The note ids of each copy made in `account`, oldest first."""
        with self._lock:
            return [ids for owner, ids in self.copies if owner == account]

    def answer(self, params: dict[str, Any]) -> dict[str, Any]:
        """One request of a RemoteProvider (PROVIDER_METHOD's params): {"op": "exchange",
        "code"} -> {"token"}; {"op": "backup", "token", "notes": [ids]} -> {"notes": count}.
        ProviderError for anything it refuses, or does not understand."""
        if not isinstance(params, dict):
            raise ProviderError("petición no válida")
        if params.get("op") == "exchange":
            return {"token": self.exchange(params.get("code"))}
        notes = params.get("notes")
        if params.get("op") == "backup" and isinstance(notes, list) and len(notes) <= MAX_NOTES:
            return {"notes": self.backup(params.get("token"), notes)}
        raise ProviderError("petición no válida")

    # -- its page ------------------------------------------------------------------------------
    def authorize(self, page: PageRequest) -> PageResponse | tuple[int, str, str]:
        """`AUTHORIZE_PATH`: GET shows the consent page; POST takes the decision and sends the
        browser back to the server's callback (303) with a code of the account at the browser
        (`page.user`), or with access_denied."""
        fields = page.query if page.method == "GET" else page.form
        problem = self._request_problem(fields)
        if problem:  # never redirect to an address that is not the registered one
            return page.reply(400, "Petición no válida", f"{TITLE} no atiende esta petición "
                              f"de autorización: {problem}.")
        state = fields["state"]
        if page.method == "GET":
            return 200, f"Autorizar {TITLE}", CONSENT.format(
                title=TITLE, server=html.escape(CLIENT_ID), action=AUTHORIZE_ACTION,
                fields="".join(f'<input type="hidden" name="{name}" value="{html.escape(value)}">'
                               for name, value in (("response_type", "code"),
                                                   ("client_id", CLIENT_ID),
                                                   ("redirect_uri", fields["redirect_uri"]),
                                                   ("state", state))))
        if fields.get("decision") != "allow":
            return page.redirect(fields["redirect_uri"] + "?" + urlencode(
                {"error": "access_denied", "state": state}))
        code = CODE_PREFIX + secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = (fields["redirect_uri"], self.clock() + CODE_TTL, page.user)
            while len(self._codes) > MAX_CODES:
                self._codes.popitem(last=False)
        return page.redirect(fields["redirect_uri"] + "?" + urlencode(
            {"code": code, "state": state}))

    def _request_problem(self, fields):
        if fields.get("response_type") != "code":
            return "solo se admite response_type=code"
        if fields.get("client_id") != CLIENT_ID:
            return "cliente desconocido"
        if fields.get("redirect_uri") != self.redirect_uri():
            return "la dirección de vuelta no es la registrada"
        state = fields.get("state", "")
        if not state or len(state) > MAX_STATE:
            return "falta el state (o es demasiado largo)"
        return None


def rpc_answer(provider: Provider, params: dict[str, Any]) -> dict[str, Any]:
    """The client's side of PROVIDER_METHOD (`serve --provider rpc`): what `provider` (a
    `Provider`, the client's) answers, as a JSON-RPC result, or a wire.RpcError
    (PROVIDER_ERROR) that carries its refusal."""
    from shared import wire
    try:
        return provider.answer(params)
    except ProviderError as exc:
        raise wire.RpcError(PROVIDER_ERROR, str(exc)) from None


class RemoteProvider(Address):
    """Nube de Copias as a server sees it when the provider is someone else's (`serve --provider
    rpc`): its address, and `exchange` and `backup` asked through `attach(call)`, where
    `call(params)` returns the provider's answer or raises ProviderError."""

    def __init__(self, base: Callable[[], str]) -> None:
        super().__init__(base)
        self._call = None

    def attach(self, call: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self._call = call

    def exchange(self, code: str) -> str:
        token = self._ask({"op": "exchange", "code": code}).get("token")
        if not isinstance(token, str):
            raise ProviderError("Nube de Copias no dio ningún token")
        return token

    def backup(self, token: str, notes: Iterable[Note | str]) -> int:
        ids = [
str(getattr(note, "id", note)) for note in list(notes)[:MAX_NOTES + 1]]
        copied = self._ask({"op": "backup", "token": token, "notes": ids}).get("notes")
        if not isinstance(copied, int):
            raise ProviderError("Nube de Copias no dijo cuántas notas copió")
        return copied

    def _ask(self, params):
        if self._call is None:
            raise ProviderError("Nube de Copias no está disponible desde este servidor")
        try:
            answer = self._call(params)
        except ProviderError:
            raise
        except Exception as exc:  # the channel failed: for the server, a refusal
            raise ProviderError(f"Nube de Copias no respondió ({type(exc).__name__})") from None
        return answer if isinstance(answer, dict) else {}


# The form posts back to this same page by a relative address: behind a proxy that serves the
# page under a prefix (a JupyterHub's /user/<name>/proxy/<port>/...), "/..." would leave it.
AUTHORIZE_ACTION = AUTHORIZE_PATH.rsplit("/", 1)[1]

CONSENT = """<p><b>{title}</b> (proveedor simulado del ejercicio 3) pregunta si permites que el
servidor MCP <b>{server}</b> guarde copias de tus notas en tu cuenta.</p>
<p>Esta página es del proveedor: ni el cliente MCP ni el modelo ven lo que hagas aquí.</p>
<form method="post" action="{action}">{fields}
<button type="submit" name="decision" value="allow" id="allow">Autorizar</button>
<button type="submit" name="decision" value="deny" id="deny">Rechazar</button>
</form>"""
