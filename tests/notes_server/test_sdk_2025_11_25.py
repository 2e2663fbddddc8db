"""The lesson's scenarios, driven by the official `mcp` SDK client over stdio at 2025-11-25.

Every frame the server writes is validated against the official 2025-11-25 schema (the
`trace` fixture). The files on disk are checked by the test itself, never trusted from a reply.
"""

import threading

import mcp.types as types
import pytest

from client.simulated_user import Browser
from sdk_driver import Answers, Roots, sdk_client, text

pytestmark = pytest.mark.anyio
PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


async def test_tools_list_carries_the_contract_and_annotations(tree, trace):
    async with sdk_client(trace=trace, roots=Roots(tree.notes)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"notes_list", "notes_write", "notes_delete", "notes_setup"} <= set(tools)
    assert tools["notes_list"].annotations.read_only_hint is True
    assert tools["notes_delete"].annotations.destructive_hint is True
    assert tools["notes_write"].input_schema["required"] == ["uri", "title", "body"]


async def test_server_asks_roots_after_initialized(tree, trace):
    roots = Roots(tree.notes)
    async with sdk_client(trace=trace, roots=roots) as client:
        listed = await client.call_tool("notes_list", {})
    assert roots.asked == 1
    assert {n["id"] for n in listed.structured_content["notes"]} == {
        "note-1", "note-3", "note-7", "note-14"}


async def test_notes_list_returns_file_uris_inside_the_roots(tree, trace):
    async with sdk_client(trace=trace, roots=Roots(tree.notes)) as client:
        notes = (await client.call_tool("notes_list", {})).structured_content["notes"]
    assert all(n["uri"].startswith(f"file://{tree.notes}/") for n in notes)
    assert {"id", "title", "created", "uri"} == set(notes[0])


async def test_one_match_is_deleted_without_asking(tree, trace):
    answers = Answers()
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=answers) as client:
        result = await client.call_tool("notes_delete", {"title": "Lista de la compra"})
    assert not result.is_error
    assert answers.seen == []
    assert tree.files(tree.notes) == ["tps-2023.md", "tps-2024.md", "tps-2025.md"]


async def test_several_matches_send_the_form_with_note_id_and_confirm(tree, trace):
    answers = Answers({"action": "decline"})
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=answers) as client:
        await client.call_tool("notes_delete", {"title": "TPS report"})
    schema = answers.seen[0].requested_schema
    assert schema["required"] == ["note_id", "confirm"]
    assert [o["const"] for o in schema["properties"]["note_id"]["oneOf"]] == [
        "note-3", "note-7", "note-14"]
    assert all(year in o["title"] for o, year in
               zip(schema["properties"]["note_id"]["oneOf"], ("2023", "2024", "2025"),
                   strict=True))
    assert schema["properties"]["confirm"]["type"] == "boolean"


async def test_accept_with_confirm_deletes_exactly_the_chosen_note(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, roots=Roots(tree.notes),
                          answers=Answers(PICK_2024)) as client:
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert result.structured_content["deleted"]["id"] == "note-7"
    after = tree.snapshot()
    assert set(before) - set(after) == {"Notas/tps-2024.md"}
    assert all(after[name] == before[name] for name in after)


@pytest.mark.parametrize("answer, reason", [
    ({"action": "decline"}, "declined"),
    ({"action": "cancel"}, "cancelled"),
    ({"action": "accept", "content": {"note_id": "note-7", "confirm": False}}, "not_confirmed"),
])
async def test_decline_cancel_or_no_confirm_delete_nothing(tree, trace, answer, reason):
    before = tree.snapshot()
    async with sdk_client(trace=trace, roots=Roots(tree.notes),
                          answers=Answers(answer)) as client:
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert tree.snapshot() == before
    assert not result.is_error and result.structured_content == {"deleted": None,
                                                                 "reason": reason}


async def test_an_id_that_was_not_offered_deletes_nothing(tree, trace):
    before = tree.snapshot()
    forged = {"action": "accept", "content": {"note_id": "note-99", "confirm": True}}
    async with sdk_client(trace=trace, roots=Roots(tree.notes),
                          answers=Answers(forged)) as client:
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert result.is_error and "no es válida" in text(result)
    assert tree.snapshot() == before


async def test_the_form_is_asked_once_per_call(tree, trace):
    answers = Answers({"action": "decline"}, {"action": "decline"})
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=answers) as client:
        await client.call_tool("notes_delete", {"title": "TPS report"})
    assert len(answers.seen) == 1


async def test_no_match_is_a_tool_error(tree, trace):
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=Answers()) as client:
        result = await client.call_tool("notes_delete", {"title": "Diario"})  # only outside
    assert result.is_error and "Diario" in text(result)


