"""A small MCP client: the other end of the wire in the demo, the notebooks and the grader.

It speaks both revisions. At 2025-11-25 it answers the server's `roots/list` and
`elicitation/create` requests as they arrive. At 2026-07-28 it sends the `_meta` envelope on
every request and drives the `input_required` loop: answer every input request, retry the
same call with `inputResponses` and the `requestState` echoed untouched.

Who answers a form is pluggable: a `user` object with `elicit(params) -> result` (and
`open_url(url)`, called after consenting in URL mode). `ScriptedUser` plays from a list;
the notebooks plug in a widget form. `Browser` is a scripted browser for the setup page.

Deliberate simplifications: requests from the server are handled one thread each; there is
no sampling, no progress, no cancellation.
"""

import json
import os
import re
import subprocess
import threading
import urllib.parse

import wire
from roots import path_to_uri

STATELESS_VERSION = "2026-07-28"
ALL_ELICITATION = {"form": {}, "url": {}}


class Client:
    def __init__(self, send, lines, close=None, *, roots=(), elicitation=None,
                 protocol="2025-11-25", user=None, on_frame=None, timeout=30.0,
                 client_info=None):
        """`roots=None` declares no roots capability; `elicitation=None` means form and url;
        pass `{}` for a bare (form-only, 2025-06-18 style) declaration or False for none."""
        self.protocol = protocol
        self.roots = None if roots is None else [_as_uri(r) for r in roots]
        self.capabilities = {}
        if self.roots is not None:
            self.capabilities["roots"] = {} if protocol == STATELESS_VERSION \
                else {"listChanged": True}
        if elicitation is not False:
            self.capabilities["elicitation"] = ALL_ELICITATION if elicitation is None \
                else elicitation
        self.user = user
        self.timeout = timeout
        self.client_info = client_info or {"name": "cliente-de-la-leccion", "version": "1.0.0"}
        self.on_frame = on_frame or (lambda direction, msg: None)
        self.notifications = []
        self.server_info = None
        self.roots_asked = threading.Semaphore(0)  # released each time we answered roots/list
        self._new_notification = threading.Condition()
        self._close = close
        self._conn = wire.Connection(self._send_bytes(send), self._on_server_message,
                                     blocking=lambda method: True)
        self._reader = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._reader.start()

    # -- plumbing ------------------------------------------------------------------------
    def _send_bytes(self, send):
        def write(data):
            self.on_frame("→", json.loads(data))
            send(data)
        return write

    def _read(self, lines):
        def feed():
            for line in lines:
                try:
                    self.on_frame("←", json.loads(line))
                except ValueError:
                    self.on_frame("←", {"unparseable": line[:200].decode("utf-8", "replace")})
                yield line
        self._conn.serve(feed())

    def close(self):
        if self._close:
            self._close()
        self._reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- lifecycle -----------------------------------------------------------------------
    def connect(self, wait_for_roots=True):
        """Handshake (2025 revisions). Waits until the server has asked for our roots."""
        if self.protocol == STATELESS_VERSION:
            self.server_info = self.request("server/discover", {})["_meta"].get(
                "io.modelcontextprotocol/serverInfo")
            return self
        result = self.request("initialize", {"protocolVersion": self.protocol,
                                             "capabilities": self.capabilities,
                                             "clientInfo": self.client_info})
        self.server_info = result
        self._conn.notify("notifications/initialized")
        if wait_for_roots and self.roots is not None:
            self.wait_roots_asked()
        return self

    def wait_roots_asked(self):
        if not self.roots_asked.acquire(timeout=self.timeout):
            raise TimeoutError("the server did not ask roots/list")

    def request(self, method, params=None, timeout=None):
        if self.protocol == STATELESS_VERSION:
            params = {**(params or {}), "_meta": {
                "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": self.client_info}}
        return self._conn.request(method, params, timeout or self.timeout)

    def list_tools(self):
        return self.request("tools/list", {})["tools"]

    def call_tool(self, name, arguments=None, timeout=700.0, max_rounds=10):
        """Call a tool; at 2026-07-28 answer `input_required` rounds until a final result."""
        params = {"name": name, "arguments": arguments or {}}
        for _ in range(max_rounds):
            result = self.request("tools/call", params, timeout)
            if result.get("resultType") != "input_required":
                return result
            responses = {key: self._answer(req.get("method"), req.get("params") or {})
                         for key, req in (result.get("inputRequests") or {}).items()}
            params = {"name": name, "arguments": arguments or {}, "inputResponses": responses}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise RuntimeError(f"{name}: still input_required after {max_rounds} rounds")

    def set_roots(self, roots):
        """Change our roots; at 2025-11-25 tell the server and wait until it re-asked."""
        self.roots = [_as_uri(r) for r in roots]
        if self.protocol != STATELESS_VERSION:
            self._conn.notify("notifications/roots/list_changed")
            self.wait_roots_asked()

    def wait_notification(self, method, timeout=None):
        with self._new_notification:
            found = self._new_notification.wait_for(
                lambda: any(n["method"] == method for n in self.notifications),
                timeout or self.timeout)
        if not found:
            raise TimeoutError(f"no {method} arrived")
        return next(n for n in self.notifications if n["method"] == method)

    # -- answering the server ------------------------------------------------------------
    def _on_server_message(self, msg):
        if msg["kind"] == "notification":
            with self._new_notification:
                self.notifications.append({"method": msg["method"],
                                           "params": msg.get("params") or {}})
                self._new_notification.notify_all()
            return None
        if msg["method"] == "ping":
            return {}
        if msg["method"] not in ("roots/list", "elicitation/create"):
            raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found: {msg['method']}")
        return self._answer(msg["method"], msg.get("params") or {})

    def _answer(self, method, params):
        if method == "roots/list":
            if self.roots is None:
                raise wire.RpcError(wire.METHOD_NOT_FOUND, "Roots not supported")
            result = {"roots": [{"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1]}
                                for uri in self.roots]}
            self.roots_asked.release()
            return result
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            declared = self.capabilities.get("elicitation")
            if declared is None or (mode == "url" and "url" not in declared) or (
                    mode == "form" and "form" not in declared and "url" in declared):
                raise wire.RpcError(wire.INVALID_PARAMS, f"Elicitation mode {mode!r} not declared")
            if self.user is None:
                return {"action": "cancel"}
            result = self.user.elicit(params)
            if mode != "url" or result.get("action") != "accept":
                return result
            if self.protocol == STATELESS_VERSION:  # open the page before we retry
                self.user.open_url(params["url"])
                return result
            # consent goes on the wire first; only then does the user open the page
            return wire.Reply(result, then=lambda: self.user.open_url(params["url"]))
        raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Cannot answer {method}")


def _as_uri(root):
    root = os.fspath(root)
    return root if root.startswith("file:") else path_to_uri(root)


# -- a scripted user and browser -------------------------------------------------------------
class ScriptedUser:
    """Answers forms from a list of ElicitResult dicts (or functions of the params)."""

    def __init__(self, *answers, browser=None):
        self.answers = list(answers)
        self.seen = []
        self.browser = browser

    def elicit(self, params):
        self.seen.append(params)
        if not self.answers:
            return {"action": "cancel"}
        answer = self.answers.pop(0)
        return answer(params) if callable(answer) else answer

    def open_url(self, url):
        if self.browser is not None:
            self.browser.visit(url)


class Browser:
    """Opens the setup page like a person would: load it, then press a button."""

    def __init__(self, decision="allow"):
        self.decision = decision
        self.pages = []

    def visit(self, url):
        import http.client  # loaded only when a page is opened
        parts = urllib.parse.urlsplit(url)
        page = self._exchange(http.client.HTTPConnection(parts.hostname, parts.port, timeout=10),
                              "GET", f"{parts.path}?{parts.query}")
        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page))
        fields["decision"] = self.decision
        self.pages.append(self._exchange(
            http.client.HTTPConnection(parts.hostname, parts.port, timeout=10), "POST",
            "/connect", urllib.parse.urlencode(fields)))

    @staticmethod
    def _exchange(connection, method, path, body=None):
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if body else {}
        try:
            connection.request(method, path, body=body, headers=headers)
            return connection.getresponse().read().decode()
        finally:
            connection.close()


# -- transports --------------------------------------------------------------------------------
def spawn(argv, **popen_args):
    """Start a server process on stdio; returns (send, lines, close, process)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen_args)

    def send(data):
        proc.stdin.write(data)
        proc.stdin.flush()

    def close():
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return send, iter(proc.stdout.readline, b""), close, proc
