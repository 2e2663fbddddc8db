"""The setup page over HTTP checks who is asking (issue 34).

It answers only at the address it handed out (a name another site rebinds to 127.0.0.1 gets
421, never the page and its nonce), refuses a form posted from another site (403, the
provider's consent page included), puts its protective headers on every answer (errors and
501s too, and no server version), answers an unreadable request line with 400/414 instead of
a closed connection and a traceback, and cannot be held by slow connections: the one it
refuses is told why.
"""

import select
import socket
import urllib.parse

import pytest

from nube_copias import AUTHORIZE_PATH, CLIENT_ID
from server import Config, NotesServer
from transports import page_http
from transports.page_http import HttpPage
from urlflow.setup_page import SetupPage
from urlflow.url_mode import FlowStore

PROTECTIVE = {"cache-control": "no-store", "referrer-policy": "same-origin",
              "x-frame-options": "DENY", "x-content-type-options": "nosniff"}


@pytest.fixture
def served():
    flows = FlowStore()
    logs = []
    page = HttpPage(SetupPage(flows, "notas-sync", user="local:ana"), log=logs.append)
    page.flows, page.logs = flows, logs
    yield page
    page.close()


def raw(page, data, timeout=5):
    """Send `data` as is; (status, headers, body) of the answer, or None if none came."""
    port = int(page.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    if not answer:
        return None
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body.decode("utf-8", "replace")


def request(page, method, target, host=None, headers=(), body=""):
    host = host if host is not None else page.base.split("//", 1)[1]
    lines = [f"{method} {target} HTTP/1.1"] + ([f"Host: {host}"] if host else []) + [
        f"{name}: {value}" for name, value in headers]
    if method == "POST":
        lines += ["Content-Type: application/x-www-form-urlencoded",
                  f"Content-Length: {len(body.encode())}"]
    return raw(page, ("\r\n".join(lines) + "\r\n\r\n" + body).encode())


def consent_form(record, decision="allow"):
    return urllib.parse.urlencode({"elicitation": record.elicitation_id, "state": record.nonce,
                                   "decision": decision})


@pytest.mark.parametrize("host", ["notas-sync.evil.example:{port}", "localhost:{port}",
                                  "127.0.0.1:1", ""], ids=["rebound-name", "another-name",
                                                          "another-port", "no-host"])
def test_a_host_other_than_the_address_handed_out_gets_421_and_never_the_nonce(served, host):
    record = served.flows.start("s", "local:ana", "notas-sync")
    port = served.base.rsplit(":", 1)[1]
    status, _, body = request(served, "GET", f"/connect?elicitation={record.elicitation_id}",
                              host=host.format(port=port))
    assert status == 421 and record.nonce not in body
    status, _, body = request(served, "GET", f"/connect?elicitation={record.elicitation_id}")
    assert status == 200 and record.nonce in body  # at its own address, the page is there


@pytest.mark.parametrize("headers", [
    [("Origin", "http://evil.example")], [("Origin", "null")],
    [("Sec-Fetch-Site", "cross-site")]], ids=["other-origin", "opaque-origin", "cross-site"])
def test_a_consent_posted_from_another_site_is_refused_and_completes_nothing(served, headers):
    record = served.flows.start("s", "local:ana", "notas-sync")
    status, _, _ = request(served, "POST", "/connect", headers=headers,
                           body=consent_form(record))
    assert status == 403 and record.status == "pending"
    status, _, _ = request(served, "POST", "/connect", headers=[("Origin", served.base)],
                           body=consent_form(record))
    assert status == 200 and record.status == "completed"


def test_the_providers_consent_page_refuses_a_cross_site_post():
    server = NotesServer(Config(page_transport="http"))
    page = server.serve_page_http()
    try:
        fields = {"response_type": "code", "client_id": CLIENT_ID, "state": "s-1",
                  "redirect_uri": server.provider.redirect_uri(), "decision": "allow"}
        status, headers, _ = request(page, "POST", AUTHORIZE_PATH,
                                     headers=[("Origin", "http://evil.example")],
                                     body=urllib.parse.urlencode(fields))
        assert status == 403 and "location" not in headers
        status, headers, _ = request(page, "POST", AUTHORIZE_PATH,
                                     headers=[("Origin", page.base)],
                                     body=urllib.parse.urlencode(fields))
        assert status == 303 and "code=ncc_code_" in headers["location"]
    finally:
        server.close()


ANSWERS = {
    "page": (b"GET /connect?elicitation=nada HTTP/1.1\r\nHost: {host}\r\n\r\n", 410),
    "not-found": (b"GET /nada HTTP/1.1\r\nHost: {host}\r\n\r\n", 404),
    "malformed": (b"GARBAGE\r\n\r\n", 400),
    "bad-version": (b"GET / HTTP/9.9.9\r\nHost: {host}\r\n\r\n", 400),
    "uri-70kb": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: {host}\r\n\r\n", 414),
    "unknown-method": (b"DELETE /connect HTTP/1.1\r\nHost: {host}\r\n\r\n", 501),
    "rebound-host": (b"GET /connect HTTP/1.1\r\nHost: evil.example\r\n\r\n", 421),
    "too-large": (b"POST /connect HTTP/1.1\r\nHost: {host}\r\nContent-Length: 99999\r\n\r\n",
                  413),
}


@pytest.mark.parametrize("name", list(ANSWERS))
def test_every_answer_carries_the_protective_headers_and_no_server_version(served, capfd,
                                                                           name):
    data, expected = ANSWERS[name]
    status, headers, body = raw(served, data.replace(b"{host}", served.base.split(
        "//", 1)[1].encode()))
    assert status == expected
    assert {name: headers.get(name) for name in PROTECTIVE} == PROTECTIVE
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "server" not in headers and "Python" not in body and "BaseHTTP" not in body
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert "Traceback" not in capfd.readouterr().err


def test_an_unreadable_request_line_is_logged_without_its_text(served, capfd):
    raw(served, b"GET /" + b"x" * 70_000 + b" HTTP/1.1\r\n\r\n")
    assert "Traceback" not in capfd.readouterr().err
    assert all(len(line) < 400 for line in served.logs)


def test_slow_connections_never_shut_the_page_out_and_the_one_refused_is_told_why(
        monkeypatch):
    """Connections that send half a request and wait take no thread: beyond the page's
    budget of connections, the slowest gets a 503 page saying why (never a silent close), and
    a browser that asks at speed is answered."""
    monkeypatch.setattr(page_http, "FRONT", {**page_http.FRONT, "connections": 2})
    page = HttpPage(SetupPage(FlowStore(), "notas-sync"))
    port, host = int(page.base.rsplit(":", 1)[1]), page.base.split("//", 1)[1]
    slow = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(2)]
    try:
        for sock in slow:  # half a request each, never finished
            sock.sendall(f"GET /connect?elicitation=x HTTP/1.1\r\nHost: {host}\r\n".encode())
        status, _, _ = request(page, "GET", "/nada")
        assert status == 404  # the page answered the browser that asked at speed
        refused, _, _ = select.select(slow, [], [], 30)  # one slow one was told why
        answer = b""
        while chunk := refused[0].recv(65536):
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in head
        assert "Página ocupada" in body.decode() and "tu enlace sigue valiendo" in body.decode()
    finally:
        for sock in slow:
            sock.close()
        page.close()
