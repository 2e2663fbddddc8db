"""No frame, answer, tool or timer ends the server (issue 17). Each frame that used to kill it
gets a JSON-RPC error, or a tool error for that one call, and the session answers a ping right
after it, at both revisions. The session core is driven by hand (hand_client.Talk); the frames
that killed the stdio server are also sent to a real `main.py serve`."""

import json
import os
import threading

import pytest

from core.calls import NOT_JSON
from core.revisions import ROOTS_FAILED
from extension import Extension
from hand_client import ENVELOPE_2026, Talk
from server import Config, NotesServer
from server_support import RawPipe, write_solution
from shared.protocol import REVISIONS
from shared.wire import MAX_DEPTH
from test_session_core import CAPS, Peer, result_of
from tooling import NOT_JSON_PROBLEMS, ok
from transports.transport import Loopback, ThreadClock

PARSE_TOO_DEEP = {"jsonrpc": "2.0", "error": {
    "code": -32700, "message": f"Parse error: JSON nested deeper than {MAX_DEPTH} levels"}}


@pytest.fixture
def home(tmp_path):
    from cli.demo import write_lesson_notes
    base = os.path.realpath(tmp_path)
    write_lesson_notes(base)
    return base


def nested(depth, leaf=1):
    """A JSON value with `depth` objects inside each other."""
    return "{\"a\":" * depth + json.dumps(leaf) + "}" * depth


def frame_with_params(params_text, msg_id=7, method="ping"):
    return (f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"method":"{method}",'
            f'"params":{params_text}}}').encode()


def a_server(tools=(), logs=None, **config):
    extension = Extension()
    for name, handler in tools:
        extension.tool(name, description=name, input_schema={
            "type": "object", "properties": {"preguntar": {"type": "boolean"}}})(handler)
    return NotesServer(Config(**config), extension,
                       log=(logs.append if logs is not None else None))


# -- frames nested too deep ---------------------------------------------------------------------
def test_a_line_of_a_thousand_brackets_is_a_parse_error_and_the_session_goes_on():
    talk = Talk(a_server(), "2025-11-25", start=False)
    talk.session.receive(b"[" * 1000 + b"\n")
    assert talk.peer.take() == [PARSE_TOO_DEEP]
    assert talk.ping()


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_a_ping_nested_beyond_what_json_can_read_is_a_parse_error_without_an_id(depth):
    talk = Talk(a_server(), "2025-11-25")
    talk.session.receive(frame_with_params(nested(depth)))
    assert talk.peer.take() == [PARSE_TOO_DEEP]
    assert talk.ping()


def test_a_ping_nested_deeper_than_the_limit_is_an_invalid_request_with_its_id():
    talk = Talk(a_server(), "2025-11-25")
    talk.session.receive(frame_with_params(nested(MAX_DEPTH)))  # the frame adds one level
    assert talk.peer.take() == [{"jsonrpc": "2.0", "id": 7, "error": {
        "code": -32600, "message": f"Message nested deeper than {MAX_DEPTH} levels"}}]
    assert talk.ping()


def test_a_ping_nested_exactly_to_the_limit_is_answered():
    talk = Talk(a_server(), "2025-11-25")
    talk.session.receive(frame_with_params(nested(MAX_DEPTH - 1)))
    assert talk.peer.take() == [{"jsonrpc": "2.0", "id": 7, "result": {}}]


def test_brackets_inside_strings_do_not_count_as_nesting():
    talk = Talk(a_server(), "2025-11-25")
    text = json.dumps({"a": "[{" * 500, "b": '\\"[[[' * 100, "c": "\\" * 3})
    talk.session.receive(frame_with_params(text))
    assert talk.peer.take() == [{"jsonrpc": "2.0", "id": 7, "result": {}}]


