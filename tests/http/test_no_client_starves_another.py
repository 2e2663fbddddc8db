"""No client of `serve --http` can starve another: each attack runs while a legitimate client
(the lesson's client, with a session that holds an open note) keeps working, during the
attack and after it.

- long-lived GET streams, one per session, as many sessions as the server allows and more;
- request heads and bodies trickled a byte at a time, on more connections than the front
  reads at once (and each cut at its deadline, 408, however steadily it trickles);
- 80 `initialize` in a row, which must not end a session in use (once every session is in
  use, the next one gets 503 with Retry-After);
- one client holding more requests than its share (503 for its next, never for the others);
- the setup page's connections held by slow clients, while the legitimate user finishes a
  URL-mode flow on it.

Servers are real processes stopped by their PID; every frame they wrote validates against
the official schema (conftest.py). The tests wait for events (an answer, a line, a socket
turning readable), never for a fixed time; an attacker's own loop paces its bytes."""

import http.client
import json
import select
import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

from http_support import initialize, read_events, request, stateless

PICK = [{"action": "accept", "content": {"note_id": note, "confirm": True}}
        for note in ("note-7", "note-14")]


class Legit:
    """The lesson's client at 2025-11-25 over HTTP; its session holds an open note."""

    def __init__(self, server, tree, **user):
        from client import http_client
        from client.simulated_user import ScriptedUser
        from client.sync_client import Client
        self.tree, self.user = tree, ScriptedUser(*user.get("answers", PICK),
                                                  browser=user.get("browser"))
        self.client = Client(*http_client.connect(server.url), roots=[tree.notes],
                             protocol="2025-11-25", user=self.user, timeout=60)
        self.client.connect()
        self.handle = self.call("notes_open", {"note_id": "note-3"})["handle"]

    def call(self, name, arguments=None):
        result = self.client.call_tool(name, arguments or {}, timeout=60)
        assert result["isError"] is False, result
        return result["structuredContent"]

    def works(self, delete=None):
        """Read its open note, list the notes and (`delete`) delete one chosen in a form."""
        assert "cuerpo de note-3" in self.call("notes_read", {"handle": self.handle})["body"]
        listed = self.call("notes_list")["notes"]
        if delete is not None:
            assert self.call("notes_delete", {"title": "TPS report"})["deleted"]["id"] == delete
        return listed

    def close(self):
        self.client.close()


@pytest.fixture
def legit():
    opened = []

    def start(server, tree, **user):
        opened.append(Legit(server, tree, **user))
        return opened[-1]
    yield start
    for client in opened:
        client.close()


