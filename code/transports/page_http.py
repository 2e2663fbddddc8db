"""The setup page over HTTP: a real web server on 127.0.0.1 for real browsers.

`serve_http(page)` serves a urlflow.setup_page.SetupPage (which does no I/O) from one background
thread, on a port the OS picks, and returns the running `HttpPage` (`close()` stops it). Only a
driver starts one (server.NotesServer.serve_page_http: `serve`, the notebooks in JupyterLab);
the core never does. With an `Exposure` (a JupyterHub: lessons/mcp_ui/hub.py) the browser
reaches it through someone else's authenticated proxy instead. Whatever comes in goes to
`page.handle`; every browser's requests are read by the front of http_front.py, so a slow
browser holds a socket, never a thread.

Deliberate simplifications: HTTP/1.1 without TLS (loopback only, or behind the hub's proxy);
one page per server.
"""

from __future__ import annotations

import html
import threading
from collections import namedtuple
from urllib.parse import urlsplit

from urlflow.setup_page import MAX_BODY, PageResponse


class Exposure(namedtuple("Exposure", "base prefix check")):
    """How an HttpPage is reached through another server's authenticated proxy (a JupyterHub's
    jupyter-server-proxy): `base(port)` is the page's public base URL (it ends with `prefix`),
    `prefix` the secret path segment ("/<key>") the page answers under (the proxy strips its
    own part, so requests arrive as `<prefix>/connect?...`), and `check(headers)` says whether
    a request may be served: None, or the (Spanish) reason it is refused (403)."""

    __slots__ = ()


class HttpPage:
    """`page` served over HTTP on `host` (a free port) from one background thread.

    Only a driver starts one (server.serve_page_http). The socket listens at once, so the
    page's URL is known at once (`page.base` is set here), but the HTTP machinery, about
    13 ms of imports, is loaded on the serving thread only when the first browser connects:
    a server that never sends a URL pays for a socket and an idle thread, nothing more.
    The thread sleeps on the listening socket and on a wake-up pair of sockets, so `close()`
    returns at once on every platform (no polling, no serve_forever() poll interval to wait).
    From the first browser on, that thread is the front of http_front.py: it reads every
    browser's requests without a thread each, so slow clients cannot hold the page's slots.
    """

    def __init__(self, page, host="127.0.0.1", log=None, exposure=None):
        import socket
        self.page, self.log, self.exposure = page, log or (lambda text: None), exposure
        self._socket = socket.create_server((host, 0))
        port = self._socket.getsockname()[1]
        self.loopback = f"http://{host}:{port}"
        self.base = page.base = exposure.base(port) if exposure else self.loopback
        self._wake, self._waker = socket.socketpair()
        self._closed, self._front, self._lock = False, None, threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url_for(self, elicitation_id):
        return self.page.url_for(elicitation_id)

    def _serve(self):
        import selectors
        with selectors.DefaultSelector() as ready:
            ready.register(self._socket, selectors.EVENT_READ)
            ready.register(self._wake, selectors.EVENT_READ)
            ready.select()  # a browser connects, or close() wakes us
        if self._closed:
            return
        try:  # the first browser: load the HTTP machinery now
            front = _http_front(self.page, self._socket, self.log, self.loopback,
                                 self.exposure)
        except Exception as exc:  # e.g. http.server cannot be imported here
            self.log(f"setup page: cannot serve HTTP ({type(exc).__name__}: {exc})")
            self._socket.close()  # browsers are refused at once, not left waiting
            return
        with self._lock:
            closing = self._closed
            self._front = None if closing else front
        if closing:  # close() came while the machinery loaded
            front.close()
            return
        front.serve_forever()

    def close(self):
        with self._lock:
            self._closed, front = True, self._front
        if front is not None:
            front.stop()
        try:
            self._waker.send(b"\0")
        except OSError:
            pass
        self._thread.join(timeout=5)
        if front is not None:
            front.close()  # its connections and the listening socket
        for sock in (self._socket, self._wake, self._waker):
            sock.close()


