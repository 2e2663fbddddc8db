"""A small MCP client: the other end of the wire in the demo, the notebooks and the grader.

It speaks both revisions. At 2025-11-25 it answers the server's `roots/list` and
`elicitation/create` requests as they arrive. At 2026-07-28 it sends the `_meta` envelope on
every request and drives the `input_required` loop: answer every input request, retry the
same call with `inputResponses` and the `requestState` echoed untouched.

- `ClientCore` is what both clients share: the declared capabilities, the envelope, the
  answers to the server (roots, the mode check of an elicitation) and the retry.
- `Client` blocks: over a stream (`Client(send, lines, close)`, a reader thread, the server's
  requests answered by a small bounded pool of threads) or in-process (`Client.local(server)`,
  no thread at all: see transport.Loopback).
- `AsyncClient` is the same on an asyncio loop (the notebooks), in-process.

Who answers a form is pluggable: a `user` with `elicit(params) -> result` and `open_url(url)`
(called after consenting in URL mode); for `AsyncClient`, both are coroutines. `ScriptedUser`
plays answers from a list; `Browser` opens the setup page like a person (load it, press a
button) through a `fetch` function, so the same browser works over HTTP, inside the grader's
sandbox or against an in-process page.

Deliberate simplifications: no sampling; progress notifications are recorded, not shown.
"""

import json
import os
import queue
import re
import threading
import urllib.parse

import wire
from protocol import (
    CLIENT_INFO,
    LATEST_HANDSHAKE,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_SERVER_INFO,
    META_VERSION,
    STATELESS_VERSION,
)
from roots import path_to_uri

ALL_ELICITATION = {"form": {}, "url": {}}
MAX_PENDING_REQUESTS = 32  # server-to-client requests waiting for a worker; beyond: refused
MAX_NOTIFICATIONS = 10_000  # kept for inspection; beyond, they are no longer recorded
_MISSING = object()


