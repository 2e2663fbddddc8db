"""A handle whose note moved out of the roots stops reading, at 2025-11-25 too (issue 34).

At 2026-07-28 every request checks where the note's file is now against its own roots. At
2025-11-25 the roots stay between two changes, and a change judges the handles it keeps (the
reaction of exercise 4): a note moved out of the roots between two changes used to go on
reading, text appended after the move included. Now a file that moved since it was last
judged is checked again, through the held root folder, before anything is read.
"""

import os

import pytest

from test_session_core import Peer, call, result_of, server

SECRET = "texto añadido después de sacarla"


@pytest.fixture
def home(tmp_path):
    base = os.path.realpath(tmp_path)
    os.makedirs(f"{base}/Notas/sub")
    os.makedirs(f"{base}/Fuera")
    with open(f"{base}/Notas/sub/a.md", "w") as out:
        out.write("id: note-a\ntitle: A\n\ncuerpo de a\n")
    return base


def open_handle(peer, note_id="note-a"):
    opened = call(peer, "notes_open", {"note_id": note_id})
    return result_of(peer.take(), opened)["result"]["structuredContent"]["handle"]


def read(peer, handle):
    asked = call(peer, "notes_read", {"handle": handle})
    return result_of(peer.take(), asked)["result"]


def test_a_note_moved_out_of_the_roots_stops_reading_and_never_shows_what_came_after(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    handle = open_handle(peer)
    os.rename(f"{home}/Notas/sub/a.md", f"{home}/Fuera/a.md")
    with open(f"{home}/Fuera/a.md", "a") as out:
        out.write(SECRET)
    refused = read(peer, handle)
    assert refused["isError"] is True and SECRET not in str(refused)
    assert refused["content"][0]["text"] == (
        f"el handle {handle} ya no es válido: su nota salió de las roots (la movieron fuera o "
        "la borraron)")
    assert read(peer, handle)["isError"] is True  # for good


def test_a_note_whose_folder_moved_out_of_the_roots_stops_reading(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    handle = open_handle(peer)
    os.rename(f"{home}/Notas/sub", f"{home}/Fuera/sub")
    os.symlink(f"{home}/Fuera/sub", f"{home}/Notas/sub")  # its old path still looks inside
    assert read(peer, handle)["isError"] is True


def test_a_deleted_note_stops_reading_as_at_2026(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    handle = open_handle(peer)
    os.unlink(f"{home}/Notas/sub/a.md")
    assert read(peer, handle)["isError"] is True


def test_a_note_moved_inside_the_roots_goes_on_reading(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    handle = open_handle(peer)
    os.rename(f"{home}/Notas/sub/a.md", f"{home}/Notas/a-movida.md")
    with open(f"{home}/Notas/a-movida.md", "a") as out:
        out.write("y más")
    assert read(peer, handle)["structuredContent"]["body"] == "cuerpo de a\ny más"


def keep_every_handle(change):
    """A roots-change reaction that keeps everything (a wrong exercise 4, on purpose)."""


def test_a_handle_a_roots_change_kept_reads_as_the_reaction_decided(home):
    # exercise 4 grades the reaction on exactly this: a note moved away before the change,
    # kept alive by a wrong reaction, must still read, or no wrong reaction could be seen
    srv = server()
    srv.roots_reaction = keep_every_handle
    peer = Peer(srv).start([f"{home}/Notas", f"{home}/Fuera"])
    handle = open_handle(peer)
    os.rename(f"{home}/Notas/sub/a.md", f"{home}/a.md")  # outside every root
    peer.notify("notifications/roots/list_changed")
    [asked] = [f for f in peer.take() if f.get("method") == "roots/list"]
    peer.answer(asked["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    assert read(peer, handle)["structuredContent"]["body"] == "cuerpo de a\n"


def test_a_note_moved_out_after_a_roots_change_kept_it_stops_reading(home):
    srv = server()
    srv.roots_reaction = keep_every_handle
    peer = Peer(srv).start([f"{home}/Notas"])
    handle = open_handle(peer)
    peer.notify("notifications/roots/list_changed")
    [asked] = [f for f in peer.take() if f.get("method") == "roots/list"]
    peer.answer(asked["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    os.rename(f"{home}/Notas/sub/a.md", f"{home}/Fuera/a.md")
    assert read(peer, handle)["isError"] is True