def serve_http(page, host="127.0.0.1", log=None, exposure=None):
    """Serve `page` over HTTP on `host` (reached through `exposure`, if given); returns the
    running HttpPage (close() stops it)."""
    return HttpPage(page, host, log, exposure)


def _http_front(page, listening, log, loopback=None, exposure=None):
    """The page served on an already listening socket: an http_front.Front that reads every
    browser's requests without a thread each, and a thread for each request read in full,
    answering with `page.handle`.

    It checks who is asking before anything else: the Host must be the address this server
    handed out (`page.base`), so a name rebound to 127.0.0.1 by another site gets 421 and
    never a page (nor its nonce); a POST from another site (its Origin, or Sec-Fetch-Site)
    gets 403, on every route (the provider's consent page included). Every answer, errors
    and 501s included, carries HEADERS and no Server header; a request line that cannot be
    read (malformed, too long) gets its 4xx page. Slow browsers hold no thread (FRONT: its
    connections, each head and body with a deadline, an idle one closed), at most HANDLERS
    requests are answered at once, and whatever is refused gets a page saying why (503 with
    `Retry-After` when the page is busy), never a connection closed without a word.

    With an `exposure` (see Exposure) the page is also reached at its public base, through a
    proxy: that base's host is accepted too (and, for a POST, its origin), a path outside the
    secret prefix is 404 before anything else, and a request the exposure's `check` refuses
    gets 403 with nothing of the page in it. The log never shows the prefix."""
    from transports import http_front

    public = urlsplit(page.base)
    hosts = {public.netloc.lower()}
    origins = {f"{public.scheme}://{public.netloc}".lower()}
    if loopback:
        hosts.add(urlsplit(loopback).netloc.lower())
        origins.add(loopback.lower())
    prefix = exposure.prefix if exposure else ""
    slots, workers = threading.BoundedSemaphore(HANDLERS), http_front.Workers("setup-page")

    class Handler(http_front.Prefetched):
        default_request_version = "HTTP/1.0"  # an unreadable request line still gets a status

        def do_GET(self):
            self._reply(self._refusal() or page.handle("GET", self._target()))

        def do_POST(self):
            refused = self._refusal()
            if refused:
                return self._reply(refused)
            if len(self.body) > MAX_BODY:
                return self._reply(PageResponse(413, "Demasiado grande",
                                                "<p>Petición demasiado grande.</p>"))
            body = bytes(self.body).decode("utf-8", "replace")
            self._reply(page.handle("POST", self._target(), body))

        def _target(self):
            """The request's path and query without the secret prefix (the page's own)."""
            return self.path[len(prefix):]

        def _refusal(self):
            """Why this request is not served (a PageResponse), or None."""
            if prefix and not (self.path or "").startswith(prefix + "/"):
                return PageResponse(404, "No encontrado", "<p>Esta página no existe.</p>")
            if (self.headers.get("Host") or "").lower() not in hosts:
                where = f"{public.scheme}://{public.netloc}" if prefix else page.base
                return PageResponse(421, "Dirección equivocada", "<p>Esta página solo atiende "
                                    f"en {html.escape(where)}.</p>")
            origin = self.headers.get("Origin")
            if self.command == "POST" and (
                    (origin is not None and origin.lower() not in origins)
                    or self.headers.get("Sec-Fetch-Site") == "cross-site"):
                return PageResponse(403, "Otro sitio", "<p>Esta página no acepta formularios "
                                    "enviados desde otro sitio. No se hizo nada.</p>")
            refused = exposure.check(self.headers) if exposure else None
            if refused:
                return PageResponse(403, "No es tu página", f"<p>{html.escape(refused)}. No se "
                                    "hizo nada.</p>")
            return None

        def send_error(self, code, message=None, explain=None):
            """A request http.server refused (malformed, too long, unknown method): our
            page, with our headers, and the connection closed."""
            self.close_connection = True
            title = ERRORS.get(code, "Error")
            self._reply(PageResponse(code, title, f"<p>{html.escape(title)}. No se hizo "
                                     "nada.</p>"))

        def send_response(self, code, message=None):  # as http.server's, without Server
            self.log_request(code)
            self.send_response_only(code, message)
            self.send_header("Date", self.date_time_string())

        def _reply(self, answer):
            data = page.render(answer.status, answer.title, answer.html).encode()
            self.send_response(answer.status)
            extra = (("Location", answer.location),) if answer.location else ()
            for name, value in HEADERS + extra + (("Content-Length", str(len(data))),):
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def log_request(self, code="-", size="-"):  # never log query strings or form bodies
            path = urlsplit(getattr(self, "path", "")).path  # nor the secret prefix
            if prefix:
                path = path[len(prefix):] if path.startswith(prefix + "/") else "(outside)"
            path = path[:200]
            log(f"setup page: {self.command or '?'} {path} -> {code}")

        def log_message(self, fmt, *args):
            log("setup page: " + (fmt % args)[:300])

    def render(status, reason):
        """A page the front (or the admission) answers itself, saying why."""
        title = BUSY_TITLE if status == 503 else ERRORS.get(status, "Error")
        text = BUSY_TEXT if status == 503 else f"{title}. No se hizo nada."
        html_body = f'<p id="result">{html.escape(text)}</p>'
        body = page.render(status, title, html_body).encode()
        log(f"setup page: answered {status} itself: {reason}")
        return http_front.refusal(status, body, HEADERS[0][1], HEADERS[1:])

    def answer(connection):
        """A thread for a request read in full, or a 503 page at once."""
        if not slots.acquire(blocking=False):
            front.release(connection)
            try:
                connection.sock.sendall(render(503, "every handler is busy"))
            except OSError:
                pass
            http_front._close(connection.sock, graceful=True)
            return
        try:
            workers.run(run, connection)
        except RuntimeError:  # no thread to be had now
            slots.release()
            front.finished(connection, False)

    def run(connection):
        keep = False
        try:
            connection.sock.settimeout(WRITE_SECONDS)
            keep = Handler(connection, front).run()
        finally:
            slots.release()
            front.finished(connection, keep)

    front = http_front.Front(listening, answer, render, http_front.Limits(**FRONT), log)
    return front