class ClientCore:
    def __init__(self, *, roots=(), elicitation=None, protocol=LATEST_HANDSHAKE, user=None,
                 on_frame=None, client_info=None):
        """`roots=None` declares no roots capability; `elicitation=None` means form and url;
        pass `{}` for a bare (form-only, 2025-06-18 style) declaration or False for none."""
        self.protocol = protocol
        self.roots = None if roots is None else [as_uri(r) for r in roots]
        self.capabilities = {}
        if self.roots is not None:
            self.capabilities["roots"] = {} if protocol == STATELESS_VERSION \
                else {"listChanged": True}
        if elicitation is not False:
            self.capabilities["elicitation"] = ALL_ELICITATION if elicitation is None \
                else elicitation
        self.user = user
        self.client_info = client_info or CLIENT_INFO
        self.on_frame = on_frame or (lambda direction, msg: None)
        self.notifications = []
        self.server_info = None
        self.roots_asked = 0          # how many times we answered roots/list
        self.cancelled = set()        # server request ids the server told us to drop
        self._next_id = 0

    @property
    def stateless(self):
        """2026-07-28: every request carries the envelope (the protocol may be switched)."""
        return self.protocol == STATELESS_VERSION

    # -- what goes out -----------------------------------------------------------------------
    def _new_request(self, method, params):
        if self.stateless:
            params = {**(params or {}), "_meta": {
                META_VERSION: STATELESS_VERSION, META_CAPABILITIES: self.capabilities,
                META_CLIENT_INFO: self.client_info}}
        self._next_id += 1
        return self._next_id, wire.request(self._next_id, method, params)

    def _initialize_params(self):
        return {"protocolVersion": self.protocol, "capabilities": self.capabilities,
                "clientInfo": self.client_info}

    def _connected(self, result):
        if self.stateless:
            self.server_info = (result.get("_meta") or {}).get(META_SERVER_INFO)
        else:
            self.server_info = result

    @staticmethod
    def _final(result):
        return not isinstance(result, dict) or result.get("resultType") != "input_required"

    @staticmethod
    def _input_requests(result):
        """(key, method, params) of each request in an `input_required` result; a method we
        cannot answer is refused here, before anything is answered."""
        requests, found = result.get("inputRequests"), []
        for key, request in (requests if isinstance(requests, dict) else {}).items():
            request = request if isinstance(request, dict) else {}
            params = request.get("params") if isinstance(request.get("params"), dict) else {}
            if request.get("method") not in ("roots/list", "elicitation/create"):
                raise wire.RpcError(wire.METHOD_NOT_FOUND,
                                    f"Cannot answer {request.get('method')}")
            found.append((key, request["method"], params))
        return found

    @staticmethod
    def _retry_params(name, arguments, result, responses):
        params = {"name": name, "arguments": arguments or {}, "inputResponses": responses}
        if "requestState" in result:
            params["requestState"] = result["requestState"]
        return params

    # -- what comes in -----------------------------------------------------------------------
    def _parse(self, line):
        try:
            self.on_frame("←", json.loads(line))
        except ValueError:
            self.on_frame("←", {"unparseable": line[:200].decode("utf-8", "replace")
                                if isinstance(line, bytes) else line[:200]})
        return wire.parse(line)

    def _note(self, msg):
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        self.notifications.append({"method": msg["method"], "params": params})
        if msg["method"] == "notifications/cancelled" and wire.valid_id(params.get("requestId")):
            self.cancelled.add(params["requestId"])

    def _roots_result(self):
        if self.roots is None:
            raise wire.RpcError(wire.METHOD_NOT_FOUND, "Roots not supported")
        self.roots_asked += 1
        return {"roots": [{"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1]}
                          for uri in self.roots]}

    def _check_elicitation(self, params):
        """The mode must be one we declared (a bare `{}` is form only)."""
        mode = params.get("mode", "form")
        declared = self.capabilities.get("elicitation")
        if declared is None or (mode == "url" and "url" not in declared) or (
                mode == "form" and "form" not in declared and "url" in declared):
            raise wire.RpcError(wire.INVALID_PARAMS, f"Elicitation mode {mode!r} not declared")
        return mode


class Client(ClientCore):
    """A blocking client: over a stream of lines, or in-process with `Client.local(server)`."""

    def __init__(self, send, lines=None, close=None, *, timeout=30.0, workers=4,
                 loopback=None, **options):
        super().__init__(**options)
        self.timeout = timeout
        self._send_bytes, self._close = send, close
        self._loopback = loopback
        self._results = {}            # id of a request we waited for -> its result
        self._waiting = set()         # ids of the requests we are waiting for
        self._changed = threading.Condition()
        self._closed = False
        self._write_lock = threading.Lock()
        if loopback is None:
            self._jobs = queue.Queue(MAX_PENDING_REQUESTS)
            self._workers = [threading.Thread(target=self._work, daemon=True)
                             for _ in range(workers)]
            for worker in self._workers:
                worker.start()
            self._reader = threading.Thread(target=self._read, args=(lines,), daemon=True)
            self._reader.start()

    @classmethod
    def local(cls, server, **options):
        """A client and a new session of `server` in this thread (transport.Loopback)."""
        from transport import Loopback
        loopback = Loopback(server)
        client = cls(loopback.send, loopback=loopback, **options)
        loopback.deliver = client._receive
        return client

    # -- plumbing ------------------------------------------------------------------------------
    def _send(self, msg):
        self.on_frame("→", msg)
        with self._write_lock:
            self._send_bytes(wire.encode(msg))

    def _read(self, lines):
        try:
            for line in lines:
                try:
                    self._receive(line)
                except RecursionError:  # a frame nested too deep to read: ignored
                    continue
        except (OSError, ValueError):
            pass
        finally:
            with self._changed:
                self._closed = True
                self._changed.notify_all()
            for _ in self._workers:
                try:
                    self._jobs.put_nowait(None)
                except queue.Full:
                    pass

    def _receive(self, line):
        if not line.strip():
            return
        try:
            msg = self._parse(line)
        except wire.RpcError:
            return  # garbage from the server: recorded by on_frame, otherwise ignored
        if msg["kind"] == "response":
            error = wire.RpcError.from_dict(msg["error"]) if "error" in msg else None
            with self._changed:
                if msg["id"] in self._waiting:  # an answer nobody asked for is dropped
                    self._results[msg["id"]] = error if error is not None else msg["result"]
                    self._changed.notify_all()
        elif msg["kind"] == "notification":
            with self._changed:
                if len(self.notifications) < MAX_NOTIFICATIONS:
                    self._note(msg)
                self._changed.notify_all()
        elif self._loopback is not None:
            self._serve_request(msg)
        else:
            try:
                self._jobs.put_nowait(msg)
            except queue.Full:
                self._send(wire.error_response(msg["id"], wire.RpcError(
                    wire.INTERNAL_ERROR, "Client busy: too many requests at once")))

    def _work(self):
        while (msg := self._jobs.get()) is not None:
            try:
                self._serve_request(msg)
            except (wire.ConnectionClosed, OSError, ValueError):
                pass  # the server went away before our answer: nothing left to answer

    def _serve_request(self, msg):
        """Answer one request from the server; a URL page is opened after consent is sent."""
        method, params, then = msg["method"], msg.get("params") or {}, None
        try:
            if method == "ping":
                result = {}
            elif method == "roots/list":
                result = self._roots_result()
            elif method == "elicitation/create":
                result, then = self._elicit(params)
            else:
                raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found: {method}")
        except wire.RpcError as err:
            self._send(wire.error_response(msg["id"], err))
            return
        if msg["id"] in self.cancelled:
            return  # the server voided this question while the user was answering it
        self._send(wire.response(msg["id"], result))
        with self._changed:
            self._changed.notify_all()  # roots_asked may have changed: wake set_roots()
        if then and self._loopback is not None:
            self._loopback.call_soon(then)  # like a person: after the server read the consent
        elif then:
            then()

    def _elicit(self, params):
        """(result, what to do once the result is on the wire)."""
        mode = self._check_elicitation(params)
        if self.user is None:
            return {"action": "cancel"}, None
        result = self.user.elicit(params)
        if mode == "url" and isinstance(result, dict) and result.get("action") == "accept":
            return result, lambda: self.user.open_url(params["url"])
        return result, None

    def _wait(self, done, timeout):
        if self._loopback is not None:
            self._loopback.pump_until(done, timeout)
            return
        with self._changed:
            if not self._changed.wait_for(lambda: done() or self._closed, timeout):
                raise TimeoutError("no answer in time")
            if not done():
                raise wire.ConnectionClosed("the server went away")

    def close(self):
        if self._loopback is not None:
            self._loopback.close()
        if self._close:
            self._close()
        if self._loopback is None:
            self._reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the MCP operations ---------------------------------------------------------------------
    def request(self, method, params=None, timeout=None):
        """Send a request and wait for its result; an error response raises RpcError."""
        msg_id, msg = self._new_request(method, params)
        with self._changed:
            self._waiting.add(msg_id)
        try:
            self._send(msg)
            self._wait(lambda: msg_id in self._results, timeout or self.timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer to {method} within {timeout or self.timeout} s") \
                from None
        finally:
            with self._changed:
                self._waiting.discard(msg_id)
                result = self._results.pop(msg_id, _MISSING)
        if result is _MISSING:
            raise wire.ConnectionClosed("the server went away")
        if isinstance(result, wire.RpcError):
            raise result
        return result

    def notify(self, method, params=None):
        self._send(wire.notification(method, params))

    def connect(self, wait_for_roots=True):
        """Handshake (2025 revisions; `server/discover` at 2026-07-28). Waits until the
        server has asked for our roots."""
        if self.stateless:
            self._connected(self.request("server/discover", {}))
            return self
        asked = self.roots_asked
        self._connected(self.request("initialize", self._initialize_params()))
        self.notify("notifications/initialized")
        if wait_for_roots and self.roots is not None:
            self._wait(lambda: self.roots_asked > asked, self.timeout)
        return self

    def list_tools(self):
        return self.request("tools/list", {})["tools"]

    def call_tool(self, name, arguments=None, timeout=700.0, max_rounds=10):
        """Call a tool; at 2026-07-28 answer `input_required` rounds until a final result."""
        params = {"name": name, "arguments": arguments or {}}
        for _ in range(max_rounds):
            result = self.request("tools/call", params, timeout)
            if self._final(result):
                return result
            responses = {}
            for key, method, asked in self._input_requests(result):
                if method == "roots/list":
                    responses[key] = self._roots_result()
                else:
                    responses[key], then = self._elicit(asked)
                    if then:  # open the page before we retry
                        then()
            params = self._retry_params(name, arguments, result, responses)
        raise RuntimeError(f"{name}: still input_required after {max_rounds} rounds")

    def set_roots(self, roots):
        """Change our roots; at 2025-11-25 tell the server and wait until it re-asked."""
        self.roots = [as_uri(r) for r in roots]
        if not self.stateless:
            asked = self.roots_asked
            self.notify("notifications/roots/list_changed")
            self._wait(lambda: self.roots_asked > asked, self.timeout)

    def cancel(self, request_id, reason=None):
        params = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        self.notify("notifications/cancelled", params)


class AsyncClient(ClientCore):
    """The client on an asyncio loop, in-process (`AsyncClient.local(server)`).

    The user is asynchronous: `await user.elicit(params)`, `await user.open_url(url)`. A call
    interrupted while it waits (the cell was stopped) is cancelled on the wire too.
    """

    def __init__(self, loopback, **options):
        super().__init__(**options)
        self._loopback = loopback
        self._loop = loopback.loop
        self._pending = {}
        self._roots_waiters = []
        self.on_notification = None   # called with each notification dict
        loopback.deliver = self._receive

    @classmethod
    def local(cls, server, loop=None, **options):
        import asyncio

        from transport import AsyncLoopback
        return cls(AsyncLoopback(server, loop or asyncio.get_running_loop()), **options)

    def _send(self, msg):
        self.on_frame("→", msg)
        self._loopback.send(wire.encode(msg))

    def _receive(self, line):
        try:
            msg = self._parse(line)
        except wire.RpcError:
            return
        if msg["kind"] == "response":
            future = self._pending.pop(msg["id"], None)
            if future is not None and not future.done():
                if "error" in msg:
                    future.set_exception(wire.RpcError.from_dict(msg["error"]))
                else:
                    future.set_result(msg["result"])
        elif msg["kind"] == "notification":
            self._note(msg)
            if self.on_notification is not None:
                self.on_notification(self.notifications[-1])
        else:
            self._loop.create_task(self._serve_request(msg))

    async def _serve_request(self, msg):
        import asyncio
        method, params = msg["method"], msg.get("params") or {}
        try:
            if method == "ping":
                result = {}
            elif method == "roots/list":
                result = self._roots_result()
                self._wake_roots()
            elif method == "elicitation/create":
                result = await self._elicit(params, msg["id"])
            else:
                raise wire.RpcError(wire.METHOD_NOT_FOUND, f"Method not found: {method}")
        except wire.RpcError as err:
            self._send(wire.error_response(msg["id"], err))
            return
        if msg["id"] in self.cancelled:
            return
        self._send(wire.response(msg["id"], result))
        if method == "elicitation/create" and params.get("mode") == "url" \
                and result.get("action") == "accept":
            await asyncio.sleep(0)  # like a person: the server reads the consent first
            await self.user.open_url(params["url"])

    async def _elicit(self, params, question_id=None):
        self._check_elicitation(params)
        if self.user is None:
            return {"action": "cancel"}
        return await self.user.elicit(params, question_id)

    def _wake_roots(self):
        for future in self._roots_waiters:
            if not future.done():
                future.set_result(None)
        self._roots_waiters.clear()

    async def request(self, method, params=None, timeout=None):
        import asyncio
        msg_id, msg = self._new_request(method, params)
        future = self._loop.create_future()
        self._pending[msg_id] = future
        self._send(msg)
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.CancelledError:
            self._pending.pop(msg_id, None)
            self._send(wire.notification("notifications/cancelled", {
                "requestId": msg_id, "reason": "La persona detuvo la celda."}))
            raise

    def notify(self, method, params=None):
        self._send(wire.notification(method, params))

    async def _roots_asked_again(self, action):
        future = self._loop.create_future()
        self._roots_waiters.append(future)
        action()
        await future

    async def connect(self):
        if self.stateless:
            self._connected(await self.request("server/discover", {}))
            return self
        if self.roots is not None:
            future = self._loop.create_future()
            self._roots_waiters.append(future)
        self._connected(await self.request("initialize", self._initialize_params()))
        self.notify("notifications/initialized")
        if self.roots is not None:
            await future
        return self

    async def list_tools(self):
        return (await self.request("tools/list", {}))["tools"]

    async def call_tool(self, name, arguments=None, max_rounds=10):
        params = {"name": name, "arguments": arguments or {}}
        for _ in range(max_rounds):
            result = await self.request("tools/call", params)
            if self._final(result):
                return result
            responses = {}
            for key, method, asked in self._input_requests(result):
                if method == "roots/list":
                    responses[key] = self._roots_result()
                    continue
                responses[key] = await self._elicit(asked)
                if asked.get("mode") == "url" and responses[key].get("action") == "accept":
                    await self.user.open_url(asked["url"])  # open the page before we retry
            params = self._retry_params(name, arguments, result, responses)
        raise RuntimeError(f"{name}: still input_required after {max_rounds} rounds")

    async def set_roots(self, roots):
        self.roots = [as_uri(r) for r in roots]
        if not self.stateless:
            await self._roots_asked_again(
                lambda: self.notify("notifications/roots/list_changed"))

    def close(self):
        self._loopback.close()


def as_uri(root):
    root = os.fspath(root)
    return root if root.startswith("file:") else path_to_uri(root)


def questions_in(frames):
    """The elicitation params the server sent in these (direction, msg) frames, in order:
    `elicitation/create` requests (2025-11-25) and `input_required` entries (2026-07-28)."""
    found = []
    for direction, msg in frames:
        if direction != "←" or not isinstance(msg, dict):
            continue
        if msg.get("method") == "elicitation/create":
            found.append(msg.get("params") if isinstance(msg.get("params"), dict) else {})
        result = msg.get("result")
        if isinstance(result, dict) and isinstance(result.get("inputRequests"), dict):
            for request in result["inputRequests"].values():
                if isinstance(request, dict) and request.get("method") == "elicitation/create":
                    params = request.get("params")
                    found.append(params if isinstance(params, dict) else {})
    return found


# -- a scripted user and browser -------------------------------------------------------------
class ScriptedUser:
    """Answers forms from a list of ElicitResult dicts (or functions of the params).

    `max_per_call` (with `new_call()` before each call) refuses to be asked more than that
    many times in one call: a server that keeps asking gets an error, never an endless
    conversation. After consenting in URL mode, `open_url` visits the page with `browser`.
    """

    def __init__(self, *answers, browser=None, max_per_call=None):
        self.answers = list(answers)
        self.seen = []
        self.visits = []
        self.browser = browser
        self.max_per_call = max_per_call
        self._this_call = 0

    def new_call(self):
        self._this_call = 0

    def elicit(self, params):
        self.seen.append(params)
        self._this_call += 1
        if self.max_per_call is not None and self._this_call > self.max_per_call:
            raise wire.RpcError(wire.INVALID_REQUEST, "Demasiadas preguntas en una llamada")
        if not self.answers:
            return {"action": "cancel"}
        answer = self.answers.pop(0)
        return answer(params) if callable(answer) else answer

    def open_url(self, url):
        self.visits.append(url)
        if self.browser is not None and (self.max_per_call is None
                                         or len(self.visits) <= self.max_per_call):
            self.browser.visit(url)


FORM_FIELD = re.compile(r'name="(\w+)" value="([^"]*)"')


def http_fetch(url, method="GET", data=None, timeout=10):
    """One HTTP request to a loopback page: {"status", "body"} or {"error"}."""
    import http.client  # loaded only when a page is opened
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
        return {"error": "only http://127.0.0.1 pages can be opened here"}
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if data else {}
    try:
        target = parts.path + ("?" + parts.query if parts.query else "")
        connection.request(method, target, body=data, headers=headers)
        response = connection.getresponse()
        return {"status": response.status,
                "body": response.read(65536).decode("utf-8", "replace")}
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        connection.close()


class Browser:
    """Opens the setup page like a person would: load it, then press a button.

    `fetch(url, method, data)` does one request and returns {"status", "body"} (or
    {"error"}): plain HTTP by default; the grader's sandbox and an in-process page bring
    their own. `before_submit` is called just before the form is posted (the grader marks the
    moment). Every page seen is kept in `pages`.
    """

    def __init__(self, decision="allow", fetch=None, before_submit=None):
        self.decision = decision
        self.fetch = fetch or http_fetch
        self.before_submit = before_submit or (lambda: None)
        self.pages = []

    def visit(self, url):
        page = self.fetch(url, "GET", None)
        self.pages.append(page)
        if page.get("status") != 200:
            return
        fields = dict(FORM_FIELD.findall(page.get("body", "")))
        fields["decision"] = self.decision
        self.before_submit()
        self.pages.append(self.fetch(urllib.parse.urljoin(url, "/connect"), "POST",
                                     urllib.parse.urlencode(fields)))


# -- transports --------------------------------------------------------------------------------
def spawn(argv, **popen_args):
    """Start a server process on stdio; returns (send, lines, close, process)."""
    import subprocess
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
