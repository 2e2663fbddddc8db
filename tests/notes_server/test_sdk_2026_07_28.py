"""The same scenarios with the official SDK `Client` in its default mode, which speaks
2026-07-28: no initialize, a `_meta` envelope on every request, and `input_required` results
that the client answers and retries. Every frame is validated against the 2026-07-28 schema.
"""

import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPError

from client.simulated_user import Browser
from sdk_driver import Answers, Roots, sdk_client, text
from server_support import server_frames

pytestmark = pytest.mark.anyio
PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


async def first_round(client, name, arguments):
    return await client.session.call_tool(name, arguments, allow_input_required=True)


async def test_default_sdk_mode_negotiates_2026_07_28(tree, trace):
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        assert client.session.protocol_version == "2026-07-28"


async def test_roots_arrive_as_an_embedded_input_request(tree, trace):
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        first = await first_round(client, "notes_list", {})
    assert isinstance(first, types.InputRequiredResult)
    assert {k: r.method for k, r in first.input_requests.items()} == {"roots": "roots/list"}
    assert first.request_state


async def test_the_retry_loop_lists_the_notes_inside_the_roots(tree, trace):
    roots = Roots(tree.notes)
    async with sdk_client(trace=trace, mode="auto", roots=roots) as client:
        result = await client.call_tool("notes_list", {})
    assert roots.asked == 1
    assert len(result.structured_content["notes"]) == 4


async def test_one_match_is_deleted_after_the_roots_round(tree, trace):
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes),
                          answers=Answers()) as client:
        result = await client.call_tool("notes_delete", {"title": "Lista de la compra"})
    assert not result.is_error and not (tree.notes / "compra.md").exists()


async def test_disambiguation_through_input_required_deletes_the_chosen_note(tree, trace):
    before = tree.snapshot()
    answers = Answers(PICK_2024)
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes),
                          answers=answers) as client:
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert isinstance(answers.seen[0], types.ElicitRequestFormParams)
    assert result.structured_content["deleted"]["id"] == "note-7"
    assert set(before) - set(tree.snapshot()) == {"Notas/tps-2024.md"}


@pytest.mark.parametrize("answer, reason", [
    ({"action": "decline"}, "declined"),
    ({"action": "cancel"}, "cancelled"),
    ({"action": "accept", "content": {"note_id": "note-7", "confirm": False}}, "not_confirmed"),
])
async def test_decline_cancel_or_no_confirm_through_input_required_delete_nothing(
        tree, trace, answer, reason):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes),
                          answers=Answers(answer)) as client:
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert not result.is_error and result.structured_content == {"deleted": None,
                                                                 "reason": reason}
    assert tree.snapshot() == before


async def test_write_outside_the_roots_is_refused_in_2026_too(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        result = await client.call_tool("notes_write", {
            "uri": f"file://{tree.notes}/%2e%2e/Notas-privadas/robo.md", "title": "R",
            "body": "x"})
    assert result.is_error and tree.snapshot() == before


async def test_url_mode_has_no_elicitation_id_and_completes_on_retry(tree, trace):
    answers = Answers({"action": "accept"}, on_url=lambda p: Browser().visit(p.url))
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes),
                          answers=answers) as client:
        result = await client.call_tool("notes_setup", {})
    assert isinstance(answers.seen[0], types.ElicitRequestURLParams)
    assert answers.seen[0].elicitation_id is None
    on_the_wire = [request["params"] for frame in server_frames(trace)
                   for request in ((frame.get("result") or {}).get("inputRequests") or {}).values()
                   if request["method"] == "elicitation/create"]
    assert [params["mode"] for params in on_the_wire] == ["url"]
    assert "elicitationId" not in on_the_wire[0]
    assert not any(frame.get("method") == "notifications/elicitation/complete"
                   for frame in server_frames(trace))
    assert result.structured_content == {"status": "configured"}


async def test_url_mode_retry_before_the_page_is_pending_not_configured(tree, trace):
    async with sdk_client("--setup-wait", 0.3, trace=trace, mode="auto", roots=Roots(tree.notes),
                          answers=Answers({"action": "accept"})) as client:
        result = await client.call_tool("notes_setup", {})
    assert result.structured_content == {"status": "pending"}


async def test_missing_form_capability_is_32021_with_required_capabilities(tree, trace):
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("notes_delete", {"title": "TPS report"})
    assert raised.value.error.code == -32021
    assert raised.value.error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_missing_roots_capability_without_configured_root_is_32021(tree, trace):
    async with sdk_client(trace=trace, mode="auto", roots=None) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("notes_list", {})
    assert raised.value.error.code == -32021
    assert raised.value.error.data == {"requiredCapabilities": {"roots": {}}}


async def roots_round_state(client):
    """The requestState of a first round (the server asked for the roots)."""
    return (await first_round(client, "notes_delete", {"title": "TPS report"})).request_state


async def refused_retry(client, arguments, state, responses):
    """Retry notes_delete with this state; return the JSON-RPC error code it gets."""
    with pytest.raises(MCPError) as raised:
        await client.session.call_tool("notes_delete", arguments, request_state=state,
                                       input_responses=responses, allow_input_required=True)
    return raised.value.error.code


def roots_answer(folder):
    return {"roots": types.ListRootsResult(roots=[types.Root(uri=f"file://{folder}")])}


@pytest.mark.parametrize("tamper", [
    lambda state: state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB"),
    lambda state: state.replace("v1.", "v2.", 1),
    lambda state: "v1.bm90LXNpZ25lZA.c2ln",
    lambda state: "",
])
async def test_tampered_request_state_is_32602_and_changes_nothing(tree, trace, tamper):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes),
                          answers=Answers(PICK_2024)) as client:
        state = await roots_round_state(client)
        code = await refused_retry(client, {"title": "TPS report"}, tamper(state),
                                   {"ask-1": types.ElicitResult(**PICK_2024)})
    assert code == -32602
    assert tree.snapshot() == before


async def test_request_state_replayed_with_other_arguments_is_32602(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        state = await roots_round_state(client)
        code = await refused_retry(client, {"title": "Lista de la compra"}, state,
                                   roots_answer(tree.notes))
    assert code == -32602
    assert tree.snapshot() == before


async def test_expired_request_state_is_32602(tree, trace):
    async with sdk_client("--state-ttl", 0, trace=trace, mode="auto",
                          roots=Roots(tree.notes)) as client:
        state = await roots_round_state(client)
        code = await refused_retry(client, {"title": "TPS report"}, state,
                                   roots_answer(tree.notes))
    assert code == -32602


async def test_an_answer_to_a_question_never_asked_is_ignored(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        result = await client.session.call_tool(
            "notes_delete", {"title": "TPS report"},
            input_responses={"ask-1": types.ElicitResult(**PICK_2024)},
            allow_input_required=True)
    assert isinstance(result, types.InputRequiredResult)
    assert tree.snapshot() == before


async def test_a_client_that_never_retries_leaves_everything_unchanged(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode="auto", roots=Roots(tree.notes)) as client:
        await first_round(client, "notes_delete", {"title": "TPS report"})
    assert tree.snapshot() == before


async def test_the_same_server_still_serves_a_legacy_sdk_client(tree, trace):
    async with sdk_client(trace=trace, mode="legacy", roots=Roots(tree.notes)) as client:
        version = client.session.protocol_version
        result = await client.call_tool("notes_list", {})
    assert version == "2025-11-25"
    assert "4 nota" in text(result)