def test_a_2026_call_whose_arguments_nest_too_deep_is_refused_with_its_id():
    talk = Talk(a_server(), "2026-07-28")
    params = ('{"name":"notes_list","arguments":' + nested(200) + ',"_meta":'
              + json.dumps(ENVELOPE_2026) + "}")
    talk.session.receive(frame_with_params(params, msg_id="c", method="tools/call"))
    assert talk.peer.take() == [{"jsonrpc": "2.0", "id": "c", "error": {
        "code": -32600, "message": f"Message nested deeper than {MAX_DEPTH} levels"}}]
    assert talk.ping()


def test_a_response_nested_too_deep_is_refused_and_the_session_goes_on():
    talk = Talk(a_server(), "2025-11-25")
    talk.session.receive(b'{"jsonrpc":"2.0","id":1,"result":' + nested(300).encode() + b"}")
    assert talk.peer.take()[0]["error"]["code"] == -32600
    assert talk.ping()


# -- roots answers that cannot be read ----------------------------------------------------------
BAD_ROOTS = [
    b'{"roots":[{"uri":"file://["}]}',                 # urlsplit: invalid IPv6 URL
    b'{"roots":[{"uri":"file:///tmp/\\ud800"}]}',       # a lone surrogate in the path
    b'{"roots":[{"uri":"file:///tmp/a\\u0000b"}]}',     # a NUL in the path
    b'{"roots":[{"uri":"file://host:x/tmp"}]}',         # a port that is not a number
    b'{"roots":[null]}',
    b'{"roots":{"uri":"file:///tmp"}}',
    b'[]',
    b'"roots"',
]


def answer_roots(peer, result_text):
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS})
    peer.notify("notifications/initialized")
    [asked] = [f for f in peer.take() if f.get("method") == "roots/list"]
    peer.session.receive(b'{"jsonrpc":"2.0","id":%d,"result":%s}' % (asked["id"], result_text))


@pytest.mark.parametrize("answer", BAD_ROOTS)
def test_a_roots_answer_that_cannot_be_read_fails_closed_and_the_session_goes_on(home, answer):
    talk = Talk(a_server(), "2025-11-25", start=False)
    answer_roots(talk.peer, answer)
    assert talk.ping()
    kind, done = talk.call("notes_list")
    assert kind == "done" and done["result"]["isError"] is True
    assert "note-1" not in json.dumps(done)


@pytest.mark.parametrize("answer", BAD_ROOTS)
def test_a_2026_roots_answer_that_cannot_be_read_is_a_tool_error(home, answer):
    talk = Talk(a_server(), "2026-07-28")
    talk.params = {"name": "notes_list", "arguments": {}, "_meta": {
        **ENVELOPE_2026, "io.modelcontextprotocol/clientCapabilities": CAPS}}
    talk.call_id = talk.peer.request("tools/call", talk.params)
    assert talk.outcome()[0] == "asks"
    state = talk.pending["requestState"]
    retry = (b'{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"notes_list",'
             b'"arguments":{},"_meta":%s,"requestState":"%s","inputResponses":{"roots":%s}}}'
             % (json.dumps(talk.params["_meta"]).encode(), state.encode(), answer))
    talk.session.receive(retry)
    done = result_of(talk.peer.take(), "r")
    assert done["result"]["isError"] is True and "note-1" not in json.dumps(done)
    assert talk.ping()


def test_a_roots_answer_that_breaks_the_reader_itself_fails_closed(home, monkeypatch):
    """Whatever the roots reader raises, the session installs no folder and goes on."""
    import roots
    talk = Talk(a_server(), "2025-11-25", start=False)

    def broken(result):
        raise KeyError("a bug in the reader")
    monkeypatch.setattr(roots.RootSet, "from_list_result", staticmethod(broken))
    answer_roots(talk.peer, b'{"roots":[]}')
    assert talk.ping()
    kind, done = talk.call("notes_list")
    assert done["result"]["content"][0]["text"] == ROOTS_FAILED


# -- tool results that are not JSON -----------------------------------------------------------
def cyclic():
    loop = []
    loop.append(loop)
    return loop


