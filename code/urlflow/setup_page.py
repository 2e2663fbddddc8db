"""The setup page: a tiny web page that stands in for a provider's consent screen.

URL-mode elicitation sends the user to `GET /connect?elicitation=<id>`. The page shows who is
asking and for what, with "Autorizar" and "Rechazar" buttons; the form posts back the
elicitation id and the record's single-use nonce. Only a POST that matches a pending, unexpired
record completes it (url_mode.FlowStore.complete); anything else attaches nothing and says why.

`SetupPage` is the page itself and does no I/O: `handle(method, target, body, user)` returns a
`PageResponse` (status, title, html, and the `location` of a redirect), routing by path
(`route(path, handler)` adds a path; `/connect` is the first; the server adds Nube de Copias's
authorization page and the routes a solution brings, exercise 3). A route gets a
`PageRequest`: the method, path, query and form fields, `user` (who is at the browser: the
session whose rpc channel carried the request, else the server's local user), `base` (this
router's base URL) and `provider` (the server's Nube de Copias); it answers with
`request.reply(...)`, `request.redirect(url)` or a (status, title, html) tuple. A route that
raises gets a 500 page that says only what is known (the route failed; what it did before is
not known here) and the exception, with its line in the solution (`tooling.crash_text`), goes
to the server's log and in `PageResponse.failure`, which the "rpc" channel passes on to the
grader (who runs the learner's code and is its operator); the browser never sees it. The core never
shows the page: the driver does, one of three ways (`Config.page_transport`):
- "http": `HttpPage` (transports/page_http.py), a real web server on 127.0.0.1 (a port the OS
  picks) on one background thread, for real browsers. The stdio driver (`serve`) starts it;
  the core never does. With an `Exposure` (a JupyterHub: lessons/mcp_ui/hub.py) the browser
  reaches it through someone else's authenticated proxy instead: the page's public base is
  the proxy's URL, it answers only under a secret path prefix, and every request must pass
  the exposure's `check` first.
- "inline": no socket: the notebook in the browser draws the page itself and says it is a
  simulation, and scripted browsers call `fetch`, which calls `handle`.
- "rpc" (`serve --setup-page rpc`): no socket either; the page is one private request on the
  MCP pipe itself (SETUP_PAGE_METHOD, answered by session.py), so a grader's scripted browser
  reaches it in any sandbox, even one without a network. `rpc_fetch` adapts it to `fetch`.
A route runs on whatever thread the driver serves the page from; what it does to a session (a
completion that wakes a call, a notification to its client) goes through that session's
`clock.call_soon` (FlowStore's `on_complete`, `ctx.completion_notifier()`).

Deliberate simplifications: there is no real provider, no login and no redirect; in a remote
deployment this page would check that the browser's signed-in user is the MCP user before
redirecting to the provider, which is what stops a forwarded link from linking the wrong
account. Here, being on loopback and started by the same local user stands in for that (and in
"rpc" mode whoever writes on the pipe can press the buttons: it is for tests, never for users).
"""

from __future__ import annotations

import html
from collections import namedtuple
from urllib.parse import parse_qs, urlencode, urlsplit

from core.tooling import crash_text
from shared.protocol import SETUP_PAGE_METHOD, SYNC_PROVIDER
from urlflow.url_mode import FlowError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from typing import Any

MAX_BODY = 4096
INLINE_BASE = f"http://{SYNC_PROVIDER}.localhost"  # a loopback name (RFC 6761), no socket


class PageResponse(namedtuple("PageResponse", "status title html location failure",
                              defaults=(None, None))):
    """What the page answers: an HTTP `status` (int), a `title`, the `html` of the body and,
    for a redirect (303), the `location` the browser goes to next (else None). `failure`: for
    the 500 of a route that raised, the exception and its line (never shown to a browser)."""

    __slots__ = ()
    if TYPE_CHECKING:  # the fields' types, for an editor (a namedtuple declares none)
        status: int
        title: str
        html: str
        location: str | None
        failure: str | None


# What a browser reads when a route raised: that it failed, and nothing it cannot know (what
# the route did before it failed, e.g. store a token, is not known here).
ROUTE_FAILED = ("<p>La página falló por un error en su código. No se sabe qué llegó a hacer "
                "antes de fallar; el detalle está en el registro del servidor.</p>")


