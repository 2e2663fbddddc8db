"""`serve --http`: the Streamable HTTP transport of both revisions, over real sockets.

Every server here runs as its own process, is stopped by its PID (SIGTERM, cleanly) and has
every frame it wrote validated against the official schema (conftest.py)."""

import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from http_support import (
    Served,
    initialize,
    meta,
    request,
    stateless,
)
from server_support import serve_argv
from shared.protocol import REVISIONS

PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


# -- 2025-11-25: sessions ------------------------------------------------------------------------
def test_initialize_without_a_session_starts_one_and_names_it_in_visible_ascii(serve):
    server = serve()
    answer = request(server, body={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "prueba", "version": "1"}}})
    assert answer.status == 200 and "application/json" in answer.kind
    assert answer.frame["result"]["protocolVersion"] == "2025-11-25"
    session = answer.headers["Mcp-Session-Id"]
    assert len(session) >= 16 and all(0x21 <= ord(c) <= 0x7E for c in session)


def test_a_request_without_a_session_is_refused_with_400_and_an_initialize_still_works(serve):
    server = serve()
    refused = request(server, body={"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    assert refused.status == 400 and refused.frame["id"] == 7
    assert refused.frame["error"]["code"] == -32600
    assert initialize(server)


def test_delete_ends_a_session_and_its_id_then_gets_404(serve):
    server = serve()
    session = initialize(server)
    listed = request(server, body={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                     headers={"Mcp-Session-Id": session})
    assert listed.status == 200 and listed.frame["result"]["tools"]
    assert request(server, "DELETE", headers={"Mcp-Session-Id": session}).status == 200
    for method in ("POST", "GET", "DELETE"):
        gone = request(server, method, headers={"Mcp-Session-Id": session}, body={
            "jsonrpc": "2.0", "id": 3, "method": "tools/list"} if method == "POST" else None)
        assert gone.status == 404, method
    assert request(server, "POST", headers={"Mcp-Session-Id": "otra-que-no-existe"}, body={
        "jsonrpc": "2.0", "id": 4, "method": "tools/list"}).status == 404


def test_a_question_travels_on_the_calls_sse_stream_and_its_answer_ends_the_call(serve, tree):
    server = serve("--root", tree.notes)
    session = initialize(server, {"elicitation": {"form": {}}})
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    asked, call = threading.Event(), {}

    def seen(frame):  # each frame of the call's stream, as it arrives
        if frame.get("method") == "elicitation/create":
            call["question"] = frame["id"]
            asked.set()
        return frame.get("id") == 9 and "method" not in frame
    thread = threading.Thread(target=lambda: call.update(answer=request(
        server, headers=headers, until=seen, timeout=15, body={
            "jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "notes_delete", "arguments": {"title": "TPS report"}}})))
    thread.start()
    assert asked.wait(10), "no elicitation/create on the call's stream"
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]
    answered = request(server, headers=headers, body={"jsonrpc": "2.0",
                                                       "id": call["question"],
                                                       "result": PICK_2024})
    assert answered.status == 202 and not answered.frames
    thread.join(15)
    frames = call["answer"].frames
    assert "text/event-stream" in call["answer"].kind
    assert [f.get("method") for f in frames[:-1]] == ["elicitation/create"]
    assert frames[-1]["result"]["structuredContent"]["deleted"]["id"] == "note-7"
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2025.md"]


def test_what_belongs_to_no_request_waits_for_the_get_stream(serve, tree):
    """The roots/list that follows `notifications/initialized` goes out when the client opens
    its GET stream; a second GET stream on the same session is refused (409)."""
    server = serve()
    session = initialize(server, {"roots": {"listChanged": True}})
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    listening = request(server, "GET", headers={**headers, "Accept": "text/event-stream"},
                        until=lambda f: f.get("method") == "roots/list", timeout=10)
    assert listening.status == 200 and "text/event-stream" in listening.kind
    assert [f["method"] for f in listening.frames] == ["roots/list"]


def test_a_session_has_one_get_stream_at_a_time(serve):
    server = serve()
    session = initialize(server)
    headers = {"Mcp-Session-Id": session, "Accept": "text/event-stream"}
    first = http.client.HTTPConnection(server.host, server.port, timeout=10)
    first.request("GET", "/mcp", headers=headers)
    listening = first.getresponse()  # kept: a response dropped here closes its connection
    assert listening.status == 200
    assert request(server, "GET", headers=headers).status == 409
    listening.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until the server noticed the first stream is gone
        again = http.client.HTTPConnection(server.host, server.port, timeout=10)
        again.request("GET", "/mcp", headers=headers)
        reopened = again.getresponse()
        status = reopened.status
        reopened.close()
        if status == 200:
            return
        # not yet: the first stream is still open, or its thread (with those of the refused
        # tries) still counts among the session's requests being answered (busy, 503)
        assert status in (409, 503)
        time.sleep(0.2)
    raise AssertionError("the GET stream could not be opened again")


@pytest.mark.parametrize("version", ["1900-01-01", "2026-07-28", "2025-06-18"])
def test_a_protocol_version_header_other_than_the_negotiated_one_is_400_on_every_method(
        serve, version):
    """POST, GET and DELETE alike: the session is neither served, listened to nor ended."""
    server = serve()
    session = initialize(server)
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    wrong = {"Mcp-Session-Id": session, "MCP-Protocol-Version": version}
    assert request(server, body=body, headers=wrong).status == 400
    assert status_of(server, "GET", {**wrong, "Accept": "text/event-stream"}) == 400
    assert status_of(server, "DELETE", wrong) == 400
    right = request(server, body=body, headers={"Mcp-Session-Id": session,
                                                "MCP-Protocol-Version": "2025-11-25"})
    assert right.status == 200 and right.frame["result"]["tools"]
    assert request(server, "DELETE", headers={"Mcp-Session-Id": session,
                                              "MCP-Protocol-Version": "2025-11-25"}).status \
        == 200


def status_of(server, method, headers):
    """The status of a request, read as soon as its head arrives (a stream is not read)."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request(method, "/mcp", headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


# -- 2026-07-28: stateless ------------------------------------------------------------------------
def test_a_2026_request_is_answered_without_any_session(serve):
    server = serve()
    listed = stateless(server, "tools/list")
    assert listed.status == 200 and "Mcp-Session-Id" not in listed.headers
    assert listed.frame["result"]["resultType"] == "complete"
    assert {t["name"] for t in listed.frame["result"]["tools"]} >= {"notes_list", "notes_delete"}


@pytest.mark.parametrize("changed", [
    {"MCP-Protocol-Version": None}, {"Mcp-Method": None}, {"Mcp-Method": "prompts/list"},
    {"Mcp-Method": "TOOLS/CALL"}, {"Mcp-Name": None}, {"Mcp-Name": "notes_delete"},
    {"Mcp-Name": "=?base64?bm90ZXNfbGlzdA?="}, {"MCP-Protocol-Version": "2025-11-25"}],
    ids=["no version", "no method", "other method", "method in capitals", "no name",
         "other name", "bad base64 name", "other version"])
def test_headers_that_do_not_repeat_the_body_are_400_with_header_mismatch(serve, changed):
    server = serve()
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
               "Mcp-Name": "notes_list", **changed}
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "notes_list", "arguments": {}, "_meta": meta({"roots": {}})}}
    answer = request(server, body=body,
                     headers={k: v for k, v in headers.items() if v is not None})
    assert answer.status == 400
    assert answer.frame["id"] == 5 and answer.frame["error"]["code"] == -32020
    fine = request(server, body=body, headers={
        "MCP-Protocol-Version": " 2026-07-28", "mcp-method": "tools/call",
        "MCP-NAME": "  =?base64?bm90ZXNfbGlzdA==?= "})  # any case, trimmed, Base64: the same
    assert fine.status == 200 and fine.frame["result"]["resultType"] == "input_required"


def test_an_unknown_method_is_404_and_a_missing_capability_is_400(serve):
    server = serve()
    unknown = stateless(server, "prompts/list")
    assert unknown.status == 404 and unknown.frame["error"]["code"] == -32601
    no_roots = stateless(server, "tools/call", {"name": "notes_list", "arguments": {}})
    assert no_roots.status == 400 and no_roots.frame["error"]["code"] == -32021
    assert no_roots.frame["error"]["data"] == {"requiredCapabilities": {"roots": {}}}
    asked = stateless(server, "tools/call", {"name": "notes_list", "arguments": {}},
                      capabilities={"roots": {}})
    assert asked.status == 200 and asked.frame["result"]["resultType"] == "input_required"


def test_two_clients_may_use_the_same_request_id_at_once(serve, tree):
    """Each 2026-07-28 POST gets an id of the server's own: a call still waiting and another
    request with its client's same id are both answered, each on its own stream."""
    server = serve("--demo-url-guard", "--setup-wait", "2")
    caps = {"elicitation": {"url": {}}}
    first = stateless(server, "tools/call", {"name": "notes_setup", "arguments": {}},
                      msg_id=1, capabilities=caps)
    waiting, results = first.frame["result"], {}
    retry = {"name": "notes_setup", "arguments": {}, "requestState": waiting["requestState"],
             "inputResponses": {key: {"action": "accept"} for key in waiting["inputRequests"]}}
    thread = threading.Thread(target=lambda: results.update(waited=stateless(
        server, "tools/call", retry, msg_id=1, capabilities=caps, timeout=15)))
    thread.start()
    time.sleep(0.5)  # the retry now waits for the setup page (up to --setup-wait)
    listed = stateless(server, "tools/list", msg_id=1)
    assert thread.is_alive() and listed.frame["id"] == 1 and "tools" in listed.frame["result"]
    thread.join(15)
    waited = results["waited"].answer_to(1)
    assert waited["result"]["structuredContent"] == {"status": "pending"}


def test_closing_the_stream_cancels_a_waiting_2026_call(serve):
    server = serve("--demo-url-guard", "--setup-wait", "20")
    caps = {"elicitation": {"url": {}}}
    first = stateless(server, "tools/call", {"name": "notes_setup", "arguments": {}},
                      capabilities=caps).frame["result"]
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "notes_setup", "arguments": {}, "requestState": first["requestState"],
        "inputResponses": {key: {"action": "accept"} for key in first["inputRequests"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": caps}}}
    data = json.dumps(body).encode()
    connection = socket.create_connection((server.host, server.port), timeout=10)
    connection.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        b"Mcp-Method: tools/call\r\nMcp-Name: notes_setup\r\n"
        + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    assert b"text/event-stream" in connection.recv(4096)  # the call waits, on an SSE stream
    connection.shutdown(socket.SHUT_RDWR)
    connection.close()
    assert server.wait_log(r"cancelled by the client")
    assert stateless(server, "tools/list", msg_id=3).status == 200


# -- both: the lesson's client and the URL flows over HTTP ---------------------------------------
@pytest.mark.parametrize("protocol", REVISIONS)
def test_the_lessons_client_deletes_exactly_the_chosen_note_over_http(serve, tree, protocol):
    from client import http_client
    from client.simulated_user import ScriptedUser
    from client.sync_client import Client
    server = serve()
    with Client(*http_client.connect(server.url), roots=[tree.notes], protocol=protocol,
                user=ScriptedUser(PICK_2024), timeout=15) as client:
        client.connect()
        result = client.call_tool("notes_delete", {"title": "TPS report"}, timeout=15)
    assert result["structuredContent"]["deleted"]["id"] == "note-7"
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2025.md"]


@pytest.mark.parametrize("protocol", REVISIONS)
def test_the_url_flow_of_notes_setup_completes_on_the_setup_page_over_http(serve, tree,
                                                                          protocol):
    from client import http_client
    from client.simulated_user import Browser, ScriptedUser
    from client.sync_client import Client
    server = serve("--demo-url-guard")
    user = ScriptedUser({"action": "accept"}, browser=Browser())
    with Client(*http_client.connect(server.url), roots=[tree.notes], protocol=protocol,
                user=user, timeout=15) as client:
        client.connect()
        setup = client.call_tool("notes_setup", timeout=20)
        synced = client.call_tool("notes_sync", timeout=20)
        deadline = time.monotonic() + 5
        while protocol == "2025-11-25" and not client.notifications and \
                time.monotonic() < deadline:
            time.sleep(0.05)
    assert setup["structuredContent"] == {"status": "configured"}
    assert user.browser.pages[-1]["status"] == 200  # the real page, on its own port
    assert synced["structuredContent"]["synced"] == 4
    if protocol == "2025-11-25":  # the completion notification came on the GET stream
        assert [n["method"] for n in client.notifications] == [
            "notifications/elicitation/complete"]


# -- safety -----------------------------------------------------------------------------------
@pytest.mark.parametrize("headers", [{"Host": "evil.example.com"},
                                     {"Host": "127.0.0.1:1"},
                                     {"Origin": "http://evil.example.com"},
                                     {"Origin": "null"}],
                         ids=["foreign host", "other port", "foreign origin", "null origin"])
def test_a_foreign_host_or_origin_is_refused_with_403_and_a_local_one_is_served(serve, headers):
    server = serve()
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "prueba", "version": "1"}}}
    refused = request(server, body=body, headers=headers)
    assert refused.status == 403 and "Mcp-Session-Id" not in refused.headers
    local = request(server, body=body, headers={"Origin": f"http://localhost:{server.port}"})
    assert local.status == 200 and local.headers["Access-Control-Allow-Origin"] == \
        f"http://localhost:{server.port}"


def test_a_body_over_the_limit_is_413_and_the_server_goes_on(serve):
    server = serve()
    connection = socket.create_connection((server.host, server.port), timeout=10)
    connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       b"application/json\r\nContent-Length: 99999999\r\n\r\n{")
    assert connection.recv(100).startswith(b"HTTP/1.1 413")
    connection.close()
    assert stateless(server, "tools/list").status == 200


def test_other_paths_are_404_and_other_methods_405(serve):
    server = serve()
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    connection.request("GET", "/otra")
    assert connection.getresponse().status == 404
    connection.close()
    assert request(server, "PUT", body=b"{}").status == 405


def test_sessions_are_bounded_and_the_least_recently_used_idle_one_makes_room(serve):
    from transports import streamable_http
    server = serve()
    oldest = initialize(server)
    for _ in range(streamable_http.MAX_SESSIONS):
        initialize(server)
    gone = request(server, body={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   headers={"Mcp-Session-Id": oldest})
    assert gone.status == 404


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 0)])
def test_a_signal_stops_the_server_cleanly_and_frees_its_port(tmp_path, signum, code):
    server = Served(cwd=tmp_path)
    session = initialize(server)
    listening = http.client.HTTPConnection(server.host, server.port, timeout=10)
    listening.request("GET", "/mcp", headers={"Mcp-Session-Id": session,
                                              "Accept": "text/event-stream"})
    stream = listening.getresponse()
    assert stream.status == 200  # an open stream does not hold the stop
    assert server.stop(signum) == code, server.log
    with pytest.raises(OSError):
        socket.create_connection((server.host, server.port), timeout=2)
    assert not [line for line in server.log if line and "Traceback" in line], server.log


def test_a_stop_that_lands_as_a_request_thread_starts_gives_its_slot_back_once(monkeypatch):
    """A signal's stop can reach the front's thread just after a request's thread started:
    the request is still answered, its slot is given back once, and nothing fails."""

    from server import NotesServer
    from transports import http_front, streamable_http
    failures, start = [], threading.Thread.start

    def start_then_interrupted(thread):
        start(thread)
        raise KeyboardInterrupt
    monkeypatch.setattr(threading, "excepthook", failures.append)
    http = streamable_http.StreamableHttp(NotesServer(), "127.0.0.1", 0)
    ours, theirs = socket.socketpair()
    head = b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    connection = http_front.Connection(theirs, ("127.0.0.1", 1), time.monotonic())
    connection.head, connection.body, connection.method = head, b"", "DELETE"
    connection.headers = http_front.Headers.parse(head.split(b"\r\n", 1)[1])
    try:
        monkeypatch.setattr(threading.Thread, "start", start_then_interrupted)
        with pytest.raises(KeyboardInterrupt):
            http._dispatch(connection)
        monkeypatch.setattr(threading.Thread, "start", start)
        ours.settimeout(10)
        answer = b""
        while chunk := ours.recv(4096):  # the request is answered, and its connection closed
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 400")
        deadline = time.monotonic() + 10
        while http.requests.held and time.monotonic() < deadline:  # its thread's last step
            time.sleep(0.01)
        assert http.requests.held == 0 and http.requests.by_client == {} and failures == []
    finally:
        ours.close()
        http.close()


def test_a_wildcard_listen_address_is_refused(tmp_path):
    run = subprocess.run(serve_argv("--http", "0.0.0.0:0"), capture_output=True, text=True,
                         timeout=30, cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 2 and "one address" in run.stderr


def test_the_http_pipe_cancels_a_2026_request_by_closing_its_stream(serve):
    """At 2026-07-28 a `notifications/cancelled` is not sent over HTTP: the pipe closes the
    request's stream, which is how the revision cancels, and the server stops the call."""
    from client import http_client
    server = serve("--demo-url-guard", "--setup-wait", "20")
    caps = {"elicitation": {"url": {}}}
    first = stateless(server, "tools/call", {"name": "notes_setup", "arguments": {}},
                      capabilities=caps).frame["result"]
    pipe = http_client.HttpPipe(server.url)
    retry = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "notes_setup", "arguments": {}, "requestState": first["requestState"],
        "inputResponses": {key: {"action": "accept"} for key in first["inputRequests"]},
        "_meta": meta(caps)}}
    pipe.send(json.dumps(retry).encode())  # returns once the server took it: the call waits
    pipe.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": 7}}).encode())
    assert server.wait_log(r"tools/call 'http-\d+' \(notes_setup\) cancelled by the client")
    pipe.close()
    assert list(pipe.lines()) == []  # no answer ever came for the cancelled request


def test_a_page_on_a_loopback_origin_may_ask_first_and_a_foreign_one_may_not(serve):
    """A browser's CORS preflight (MCP Inspector's page, on another local port) is answered;
    the same from a foreign origin is refused."""
    server = serve()
    local = request(server, "OPTIONS", headers={"Origin": "http://localhost:6274",
                                                "Access-Control-Request-Method": "POST"})
    assert local.status == 204
    assert local.headers["Access-Control-Allow-Origin"] == "http://localhost:6274"
    assert "Mcp-Session-Id" in local.headers["Access-Control-Allow-Headers"]
    foreign = request(server, "OPTIONS", headers={"Origin": "http://evil.example.com"})
    assert foreign.status == 403 and "Access-Control-Allow-Origin" not in foreign.headers
