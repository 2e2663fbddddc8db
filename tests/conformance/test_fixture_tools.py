"""The suite's test tools (fixture.py) on the session core, frame by frame, and the small public
`ctx` methods they brought: `ctx.sample`, `ctx.progress` and named questions (`key=`). Every
frame the server writes here validates against the official schema of its revision."""

import json
import types

import pytest
from conformance_support import FIXTURE

import extension
from core.session import Session
from mcp_schema import validate_frame
from server import Config, NotesServer
from shared.protocol import REVISIONS

META = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
HELLO = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "prueba"}


class Peer:
    """A client by hand: frames in, everything the session wrote back, each one validated."""

    def __init__(self, protocol, capabilities):
        server = NotesServer(Config(), extension.load(str(FIXTURE)))
        clock = types.SimpleNamespace(call_later=lambda s, fn: types.SimpleNamespace(
            cancel=lambda: None), call_soon=lambda fn: fn())
        self.protocol, self.capabilities, self.out, self.asked = protocol, capabilities, [], {}
        self.session = Session(server, self.out.append, clock)
        if protocol != "2026-07-28":
            self.send(0, "initialize", {"protocolVersion": protocol, "capabilities": capabilities,
                                        "clientInfo": {"name": "prueba", "version": "1"}})
            self.session.receive(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            self.take()

    def send(self, msg_id, method, params, meta=None):
        meta = meta or {}
        if self.protocol == "2026-07-28":
            meta = {META: self.protocol, CAPS: self.capabilities, **meta}
        if meta:
            params = {**params, "_meta": meta}
        self.asked[msg_id] = method
        self.session.receive(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                         "params": params}))

    def answer(self, msg_id, result):
        self.session.receive(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}))

    def take(self):
        frames, self.out[:] = list(self.out), []
        for frame in frames:
            method = None if "error" in frame else self.asked.get(frame.get("id"))
            validate_frame(json.loads(json.dumps(frame)), self.protocol, "server",
                           result_of=method if "method" not in frame else None)
        return frames


def test_sample_asks_the_clients_model_in_the_middle_of_a_2025_call():
    peer = Peer("2025-11-25", {"sampling": {}})
    peer.send(1, "tools/call", {"name": "test_sampling", "arguments": {"prompt": "¿Capital?"}})
    [question] = peer.take()
    assert question["method"] == "sampling/createMessage"
    assert question["params"] == {"messages": [{"role": "user", "content": {
        "type": "text", "text": "¿Capital?"}}], "maxTokens": 100}
    peer.answer(question["id"], HELLO)
    [done] = peer.take()
    assert done["id"] == 1 and done["result"]["content"][0]["text"] == "LLM response: Paris"


def test_sample_asks_in_band_at_2026_under_the_key_the_tool_names():
    peer = Peer("2026-07-28", {"sampling": {}})
    peer.send(1, "tools/call", {"name": "test_input_required_result_sampling", "arguments": {}})
    [round_1] = peer.take()
    asked = round_1["result"]["inputRequests"]
    assert list(asked) == ["capital_question"]
    assert asked["capital_question"]["method"] == "sampling/createMessage"
    peer.send(2, "tools/call", {"name": "test_input_required_result_sampling", "arguments": {},
                                "inputResponses": {"capital_question": HELLO},
                                "requestState": round_1["result"]["requestState"]})
    [done] = peer.take()
    assert done["result"]["resultType"] == "complete"
    assert done["result"]["content"][0]["text"] == "The model said: Paris"


@pytest.mark.parametrize("protocol", REVISIONS)
def test_sample_needs_the_sampling_capability(protocol):
    peer = Peer(protocol, {"elicitation": {"form": {}}})
    peer.send(1, "tools/call", {"name": "test_missing_capability", "arguments": {}})
    [done] = peer.take()
    if protocol == "2026-07-28":
        assert done["error"]["code"] == -32021
        assert done["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    else:
        assert done["result"]["isError"] is True
        assert "sampling" in done["result"]["content"][0]["text"]


@pytest.mark.parametrize("protocol", REVISIONS)
def test_progress_goes_only_to_a_call_that_asked_for_it(protocol):
    peer = Peer(protocol, {})
    peer.send(1, "tools/call", {"name": "test_tool_with_progress", "arguments": {}},
              meta={"progressToken": "p-1"})
    *progress, done = peer.take()
    assert [(p["params"]["progressToken"], p["params"]["progress"], p["params"]["total"])
            for p in progress] == [("p-1", 0, 100), ("p-1", 50, 100), ("p-1", 100, 100)]
    assert done["result"]["content"][0]["text"] == "progress sent: True"
    peer.send(2, "tools/call", {"name": "test_tool_with_progress", "arguments": {}})
    [alone] = peer.take()
    assert alone["result"]["content"][0]["text"] == "progress sent: False"


def test_a_named_question_keeps_its_name_and_numbered_ones_their_numbers():
    peer = Peer("2026-07-28", {"elicitation": {"form": {}}})
    peer.send(1, "tools/call", {"name": "test_input_required_result_elicitation",
                                "arguments": {}})
    [named] = peer.take()
    assert list(named["result"]["inputRequests"]) == ["user_name"]
    peer.send(2, "tools/call", {"name": "test_input_required_result_elicitation",
                                "arguments": {}, "inputResponses": {"user_name": {
                                    "action": "accept", "content": {"name": "Ana"}}},
                                "requestState": named["result"]["requestState"]})
    [done] = peer.take()
    assert done["result"]["content"][0]["text"] == "Hello, Ana!"
    peer.send(3, "tools/call", {"name": "test_elicitation", "arguments": {"message": "¿Y?"}})
    [numbered] = peer.take()  # a question without a name is numbered, as before
    assert list(numbered["result"]["inputRequests"]) == ["ask-1"]


def test_the_fixture_uses_the_public_extension_point_only():
    """fixture.py is a solution like a learner's: `Extension`, `ok`, `ToolError` and public
    `ctx` attributes; nothing private of the server (`ctx._...`), nothing outside the stdlib."""
    import ast
    import sys
    tree = ast.parse(FIXTURE.read_text())
    private = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
               and isinstance(node.value, ast.Name) and node.value.id == "ctx"
               and node.attr.startswith("_")]
    assert private == []
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported - set(sys.stdlib_module_names) == {"extension", "server"}
    loaded = extension.load(str(FIXTURE))
    assert loaded.errors == {} and len(loaded.tools) == 24
