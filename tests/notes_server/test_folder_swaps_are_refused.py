"""A shared folder swapped for a link while the server is not looking leads nowhere.

The attack, as someone else writing to the same disk would try it: two notes titled "dup" in
Notas/; `notes_delete {"title": "dup"}`; while the form is open (2025-11-25), or between
`input_required` and the retry (2026-07-28), Notas/ (or its subfolder) is renamed away and a
link to Fuera/ (outside the roots, with files of the same names and ids) is put in its place;
the user accepts note-t1. Nothing outside is deleted, moved, listed, opened, read or written,
the user's own notes are untouched too, and the tool error says why, in Spanish. The same holds
with no form at all, and when the chosen note's file is replaced by another one under the same
name; for the reference notes_archive, in test_folder_swaps_reference.py.
"""

import os
import shutil

import pytest

from folder_swaps import (
    PICK_T1,
    REPLACED,
    kept,
    make_house,
    outside,
    swap,
    swapping,
)
from sdk_driver import Answers, Roots, sdk_client, text
from shared.protocol import REVISIONS

pytestmark = pytest.mark.anyio
REVISIONS = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=REVISIONS)


@pytest.fixture
def house(tree):
    return make_house(tree)


# -- the attack during a form --------------------------------------------------------------------
@REVISIONS
async def test_a_root_swapped_for_a_link_during_the_form_deletes_nothing_anywhere(house, trace,
                                                                                 mode):
    before_outside = outside(house)
    mine = kept(house, "Notas/t1.md", "Notas/t2.md")
    answers = Answers(swapping(house.notes, house.outside, PICK_T1))
    async with sdk_client(trace=trace, mode=mode, roots=Roots(house.notes),
                          answers=answers) as client:
        result = await client.call_tool("notes_delete", {"title": "dup"})
    assert len(answers.seen) == 1
    assert result.is_error and "No se borró nada" in text(result)
    assert f"la carpeta compartida file://{house.notes} {REPLACED}" in text(result)
    assert outside(house) == before_outside
    assert kept(house, "Notas-movida/t1.md", "Notas-movida/t2.md") == \
        {k.replace("Notas", "Notas-movida"): v for k, v in mine.items()}


@REVISIONS
async def test_a_subfolder_swapped_for_a_link_during_the_form_deletes_nothing_anywhere(
        house, trace, mode):
    before_outside = outside(house)
    pick = {"action": "accept", "content": {"note_id": "note-t1-sub", "confirm": True}}
    answers = Answers(swapping(house.notes / "sub", house.outside, pick))
    async with sdk_client(trace=trace, mode=mode, roots=Roots(house.notes),
                          answers=answers) as client:
        result = await client.call_tool("notes_delete", {"title": "dup"})
    assert result.is_error and "ya no es una carpeta normal" in text(result)
    assert outside(house) == before_outside
    assert (house.notes / "sub-movida" / "t1.md").exists()


# -- after a swap, with no form at all -----------------------------------------------------------
@REVISIONS
async def test_after_a_swap_nothing_outside_is_listed_opened_read_or_written(house, trace, mode):
    before_outside = outside(house)
    async with sdk_client(trace=trace, mode=mode, roots=Roots(house.notes),
                          answers=Answers()) as client:
        listed = await client.call_tool("notes_list", {})
        opened = await client.call_tool("notes_open", {"note_id": "note-t1"})
        swap(house.notes, house.outside)
        after = {"list": await client.call_tool("notes_list", {}),
                 "open": await client.call_tool("notes_open", {"note_id": "note-t2"}),
                 "write": await client.call_tool("notes_write", {
                     "uri": f"file://{house.notes}/nueva.md", "title": "Nueva", "body": "x"})}
        read = await client.call_tool("notes_read",
                                      {"handle": opened.structured_content["handle"]})
    assert {n["id"] for n in listed.structured_content["notes"]} >= {"note-t1", "note-t2"}
    for name, result in after.items():
        assert result.is_error, name
        assert "FUERA" not in text(result) and "note-t2" not in str(result.structured_content)
    assert REPLACED in text(after["list"]) and REPLACED in text(after["open"])
    assert "FUERA" not in text(read)  # a handle opened before reads the user's own note
    if not read.is_error:
        assert text(read) == "cuerpo\n"
    assert outside(house) == before_outside


# -- the chosen note's file replaced under the same name -----------------------------------------
def replace_file(path, content):
    def during_the_form(params):
        os.unlink(path)
        path.write_text(content)
        return PICK_T1
    return during_the_form


@REVISIONS
@pytest.mark.parametrize("replacement", [
    "id: note-t1\ntitle: dup\ncreated: 2025-01-01\n\notro archivo, mismo id\n",
    "sin cabecera: un archivo cualquiera\n",
    "id: note-t9\ntitle: dup\n\notra nota\n",
], ids=["same-id", "header-less", "other-id"])
async def test_a_file_put_in_place_of_the_chosen_note_is_not_deleted(house, trace, mode,
                                                                     replacement):
    answers = Answers(replace_file(house.notes / "t1.md", replacement))
    async with sdk_client(trace=trace, mode=mode, roots=Roots(house.notes),
                          answers=answers) as client:
        result = await client.call_tool("notes_delete", {"title": "dup"})
    assert result.is_error and "No se borró nada" in text(result)
    assert "otro archivo" in text(result)
    assert (house.notes / "t1.md").read_text() == replacement


@REVISIONS
async def test_a_note_moved_to_another_folder_of_the_root_is_not_followed(house, trace, mode):
    def move_it(params):
        shutil.move(house.notes / "t1.md", house.notes / "sub" / "movida.md")
        return PICK_T1
    async with sdk_client(trace=trace, mode=mode, roots=Roots(house.notes),
                          answers=Answers(move_it)) as client:
        result = await client.call_tool("notes_delete", {"title": "dup"})
    assert result.is_error and "note-t1 ya no existe" in text(result)
    assert (house.notes / "sub" / "movida.md").exists()


async def test_2026_a_handle_whose_note_was_moved_out_of_the_roots_is_not_read(house, trace):
    async with sdk_client(trace=trace, mode="auto", roots=Roots(house.notes),
                          answers=Answers()) as client:
        opened = await client.call_tool("notes_open", {"note_id": "note-t1-sub"})
        handle = opened.structured_content["handle"]
        (house.notes / "sub").rename(house.outside / "llevada")  # its text path still says Notas
        read = await client.call_tool("notes_read", {"handle": handle})
    assert read.is_error and "fuera de las roots de esta petición" in text(read)
