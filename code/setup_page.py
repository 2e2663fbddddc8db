"""The setup page: a tiny local web page that stands in for a provider's consent screen.

URL-mode elicitation sends the user to `GET /connect?elicitation=<id>`. The page shows who is
asking and for what, with "Autorizar" and "Rechazar" buttons; the form posts back the
elicitation id and the record's single-use nonce. Only a POST that matches a pending, unexpired
record completes it (url_mode.FlowStore.complete); anything else attaches nothing and says why.

It listens on 127.0.0.1 only, on a port the OS picks.

Deliberate simplifications: there is no real provider, no login and no redirect; in a remote
deployment this page would check that the browser's signed-in user is the MCP user before
redirecting to the provider, which is what stops a forwarded link from linking the wrong
account. Here, being on loopback and started by the same local user stands in for that.
"""

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from url_mode import FlowError

PROVIDER = "notas-sync"
MAX_BODY = 4096


class SetupPage:
    def __init__(self, flows, host="127.0.0.1", log=None):
        self.flows = flows
        self.log = log or (lambda text: None)
        handler = type("Handler", (_Handler,), {"page": self})
        self.httpd = ThreadingHTTPServer((host, 0), handler)
        self.httpd.daemon_threads = True
        self.base = f"http://{host}:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()

    def url_for(self, elicitation_id):
        return f"{self.base}/connect?elicitation={elicitation_id}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    page = None  # set on the subclass

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path != "/connect":
            return self._send(404, "No encontrado", "<p>Esta página no existe.</p>")
        eid = parse_qs(parts.query).get("elicitation", [""])[0]
        try:
            record = self.page.flows.usable(eid)
        except FlowError as exc:
            return self._send(410, "Enlace no válido", f"<p>{html.escape(str(exc))}.</p>")
        self._send(200, "Autorizar Notas Sync", CONSENT.format(
            eid=html.escape(eid), nonce=html.escape(record.nonce)))

    def do_POST(self):
        if urlsplit(self.path).path != "/connect":
            return self._send(404, "No encontrado", "<p>Esta página no existe.</p>")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._send(413, "Demasiado grande", "<p>Petición demasiado grande.</p>")
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
        field = {key: values[0] for key, values in form.items()}
        allowed = field.get("decision") == "allow"
        try:
            self.page.flows.complete(field.get("elicitation", ""), field.get("state", ""),
                                     PROVIDER, allowed=allowed)
        except FlowError as exc:
            return self._send(400, "No se pudo completar", f"<p>{html.escape(str(exc))}. "
                              "No se vinculó ninguna cuenta.</p>")
        text = ("Listo: Notas Sync quedó autorizado. Ya puedes volver a tu cliente MCP."
                if allowed else "Rechazaste la autorización. No se vinculó nada.")
        self._send(200, "Hecho", f'<p id="result">{text}</p>')

    def _send(self, status, title, body):
        data = PAGE.format(title=html.escape(title), body=body).encode()
        self.send_response(status)
        for name, value in (("Content-Type", "text/html; charset=utf-8"),
                            ("Content-Length", str(len(data))),
                            ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"),
                            ("X-Frame-Options", "DENY"),
                            ("Content-Security-Policy",
                             "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_request(self, code="-", size="-"):  # never log query strings or form bodies
        self.page.log(f"setup page: {self.command} {urlsplit(self.path).path} -> {code}")

    def log_message(self, fmt, *args):
        self.page.log("setup page: " + fmt % args)


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