HANDLERS = 16          # requests answered at once; more get a 503 page at once
WRITE_SECONDS = 10.0   # a browser that takes longer to read its page is dropped
FRONT = {"connections": 64, "head_bytes": 16 * 1024, "head_seconds": 10.0,  # http_front
         "body_bytes": MAX_BODY, "body_seconds": 10.0, "buffered_bytes": 1024 * 1024,
         "idle_seconds": 10.0}
BUSY_TITLE = "Página ocupada"
BUSY_TEXT = ("La página está atendiendo a muchas conexiones a la vez. Espera un momento y "
             "vuelve a cargarla: tu enlace sigue valiendo. No se hizo nada.")
ERRORS = {400: "Petición mal formada", 408: "Petición demasiado lenta",
          411: "Falta el tamaño del cuerpo", 413: "Demasiado grande",
          414: "Dirección demasiado larga", 431: "Cabeceras demasiado grandes",
          501: "Método no admitido", 505: "Versión de HTTP no admitida"}
# Referrer-Policy same-origin, not no-referrer: a page's URL (its nonce, a state) never
# reaches another site, and the page's own forms keep their Origin (with no-referrer a
# browser sends `Origin: null` on a POST, which the cross-site check must refuse).
HEADERS = (("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
           ("Referrer-Policy", "same-origin"), ("X-Frame-Options", "DENY"),
           ("X-Content-Type-Options", "nosniff"),
           ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
            "form-action 'self'; frame-ancestors 'none'"))