NOT_JSON_VALUES = {
    "set": ({1, 2}, "type"),
    "object": (object(), "type"),
    "tuple key": ({(1, 2): "x"}, "type"),
    "cycle": (cyclic(), "type"),
    "NaN": (float("nan"), "number"),
    "Infinity": ({"x": float("inf")}, "number"),
    "deep": (json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)), "depth"),
    "huge": ("x" * (4 * 1024 * 1024), "size"),
}


def returning(value):
    def tool(ctx, preguntar=False):
        if preguntar:
            ctx.elicit_form("¿Sigo?", {"ok": {"type": "boolean"}})
        return ok("hecho", value)
    return tool


@pytest.mark.parametrize("protocol", REVISIONS)
@pytest.mark.parametrize("after_a_form", [False, True], ids=["first run", "after a form"])
@pytest.mark.parametrize("name", list(NOT_JSON_VALUES))
def test_a_result_that_is_not_json_is_a_tool_error_saying_why(home, protocol, after_a_form,
                                                               name):
    value, kind = NOT_JSON_VALUES[name]
    talk = Talk(a_server([("devuelve", returning(value))], roots=[f"{home}/Notas"]), protocol,
                [f"{home}/Notas"])
    outcome = talk.call("devuelve", {"preguntar": after_a_form})
    if after_a_form:
        assert outcome[0] == "asks"
        outcome = talk.answer({"action": "accept", "content": {"ok": True}})
    kind_of_end, done = outcome
    assert done["result"] == {"isError": True, "content": [{"type": "text", "text": NOT_JSON.format(
        name="devuelve", problem=NOT_JSON_PROBLEMS[kind])}],
        **({"resultType": "complete"} if protocol == "2026-07-28" else {})}
    assert talk.ping()


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_question_too_big_for_a_frame_is_a_tool_error_at_both_revisions(home, protocol):
    def asks(ctx, preguntar=False):
        ctx.elicit_form("¿Sigo? " + "x" * (4 * 1024 * 1024), {"ok": {"type": "boolean"}})
        return ok("no debería llegar aquí")
    talk = Talk(a_server([("pregunta", asks)], roots=[f"{home}/Notas"]), protocol,
                [f"{home}/Notas"])
    kind, done = talk.call("pregunta")
    assert kind == "done" and done["result"] == {
        "isError": True, "content": [{"type": "text", "text": NOT_JSON.format(
            name="pregunta", problem=NOT_JSON_PROBLEMS["size"])}],
        **({"resultType": "complete"} if protocol == "2026-07-28" else {})}


def test_a_2026_round_whose_sealed_state_would_not_fit_a_frame_ends_the_call(home):
    def asks_twice(ctx, preguntar=False):
        ctx.elicit_form("¿Nombre?", {"nombre": {"type": "string"}})
        ctx.elicit_form("¿Sigo?", {"ok": {"type": "boolean"}})
        return ok("no debería llegar aquí")
    talk = Talk(a_server([("dos", asks_twice)], roots=[f"{home}/Notas"]), "2026-07-28")
    assert talk.call("dos")[0] == "asks"
    kind, done = talk.answer({"action": "accept", "content": {"nombre": "x" * 3_500_000}})
    assert done["result"] == {"resultType": "complete", "isError": True, "content": [
        {"type": "text", "text": NOT_JSON.format(name="dos",
                                                 problem=NOT_JSON_PROBLEMS["size"])}]}


def test_error_data_that_is_not_json_is_a_tool_error_too(home):
    from shared import wire

    def raises(ctx, preguntar=False):
        raise wire.RpcError(-32000, "mal", {"x": {1}})
    talk = Talk(a_server([("falla", raises)], roots=[f"{home}/Notas"]), "2025-11-25",
                [f"{home}/Notas"])
    _, done = talk.call("falla")
    assert done["result"]["content"][0]["text"] == NOT_JSON.format(
        name="falla", problem=NOT_JSON_PROBLEMS["type"])


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_tool_that_calls_sys_exit_is_an_internal_tool_error(home, protocol):
    def leaves(ctx, preguntar=False):
        raise SystemExit(3)
    talk = Talk(a_server([("sale", leaves)], roots=[f"{home}/Notas"]), protocol,
                [f"{home}/Notas"])
    _, done = talk.call("sale")
    assert done["result"]["content"][0]["text"] == "Error interno en la herramienta sale."
    assert talk.ping()