class PageRequest(namedtuple("PageRequest", "method path query form user base provider",
                             defaults=(None, "", None))):
    """One request to the page, as a route handler gets it: its `method` and `path`, the first
    value of each `query` parameter and of each `form` field (a POST body,
    application/x-www-form-urlencoded), who is at the browser (`user`, or None), this
    router's `base` URL and the server's Nube de Copias (`provider`)."""

    __slots__ = ()
    if TYPE_CHECKING:  # the fields' types, for an editor (a namedtuple declares none)
        method: str
        path: str
        query: dict[str, str]
        form: dict[str, str]
        user: str | None
        base: str
        provider: Any  # nube_copias.Provider or RemoteProvider: the server always gives its own

    def url_for(self, path: str, **params: str) -> str:
        """An absolute URL of this server's page router: `base + path`, with `params` as its
        query (encoded)."""
        return self.base + path + ("?" + urlencode(params) if params else "")

    def reply(self, status: int, title: str, text: str) -> PageResponse:
        """A page that says `text` (plain text, escaped here) with this HTTP status: 200 when
        it did what was asked, 4xx when it did nothing."""
        return PageResponse(int(status), str(title),
                            f'<p id="result">{html.escape(str(text))}</p>')

    def redirect(self, url: str) -> PageResponse:

        """Send the browser on to `url` (HTTP 303: a GET there, even after a POST)."""
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "/")):
            raise ValueError("redirect necesita una URL http(s) o una ruta")
        return PageResponse(303, "Redirigiendo", f'<p>Continúa en <a href="{html.escape(url)}">'
                            f"{html.escape(url)}</a>.</p>", url)


def _fields(text):
    return {key: values[0] for key, values in parse_qs(text).items()}


class SetupPage:
    def __init__(self, flows, provider, base=INLINE_BASE, user=None, oauth=None, log=None):
        self.flows, self.provider, self.base = flows, provider, base
        self.user = user      # who is at a browser the driver cannot tell apart (HTTP, inline)
        self.oauth = oauth    # the server's Nube de Copias (routes get it as request.provider)
        self.log = log or (lambda text: None)  # the server's log: a route that raised
        self.routes = {}
        self.route("/connect", self.connect)

    def route(self, path, handler):
        """Serve `path` with `handler(request: PageRequest)`, which returns a PageResponse
        (`request.reply`, `request.redirect`) or a (status, title, html) tuple."""
        if not isinstance(path, str) or not path.startswith("/") or "?" in path \
                or path in self.routes:
            raise ValueError(f"ruta no válida o repetida: {path!r}")
        self.routes[path] = handler

    def url_for(self, elicitation_id):
        return f"{self.base}/connect?elicitation={elicitation_id}"

    def handle(self, method, target, body="", user=None):
        """One request to the page, from the browser of `user` (None: the page's own user):
        a PageResponse. Never raises."""
        parts = urlsplit(target)
        handler = self.routes.get(parts.path)
        if handler is None or method not in ("GET", "POST"):
            return PageResponse(404, "No encontrado", "<p>Esta página no existe.</p>")
        if len(body) > MAX_BODY:
            return PageResponse(413, "Demasiado grande", "<p>Petición demasiado grande.</p>")
        request = PageRequest(method, parts.path, _fields(parts.query),
                              _fields(body) if method == "POST" else {},
                              self.user if user is None else user, self.base, self.oauth)
        try:
            return _response(handler(request))
        except Exception as exc:  # a route's bug is this request's 500, never the server's end
            failure = crash_text(exc, handler)
            self.log(f"page route {parts.path} crashed: {failure}")
            return PageResponse(500, "Error", ROUTE_FAILED, None, failure)

    def connect(self, request):
        """GET: the consent page of a pending link. POST: the decision, with its nonce."""
        if request.method == "GET":
            eid = request.query.get("elicitation", "")
            try:
                record = self.flows.usable(eid)
            except FlowError as exc:
                return 410, "Enlace no válido", f"<p>{html.escape(str(exc))}.</p>"
            return 200, "Autorizar Notas Sync", CONSENT.format(
                eid=html.escape(eid), nonce=html.escape(record.nonce))
        field = request.form
        allowed = field.get("decision") == "allow"
        try:
            record = self.flows.usable(field.get("elicitation", ""))
            if request.user not in (None, record.subject):  # a link forwarded to another
                raise FlowError("este enlace es de otra persona: solo quien lo pidió puede "
                                "autorizarlo")
            self.flows.complete(record.elicitation_id, field.get("state", ""),
                                self.provider, allowed=allowed)
        except FlowError as exc:
            return 400, "No se pudo completar", (f"<p>{html.escape(str(exc))}. "
                                                 "No se vinculó ninguna cuenta.</p>")
        text = ("Listo: Notas Sync quedó autorizado. Ya puedes volver a tu cliente MCP."
                if allowed else "Rechazaste la autorización. No se vinculó nada.")
        return 200, "Hecho", f'<p id="result">{text}</p>'

    def render(self, status, title, body):
        return PAGE.format(title=html.escape(title), body=body)

    def fetch(self, url, method="GET", data=None, user=None):
        """simulated_user.Browser's fetch, without any socket: {"status", "body"} like HTTP,
        and "location" for a redirect."""
        parts = urlsplit(url)
        target = url[len(self.base):] if url.startswith(self.base + "/") \
            else parts.path + "?" + parts.query
        answer = self.handle(method, target, data or "", user)
        return as_fetched(answer, self.render(answer.status, answer.title, answer.html))

    def close(self):
        """Nothing to stop: the page has no socket of its own."""


