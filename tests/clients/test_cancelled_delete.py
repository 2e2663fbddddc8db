"""A delete whose call the client gave up on deletes nothing and gets no response, with the
official Python and TypeScript SDK clients (issue 10).

The scenario: "TPS report" has three matches, so notes_delete opens a form; the user answers
it (accept, note-7, confirmed) only after the client's request timeout (or stop button) has
already cancelled the call. The client sends notifications/cancelled; the server must drop the
call (no side effect, no response) and, at 2025-11-25, cancel its own pending
elicitation/create so the client can close the form."""

import json
import time

import anyio
import mcp.types as types
import pytest
from clients_support import REPO, run_driver, scenario
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from server_support import serve_argv

USER_THINKS = 2.0     # seconds the scripted user takes to answer the form
CLIENT_GIVES_UP = 0.5  # the client's request timeout (or the stop button)
CHOSEN = {"note_id": "note-7", "confirm": True}


def wire(trace):
    return [dict(entry, frame=json.loads(entry["frame"]))
            for entry in map(json.loads, trace.read_text().splitlines())]


def assert_cancel_honoured(tree, trace, snapshot):
    """What the server must have done, read from its own --trace."""
    frames = wire(trace)
    [call] = [f["frame"] for f in frames if f["dir"] == "in"
              and f["frame"].get("method") == "tools/call"
              and f["frame"]["params"]["name"] == "notes_delete"]
    [ask] = [f["frame"] for f in frames if f["dir"] == "out"
             and f["frame"].get("method") == "elicitation/create"]
    cancels_in = [f["frame"] for f in frames if f["dir"] == "in"
                  and f["frame"].get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels_in] == [call["id"]]
    answers_to_call = [f["frame"] for f in frames if f["dir"] == "out"
                       and "method" not in f["frame"] and f["frame"].get("id") == call["id"]]
    assert answers_to_call == [], "the server answered a cancelled call"
    cancels_out = [f["frame"] for f in frames if f["dir"] == "out"
                   and f["frame"].get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels_out] == [ask["id"]], \
        "the server did not cancel its own elicitation/create for the dropped call"
    assert tree.snapshot() == snapshot, "a cancelled delete changed the notes"
    assert "tps-2024.md" in tree.files(tree.notes)


# -- the official Python SDK -------------------------------------------------------------------
@pytest.mark.anyio
async def test_python_sdk_timeout_cancels_the_delete_and_nothing_is_deleted(tree, trace):
    form = {"asked": 0, "closed": False}

    async def late_user(ctx, params):
        form["asked"] += 1
        try:
            await anyio.sleep(USER_THINKS)
        except anyio.get_cancelled_exc_class():
            form["closed"] = True  # the SDK closed the form when the server cancelled it
            raise
        return types.ElicitResult(action="accept", content=CHOSEN)

    async def roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri=tree.notes.as_uri(), name="Notas")])

    snapshot = tree.snapshot()
    argv = serve_argv(trace=trace)
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))
    async with Client(params, mode="legacy", list_roots_callback=roots,
                      elicitation_callback=late_user) as client:
        started = time.monotonic()
        with pytest.raises(MCPError) as timed_out:
            await client.call_tool("notes_delete", {"title": "TPS report"},
                                   read_timeout_seconds=CLIENT_GIVES_UP)
        assert time.monotonic() - started < CLIENT_GIVES_UP + 2
        assert "tim" in str(timed_out.value).lower()
        await anyio.sleep(USER_THINKS + 0.5)  # past the moment the user would have answered
        listed = await client.call_tool("notes_list", {})
    assert_cancel_honoured(tree, trace, snapshot)
    assert form == {"asked": 1, "closed": True}
    assert len(listed.structured_content["notes"]) == 4


# -- the official TypeScript SDK ---------------------------------------------------------------
@pytest.mark.parametrize("sdk, how", [("v1", "timeout"), ("v1", "abort"), ("v2", "timeout")])
def test_typescript_sdk_cancel_deletes_nothing_and_gets_no_response(node, tree, trace,
                                                                   tmp_path,
                                                                   sdk, how):
    snapshot = tree.snapshot()
    give_up = {"timeoutMs": CLIENT_GIVES_UP * 1000} if how == "timeout" \
        else {"abortAfterMs": CLIENT_GIVES_UP * 1000}
    report = run_driver(scenario(
        sdk=sdk, trace=trace, roots=[tree.notes], elicitation={"form": {}},
        answers=[{"action": "accept", "content": CHOSEN, "delayMs": USER_THINKS * 1000}],
        steps=[{"op": "callTool", "name": "notes_delete", "arguments": {"title": "TPS report"},
                **give_up},
               {"op": "sleep", "ms": (USER_THINKS + 0.5) * 1000},
               {"op": "callTool", "name": "notes_list"}]), tmp_path)
    cancelled = report.step(0)
    assert not cancelled["ok"] and cancelled["ms"] < (CLIENT_GIVES_UP + 2) * 1000, cancelled
    [sent_call] = [m for m in report.sent("tools/call")
                   if m["message"]["params"]["name"] == "notes_delete"]
    call_id = sent_call["message"]["id"]
    assert [m["message"]["params"]["requestId"]
            for m in report.sent("notifications/cancelled")] == [call_id]
    assert report.received(response_to=call_id) == [], "a response for the cancelled call"
    [form] = report.elicitations()
    server_cancels = report.received("notifications/cancelled")
    assert [m["message"]["params"]["requestId"] for m in server_cancels] == [form["id"]]
    closed = [e for e in report.events if e["event"] == "elicitation_closed"]
    assert [e["id"] for e in closed] == [form["id"]], "the SDK never closed the form"
    assert len(report.step(2)["result"]["structuredContent"]["notes"]) == 4
    assert_cancel_honoured(tree, trace, snapshot)
