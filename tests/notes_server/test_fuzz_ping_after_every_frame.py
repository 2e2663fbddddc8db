"""Fuzz: whatever a client sends, the server answers a `ping` right after it (issue 17).

Hypothesis (derandomized: the same frames on every run) writes sequences of frames that mix
what a client may send: valid requests at both revisions, garbage bytes, JSON that is no
message, frames nested far too deep, a frame over the size limit, fields of the wrong type,
responses to ids nobody asked (and to the server's own questions, with every shape of roots
answer and elicitation result), notifications and cancellations, and 2026-07-28 envelopes with
bad `_meta`, `requestState` and `inputResponses`. A test tool turns its arguments into every
kind of misbehaviour (results that are not JSON, memos that are not JSON, forms, crashes).
After EVERY frame a ping must be answered: a few thousand frames on a Loopback session (with
short timeouts, so its timers fire too), and a smaller run against a real `main.py serve`. On
the Loopback the log must also show no internal error: every frame is handled by design, not
caught by the safety net of the guarded entry.

No frame may cost more than linear work either (issue 34): among the frames are paths of up
to 1.9 million names (3.8 MB, one frame) as `notes_write` uris, in roots/list answers at both
revisions, and as a 2026-07-28 roots answer; resolving one used to take minutes. Each frame,
with its ping, must be handled within a budget. The budget is relative to a baseline measured
in the same run, on the same session, just before: the time a frame of the maximum size takes
when it needs only linear work (a ping carrying 4 MB of padding, which must be read whole).
The budget is a floor plus a generous multiple of it, so linear work on any frame stays far
inside it however fast or loaded the machine is (both scale together), while super-linear work
on a frame of millions of names (minutes) cannot. A fixed number of seconds would either fail
on a slow machine or let a quadratic frame through on a fast one.

The server's --root is the temporary folder, so no fuzzed roots answer can reach outside it.
"""

import json
import os
import queue
import subprocess
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.demo import write_lesson_notes
from server import Config, NotesServer
from server_support import serve_argv, write_solution
from shared.wire import MAX_DEPTH, MAX_LINE_BYTES
from transports.transport import Loopback

STATELESS = "2026-07-28"
V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"
TOOLS = ["notes_list", "notes_delete", "notes_write", "notes_open", "notes_read",
         "notes_setup", "notes_sync", "travieso", "no_existe"]
HUGE = b'{"jsonrpc":"2.0","id":1,"method":"ping","pad":"' + b"x" * (4 * 1024 * 1024) + b'"}'
# the baseline of the per-frame budget: the largest frame that needs only linear work
PADDED = b'{"jsonrpc":"2.0","id":"pad","method":"ping","params":{"pad":"' + \
    b"x" * (MAX_LINE_BYTES - 200) + b'"}}'
BUDGET_FLOOR = 2.0   # seconds: a write's fsync on a busy disk, whatever the frame
BUDGET_FACTOR = 40   # times the baseline: linear work on a frame of any size fits

# -- JSON values of every kind ----------------------------------------------------------------
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)
ids = st.one_of(st.integers(-3, 40), st.text(max_size=6), st.floats(), st.booleans(),
                st.none(), st.lists(st.integers(), max_size=2))
capabilities = st.one_of(
    st.fixed_dictionaries({}, optional={
        "roots": st.one_of(st.just({"listChanged": True}), json_values),
        "elicitation": st.one_of(st.just({"form": {}, "url": {}}), st.just({}), json_values)}),
    json_values)
uris = st.one_of(st.sampled_from(["file://[", "file:///tmp/\ud800", "file://host:x/a",
                                  "file:///a\x00b", "http://x/", "file://", "", "file:///"]),
                 st.builds(lambda tail: "file://{ROOT}/" + tail, st.text(max_size=12)))
roots_answers = st.one_of(
    st.builds(lambda items: {"roots": items}, st.lists(st.one_of(
        st.builds(lambda uri: {"uri": uri}, uris),
        st.fixed_dictionaries({"uri": json_values}), json_values), max_size=3)),
    json_values)
elicit_results = st.one_of(
    st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel", "x"])},
                          optional={"content": st.one_of(
                              st.fixed_dictionaries({}, optional={
                                  "note_id": st.sampled_from(["note-3", "note-7", "x"]),
                                  "confirm": st.booleans()}), json_values)}),
    json_values)
# what the test tool does with its arguments
misbehaviours = st.sampled_from(["set", "nan", "deep", "cycle", "memo-set", "memo-ok", "ask",
                                 "raise", "exit", "string", "none", "ok"])


def envelope(version=STATELESS, caps=None):
    return {V: version, C: {"elicitation": {"form": {}, "url": {}}} if caps is None else caps}


metas = st.one_of(
    st.builds(envelope),
    st.builds(envelope, st.one_of(json_values, st.sampled_from(["2099-01-01", "2025-11-25"])),
              capabilities),
    st.fixed_dictionaries({V: json_values}),
    json_values)


def request(method, params=None, msg_id=None):
    frame = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


