"""The roots can change while a call waits for the user (2025-11-25) or between two requests
(2026-07-28). What the server does next is judged against the roots of *now*: a delete whose
note is no longer shared deletes nothing, and a handle whose note is no longer shared cannot be
read."""

import mcp.types as types
import pytest

from sdk_driver import Answers, Roots, sdk_client, text

pytestmark = pytest.mark.anyio
PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


def change_roots_then(client_box, roots, folders, answer):
    """A form answer given only after the user changed the shared folders: the client sends
    notifications/roots/list_changed and waits until the server has asked roots/list again."""
    async def answer_later(params):
        asked = roots.asked
        roots.folders = list(folders)
        await client_box["client"].send_roots_list_changed()
        await roots.wait_asked(asked + 1)
        return answer
    return answer_later


async def test_delete_rechecks_the_roots_after_the_form_and_deletes_nothing_outside(tree, trace):
    before = tree.snapshot()
    roots, box = Roots(tree.notes), {}
    answers = Answers(change_roots_then(box, roots, [tree.work], PICK_2024), PICK_2024, PICK_2024)
    async with sdk_client(trace=trace, roots=roots, answers=answers) as client:
        box["client"] = client
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert isinstance(answers.seen[0], types.ElicitRequestFormParams)
    assert roots.asked >= 2
    assert tree.snapshot() == before  # note-7 is outside the new roots: still there
    assert result.is_error or result.structured_content["deleted"] is None


async def test_a_roots_change_that_keeps_the_note_shared_lets_the_delete_go_ahead(tree, trace):
    before = tree.snapshot()
    roots, box = Roots(tree.notes), {}
    answers = Answers(change_roots_then(box, roots, [tree.notes, tree.work], PICK_2024),
                      PICK_2024, PICK_2024)
    async with sdk_client(trace=trace, roots=roots, answers=answers) as client:
        box["client"] = client
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
    assert roots.asked >= 2
    assert result.structured_content["deleted"]["id"] == "note-7"
    assert set(before) - set(tree.snapshot()) == {"Notas/tps-2024.md"}


async def test_a_handle_cannot_be_read_once_its_root_is_no_longer_shared_2025(tree, trace):
    roots = Roots(tree.notes, tree.work)
    async with sdk_client(trace=trace, roots=roots) as client:
        opened = await client.call_tool("notes_open", {"note_id": "note-21"})
        handle = opened.structured_content["handle"]
        read_before = await client.call_tool("notes_read", {"handle": handle})
        roots.folders = [tree.notes]
        await client.send_roots_list_changed()
        read_after = await client.call_tool("notes_read", {"handle": handle})
    assert not read_before.is_error and text(read_before) == "cuerpo de note-21\n"
    assert read_after.is_error and "cuerpo de note-21" not in text(read_after)


async def test_a_read_is_checked_against_the_roots_of_its_own_request_2026(tree, trace):
    roots = Roots(tree.notes, tree.work)
    async with sdk_client(trace=trace, mode="auto", roots=roots) as client:
        opened = await client.call_tool("notes_open", {"note_id": "note-21"})  # in Trabajo/
        handle = opened.structured_content["handle"]
        read_with_a = await client.call_tool("notes_read", {"handle": handle})
        roots.folders = [tree.notes]  # this request no longer shares Trabajo/
        read_without_a = await client.call_tool("notes_read", {"handle": handle})
    assert not read_with_a.is_error and text(read_with_a) == "cuerpo de note-21\n"
    assert read_without_a.is_error and "cuerpo de note-21" not in text(read_without_a)
