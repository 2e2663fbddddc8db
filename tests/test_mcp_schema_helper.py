"""Tests proving tests/mcp_schema.py accepts valid MCP frames and rejects invalid ones."""

import hashlib
from pathlib import Path

import pytest

from mcp_schema import _validator, request_methods, validate_def, validate_frame

OLD, MID, NEW = "2025-06-18", "2025-11-25", "2026-07-28"
TEXT = {"type": "text", "text": "3 notes"}
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": NEW,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}
URL_PARAMS = {"mode": "url", "message": "Sign in", "url": "https://auth.example/login"}


def response(result, id_=1):
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def request(method, params=None, id_=1):
    frame = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def rejects(frame, revision, direction, **kw):
    with pytest.raises(AssertionError) as info:
        validate_frame(frame, revision, direction, **kw)
    return str(info.value)


# --- accepted frames ---------------------------------------------------------------


def test_accepts_tools_call_request_from_client():
    validate_frame(request("tools/call", {"name": "add_note", "arguments": {"text": "hi"}}),
                   MID, "client")


def test_accepts_call_tool_result_from_server():
    validate_frame(response({"content": [TEXT]}), OLD, "server", result_of="tools/call")


def test_accepts_initialize_result():
    result = {"protocolVersion": MID, "capabilities": {"tools": {}},
              "serverInfo": {"name": "notes", "version": "1.0"}}
    validate_frame(response(result), MID, "server", result_of="initialize")


def test_accepts_initialized_notification_from_client():
    validate_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}, OLD, "client")


def test_accepts_ping_with_empty_result():
    validate_frame(response({}), MID, "client", result_of="ping")


def test_accepts_url_elicitation_with_elicitation_id():
    params = {**URL_PARAMS, "elicitationId": "e-1"}
    validate_frame(request("elicitation/create", params), MID, "server")


def test_accepts_form_elicitation_request():
    params = {"message": "Title?", "requestedSchema": {
        "type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}
    validate_frame(request("elicitation/create", params), OLD, "server")


@pytest.mark.parametrize("revision", [OLD, MID])
def test_accepts_float_in_elicit_result_content(revision):
    # Generator quirk: the raw JSON types these values as integer; schema.ts says number.
    result = {"action": "accept", "content": {"score": 30.5, "ok": True}}
    validate_frame(response(result), revision, "client", result_of="elicitation/create")


def test_accepts_list_roots_result_from_client():
    result = {"roots": [{"uri": "file:///home/learner/notes", "name": "notes"}]}
    validate_frame(response(result), MID, "client", result_of="roots/list")


def test_accepts_non_file_root_uri_because_schema_checks_only_format():
    # Known quirk: file:// is required by prose only. Tests must check that themselves.
    validate_frame(response({"roots": [{"uri": "https://example.com/x"}]}), MID, "client",
                   result_of="roots/list")


def test_accepts_url_elicitation_without_id_inside_input_required_result():
    result = {"resultType": "input_required", "requestState": "s1",
              "inputRequests": {"login": {"method": "elicitation/create", "params": URL_PARAMS}}}
    validate_frame(response(result), NEW, "server", result_of="tools/call")


def test_accepts_float_in_input_responses_of_retried_tools_call():
    params = {"_meta": META_2026, "name": "rate", "requestState": "s1",
              "inputResponses": {"q": {"action": "accept", "content": {"score": 4.5}}}}
    validate_frame(request("tools/call", params), NEW, "client")


def test_accepts_complete_tools_call_result_at_2026():
    validate_frame(response({"resultType": "complete", "content": [TEXT]}), NEW, "server",
                   result_of="tools/call")


def test_accepts_discover_result():
    result = {"resultType": "complete", "supportedVersions": [NEW], "capabilities": {},
              "cacheScope": "public", "ttlMs": 0}
    validate_frame(response(result), NEW, "server", result_of="server/discover")


def test_accepts_error_response():
    error = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "no such method"}}
    validate_frame(error, MID, "server")


def test_validate_def_accepts_named_definition():
    validate_def({"action": "decline"}, NEW, "ElicitResult")


# --- rejected frames ---------------------------------------------------------------


def test_rejects_url_elicitation_without_elicitation_id_at_2025_11_25():
    message = rejects(request("elicitation/create", URL_PARAMS), MID, "server")
    assert "'elicitationId' is a required property" in message