class Trickler:
    """An attacker: `count` connections that each send a request a byte at a time (its head,
    or a head announcing a large body and then the body), on a loop of its own; a connection
    the server drops is opened again at once."""

    def __init__(self, port, count, body=False):
        self.port, self.count, self.body = port, count, body
        self.stop, self.ready, self.refused = threading.Event(), threading.Event(), []
        self.told = threading.Event()  # the server let one go, and answered it
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(120), "the attack never got going"

    def _open(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        start = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        if self.body:
            start += b"Content-Length: 4000000\r\n\r\n{"
        sock.sendall(start)
        sock.setblocking(False)
        return sock

    def _run(self):
        socks = [self._open() for _ in range(self.count)]
        self.ready.set()
        while not self.stop.is_set():
            for index, sock in enumerate(socks):
                try:
                    if select.select([sock], [], [], 0)[0]:  # the server answered: dropped
                        self.refused.append(sock.recv(8192))
                        self.told.set()
                        raise OSError
                    sock.send(b"x")
                except OSError:
                    sock.close()
                    socks[index] = self._open()
            self.stop.wait(0.2)  # the attacker's own pace
        for sock in socks:
            sock.close()

    def end(self):
        self.stop.set()
        self.thread.join(60)


# -- long-lived GET streams ----------------------------------------------------------------------
def test_get_streams_on_every_session_the_server_allows_starve_no_one(serve, tree, legit):
    from transports import streamable_http
    server = serve()
    ana = legit(server, tree)
    held = []
    for _ in range(streamable_http.MAX_SESSIONS + 16):  # more sessions than allowed
        session = initialize(server)
        connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
        connection.request("GET", "/mcp", headers={"Mcp-Session-Id": session,
                                                   "Accept": "text/event-stream"})
        response = connection.getresponse()
        assert response.status in (200, 503)  # 503: an evicted session's stream still ends
        held.append(response)  # kept: a response dropped closes its connection
    assert sum(r.status == 200 for r in held) >= streamable_http.MAX_SESSIONS - 1
    assert ana.works(delete="note-7")  # during: its calls, its form, its open note
    bea = legit(server, tree, answers=[])  # and a newcomer gets a session too
    assert bea.works()
    for response in held:
        response.close()
    assert ana.works(delete="note-14")  # after


# -- heads and bodies trickled -------------------------------------------------------------------
@pytest.mark.parametrize("body", [False, True], ids=["heads", "bodies"])
def test_requests_trickled_on_more_connections_than_the_front_reads_starve_no_one(
        serve, tree, legit, body):
    from transports import streamable_http
    server = serve()
    ana = legit(server, tree)
    attack = Trickler(server.port, streamable_http.LIMITS.connections + 24, body=body)
    try:
        assert ana.works(delete="note-7")  # during
        assert attack.told.wait(60)
        assert any(answer.startswith(b"HTTP/1.1 503") for answer in attack.refused)
    finally:
        attack.end()
    assert ana.works(delete="note-14")  # after


@pytest.mark.parametrize("part", ["head", "body"])
def test_a_head_or_a_body_trickled_past_its_deadline_gets_408(tmp_path, part):
    """However steadily the bytes come, a whole head (or body) must arrive within its
    deadline (here 1 s, in a server in this process)."""
    from server import NotesServer
    from transports import streamable_http
    limits = streamable_http.LIMITS._replace(head_seconds=1.0, body_seconds=1.0)
    http = streamable_http.StreamableHttp(NotesServer(), "127.0.0.1", 0, limits=limits)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", http.port), timeout=30) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (
                b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                if part == "body" else b""))
            answer = b""
            while not answer:  # a byte now and then, until the server answers
                sock.send(b"x")
                if select.select([sock], [], [], 0.2)[0]:
                    answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408")
        assert b"1 s to arrive" in answer
    finally:
        http.close()
        thread.join(10)


# -- 80 initialize ---------------------------------------------------------------------------------
def test_eighty_initialize_never_end_a_session_in_use(serve, tree):
    """A session with an open note and no stream open (it does not keep a GET stream) is in
    use: 80 new sessions end idle ones to make room, never it; its note still reads."""
    server = serve("--root", tree.notes)
    session = initialize(server)
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}

    def call(name, arguments, msg_id):
        answer = request(server, headers=headers, body={
            "jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
        assert answer.status == 200, answer.frames
        return answer.frame["result"]
    handle = call("notes_open", {"note_id": "note-3"}, 2)["structuredContent"]["handle"]
    for _ in range(80):
        initialize(server)
    read = call("notes_read", {"handle": handle}, 3)  # during: still its session, its note
    assert "cuerpo de note-3" in read["structuredContent"]["body"]
    assert initialize(server)  # after: room for more, made of the idle ones
    assert "cuerpo de note-3" in call("notes_read", {"handle": handle}, 4)[
        "structuredContent"]["body"]


def test_once_every_session_is_in_use_a_new_one_gets_503_with_retry_after(serve, tree,
                                                                         legit):
    from transports import streamable_http
    server = serve("--root", tree.notes)
    ana = legit(server, tree)
    others = []
    for _ in range(streamable_http.MAX_SESSIONS - 1):  # each holds an open note
        session = initialize(server)
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        opened = request(server, body={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": "notes_open",
                                                  "arguments": {"note_id": "note-1"}}},
                         headers=headers)
        assert opened.status == 200 and opened.frame["result"]["isError"] is False
        others.append(headers)
    refused = request(server, body={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"protocolVersion": "2025-11-25",
                                               "capabilities": {},
                                               "clientInfo": {"name": "x", "version": "1"}}})
    assert refused.status == 503 and refused.headers["Retry-After"] == "1"
    assert refused.frame["error"]["code"] == -32603
    assert ana.works(delete="note-7")  # the live ones were kept
    assert request(server, "DELETE", headers=others[0]).status == 200
    assert initialize(server)  # room again


