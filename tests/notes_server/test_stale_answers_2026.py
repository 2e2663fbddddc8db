"""2026-07-28: an answer counts only for the exact question it answered. When the question a
retry would ask is no longer the one that was answered, the server asks again instead of acting
on the old answer, whether that answer comes in `inputResponses` or sealed in `requestState`.

The question is made to change by a test-only solution tool whose first form offers the notes
on disk, read afresh on every run (the lesson's `notes_delete` fixes its matches for the whole
call on purpose, so its question does not change); a note appears between two rounds. The
rounds are driven one by one with the official SDK client (`allow_input_required=True`)."""

import mcp.types as types
import pytest

from sdk_driver import Answers, Roots, asked, one_round, roots_result, sdk_client
from server_support import write_solution

pytestmark = pytest.mark.anyio


def add_note(folder, name, note_id, title, created):
    (folder / name).write_text(f"id: {note_id}\ntitle: {title}\ncreated: {created}\n\n"
                               f"cuerpo de {note_id}\n")


def only_form(result):
    """The one form this round asks, as (key, its requestedSchema)."""
    forms = asked(result, types.ElicitRequest)
    assert len(forms) == 1, result
    key, request = next(iter(forms.items()))
    return key, request.params.requested_schema


def options(schema, field):
    return [o["const"] for o in schema["properties"][field]["oneOf"]]


async def through_roots(client, name, arguments, folder):
    """The first rounds of a call, up to its first form: answer the roots, nothing else."""
    first = await one_round(client, name, arguments)
    assert isinstance(first, types.InputRequiredResult)
    responses = {key: roots_result(folder) for key in asked(first, types.ListRootsRequest)}
    assert responses, first
    return await one_round(client, name, arguments, first, responses)


TWO_QUESTIONS = """
    from extension import Extension
    from server import ok

    extension = Extension()


    @extension.tool("pick_then_confirm", description="Elige una nota y confirma (prueba).")
    def pick_then_confirm(ctx):
        notes = ctx.notes()
        picked = ctx.elicit_form("¿Qué nota?", {"note_id": {
            "type": "string", "title": "Nota",
            "oneOf": [{"const": n.id, "title": n.title} for n in notes]}}, ["note_id"])
        if picked.action != "accept":
            return ok("Nada.", {"picked": None})
        sure = ctx.elicit_form("¿Seguro?", {"confirm": {"type": "boolean", "title": "Sí"}},
                               ["confirm"])
        return ok("Hecho.", {"picked": picked.content["note_id"],
                             "confirm": sure.content.get("confirm")})
"""


@pytest.fixture
def solution(tmp_path):
    return write_solution(tmp_path, TWO_QUESTIONS)


async def test_an_answer_to_a_question_that_changed_is_not_used(tree, trace, solution):
    async with sdk_client("--solution", solution, trace=trace, mode="auto",
                          roots=Roots(tree.notes), answers=Answers()) as client:
        pick_round = await through_roots(client, "pick_then_confirm", {}, tree.notes)
        pick_key, schema = only_form(pick_round)
        assert sorted(options(schema, "note_id")) == ["note-1", "note-14", "note-3", "note-7"]
        add_note(tree.notes, "nueva.md", "note-50", "Nueva", "2026-01-05")
        retry = await one_round(client, "pick_then_confirm", {}, pick_round, {
            pick_key: types.ElicitResult(action="accept", content={"note_id": "note-3"})})
    assert isinstance(retry, types.InputRequiredResult), retry.structured_content
    _, schema = only_form(retry)
    assert list(schema["properties"]) == ["note_id"]  # the pick again, not the confirmation
    assert "note-50" in options(schema, "note_id")


async def test_a_sealed_answer_is_not_reused_once_its_question_changed(tree, trace, solution):
    async with sdk_client("--solution", solution, trace=trace, mode="auto",
                          roots=Roots(tree.notes), answers=Answers()) as client:
        pick_round = await through_roots(client, "pick_then_confirm", {}, tree.notes)
        pick_key, _ = only_form(pick_round)
        confirm_round = await one_round(client, "pick_then_confirm", {}, pick_round, {
            pick_key: types.ElicitResult(action="accept", content={"note_id": "note-3"})})
        confirm_key, schema = only_form(confirm_round)  # the pick is now sealed in the state
        assert list(schema["properties"]) == ["confirm"]
        add_note(tree.notes, "nueva.md", "note-50", "Nueva", "2026-01-05")
        retry = await one_round(client, "pick_then_confirm", {}, confirm_round, {
            confirm_key: types.ElicitResult(action="accept", content={"confirm": True})})
    assert isinstance(retry, types.InputRequiredResult), retry.structured_content
    _, schema = only_form(retry)
    assert list(schema["properties"]) == ["note_id"]
    assert "note-50" in options(schema, "note_id")


async def test_the_same_question_keeps_its_answer(tree, trace, solution):
    async with sdk_client("--solution", solution, trace=trace, mode="auto",
                          roots=Roots(tree.notes), answers=Answers()) as client:
        pick_round = await through_roots(client, "pick_then_confirm", {}, tree.notes)
        pick_key, _ = only_form(pick_round)
        confirm_round = await one_round(client, "pick_then_confirm", {}, pick_round, {
            pick_key: types.ElicitResult(action="accept", content={"note_id": "note-3"})})
        confirm_key, _ = only_form(confirm_round)
        done = await one_round(client, "pick_then_confirm", {}, confirm_round, {
            confirm_key: types.ElicitResult(action="accept", content={"confirm": True})})
    assert isinstance(done, types.CallToolResult)
    assert done.structured_content == {"picked": "note-3", "confirm": True}