def test_rejects_url_elicitation_with_invalid_url_format():
    params = {**URL_PARAMS, "elicitationId": "e-1", "url": "not a url"}
    message = rejects(request("elicitation/create", params), MID, "server")
    assert "is not a 'uri'" in message


def test_rejects_nested_object_in_requested_schema():
    params = {"message": "x", "requestedSchema": {
        "type": "object", "properties": {"address": {"type": "object"}}}}
    rejects(request("elicitation/create", params), OLD, "server")


def test_rejects_tools_call_result_without_content():
    message = rejects(response({"structuredContent": {"n": 3}}), MID, "server",
                      result_of="tools/call")
    assert "'content' is a required property" in message


def test_rejects_complete_tools_call_result_without_content_at_2026():
    message = rejects(response({"resultType": "complete"}), NEW, "server",
                      result_of="tools/call")
    assert "'content' is a required property" in message


def test_rejects_input_required_result_without_requests_or_state():
    message = rejects(response({"resultType": "input_required"}), NEW, "server",
                      result_of="tools/call")
    assert "inputRequests or requestState" in message


def test_rejects_unknown_result_type_at_2026():
    rejects(response({"resultType": "done", "content": []}), NEW, "server",
            result_of="tools/call")


def test_rejects_result_without_result_type_at_2026():
    rejects(response({"content": [TEXT]}), NEW, "server", result_of="tools/call")


def test_rejects_float_request_id():
    message = rejects(response({"content": [TEXT]}, id_=1.5), MID, "server")
    assert "$.id" in message


def test_rejects_missing_jsonrpc_version():
    rejects({"id": 1, "method": "ping"}, MID, "client")


def test_rejects_invalid_elicit_action():
    rejects(response({"action": "ok"}), MID, "client", result_of="elicitation/create")


def test_rejects_elicitation_request_written_by_client():
    message = rejects(request("elicitation/create", {**URL_PARAMS, "elicitationId": "e"}),
                      MID, "client")
    assert "not a request the client may send" in message


def test_rejects_server_json_rpc_request_at_2026():
    message = rejects(request("elicitation/create", URL_PARAMS), NEW, "server")
    assert "not in ServerRequest" in message


def test_rejects_initialize_at_2026():
    message = rejects(request("initialize", {}), NEW, "client")
    assert "unknown request method 'initialize'" in message


def test_rejects_result_of_a_request_the_peer_never_sends():
    message = rejects(response({"action": "cancel"}), MID, "server",
                      result_of="elicitation/create")
    assert "never answers" in message


def test_rejects_url_elicitation_required_error_without_elicitations():
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32042, "message": "need URL"}}
    message = rejects(error, MID, "server")
    assert "URLElicitationRequiredError" in message


def test_rejects_error_without_message():
    rejects({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}}, OLD, "server")


def test_rejects_batch_array():
    rejects([request("ping")], MID, "client")


def test_rejects_frame_without_method_result_or_error():
    rejects({"jsonrpc": "2.0", "id": 1}, MID, "server")


def test_rejects_unknown_revision():
    with pytest.raises(ValueError):
        validate_frame(request("ping"), "2024-11-05", "client")


def test_rejects_unknown_direction():
    with pytest.raises(ValueError):
        validate_frame(request("ping"), MID, "host")


# --- helper internals ----------------------------------------------------------------


def test_error_message_lists_instance_and_schema_paths():
    message = rejects(request("elicitation/create", URL_PARAMS), MID, "server")
    assert "at $.params" in message and "[schema: properties/params/anyOf]" in message
    assert "(ElicitRequestURLParams)" in message


def test_request_methods_are_derived_from_schema():
    assert "tools/call" in request_methods(MID, "client")
    assert "elicitation/create" in request_methods(MID, "server")
    assert request_methods(NEW, "server") == set()


def test_compiled_validators_are_cached():
    assert _validator(MID, "CallToolResult") is _validator(MID, "CallToolResult")


def test_vendored_schemas_match_recorded_sha256():
    vendor = Path(__file__).resolve().parent / "vendor" / "mcp-schema"
    readme = (vendor / "README.md").read_text(encoding="utf-8")
    for revision in (OLD, MID, NEW):
        digest = hashlib.sha256((vendor / revision / "schema.json").read_bytes()).hexdigest()
        assert f"{digest}  {revision}/schema.json" in readme, revision
