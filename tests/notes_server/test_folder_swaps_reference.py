"""A shared folder swapped for a link during exercise 2's form, with the reference solution's
notes_archive: it keeps the matches it offered and re-checks the chosen one before acting, so
nothing outside the roots moves (the same attack on the course's own tools is in
test_folder_swaps_are_refused.py, which ships)."""

from pathlib import Path

import pytest

from folder_swaps import REPLACED, make_house, outside, swapping
from sdk_driver import Answers, Roots, sdk_client, text
from shared.protocol import REVISIONS

pytestmark = [pytest.mark.anyio,
              pytest.mark.instructor_only("runs the reference solution of exercise 2")]
REVISIONS = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=REVISIONS)
REFERENCE = (Path(__file__).resolve().parents[2] / "grader" / "reference" / "soluciones"
             / "ejercicio2.py")  # the repository's, also when NOTES_CODE_DIR names a copy


@pytest.fixture
def house(tree):
    return make_house(tree)


@REVISIONS
@pytest.mark.parametrize("swapped", ["Notas", "Notas/sub"])
async def test_the_reference_archive_moves_nothing_after_a_swap(house, trace, mode, swapped):
    before_outside = outside(house)
    target = house.base / swapped
    pick_id = "note-t1" if swapped == "Notas" else "note-t1-sub"
    pick = {"action": "accept", "content": {"note_id": pick_id, "confirm": True}}
    answers = Answers(swapping(target, house.outside, pick))
    async with sdk_client("--solution", REFERENCE, trace=trace, mode=mode,
                          roots=Roots(house.notes), answers=answers) as client:
        result = await client.call_tool("notes_archive", {"title": "dup"})
    # the reference keeps the matches it offered (ctx.memo) and re-checks the chosen handle
    # before acting: with the root swapped, that check fails; with the subfolder swapped, the
    # held folder is no longer at its place, so it refuses too and the note stays where it is
    assert outside(house) == before_outside
    assert result.is_error
    assert not list(house.base.rglob(".archive"))
    if swapped == "Notas":
        assert REPLACED in text(result)
    else:
        assert "ya no es una carpeta normal" in text(result)
        assert (house.notes / "sub-movida" / "t1.md").exists()