@st.composite
def tool_calls(draw):
    name = draw(st.sampled_from(TOOLS))
    arguments = draw(st.one_of(
        st.fixed_dictionaries({}, optional={
            "title": st.sampled_from(["TPS report", "Lista de la compra", "x"]),
            "note_id": st.sampled_from(["note-7", "note-1"]),
            "uri": uris, "body": st.text(max_size=10), "handle": st.text(max_size=6),
            "hacer": misbehaviours}),
        json_values))
    params = {"name": name, "arguments": arguments}
    if draw(st.booleans()):
        params["_meta"] = draw(metas)
        if draw(st.booleans()):
            params["requestState"] = draw(st.one_of(st.text(max_size=30), json_values,
                                                    st.just("v1.e30.x")))
        if draw(st.booleans()):
            params["inputResponses"] = draw(st.one_of(
                st.fixed_dictionaries({}, optional={"roots": roots_answers,
                                                    "ask-1": elicit_results}), json_values))
    elif draw(st.booleans()):
        params["_meta"] = {"progressToken": draw(ids)}
    return request("tools/call", params, draw(ids))


valid_requests = st.one_of(
    st.builds(lambda i, caps, v: request("initialize", {
        "protocolVersion": v, "capabilities": caps, "clientInfo": {"name": "f", "version": "1"}},
        i), ids, capabilities, st.sampled_from(["2025-11-25", "2025-06-18", "1999", "x"])),
    st.builds(lambda i, p: request("tools/list", p, i), ids,
              st.one_of(st.none(), st.builds(lambda m: {"_meta": m}, metas))),
    st.builds(lambda i, p: request("server/discover", p, i), ids,
              st.one_of(st.none(), st.builds(lambda m: {"_meta": m}, metas))),
    st.builds(lambda i, m, p: request(m, p, i), ids,
              st.sampled_from(["ping", "resources/list", "x", "", "rpc.discover",
                               "io.github.curso-mcp/setupPage"]),
              st.one_of(st.none(), json_values)),
    tool_calls())
