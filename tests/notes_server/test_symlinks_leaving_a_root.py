"""Symlinks inside a root that lead outside it: a `.md` file link and a folder link, both into
the sibling Notas-privadas/. What they point to is not listed, not openable and not deletable
through the tools, in both revisions; the link and its target stay as they were."""

import pytest

from sdk_driver import Answers, Roots, sdk_client
from shared.protocol import REVISIONS

pytestmark = pytest.mark.anyio
INSIDE = {"note-1", "note-3", "note-7", "note-14"}


@pytest.fixture
def linked(tree):
    (tree.notes / "enlace.md").symlink_to(tree.private / "diario.md")  # the Diario, note-99
    (tree.notes / "salida").symlink_to(tree.private)
    return tree


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=REVISIONS)
async def test_a_note_reached_through_a_symlink_leaving_the_root_is_out_of_reach(
        linked, trace, mode):
    before = linked.snapshot()
    async with sdk_client(trace=trace, mode=mode, roots=Roots(linked.notes),
                          answers=Answers()) as client:
        listed = await client.call_tool("notes_list", {})
        opened = await client.call_tool("notes_open", {"note_id": "note-99"})
        deleted = await client.call_tool("notes_delete", {"title": "Diario"})
    notes = listed.structured_content["notes"]
    assert {n["id"] for n in notes} == INSIDE
    assert "Diario" not in {n["title"] for n in notes}
    assert all(n["uri"].startswith(f"file://{linked.notes}/") for n in notes)
    assert opened.is_error and deleted.is_error
    assert (linked.notes / "enlace.md").is_symlink() and (linked.notes / "salida").is_symlink()
    assert linked.snapshot() == before
