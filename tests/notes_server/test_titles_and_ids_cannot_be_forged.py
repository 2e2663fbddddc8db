"""A note's identity cannot be forged: a title cannot carry a line break of any kind Python's
`str.splitlines()` knows (refused on write, in both revisions), the header parser splits at
"\\n" only (a hand-written title with such a break cannot make a note list under another
note's id), and two files that claim the same id are never offered as two identical options.
"""

import pytest

import store
from client.simulated_user import ScriptedUser
from client.sync_client import Client
from roots import RootSet
from server import Config, NotesServer
from shared.protocol import REVISIONS

BREAKS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_the_breaks_refused_are_every_break_splitlines_knows():
    every = [chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2]
    assert sorted(every) == sorted(BREAKS) == sorted(store.LINE_BREAKS)


@pytest.fixture(scope="module")
def served():
    server = NotesServer(Config())
    yield server
    server.close()


def connect(server, protocol, folders, *answers):
    return Client.local(server, protocol=protocol, roots=[str(f) for f in folders],
                        user=ScriptedUser(*answers)).connect()


@pytest.mark.parametrize("protocol", REVISIONS)
@pytest.mark.parametrize("brk", BREAKS, ids=[f"U+{ord(b):04X}" for b in BREAKS])
def test_a_title_with_any_line_break_is_refused_and_nothing_is_written(tree, served, protocol,
                                                                      brk):
    before = tree.snapshot()
    client = connect(served, protocol, [tree.notes])
    result = client.call_tool("notes_write", {"uri": f"file://{tree.notes}/falsa.md",
                                              "title": f"Falsa{brk}id: note-3", "body": "x"})
    assert result["isError"] and "una sola línea" in result["content"][0]["text"]
    assert tree.snapshot() == before


@pytest.mark.parametrize("brk", BREAKS[1:], ids=[f"U+{ord(b):04X}" for b in BREAKS[1:]])
def test_a_hand_written_title_with_a_line_break_keeps_its_own_id(tmp_path, brk):
    # every break but "\n", which ends a header line in the file itself
    path = tmp_path / "a.md"
    path.write_text(f"id: note-a\ntitle: Mía{brk}id: note-b\ncreated: 2025-01-01\n\nx",
                    newline="")
    note = store.read_note(str(path))
    assert note.id == "note-a"
    assert note.title == "Mía id: note-b"  # the break shown as a space


def test_a_header_line_ending_in_a_carriage_return_is_still_read(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"id: note-a\r\ntitle: Windows\r\n\nx")
    assert (store.read_note(str(path)).id, store.read_note(str(path)).title) == \
        ("note-a", "Windows")


# -- ids are unique in a listing --------------------------------------------------------------
def two_files_with_one_id(tree):
    for name in ("uno.md", "dos.md"):
        (tree.notes / name).write_text("id: note-dup\ntitle: Doble\ncreated: 2025-01-01\n\nx")


@pytest.mark.parametrize("protocol", REVISIONS)
def test_an_id_claimed_by_two_files_is_listed_for_neither_and_explained(tree, served, protocol):
    two_files_with_one_id(tree)
    listed = connect(served, protocol, [tree.notes]).call_tool("notes_list")
    ids = [n["id"] for n in listed["structuredContent"]["notes"]]
    assert "note-dup" not in ids and ids == sorted(set(ids), key=ids.index)
    assert {"note-1", "note-3", "note-7", "note-14"} <= set(ids)
    skipped = listed["structuredContent"]["skipped"]
    assert any("el id note-dup está en 2 archivos" in reason for reason in skipped)
    assert "No listé todo" in listed["content"][0]["text"]


@pytest.mark.parametrize("protocol", REVISIONS)
def test_two_files_with_one_id_are_never_offered_as_two_options(tree, served, protocol):
    two_files_with_one_id(tree)
    (tree.notes / "tres.md").write_text("id: note-otra\ntitle: Doble\n\nx")
    user = ScriptedUser()
    client = Client.local(served, protocol=protocol, roots=[str(tree.notes)], user=user)
    result = client.connect().call_tool("notes_delete", {"title": "Doble"})
    assert user.seen == []  # one note left to match: no question with twin options
    assert result["structuredContent"]["deleted"]["id"] == "note-otra"
    assert (tree.notes / "uno.md").exists() and (tree.notes / "dos.md").exists()


def test_the_same_file_reached_through_two_overlapping_roots_is_one_note(tree):
    with RootSet.from_paths([tree.notes, tree.notes]) as roots:
        listed = store.scan(roots)
    assert sorted(n.id for n in listed) == ["note-1", "note-14", "note-3", "note-7"]


def test_a_hand_written_note_whose_derived_id_another_file_claims_is_not_listed(tmp_path):
    (tmp_path / "a.md").write_text("title: Sin id\n\nx")
    forged = store.derived_id(str(tmp_path / "a.md"))
    (tmp_path / "b.md").write_text(f"id: {forged}\ntitle: Copia\n\nx")
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        assert store.scan(roots, skipped) == []
    assert len(skipped) == 1 and forged in skipped[0]