notifications = st.one_of(
    st.just({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    st.just({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
    st.builds(lambda i, r: {"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": i, "reason": r}}, ids, json_values),
    st.builds(lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p},
              st.sampled_from(["notifications/progress", "notifications/cancelled",
                               "notifications/initialized", "notifications/x", "x"]),
              json_values))
responses = st.one_of(
    st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r},
              st.integers(1, 30), st.one_of(roots_answers, elicit_results)),
    st.builds(lambda i, e: {"jsonrpc": "2.0", "id": i, "error": e}, ids,
              st.one_of(st.fixed_dictionaries({"code": json_values, "message": json_values}),
                        json_values)),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": {}, "error": {}}, ids))
wrong_types = st.builds(lambda base, key, value: {**base, key: value},
                        st.sampled_from([request("ping", None, 1), request("tools/list", {}, 2)]),
                        st.sampled_from(["jsonrpc", "id", "method", "params"]), json_values)
deep = st.builds(lambda n, kind: (
    b"[" * n if kind == 0 else
    b'{"jsonrpc":"2.0","id":3,"method":"ping","params":' + b'{"a":' * n + b"1" + b"}" * (n + 1)
    if kind == 1 else b"[" * n + b"]" * n), st.sampled_from([MAX_DEPTH - 2, MAX_DEPTH + 1, 900,
                                                             5000]), st.integers(0, 2))
garbage = st.one_of(st.binary(max_size=40), st.text(max_size=40).map(lambda t: t.encode(
    "utf-8", "surrogatepass")), st.sampled_from([b"{", b'{"jsonrpc":"2.0"', b"null", b"[]",
                                                 b"\xff\xfe", b"1e999", b'"\\ud800"']))


def encoded(frame):
    return json.dumps(frame).replace("{ROOT}", os.environ.get("FUZZ_ROOT", "/nowhere")).encode()


# paths of many names (1.9 million of them: 3.8 MB, under the frame limit), where resolving
# used to cost length x depth: a write's uri, a 2025 roots answer, a 2026 retry's roots
LONG_URIS = ["file://{ROOT}" + "/a" * names + "/n.md" for names in (1_900_000, 150_000, 200)] \
    + ["file://{ROOT}" + "/.." * 1_200_000, "file://{ROOT}/" + "a/./" * 900_000]
long_paths = st.builds(lambda uri, kind, msg_id: (
    request("tools/call", {"name": "notes_write", "arguments": {
        "uri": uri, "title": "t", "body": "b"}, **({"_meta": envelope()} if kind else {})},
        msg_id) if kind < 2 else
    {"jsonrpc": "2.0", "id": msg_id, "result": {"roots": [{"uri": uri}]}} if kind == 2 else
    request("tools/call", {"name": "notes_list", "arguments": {}, "_meta": envelope(),
                           "requestState": "v1.e30.x", "inputResponses": {
                               "roots": {"roots": [{"uri": uri}]}}}, msg_id)),
    st.sampled_from(LONG_URIS), st.integers(0, 3), st.integers(1, 30))

frames = st.one_of(
    valid_requests.map(encoded), valid_requests.map(encoded), notifications.map(encoded),
    responses.map(encoded), wrong_types.map(encoded), deep, garbage, st.just(HUGE),
    long_paths.map(encoded))

TRAVIESO = """
from server import ok
extension = Extension()

@extension.tool("travieso", description="x", input_schema={"type": "object",
                "properties": {"hacer": {"type": "string"}}})
def travieso(ctx, hacer="ok"):
    loop = []
    loop.append(loop)
    if hacer.startswith("memo"):
        ctx.memo("m", lambda: {1} if hacer == "memo-set" else [1, "a"])
    if hacer == "ask":
        ctx.elicit_form("¿Sigo?", {"ok": {"type": "boolean"}})
    if hacer == "raise":
        raise KeyError("x")
    if hacer == "exit":
        raise SystemExit(1)
    values = {"set": {1}, "nan": float("nan"), "deep": json.loads("[" * 70 + "]" * 70),
              "cycle": loop, "string": "texto", "none": None}
    return values[hacer] if hacer in ("string", "none") else ok("hecho", values.get(hacer))
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    base = os.path.realpath(tmp_path_factory.mktemp("fuzz"))
    write_lesson_notes(base)
    os.environ["FUZZ_ROOT"] = base
    solution = write_solution(base, TRAVIESO, "travieso.py")
    yield base, solution
    os.environ.pop("FUZZ_ROOT", None)


class LoopbackPinger:
    """A Loopback session with short timeouts: send a frame, then a ping, pump until the ping
    is answered."""

    def __init__(self, base, solution):
        import extension
        config = Config(roots=[base], demo_url_guard=True, page_transport="inline",
                        elicit_timeout=0.02, roots_timeout=0.02, setup_wait=0.02)
        self.logs = []
        self.server = NotesServer(config, extension.load(str(solution)), log=self.logs.append)
        self.answers = {}
        self.loopback = Loopback(self.server, deliver=self._deliver)
        self.pings = 0

    def _deliver(self, line):
        frame = json.loads(line)
        if isinstance(frame, dict) and str(frame.get("id", "")).startswith("ping-"):
            self.answers[frame["id"]] = frame

    def ping_after(self, line):
        """Send `line` and a ping, pump until the ping is answered; the seconds it took."""
        self.pings += 1
        ping = f"ping-{self.pings}"
        start = time.perf_counter()
        self.loopback.send(line)
        self.loopback.send(json.dumps(request("ping", None, ping)).encode())
        self.loopback.pump_until(lambda: ping in self.answers, timeout=600)
        assert self.answers.pop(ping) == {"jsonrpc": "2.0", "id": ping, "result": {}}
        return time.perf_counter() - start


def within_budget(pinger, sequence):
    """Ping after every frame of `sequence`, each within its budget (see the docstring)."""
    budget = BUDGET_FLOOR + BUDGET_FACTOR * min(pinger.ping_after(PADDED) for _ in range(2))
    for line in sequence:
        took = pinger.ping_after(line)
        assert took <= budget, (f"a frame took {took:.2f} s, over its budget of {budget:.2f} s "
                                f"(more than linear work?): {line[:200]!r}")


@settings(max_examples=120, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(frames, min_size=10, max_size=40))
def test_a_loopback_session_answers_a_ping_after_every_frame(home, sequence):
    pinger = LoopbackPinger(*home)
    within_budget(pinger, sequence)
    pinger.loopback.close()
    assert [entry for entry in pinger.logs if entry.startswith("internal error")] == []


class ServePinger:
    """A real `main.py serve`: one reader thread; a ping after each frame is awaited, and
    every other frame the server writes must be one JSON object on its own line."""

    def __init__(self, base, solution):
        self.proc = subprocess.Popen(
            serve_argv("--root", base, "--solution", solution, "--demo-url-guard",
                       "--setup-page", "rpc", "--setup-wait", "0.05"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.pings = 0

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def ping_after(self, line):
        """Send `line` and a ping, wait for the ping's answer; the seconds it took."""
        self.pings += 1
        ping = f"ping-{self.pings}"
        start = time.perf_counter()
        self.proc.stdin.write(line + b"\n" + json.dumps(request("ping", None, ping)).encode()
                              + b"\n")
        self.proc.stdin.flush()
        while (frame := self.lines.get(timeout=600)) != {"jsonrpc": "2.0", "id": ping,
                                                         "result": {}}:
            assert isinstance(frame, dict), f"the server stopped after {line[:200]!r}"
        return time.perf_counter() - start

    def stop(self):
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                os.kill(self.proc.pid, 9)
                self.proc.wait()


@settings(max_examples=1, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_real_serve_answers_a_ping_after_every_frame(home, data):
    pinger = ServePinger(*home)
    try:
        within_budget(pinger, [data.draw(frames) for _ in range(400)])
    finally:
        assert pinger.stop() == 0