def rpc_fetch(request):
    """simulated_user.Browser's fetch for `serve --setup-page rpc`: `request(method, params)`
    sends one JSON-RPC request on the MCP pipe and returns its result (or raises)."""
    def fetch(url, method="GET", data=None):
        parts = urlsplit(url)
        target = parts.path + ("?" + parts.query if parts.query else "")
        try:
            result = request(SETUP_PAGE_METHOD, {"method": method, "target": target,
                                                 "body": data or ""})
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}
        fetched = {"status": result["status"], "body": result["body"]}
        for key in ("location", "failure"):
            if isinstance(result.get(key), str):
                fetched[key] = result[key]
        return fetched
    return fetch


def as_fetched(answer, body):
    """A PageResponse as `fetch` gives it: {"status", "body"}, and "location" for a redirect."""
    fetched = {"status": answer.status, "body": body}
    if answer.location is not None:
        fetched["location"] = answer.location
    return fetched


def _response(answer):
    """What a route returned, as a PageResponse (a 3- or 4-tuple of the right types; a
    route's own PageResponse keeps no `failure`: only `handle` says a route failed)."""
    if isinstance(answer, PageResponse):
        answer = tuple(answer[:4])
    if isinstance(answer, tuple) and len(answer) in (3, 4):
        answer = PageResponse(*answer)
        if isinstance(answer.status, int) and 100 <= answer.status <= 599 \
                and isinstance(answer.title, str) and isinstance(answer.html, str) \
                and (answer.location is None or isinstance(answer.location, str)):
            return answer
    raise TypeError(f"la página devolvió {type(answer).__name__}: una ruta devuelve "
                    "page.reply(...), page.redirect(...) o (estado, título, html)")


PAGE = """<!doctype html><html lang="es"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:32em;margin:3em auto}}
button{{font-size:1em;padding:.4em 1em;margin-right:1em}}</style></head>
<body><h1>{title}</h1>{body}</body></html>"""

CONSENT = """<p><b>Notas Sync</b> (proveedor simulado de la lección) pide permiso para
sincronizar tus notas con el servidor MCP <b>notas-roots-elicitacion</b>.</p>
<p>Tu clave se queda entre tú y el proveedor: ni el cliente MCP ni el modelo la ven.</p>
<form method="post" action="connect">
<input type="hidden" name="elicitation" value="{eid}">
<input type="hidden" name="state" value="{nonce}">
<button type="submit" name="decision" value="allow" id="allow">Autorizar</button>
<button type="submit" name="decision" value="deny" id="deny">Rechazar</button>
</form>"""