# -- memos that are not JSON --------------------------------------------------------------------
def memo_then_form(make, key="valor"):
    def tool(ctx, preguntar=False):
        value = ctx.memo(key, make)
        answer = ctx.elicit_form("¿Sigo?", {"ok": {"type": "boolean"}})
        return ok(f"{answer.action} {value!r}")
    return tool


@pytest.mark.parametrize("protocol", REVISIONS)
@pytest.mark.parametrize("make, problem", [
    (lambda: {1, 2}, NOT_JSON_PROBLEMS["type"]),
    (lambda: float("nan"), NOT_JSON_PROBLEMS["number"]),
    (lambda: "x" * (1024 * 1024), NOT_JSON_PROBLEMS["size"]),
], ids=["set", "NaN", "too big"])
def test_a_memo_that_is_not_json_is_refused_when_set_with_the_same_message(home, protocol, make,
                                                                           problem):
    talk = Talk(a_server([("recuerda", memo_then_form(make))], roots=[f"{home}/Notas"]),
                protocol, [f"{home}/Notas"])
    kind, done = talk.call("recuerda")
    assert kind == "done"
    assert done["result"]["content"][0]["text"] == (
        f"ctx.memo('valor') no puede guardar ese valor: {problem}. Guarda solo texto, números, "
        "booleanos, None, listas y diccionarios con claves de texto.")
    assert talk.ping()


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_memo_key_that_is_not_text_is_refused(home, protocol):
    talk = Talk(a_server([("recuerda", memo_then_form(lambda: 1, key=3))],
                         roots=[f"{home}/Notas"]), protocol, [f"{home}/Notas"])
    _, done = talk.call("recuerda")
    assert "ctx.memo(3) no puede guardar ese valor: su clave no es un texto" in \
        done["result"]["content"][0]["text"]


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_memo_reads_back_as_its_json_copy_at_both_revisions(home, protocol):
    talk = Talk(a_server([("recuerda", memo_then_form(lambda: (1, "a", {"k": (2,)})))],
                         roots=[f"{home}/Notas"]), protocol, [f"{home}/Notas"])
    assert talk.call("recuerda")[0] == "asks"
    _, done = talk.answer({"action": "accept", "content": {"ok": True}})
    assert done["result"]["content"][0]["text"] == "accept [1, 'a', {'k': [2]}]"


def test_memos_of_one_call_share_one_size_budget(home):
    def two_halves(ctx, preguntar=False):
        ctx.memo("a", lambda: "x" * (600 * 1024))
        ctx.memo("b", lambda: "x" * (600 * 1024))
        return ok("no debería llegar aquí")
    talk = Talk(a_server([("dos", two_halves)], roots=[f"{home}/Notas"]), "2025-11-25",
                [f"{home}/Notas"])
    _, done = talk.call("dos")
    assert done["result"]["content"][0]["text"].startswith("ctx.memo('b') no puede guardar")


# -- timers and sends that fail -----------------------------------------------------------------
def test_a_timer_callback_that_raises_is_logged_and_the_stdio_clock_keeps_running():
    logs, fired = [], threading.Event()
    clock = ThreadClock(threading.RLock(), log=logs.append)
    try:
        clock.call_later(0, lambda: 1 / 0)
        clock.call_later(0.01, fired.set)
        assert fired.wait(5)
    finally:
        clock.stop()
    assert logs == ["a timer failed: ZeroDivisionError: division by zero"]