# -- a client's share of the requests --------------------------------------------------------------
def test_a_client_holding_its_share_of_requests_gets_503_and_no_other_does(serve, tree):
    """One session with PER_CLIENT calls waiting for their forms: its next request is 503
    (Retry-After), another session's is served; once its streams close it is served again."""
    from transports import streamable_http
    server = serve()
    session = initialize(server, {"elicitation": {"form": {}}, "roots": {}})
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    answer_roots(server, headers, tree)
    waiting = []
    for n in range(streamable_http.PER_CLIENT):
        waiting.append(open_stream(server, headers, {
            "jsonrpc": "2.0", "id": 100 + n, "method": "tools/call",
            "params": {"name": "notes_delete", "arguments": {"title": "TPS report"}}}))
    listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
    refused = request(server, body=listing, headers=headers)
    assert refused.status == 503 and refused.headers["Retry-After"] == "1"
    other = initialize(server)
    assert request(server, body=listing, headers={"Mcp-Session-Id": other}).status == 200
    for response in waiting:
        response.close()
    deadline = time.monotonic() + 60
    while request(server, body=listing, headers=headers).status == 503:
        assert time.monotonic() < deadline, "the session never got its share back"
        time.sleep(0.1)


def answer_roots(server, headers, tree):
    """Open the session's GET stream, answer its roots/list with Notas/ and close it."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    connection.request("GET", "/mcp", headers={**headers, "Accept": "text/event-stream"})
    response = connection.getresponse()
    frame = next(read_events(response))
    assert frame["method"] == "roots/list"
    answered = request(server, headers=headers, body={
        "jsonrpc": "2.0", "id": frame["id"],
        "result": {"roots": [{"uri": tree.notes.as_uri()}]}})
    assert answered.status == 202
    connection.close()


def open_stream(server, headers, body):
    """POST `body` and read its SSE stream up to its first event (a question): the request
    now waits, holding its stream."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    connection.request("POST", "/mcp", body=json.dumps(body), headers={
        **headers, "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    response = connection.getresponse()
    assert response.status == 200 and "event-stream" in response.getheader("Content-Type")
    assert next(read_events(response))["method"] == "elicitation/create"
    return response  # kept: a response dropped closes its connection


# -- the setup page --------------------------------------------------------------------------------
def test_slow_clients_holding_the_setup_page_never_stop_its_owner_finishing_a_flow(
        serve, tree, legit):
    from client.simulated_user import Browser
    from transports import page_http
    server = serve("--demo-url-guard")
    asked = stateless(server, "tools/call", {"name": "notes_setup", "arguments": {}},
                      capabilities={"elicitation": {"url": {}}}).frame["result"]
    (question,) = asked["inputRequests"].values()
    page = urlsplit(question["params"]["url"])
    attack = PageTrickler(page.port, page_http.FRONT["connections"] + 16)
    try:
        browser = Browser()
        ana = legit(server, tree, answers=[{"action": "accept"}], browser=browser)
        assert ana.call("notes_setup") == {"status": "configured"}  # during
        assert browser.pages[-1]["status"] == 200
        assert attack.told.wait(60)
        assert any(b"503" in answer.split(b"\r\n")[0] and b"Retry-After: 1" in answer
                   for answer in attack.refused)  # the ones the page let go were told why
    finally:
        attack.end()
    assert ana.call("notes_sync")["synced"] == 4  # after


class PageTrickler(Trickler):
    def _open(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        sock.sendall(b"GET /connect?elicitation=x HTTP/1.1\r\n")
        sock.setblocking(False)
        return sock
