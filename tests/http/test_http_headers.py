"""The 2026-07-28 request headers (code/shared/http_headers.py): how values travel, which
`x-mcp-header` marks are valid, and when the headers of a request do not repeat its body."""

import http.client
import io

import pytest

from shared import http_headers

BODY = {"method": "tools/call", "params": {
    "name": "eco", "arguments": {"region": "us-west1", "n": 42, "on": True},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
MARKED = {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "n": {"type": "integer", "x-mcp-header": "N"},
    "on": {"type": "boolean", "x-mcp-header": "On"}}}


class Tool:
    input_schema = MARKED


def parsed(*lines):
    return http.client.parse_headers(io.BytesIO("".join(f"{line}\r\n" for line in lines)
                                                .encode("latin-1") + b"\r\n"))


HEADERS = ("MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: eco",
           "Mcp-Param-Region: us-west1", "Mcp-Param-N: 42", "Mcp-Param-On: true")


@pytest.mark.parametrize("value, sent", [
    ("us-west1", "us-west1"), ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="), ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="), (42, "42"), (False, "false")])
def test_a_value_travels_plain_when_it_can_and_in_base64_when_it_cannot(value, sent):
    assert http_headers.encode(value) == sent
    assert http_headers.decode(sent) == (value if isinstance(value, str) else sent)


def test_headers_that_repeat_the_body_match():
    assert http_headers.mismatch(BODY, parsed(*HEADERS), {"eco": Tool()}) is None
    numeric = parsed(*HEADERS[:4], "Mcp-Param-N: 42.0", HEADERS[5])
    assert http_headers.mismatch(BODY, numeric, {"eco": Tool()}) is None


@pytest.mark.parametrize("changed", [
    "Mcp-Param-Region: eu-west1", "Mcp-Param-N: 43", "Mcp-Param-On: True",
    "Mcp-Param-Region: =?base64?SGVs!!!bG8=?=", "Mcp-Method: tools/list"],
    ids=["other region", "other number", "boolean in capitals", "bad base64", "other method"])
def test_a_header_that_differs_from_the_body_is_a_mismatch(changed):
    name = changed.split(":")[0].lower()
    headers = [h for h in HEADERS if h.split(":")[0].lower() != name] + [changed]
    assert http_headers.mismatch(BODY, parsed(*headers), {"eco": Tool()})


def test_a_missing_parameter_header_is_a_mismatch_and_a_null_argument_expects_none():
    without = [h for h in HEADERS if not h.startswith("Mcp-Param-Region")]
    assert http_headers.mismatch(BODY, parsed(*without), {"eco": Tool()})
    body = {**BODY, "params": {**BODY["params"], "arguments": {"region": None, "n": 42,
                                                               "on": True}}}
    assert http_headers.mismatch(body, parsed(*without), {"eco": Tool()}) is None


def test_a_routing_header_sent_twice_is_a_mismatch():
    assert "repetida" in http_headers.mismatch(
        BODY, parsed(*HEADERS, "mcp-method: tools/call"), {"eco": Tool()})


@pytest.mark.parametrize("schema", [
    {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
    {"properties": {"a": {"type": "string", "x-mcp-header": "My Region"}}},
    {"properties": {"a": {"type": "string", "x-mcp-header": "Región"}}},
    {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
    {"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                    "b": {"type": "string", "x-mcp-header": "a"}}},
    {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
    {"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}}],
    ids=["empty", "space", "non-ascii", "number", "repeated", "under items", "under anyOf"])
def test_a_mark_that_breaks_the_rules_is_refused(schema):
    with pytest.raises(ValueError):
        http_headers.marked({"type": "object", **schema})


def test_a_mark_on_a_nested_property_names_its_path():
    schema = {"type": "object", "properties": {"where": {"type": "object", "properties": {
        "zone": {"type": "string", "x-mcp-header": "Zone"}}}}}
    assert http_headers.marked(schema) == [(("where", "zone"), "Zone")]
    msg = {"method": "tools/call", "params": {"name": "t", "arguments": {
        "where": {"zone": "b"}}}}
    assert http_headers.request_headers(msg, http_headers.marked(schema)) == {
        "Mcp-Method": "tools/call", "Mcp-Name": "t", "Mcp-Param-Zone": "b"}
