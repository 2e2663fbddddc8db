"""Notebook 03's setup page on a JupyterHub: reached through the hub's own URL, for its owner only.

The page still listens on 127.0.0.1 only (page_http.HttpPage); the learner's browser reaches
it through jupyter-server-proxy, `<public url>/user/<name>/proxy/<port>/<key>/...`: the hub's
proxy sends `/user/<name>/` only to this learner's Jupyter server, which lets through only
requests that carry this learner's hub login, and jupyter-server-proxy then forwards the
request (its headers included) to the page. `exposure()` gives setup_page that public base
and two protections of its own, because on a hub whose spawner runs every learner on one
machine, any of them can connect to 127.0.0.1:<port> directly:

- `<key>`: 128 random bits in the path, made in this kernel and never written anywhere; a
  request without them gets 404 and nothing else (another user scanning ports sees no page);
- `check(headers)`: every request must carry the cookies of a browser logged in as *this*
  hub user. The page does not read the cookies itself: it asks this learner's own Jupyter
  server who they belong to (`GET <JUPYTERHUB_SERVICE_URL>api/me` with those cookies and the
  `_xsrf` cookie as X-XSRFToken, what JupyterLab itself sends), and serves the request only
  when the answer is this learner's name. Another user's loopback request, even with the
  whole URL in hand (a link copied from a saved notebook), has no such cookies; another user's
  browser never gets past the hub. A yes is remembered for a minute per set of cookies.

The origin the browser sees (scheme and host) comes from the hub's public URL (where.py):
the page accepts it as Host and, for a form, as Origin, as well as its loopback address.

Deliberate simplifications: the identity is asked over plain HTTP to the Jupyter server's
internal address (the one the hub gave it; `https` when the hub uses internal TLS needs its
certificates, which this module does not load: such a hub gets 403 and the learner the
simulated page after LESSON_PAGE=simulada); hub admins whose scopes give them access to the
learner's server are let through, as the hub lets them into everything else of that server.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import secrets
import threading
import time
from urllib.parse import urlsplit

from transports.page_http import Exposure

REMEMBER = 60.0   # seconds a verified set of cookies is trusted without asking again
ASK_TIMEOUT = 5.0  # seconds the Jupyter server has to say whose cookies they are
MAX_REMEMBERED = 64


class HubAccess:
    """The page of one kernel on a JupyterHub: its public base and who may use it."""

    def __init__(self, public_url: str, environ=os.environ, ask=None):
        self.public_url = public_url  # https://hub.example/user/<name>/ (where.public_url)
        self.user = environ.get("JUPYTERHUB_USER", "")
        self.service_url = _reachable(environ.get("JUPYTERHUB_SERVICE_URL", ""))
        self.key = secrets.token_urlsafe(16)
        self.ask = ask or self._ask_server
        self._known: dict[str, float] = {}
        self._lock = threading.Lock()

    def exposure(self) -> Exposure:
        prefix = "/" + self.key
        return Exposure(lambda port: f"{self.public_url}proxy/{port}{prefix}", prefix,
                        self.check)

    def check(self, headers) -> str | None:
        """None when the request comes from a browser logged in as this learner, else why
        not (Spanish)."""
        cookie = headers.get("Cookie") or ""
        if not cookie or not self.user:
            return "esta página solo se abre desde tu sesión del hub"
        digest = hashlib.sha256(cookie.encode("utf-8", "replace")).hexdigest()
        now = time.monotonic()
        with self._lock:
            if self._known.get(digest, 0) > now:
                return None
        try:
            owner = self.ask(cookie)
        except Exception:  # the server did not answer: refuse, never guess
            owner = None
        if owner != self.user:
            return "esta página es de otra persona del hub: solo quien la pidió puede abrirla"
        with self._lock:
            self._known[digest] = now + REMEMBER
            while len(self._known) > MAX_REMEMBERED:
                self._known.pop(next(iter(self._known)))
        return None

    def _ask_server(self, cookie: str) -> str | None:
        """The user name this learner's Jupyter server gives these cookies (GET api/me), or
        None."""
        parts = urlsplit(self.service_url)
        if parts.scheme != "http" or not parts.hostname:
            return None
        headers = {"Cookie": cookie, "Accept": "application/json"}
        xsrf = _cookie_value(cookie, "_xsrf")
        if xsrf:
            headers["X-XSRFToken"] = xsrf
        connection = http.client.HTTPConnection(parts.hostname, parts.port or 80,
                                                timeout=ASK_TIMEOUT)
        try:
            connection.request("GET", parts.path.rstrip("/") + "/api/me", headers=headers)
            response = connection.getresponse()
            body = response.read(65536)
            if response.status != 200:
                return None
            identity = json.loads(body).get("identity") or {}
            name = identity.get("username") or identity.get("name")
            return name if isinstance(name, str) else None
        finally:
            connection.close()


def _cookie_value(header: str, name: str) -> str:
    """The value of cookie `name` in a Cookie header ("" when absent)."""
    for pair in header.split(";"):
        key, sep, value = pair.strip().partition("=")
        if sep and key == name:
            return value.strip('"')
    return ""


def _reachable(url: str) -> str:
    """The server's internal URL, with an address this kernel can connect to (a server bound
    to every interface is reached on 127.0.0.1)."""
    parts = urlsplit(url)
    if parts.hostname in (None, "", "0.0.0.0", "::"):
        port = f":{parts.port}" if parts.port else ""
        return parts._replace(netloc=f"127.0.0.1{port}").geturl() if url else ""
    return url
