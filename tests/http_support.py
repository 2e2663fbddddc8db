"""Helpers for the tests of `serve --http` (tests/http, tests/conformance): the server as a
process, stopped by its PID, and a raw HTTP client that shows exactly what came back."""

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

NOTES_SERVER = Path(__file__).resolve().parent / "notes_server"
if str(NOTES_SERVER) not in sys.path:
    sys.path.insert(0, str(NOTES_SERVER))

import server_support  # noqa: E402,F401  (puts code/ on sys.path)
from client.http_client import ServerProcess  # noqa: E402

STATELESS = "2026-07-28"
META = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
ACCEPT = "application/json, text/event-stream"


class Served(ServerProcess):
    """`serve --http 127.0.0.1:0 ARGS` in its own process (http_client.ServerProcess), with
    `--trace FILE` when `trace` is given; `wait_log` fails the test when the line never comes."""

    def __init__(self, *args, trace=None, timeout=60.0, **options):
        # generous: a loaded machine (the stress runs) may take long to start a process
        super().__init__(*args, *(("--trace", trace) if trace else ()), timeout=timeout,
                         **options)

    def wait_log(self, pattern, timeout=30):
        try:
            return super().wait_log(pattern, timeout)
        except RuntimeError as exc:
            raise AssertionError(str(exc)) from None

    def stop(self, signum=signal.SIGTERM, timeout=30):
        try:
            return super().stop(signum, timeout)
        except RuntimeError as exc:
            raise AssertionError(str(exc)) from None


class Answer:
    """What one HTTP request got: `status`, `headers` (case-insensitive), and the JSON-RPC
    messages of its body (`frames`: one for JSON, each event for SSE)."""

    def __init__(self, response, events=None):
        self.status, self.headers = response.status, response.headers
        self.kind = response.getheader("Content-Type", "")
        if events is None:
            body = response.read()
            self.frames = [json.loads(body)] if body.strip() else []
        else:
            self.frames = events

    @property
    def frame(self):
        assert len(self.frames) == 1, self.frames
        return self.frames[0]

    def answer_to(self, request_id):
        return next(f for f in self.frames if f.get("id") == request_id and "method" not in f)


def request(server, method="POST", body=None, headers=None, timeout=30, until=None):
    """One raw HTTP request to the MCP endpoint. An SSE answer is read until the frame for
    which `until(frame)` is true (default: the stream's end)."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", "Accept": ACCEPT} if method == "POST" else {}
    sent.update(headers or {})
    connection.request(method, "/mcp", body=data, headers=sent)
    response = connection.getresponse()
    try:
        if "text/event-stream" in response.getheader("Content-Type", ""):
            return Answer(response, list(read_events(response, until)))
        return Answer(response)
    finally:
        connection.close()


def read_events(response, until=None):
    data = []
    while line := response.readline():
        line = line.rstrip(b"\r\n")
        if line.startswith(b"data:"):
            data.append(line[5:].strip())
        elif not line and data:
            frame = json.loads(b"\n".join(data))
            data = []
            yield frame
            if until is not None and until(frame):
                return


def meta(capabilities=None, version=STATELESS):
    return {META: version, CAPABILITIES: {} if capabilities is None else capabilities}


def stateless(server, method, params=None, msg_id=1, headers=None, capabilities=None, **kw):
    """A 2026-07-28 request with its `_meta` and the headers the revision asks for."""
    params = {**(params or {}), "_meta": meta(capabilities)}
    sent = {"MCP-Protocol-Version": STATELESS, "Mcp-Method": method}
    if method == "tools/call":
        sent["Mcp-Name"] = params["name"]
    sent.update(headers or {})
    return request(server, body={"jsonrpc": "2.0", "id": msg_id, "method": method,
                                 "params": params}, headers=sent, **kw)


def initialize(server, capabilities=None, version="2025-11-25"):
    """A 2025-11-25 session: initialize and `notifications/initialized`; its Mcp-Session-Id."""
    answer = request(server, body={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities or {},
        "clientInfo": {"name": "prueba", "version": "1"}}})
    assert answer.status == 200, answer.frames
    session = answer.headers["Mcp-Session-Id"]
    sent = request(server, body={"jsonrpc": "2.0", "method": "notifications/initialized"},
                   headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": version})
    assert sent.status == 202
    return session


class RedisServer:
    """`redis-server` on 127.0.0.1:`port`, in its own process, with no persistence."""

    def __init__(self, binary, folder):
        self.folder, self.log = folder, []
        os.makedirs(folder, exist_ok=True)
        for _ in range(5):  # a free port may be taken between finding it and binding it
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
            self.proc = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(folder), "--protected-mode", "yes"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True)
            ready, self.accepting = threading.Event(), False
            threading.Thread(target=self._read, args=(ready,), daemon=True).start()
            if ready.wait(60) and self.accepting:
                self.url = f"redis://127.0.0.1:{self.port}/0"
                return
            self.stop()
        raise AssertionError("redis-server did not start: " + " | ".join(self.log[-5:]))

    def _read(self, ready):
        for line in self.proc.stdout:
            self.log.append(line.rstrip())
            if "Ready to accept connections" in line:
                self.accepting = True
                ready.set()
        ready.set()  # it ended: whoever waits looks at the process

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # by its PID
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_redis(folder):
    """A RedisServer, or a skip saying what is missing (a failure under CI=true, where
    `make test` installs Debian's redis-server and requirements.txt pins the redis client)."""
    import pytest
    missing = None
    if shutil.which("redis-server") is None:
        missing = ("redis-server is not installed: `make test` installs Debian's "
                   "redis-server (as root, with apt-get); or run `apt-get install "
                   "redis-server`")
    else:
        try:
            import redis  # noqa: F401
        except ImportError:
            missing = "the redis client is not installed: `make venv` installs requirements.txt"
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(missing + ". CI installs it, so the Redis tests must run.")
        pytest.skip(missing)
    return RedisServer(shutil.which("redis-server"), folder)
