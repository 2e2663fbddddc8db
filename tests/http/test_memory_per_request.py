"""Memory per request of `serve --http` is a small multiple of its body: each body is parsed
once, and the front's buffer is let go as soon as it is parsed.

Measured with tracemalloc around one request to a server running in this process (the peak
of what its threads allocate, above what was held before), for a large note (its text is
most of the body) and for a body of many tiny JSON values (where Python's objects cost most
per byte). Before this work the same measures were about 6x and 22x: every body was parsed
twice (the driver, then the session), and a 2026-07-28 one also encoded again."""

import json
import socket
import threading
import tracemalloc

import pytest

from server import Config, NotesServer
from shared import wire
from transports import streamable_http

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def in_process(tmp_path):
    """A StreamableHttp in this process's threads, its roots the folder Notas/ (--root)."""
    notes = tmp_path / "Notas"
    notes.mkdir()
    http = streamable_http.StreamableHttp(NotesServer(Config(roots=[str(notes)])), "127.0.0.1",
                                          0)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    http.notes = notes
    yield http
    http.close()
    thread.join(10)


def write_request(http, arguments, meta=None):
    """A whole HTTP request (bytes, made before measuring) and the size of its body."""
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "notes_write", "arguments": {"uri": (http.notes / "n.md").as_uri(),
                                             "title": "Grande", **arguments},
        "_meta": {**META, **(meta or {})}}}, ensure_ascii=False).encode()
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            "Mcp-Method: tools/call\r\nMcp-Name: notes_write\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    return head + body, len(body)


def exchange(http, data):
    with socket.create_connection(("127.0.0.1", http.port), timeout=60) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    return answer


def peak_per_body_byte(http, arguments, meta=None):
    """(peak bytes allocated while the request is served) / (bytes of its body)."""
    data, size = write_request(http, arguments, meta)
    exchange(http, write_request(http, {"body": "calentar"})[0])  # first-use costs out of it
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        held = tracemalloc.get_traced_memory()[0]
        answer = exchange(http, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer.startswith(b"HTTP/1.1 200") and b'"isError":false' in answer, answer[:300]
    return (peak - held) / size


@pytest.mark.parametrize("text", ["x" * 3_000_000, "€ñ" * 500_000], ids=["ascii", "utf-8"])
def test_a_large_note_costs_a_small_multiple_of_its_body(in_process, text):
    ratio = peak_per_body_byte(in_process, {"body": text})
    assert ratio < 4.5, f"peak {ratio:.2f} x the body"


def test_a_body_of_many_tiny_values_costs_its_parse_once(in_process):
    """Each tiny JSON value is a Python object of about 50 bytes: that parse, once."""
    ratio = peak_per_body_byte(in_process, {"body": "x"},
                               {"io.github.curso-mcp/relleno": ["ab"] * 500_000})
    assert ratio < 16, f"peak {ratio:.2f} x the body"


def test_each_body_is_parsed_once(in_process, monkeypatch):
    parsed, real = [], wire.parse
    monkeypatch.setattr(wire, "parse", lambda line: parsed.append(len(line)) or real(line))
    data, size = write_request(in_process, {"body": "y" * 100_000})
    assert exchange(in_process, data).startswith(b"HTTP/1.1 200")
    assert parsed == [size]
