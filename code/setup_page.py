"""The setup page: a tiny web page that stands in for a provider's consent screen.

URL-mode elicitation sends the user to `GET /connect?elicitation=<id>`. The page shows who is
asking and for what, with "Autorizar" and "Rechazar" buttons; the form posts back the
elicitation id and the record's single-use nonce. Only a POST that matches a pending, unexpired
record completes it (url_mode.FlowStore.complete); anything else attaches nothing and says why.

`SetupPage` is the page itself and does no I/O: `handle(method, target, body)` returns
(status, title, html). Two ways to show it:
- `serve_http(page)`: a real web server on 127.0.0.1 (a port the OS picks), for real browsers;
- directly, without sockets (`Config.setup_page = "inline"`): the notebook in the browser
  draws it itself and says it is a simulation, and the scripted browser calls `handle`.

Deliberate simplifications: there is no real provider, no login and no redirect; in a remote
deployment this page would check that the browser's signed-in user is the MCP user before
redirecting to the provider, which is what stops a forwarded link from linking the wrong
account. Here, being on loopback and started by the same local user stands in for that.
"""

import html
from urllib.parse import parse_qs, urlsplit

from protocol import SYNC_PROVIDER
from url_mode import FlowError

MAX_BODY = 4096
INLINE_BASE = f"http://{SYNC_PROVIDER}.localhost"  # a loopback name (RFC 6761), no socket


class SetupPage:
    def __init__(self, flows, provider, base=INLINE_BASE):
        self.flows, self.provider, self.base = flows, provider, base

    def url_for(self, elicitation_id):
        return f"{self.base}/connect?elicitation={elicitation_id}"

    def handle(self, method, target, body=""):
        """One request to the page: (status, title, html body)."""
        parts = urlsplit(target)
        if parts.path != "/connect" or method not in ("GET", "POST"):
            return 404, "No encontrado", "<p>Esta página no existe.</p>"
        if method == "GET":
            eid = parse_qs(parts.query).get("elicitation", [""])[0]
            try:
                record = self.flows.usable(eid)
            except FlowError as exc:
                return 410, "Enlace no válido", f"<p>{html.escape(str(exc))}.</p>"
            return 200, "Autorizar Notas Sync", CONSENT.format(
                eid=html.escape(eid), nonce=html.escape(record.nonce))
        if len(body) > MAX_BODY:
            return 413, "Demasiado grande", "<p>Petición demasiado grande.</p>"
        field = {key: values[0] for key, values in parse_qs(body).items()}
        allowed = field.get("decision") == "allow"
        try:
            self.flows.complete(field.get("elicitation", ""), field.get("state", ""),
                                self.provider, allowed=allowed)
        except FlowError as exc:
            return 400, "No se pudo completar", (f"<p>{html.escape(str(exc))}. "
                                                 "No se vinculó ninguna cuenta.</p>")
        text = ("Listo: Notas Sync quedó autorizado. Ya puedes volver a tu cliente MCP."
                if allowed else "Rechazaste la autorización. No se vinculó nada.")
        return 200, "Hecho", f'<p id="result">{text}</p>'

    def render(self, status, title, body):
        return PAGE.format(title=html.escape(title), body=body)

    def fetch(self, url, method="GET", data=None):
        """client.Browser's fetch, without any socket: {"status", "body"} like HTTP."""
        parts = urlsplit(url)
        status, title, body = self.handle(method, parts.path + "?" + parts.query, data or "")
        return {"status": status, "body": self.render(status, title, body)}

    def close(self):
        """Nothing to stop: the page has no socket of its own."""


def serve_http(page, host="127.0.0.1", log=None):
    """Serve `page` over HTTP on `host` (a free port) from a background thread."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    log = log or (lambda text: None)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self._reply(*page.handle("GET", self.path))

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._reply(413, "Demasiado grande", "<p>Petición demasiado grande.</p>")
            body = self.rfile.read(length).decode("utf-8", "replace")
            self._reply(*page.handle("POST", self.path, body))

        def _reply(self, status, title, body):
            data = page.render(status, title, body).encode()
            self.send_response(status)
            for name, value in HEADERS + (("Content-Length", str(len(data))),):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_request(self, code="-", size="-"):  # never log query strings or form bodies
            log(f"setup page: {self.command} {urlsplit(self.path).path} -> {code}")

        def log_message(self, fmt, *args):
            log("setup page: " + fmt % args)

    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    page.base = f"http://{host}:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()

    def close():
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
    page.close = close
    return page


HEADERS = (("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
           ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
           ("Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"))

PAGE = """<!doctype html><html lang="es"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:32em;margin:3em auto}}
button{{font-size:1em;padding:.4em 1em;margin-right:1em}}</style></head>
<body><h1>{title}</h1>{body}</body></html>"""

CONSENT = """<p><b>Notas Sync</b> (proveedor simulado de la lección) pide permiso para
sincronizar tus notas con el servidor MCP <b>notas-roots-elicitacion</b>.</p>
<p>Tu clave se queda entre tú y el proveedor: ni el cliente MCP ni el modelo la ven.</p>
<form method="post" action="/connect">
<input type="hidden" name="elicitation" value="{eid}">
<input type="hidden" name="state" value="{nonce}">
<button type="submit" name="decision" value="allow" id="allow">Autorizar</button>
<button type="submit" name="decision" value="deny" id="deny">Rechazar</button>
</form>"""