def test_a_core_timer_that_fails_is_logged_and_the_session_goes_on(home, monkeypatch):
    logs = []
    talk = Talk(a_server(logs=logs, elicit_timeout=5), "2025-11-25", [f"{home}/Notas"])
    assert talk.call("notes_delete", {"title": "TPS report"})[0] == "asks"

    def broken(question):
        raise RuntimeError("a bug in a timer")
    monkeypatch.setattr(talk.session.cycle, "_question_late", broken)
    talk.peer.clock.advance(6)
    assert logs[-1] == (f"internal error in timer question-{talk.question['id']} of "
                        "notes_delete: RuntimeError: a bug in a timer")
    assert talk.ping()


def test_a_loopback_pump_survives_a_core_callback_that_fails(home):
    logs = []
    loop = Loopback(a_server(logs=logs), deliver=lambda line: None)
    loop.session.later(0, lambda: 1 / 0)
    loop.session.soon(lambda: 1 / 0)
    fired = []
    loop.call_later(0.01, lambda: fired.append(True))
    loop.pump_until(lambda: fired, timeout=5)
    assert logs == ["internal error in page: ZeroDivisionError: division by zero",
                    "internal error in timer: ZeroDivisionError: division by zero"]


def test_a_frame_that_cannot_be_written_is_logged_and_the_request_still_gets_an_answer():
    logs, out, broken = [], [], [True]

    def send(frame):
        if broken.pop() if broken else False:
            raise BrokenPipeError("the client went away")
        out.append(frame)
    server = a_server(logs=logs)
    peer = Peer(server)
    peer.session.send = send
    peer.send({"id": 1, "method": "ping"})
    peer.send({"id": 2, "method": "ping"})
    assert logs == ["internal error in ping: BrokenPipeError: the client went away"]
    assert out == [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
                                                        "message": "Internal error"}},
                   {"jsonrpc": "2.0", "id": 2, "result": {}}]


def test_when_not_even_the_error_can_be_written_it_is_logged_and_the_session_goes_on():
    logs, out, failures = [], [], [True, True]

    def send(frame):
        if failures and failures.pop():
            raise BrokenPipeError("the client went away")
        out.append(frame)
    peer = Peer(a_server(logs=logs))
    peer.session.send = send
    peer.send({"id": 1, "method": "ping"})
    peer.send({"id": 2, "method": "ping"})
    assert logs == ["internal error in ping: BrokenPipeError: the client went away",
                    "could not send a frame: BrokenPipeError: the client went away"]
    assert out == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


def test_a_question_that_cannot_be_sent_ends_its_call_with_an_internal_tool_error(home):
    logs, out = [], []
    talk = Talk(a_server(logs=logs), "2025-11-25", [f"{home}/Notas"])

    def send(frame):
        if frame.get("method") == "elicitation/create":
            raise BrokenPipeError("the client went away")
        out.append(frame)
    talk.session.send = send
    call_id = talk.peer.request("tools/call", {"name": "notes_delete",
                                               "arguments": {"title": "TPS report"}})
    assert out == [{"jsonrpc": "2.0", "id": call_id, "result": {
        "content": [{"type": "text", "text": "Error interno en la herramienta notes_delete."}],
        "isError": True}}]
    assert logs == ["internal error running notes_delete: BrokenPipeError: the client went "
                    "away"]
    assert talk.session.calls == {} and talk.session.cycle._questions == {}


@pytest.mark.parametrize("method", ["notifications/cancelled", "notifications/initialized",
                                    "notifications/progress"])
@pytest.mark.parametrize("params", [["requestId", 1], "1", 1, None])
def test_a_notification_whose_params_are_not_an_object_is_ignored_by_design(home, method,
                                                                          params):
    logs = []
    talk = Talk(a_server(logs=logs), "2025-11-25", [f"{home}/Notas"])
    talk.peer.send({"method": method, "params": params})
    assert talk.peer.take() == [] and logs == []
    assert talk.ping()


