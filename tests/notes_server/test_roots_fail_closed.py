"""When the client's roots cannot be read, the server allows nothing: not `/`, not its working
directory, not some default. In both revisions.

The server runs with the notes folder as its working directory, so a fallback to `/` or to the
working directory would show up as a listed note or a written file. Writes are tried first:
they fail fast, whereas listing `/` would walk the whole disk.
"""

import pytest

from sdk_driver import Roots, sdk_client
from server_support import RawPipe

ROOTS_ERROR = {"code": -32603, "message": "no puedo leer mis carpetas"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}


def bad_roots_answers(tree):
    """roots/list results the server must refuse as a whole."""
    return {
        "roots-not-a-list": {"roots": str(tree.notes)},
        "no-roots-key": {},
        "not-a-file-uri": {"roots": [{"uri": "https://example.com/Notas"}]},
        "remote-host": {"roots": [{"uri": f"file://otra-maquina{tree.notes}"}]},
        "no-uri": {"roots": [{"name": "Notas"}]},
    }


BAD = ["roots-not-a-list", "no-roots-key", "not-a-file-uri", "remote-host", "no-uri"]


def writes(tree):
    """One target inside the folder the client meant to share (the server's working
    directory too) and one outside it: neither may be written."""
    return [tree.notes / "nueva.md", tree.base / "fuera.md"]


def listed_nothing(result):
    """A notes_list that allows nothing: a tool error, or an empty list."""
    if result.get("isError"):
        return True
    return result.get("structuredContent", {}).get("notes") == []


# -- 2025-11-25: the client answers roots/list with an error ------------------------------------
@pytest.mark.anyio
async def test_a_roots_list_error_allows_no_folder_at_all(tree, trace):
    before = tree.snapshot()
    roots = Roots(tree.notes, error=ROOTS_ERROR)
    async with sdk_client(trace=trace, roots=roots, answers=None, cwd=tree.notes) as client:
        for target in writes(tree):
            written = await client.call_tool("notes_write", {
                "uri": f"file://{target}", "title": "Nueva", "body": "x"})
            assert written.is_error and tree.snapshot() == before, target
        opened = await client.call_tool("notes_open", {"note_id": "note-1"})
        deleted = await client.call_tool("notes_delete", {"title": "Lista de la compra"})
        listed = await client.call_tool("notes_list", {})
    assert roots.asked >= 1
    assert opened.is_error and deleted.is_error
    assert listed_nothing(listed.model_dump(by_alias=True))
    assert tree.snapshot() == before


@pytest.mark.anyio
async def test_after_a_failed_roots_list_a_working_one_restores_the_boundary(tree, trace):
    roots = Roots(tree.notes, error=ROOTS_ERROR)
    async with sdk_client(trace=trace, roots=roots, cwd=tree.notes) as client:
        refused = await client.call_tool("notes_list", {})
        roots.error = None
        await client.send_roots_list_changed()
        listed = await client.call_tool("notes_list", {})
    assert listed_nothing(refused.model_dump(by_alias=True))
    assert {n["id"] for n in listed.structured_content["notes"]} == {
        "note-1", "note-3", "note-7", "note-14"}


# -- 2025-11-25 on a raw pipe: roots/list answers that are not a valid list of file roots -------
def legacy_call(pipe, msg_id, name, arguments, roots_answer):
    """Call a tool; answer every roots/list the server sends meanwhile with `roots_answer`."""
    pipe.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    while True:
        frame = pipe.receive()
        if frame.get("method") == "roots/list":
            pipe.send({"jsonrpc": "2.0", "id": frame["id"], **roots_answer})
        elif frame.get("id") == msg_id and "method" not in frame:
            return frame


@pytest.mark.parametrize("answer", BAD + ["error"])
def test_an_invalid_roots_list_answer_allows_nothing_2025(tree, trace, answer):
    before = tree.snapshot()
    roots_answer = {"error": ROOTS_ERROR} if answer == "error" \
        else {"result": bad_roots_answers(tree)[answer]}
    pipe = RawPipe(trace=trace, cwd=tree.notes)
    try:
        pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert pipe.receive()["id"] == 1
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ask = pipe.receive()
        assert ask["method"] == "roots/list"
        pipe.send({"jsonrpc": "2.0", "id": ask["id"], **roots_answer})
        for msg_id, target in enumerate(writes(tree), start=10):
            written = legacy_call(pipe, msg_id, "notes_write", {
                "uri": f"file://{target}", "title": "Nueva", "body": "x"}, roots_answer)
            assert written["result"]["isError"] and tree.snapshot() == before, target
        listed = legacy_call(pipe, 20, "notes_list", {}, roots_answer)
        assert listed_nothing(listed["result"])
    finally:
        assert pipe.close() == 0
    assert tree.snapshot() == before


# -- 2026-07-28: the retry carries an invalid roots answer -------------------------------------
def stateless_call(pipe, msg_id, name, arguments, roots_answer, rounds=3):
    """Call a tool at 2026-07-28, answering every roots input request with `roots_answer`.
    Returns the final response, or the last input_required one after `rounds` retries."""
    params = {"name": name, "arguments": arguments, "_meta": META}
    for attempt in range(rounds + 1):
        pipe.send({"jsonrpc": "2.0", "id": f"{msg_id}-{attempt}", "method": "tools/call",
                   "params": params})
        frame = pipe.receive()
        assert frame["id"] == f"{msg_id}-{attempt}"
        result = frame.get("result") or {}
        if result.get("resultType") != "input_required":
            return frame
        requests = result.get("inputRequests") or {}
        assert all(r["method"] == "roots/list" for r in requests.values()), requests
        params = {"name": name, "arguments": arguments, "_meta": META,
                  "inputResponses": {key: roots_answer for key in requests},
                  "requestState": result.get("requestState")}
    return frame


def changed_nothing(frame):
    """A final answer that did nothing: a JSON-RPC error, a tool error, or a call that is
    still waiting for a valid answer."""
    result = frame.get("result")
    return result is None or result.get("isError") is True \
        or result.get("resultType") == "input_required"


@pytest.mark.parametrize("answer", BAD)
def test_an_invalid_roots_answer_allows_nothing_2026(tree, trace, answer):
    before = tree.snapshot()
    roots_answer = bad_roots_answers(tree)[answer]
    pipe = RawPipe(trace=trace, cwd=tree.notes)
    try:
        for msg_id, target in enumerate(writes(tree)):
            written = stateless_call(pipe, f"w{msg_id}", "notes_write", {
                "uri": f"file://{target}", "title": "Nueva", "body": "x"}, roots_answer)
            assert changed_nothing(written) and tree.snapshot() == before, target
        listed = stateless_call(pipe, "l", "notes_list", {}, roots_answer)
        assert listed.get("result") is None or listed_nothing(listed["result"]) \
            or listed["result"].get("resultType") == "input_required"
    finally:
        assert pipe.close() == 0
    assert tree.snapshot() == before
