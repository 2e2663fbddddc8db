"""Bad input on the real pipe: every mistake gets the right JSON-RPC error (or a tool error),
and the server keeps serving afterwards. Frames are sent as raw bytes."""

import json

import pytest

from server_support import RawPipe, validate_trace

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}}
STATELESS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def pipe(trace):
    raw = RawPipe(trace=trace)
    yield raw
    assert raw.close() == 0


def still_serving(pipe, msg_id=99):
    pipe.send({"jsonrpc": "2.0", "id": msg_id, "method": "ping"})
    assert pipe.receive() == {"jsonrpc": "2.0", "id": msg_id, "result": {}}


def initialized(pipe):
    pipe.send(INIT)
    assert pipe.receive()["result"]["protocolVersion"] == "2025-11-25"
    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_garbage_line_is_a_parse_error(pipe):
    pipe.send(b"esto no es json\n")
    assert pipe.receive()["error"]["code"] == -32700
    still_serving(pipe)


def test_a_batch_array_is_an_invalid_request(pipe):
    pipe.send(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]\n')
    assert pipe.receive()["error"]["code"] == -32600
    still_serving(pipe)


def test_missing_jsonrpc_version_is_an_invalid_request_with_its_id(pipe):
    pipe.send({"id": 5, "method": "ping"})
    assert pipe.receive() == {"jsonrpc": "2.0", "id": 5, "error": {
        "code": -32600, "message": 'Missing "jsonrpc": "2.0"'}}


@pytest.mark.parametrize("bad_id", [1.5, True, None, {"a": 1}])
def test_ids_that_are_not_strings_or_integers_are_refused(pipe, bad_id):
    pipe.send({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    reply = pipe.receive()
    assert reply["error"]["code"] == -32600 and "id" not in reply
    still_serving(pipe)


def test_unknown_method_is_method_not_found(pipe):
    initialized(pipe)
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "notes/teleport"})
    assert pipe.receive()["error"]["code"] == -32601


def test_params_that_are_not_an_object_are_invalid_params(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": [1, 2]})
    assert pipe.receive()["error"]["code"] == -32602


def test_requests_before_initialize_are_refused(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert pipe.receive()["error"]["code"] == -32600


def test_initialize_without_capabilities_is_invalid_params(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25"}})
    assert pipe.receive()["error"]["code"] == -32602


def test_unknown_tool_is_invalid_params(pipe):
    initialized(pipe)
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "notes_teleport", "arguments": {}}})
    assert pipe.receive()["error"]["code"] == -32602


@pytest.mark.parametrize("arguments, problem", [
    ({"title": 42}, "de tipo string"),
    ({}, "falta el argumento obligatorio"),
    ({"title": "x", "extra": 1}, "argumento desconocido"),
])
def test_wrong_arguments_are_a_tool_error(pipe, arguments, problem):
    initialized(pipe)
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "notes_delete", "arguments": arguments}})
    result = pipe.receive()["result"]
    assert result["isError"] and problem in result["content"][0]["text"]


def test_a_huge_message_is_refused_and_the_server_keeps_serving(pipe):
    pipe.send(b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "pad": "' + b"x" * 5_000_000
              + b'"}\n')
    assert pipe.receive(timeout=30)["error"]["code"] == -32600
    still_serving(pipe)


def test_a_response_to_an_unknown_id_is_ignored(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 12345, "result": {"roots": []}})
    pipe.nothing_within(0.3)
    still_serving(pipe)


def test_notifications_are_never_answered_even_when_malformed(pipe):
    pipe.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": [1]})
    pipe.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1}})
    pipe.nothing_within(0.3)
    still_serving(pipe)


def test_second_initialize_is_refused(pipe):
    initialized(pipe)
    pipe.send({**INIT, "id": 3})
    assert pipe.receive()["error"]["code"] == -32600


def test_unsupported_stateless_version_is_32022_with_the_supported_list(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
               "params": {"_meta": {**STATELESS_META,
                                    "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}})
    error = pipe.receive()["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"
    assert "2026-07-28" in error["data"]["supported"]


def test_stateless_request_without_client_capabilities_is_invalid_params(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    assert pipe.receive()["error"]["code"] == -32602


def test_both_revisions_share_one_pipe(pipe):
    initialized(pipe)
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
               "params": {"_meta": STATELESS_META}})
    stateless = pipe.receive()["result"]
    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    legacy = pipe.receive()["result"]
    assert stateless["resultType"] == "complete" and stateless["ttlMs"] == 0
    assert "resultType" not in legacy
    assert [t["name"] for t in stateless["tools"]] == [t["name"] for t in legacy["tools"]]


def test_server_exits_cleanly_at_end_of_input(trace):
    raw = RawPipe(trace=trace)
    still_serving(raw)
    assert raw.close() == 0


STATELESS_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "notes_list", "arguments": {}, "_meta": STATELESS_META}}
CALL_RESULT = {"content": [{"type": "text", "text": "0 nota(s)"}], "isError": False}


def write_trace(path, frames):
    path.write_text("".join(json.dumps({"dir": d, "frame": json.dumps(f)}) + "\n"
                            for d, f in frames))
    return path


@pytest.mark.parametrize("frames, problem", [
    ([("in", INIT), ("out", {"jsonrpc": "2.0", "id": 1,
                             "result": {"protocolVersion": "2025-11-25"}})],
     r"result does not match InitializeResult:\n.*'capabilities' is a required property"),
    ([("in", STATELESS_CALL), ("out", {"jsonrpc": "2.0", "id": 2, "result": CALL_RESULT})],
     r"(?s)MCP 2026-07-28 frame .*does not match CallToolResultResponse.*resultType"),
    ([("in", INIT), ("out", {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
                             "params": {"mode": "url", "message": "Abre esto",
                                        "url": "http://127.0.0.1:1/x"}})],
     r"(?s)MCP 2025-11-25 frame .*ElicitRequest.*'elicitationId' is a required property"),
], ids=["2025-response", "2026-response", "2025-server-request"])
def test_the_trace_checker_rejects_a_frame_that_breaks_the_schema(tmp_path, frames, problem):
    with pytest.raises(AssertionError, match=problem):
        validate_trace(write_trace(tmp_path / "bad.jsonl", frames))


def test_the_trace_checker_validates_every_server_frame_it_reads(tmp_path):
    good = write_trace(tmp_path / "good.jsonl", [
        ("in", STATELESS_CALL),
        ("out", {"jsonrpc": "2.0", "id": 2, "result": {**CALL_RESULT, "resultType": "complete"}}),
        ("in", {"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        ("out", {"jsonrpc": "2.0", "id": 3, "result": {}})])
    assert validate_trace(good) == 2