def test_a_call_cancelled_while_it_waits_for_the_roots_leaves_no_trace(home):
    logs = []
    talk = Talk(a_server(logs=logs), "2025-11-25", [f"{home}/Notas"])
    talk.peer.notify("notifications/roots/list_changed")
    [asked] = [f for f in talk.peer.take() if f.get("method") == "roots/list"]
    assert talk.call("notes_list")[0] == "waits"
    talk.peer.notify("notifications/cancelled", {"requestId": talk.call_id})
    assert talk.session.cycle._roots_waiters == [] and talk.session.calls == {}
    talk.peer.answer(asked["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    assert talk.peer.take() == [] and logs == [
        f"tools/call {talk.call_id!r} (notes_list) cancelled by the client"]


def test_a_frame_whose_handling_fails_outside_any_request_is_logged_as_such():
    logs = []
    peer = Peer(a_server(logs=logs))

    def send(frame):
        raise BrokenPipeError("the client went away")
    peer.session.send = send
    peer.session.receive(b"esto no es json\n")  # its parse error cannot be written
    assert logs == ["internal error in frame: BrokenPipeError: the client went away"]


def test_a_bug_behind_a_request_is_an_internal_error_for_that_request_only(monkeypatch):
    logs = []
    server = a_server(logs=logs)
    monkeypatch.setattr(server, "capabilities", lambda: 1 / 0)
    peer = Peer(server)
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert peer.take() == [{"jsonrpc": "2.0", "id": peer.next_id, "error": {
        "code": -32603, "message": "Internal error"}}]
    assert logs == ["internal error in initialize: ZeroDivisionError: division by zero"]
    peer.send({"id": "p", "method": "ping"})
    assert peer.take() == [{"jsonrpc": "2.0", "id": "p", "result": {}}]


# -- the same frames against a real `serve` -------------------------------------------------------
NOT_JSON_AFTER_A_FORM = """
from extension import Extension
from server import ok
extension = Extension()

@extension.tool("devuelve", description="x")
def devuelve(ctx):
    ctx.elicit_form("¿Sigo?", {"ok": {"type": "boolean"}})
    return ok("hecho", {"conjunto": {1, 2}})
"""


def still_serving(pipe, msg_id):
    pipe.send({"jsonrpc": "2.0", "id": msg_id, "method": "ping"})
    assert pipe.receive() == {"jsonrpc": "2.0", "id": msg_id, "result": {}}


def test_the_frames_that_killed_serve_now_leave_it_serving(tmp_path):
    solution = write_solution(tmp_path, NOT_JSON_AFTER_A_FORM)
    pipe = RawPipe("--solution", solution, "--root", tmp_path)
    try:
        pipe.send(b"[" * 1000 + b"\n")
        assert pipe.receive() == PARSE_TOO_DEEP
        still_serving(pipe, 1)
        pipe.send(frame_with_params(nested(1000)) + b"\n")
        assert pipe.receive()["error"]["code"] == -32700
        still_serving(pipe, 2)
        pipe.send({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}}})
        assert pipe.receive()["id"] == 3
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        pipe.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "devuelve", "arguments": {}}})
        form = pipe.receive()
        assert form["method"] == "elicitation/create"
        pipe.send({"jsonrpc": "2.0", "id": form["id"],
                   "result": {"action": "accept", "content": {"ok": True}}})
        done = pipe.receive()
        assert done["id"] == 4 and done["result"]["isError"] is True
        still_serving(pipe, 5)
    finally:
        assert pipe.close() == 0


def test_a_roots_answer_that_cannot_be_read_leaves_serve_serving(tmp_path):
    pipe = RawPipe()
    try:
        pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"roots": {}}}})
        assert pipe.receive()["id"] == 1
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        asked = pipe.receive()
        assert asked["method"] == "roots/list"
        for number, answer in enumerate(BAD_ROOTS[:2]):
            pipe.send(b'{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (asked["id"], answer))
            still_serving(pipe, number)
            pipe.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
            asked = pipe.receive()
            assert asked["method"] == "roots/list"
    finally:
        assert pipe.close() == 0