async def test_write_outside_the_roots_is_refused_and_writes_nothing(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, roots=Roots(tree.notes)) as client:
        result = await client.call_tool("notes_write", {
            "uri": f"file://{tree.private}/robo.md", "title": "Robo", "body": "x"})
    assert result.is_error and f"file://{tree.notes}" in text(result)
    assert tree.snapshot() == before


async def test_write_inside_the_roots_creates_the_note(tree, trace):
    async with sdk_client(trace=trace, roots=Roots(tree.notes)) as client:
        result = await client.call_tool("notes_write", {
            "uri": f"file://{tree.notes}/ideas.md", "title": "Ideas", "body": "hola",
            "created": "2025-08-01"})
        listed = await client.call_tool("notes_list", {})
    assert not result.is_error
    assert (tree.notes / "ideas.md").read_text().endswith("hola")
    assert "Ideas" in {n["title"] for n in listed.structured_content["notes"]}


async def test_list_changed_makes_the_server_reask_and_the_boundary_follow(tree, trace):
    roots = Roots(tree.notes)
    async with sdk_client(trace=trace, roots=roots) as client:
        roots.folders = [tree.notes, tree.work]
        await client.send_roots_list_changed()
        listed = await client.call_tool("notes_list", {})
        roots.folders = [tree.work]
        await client.send_roots_list_changed()
        refused = await client.call_tool("notes_write", {
            "uri": f"file://{tree.notes}/tarde.md", "title": "Tarde", "body": "x"})
    assert roots.asked == 3
    assert "note-21" in {n["id"] for n in listed.structured_content["notes"]}
    assert refused.is_error and not (tree.notes / "tarde.md").exists()


async def test_url_mode_accept_is_consent_and_the_page_completes_it(tree, trace):
    messages = []
    answers = Answers({"action": "accept"},
                      on_url=lambda p: threading.Thread(target=Browser().visit,
                                                        args=(p.url,)).start())
    async with sdk_client("--setup-wait", 20, trace=trace, roots=Roots(tree.notes),
                          answers=answers, messages=messages) as client:
        result = await client.call_tool("notes_setup", {})
    request = answers.seen[0]
    assert isinstance(request, types.ElicitRequestURLParams)
    assert request.url.startswith("http://127.0.0.1:") and request.elicitation_id
    completions = [m for m in messages if isinstance(m, types.ElicitCompleteNotification)]
    assert [c.params.elicitation_id for c in completions] == [request.elicitation_id]
    assert result.structured_content == {"status": "configured"}


async def test_url_mode_accept_without_visiting_is_not_completion(tree, trace):
    messages = []
    async with sdk_client("--setup-wait", 0.3, trace=trace, roots=Roots(tree.notes),
                          answers=Answers({"action": "accept"}), messages=messages) as client:
        result = await client.call_tool("notes_setup", {})
    assert result.structured_content == {"status": "pending"}
    assert not any(isinstance(m, types.ElicitCompleteNotification) for m in messages)


async def test_form_only_client_gets_the_manual_fallback_and_no_url(tree, trace):
    answers = Answers()
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=answers,
                          form_only=True) as client:
        result = await client.call_tool("notes_setup", {})
    assert answers.seen == []
    assert result.structured_content["status"] == "manual"


async def test_without_a_url_guard_there_is_no_url_mode(tree, trace):
    answers = Answers()
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=answers,
                          demo_guard=False) as client:
        result = await client.call_tool("notes_setup", {})
    assert answers.seen == [] and result.structured_content["status"] == "manual"


async def test_client_without_roots_gets_a_clear_error_not_the_working_directory(tree, trace):
    async with sdk_client(trace=trace, roots=None) as client:
        result = await client.call_tool("notes_list", {})
    assert result.is_error and "--root" in text(result) and "roots" in text(result)


async def test_client_without_roots_uses_the_configured_root(tree, trace):
    async with sdk_client("--root", tree.notes, trace=trace, roots=None) as client:
        notes = (await client.call_tool("notes_list", {})).structured_content["notes"]
    assert len(notes) == 4


async def test_configured_root_limits_a_client_that_declares_more(tree, trace):
    async with sdk_client("--root", tree.notes, trace=trace,
                          roots=Roots(tree.notes, tree.work)) as client:
        notes = (await client.call_tool("notes_list", {})).structured_content["notes"]
    assert "note-21" not in {n["id"] for n in notes}


async def test_client_without_elicitation_gets_a_tool_error_before_any_change(tree, trace):
    before = tree.snapshot()
    async with sdk_client(trace=trace, roots=Roots(tree.notes), answers=None) as client:
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert result.is_error and "elicitation" in text(result)
    assert tree.snapshot() == before
