"""The root folders are opened when the roots are accepted and closed when they are replaced
(2025-11-25: a roots change; 2026-07-28: at the end of each request) or the session ends: no
descriptor leaks, however many calls and roots changes. A RootSet refuses to act once closed,
and a session remembers which folder each root URI named, so the same URI answered again later
cannot quietly name another folder.
"""

import os
import re

import pytest

import store
from client.simulated_user import ScriptedUser
from client.sync_client import Client
from roots import MAX_PINS, RootError, RootSet
from server import Config, NotesServer
from shared.protocol import REVISIONS

PICK_7 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


def open_descriptors(where):
    """Descriptors of this process open on something under `where` (the test's tree): other
    tests' objects closing theirs meanwhile do not count."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        count += target == str(where) or target.startswith(f"{where}/")
    return count


pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                                reason="counting descriptors needs /proc/self/fd")


@pytest.mark.parametrize("protocol", REVISIONS)
def test_many_calls_and_roots_changes_leave_no_descriptor_open(tree, protocol):
    server = NotesServer(Config())
    (tree.notes / "sub" / "hondo").mkdir(parents=True)
    (tree.notes / "sub" / "hondo" / "n.md").write_text("id: note-hondo\ntitle: Honda\n\nx")

    def session():
        user = ScriptedUser(*[{"action": "decline"}] * 30)
        client = Client.local(server, protocol=protocol, roots=[str(tree.notes)], user=user)
        client.connect()
        for round_ in range(10):
            client.set_roots([tree.notes, tree.work] if round_ % 2 else [tree.notes])
            client.call_tool("notes_list")
            handle = client.call_tool("notes_open", {"note_id": "note-hondo"})
            client.call_tool("notes_read", {"handle": handle["structuredContent"]["handle"]})
            client.call_tool("notes_close", {"handle": handle["structuredContent"]["handle"]})
            client.call_tool("notes_delete", {"title": "TPS report"})  # declined
            client.call_tool("notes_write", {"uri": f"file://{tree.notes}/w.md",
                                             "title": "W", "body": str(round_)})
        client.close()

    session()  # the first session fills caches and imports
    before = open_descriptors(tree.notes.parent)
    for _ in range(3):
        session()
    assert open_descriptors(tree.notes.parent) == before
    server.close()


def test_a_roots_change_closes_the_folders_of_the_roots_it_replaces(tree):
    server = NotesServer(Config())
    client = Client.local(server, roots=[str(tree.notes)], user=ScriptedUser()).connect()
    client.call_tool("notes_list")
    before = open_descriptors(tree.notes.parent)
    client.set_roots([tree.notes, tree.work, tree.private])
    client.call_tool("notes_list")
    assert open_descriptors(tree.notes.parent) == before + 2  # three roots held instead of one
    client.set_roots([tree.work])
    client.call_tool("notes_list")
    assert open_descriptors(tree.notes.parent) == before
    client.close()
    assert open_descriptors(tree.notes.parent) == before - 1  # the session's last root folder too
    server.close()


def test_a_2026_request_holds_its_roots_only_while_it_runs(tree):
    server = NotesServer(Config())
    client = Client.local(server, protocol="2026-07-28", roots=[str(tree.notes)],
                          user=ScriptedUser(PICK_7)).connect()
    client.call_tool("notes_list")
    before = open_descriptors(tree.notes.parent)
    client.call_tool("notes_delete", {"title": "TPS report"})  # three rounds
    assert open_descriptors(tree.notes.parent) == before
    assert not (tree.notes / "tps-2024.md").exists()
    client.close()
    server.close()


def test_a_closed_root_set_refuses_to_act(tree):
    roots = RootSet.from_paths([tree.notes]).open()
    note = store.scan(roots)[0]
    roots.close()
    with pytest.raises(store.StoreError, match="ya no están en vigor"):
        store.scan(roots)
    with pytest.raises(store.StoreError, match="ya no están en vigor"):
        store.delete(roots, note)
    assert os.path.exists(note.path)


def test_a_uri_pinned_to_one_folder_is_refused_when_it_names_another(tree):
    pins = {}
    RootSet.from_paths([tree.notes]).open(pins).close()
    st = os.stat(tree.notes)
    assert pins == {str(tree.notes): [str(tree.notes), st.st_dev, st.st_ino]}  # JSON: kept
    tree.notes.rename(tree.base / "Notas-vieja")
    tree.notes.mkdir()  # a new folder under the same name
    again = RootSet.from_paths([tree.notes]).open(pins)
    with pytest.raises(RootError, match=re.escape(
            f"la carpeta compartida file://{tree.notes} ya no es la que aceptaste")):
        again.folder(again.roots[0])
    assert again.refusals() and pins == {str(tree.notes): [str(tree.notes), st.st_dev, st.st_ino]}
    again.close()


def test_a_session_forgets_the_least_recently_accepted_pins_beyond_its_bound(tmp_path):
    pins = {}
    for i in range(MAX_PINS + 1):
        (tmp_path / f"r{i}").mkdir()
        RootSet.from_paths([tmp_path / f"r{i}"]).open(pins).close()
        if i == MAX_PINS - 1:  # full: r0 accepted again becomes the newest
            RootSet.from_paths([tmp_path / "r0"]).open(pins).close()
    assert len(pins) == MAX_PINS
    assert str(tmp_path / "r1") not in pins
    assert str(tmp_path / "r0") in pins and str(tmp_path / f"r{MAX_PINS}") in pins


def test_a_folder_missing_when_accepted_then_put_back_as_another_is_refused(tree):
    pins = {}
    RootSet.from_paths([tree.notes]).open(pins).close()
    tree.notes.rename(tree.base / "Notas-vieja")
    again = RootSet.from_paths([tree.notes]).open(pins)  # nothing there now
    tree.notes.mkdir()  # later, another folder under that name
    with pytest.raises(store.StoreError, match=re.escape(
            f"la carpeta compartida file://{tree.notes} ya no es la que aceptaste")):
        store.scan(again)
    again.close()


def test_a_root_missing_when_accepted_is_opened_once_it_exists(tmp_path):
    later = tmp_path / "luego"
    roots = RootSet.from_paths([later]).open()
    skipped = []
    assert store.scan(roots, skipped) == []
    assert skipped == [f"la carpeta compartida file://{later} no existe o no es una carpeta"]
    later.mkdir()
    (later / "a.md").write_text("id: note-a\ntitle: A\n\nx")
    assert [n.id for n in store.scan(roots)] == ["note-a"]
    roots.close()


def test_a_session_remembers_what_a_root_uri_named_across_2026_requests(tree):
    server = NotesServer(Config())
    client = Client.local(server, protocol="2026-07-28", roots=[str(tree.notes)],
                          user=ScriptedUser()).connect()
    assert not client.call_tool("notes_list")["isError"]
    tree.notes.rename(tree.base / "Notas-vieja")
    tree.notes.symlink_to(tree.private)  # the same URI now names Notas-privadas/
    refused = client.call_tool("notes_list")
    assert refused["isError"] and "ya no es la que aceptaste" in refused["content"][0]["text"]
    assert "note-99" not in str(refused)
    client.close()
    server.close()
