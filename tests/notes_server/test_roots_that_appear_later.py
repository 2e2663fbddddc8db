"""A shared folder that does not exist yet cannot be redirected when it appears (issue 34).

The client shares `zone/late/Notas` while `zone/late` does not exist (at 2025-11-25 the
server's --root is `zone`). Later someone turns `zone/late` into a link to a folder outside
every root. The server must not list, read or delete what is there, at 2025-11-25 (the roots
accepted once) and at 2026-07-28 (the roots asked again on every request). The same-folder
check before each use also sees a link put above a root that existed, not only at the root.
"""

import os

import pytest

from test_session_core import ENVELOPE, PICK_2024, Peer, call, questions, result_of, server

SECRET = "id: note-66\ntitle: TPS report\ncreated: 2024-01-01\n\nsecreto\n"
REPLACED = "ya no es la que aceptaste"


@pytest.fixture
def zone(tmp_path):
    """zone/ (the server's --root, holding one ordinary note), and fuera/Notas/ outside it
    with a note the user never shared."""
    base = os.path.realpath(tmp_path)
    os.makedirs(f"{base}/zone")
    os.makedirs(f"{base}/fuera/Notas")
    with open(f"{base}/fuera/Notas/secreta.md", "w") as out:
        out.write(SECRET)
    return base


def late(zone):
    return f"{zone}/zone/late/Notas"


def link_late_to_outside(zone):
    os.symlink(f"{zone}/fuera", f"{zone}/zone/late")


def untouched(zone):
    with open(f"{zone}/fuera/Notas/secreta.md") as note:
        return note.read() == SECRET


def outcome(peer, msg_id):
    return result_of(peer.take(), msg_id)["result"]


def test_at_2025_a_late_root_redirected_by_a_link_lists_and_deletes_nothing(zone):
    peer = Peer(server(roots=[f"{zone}/zone"])).start([late(zone)])
    first = call(peer, "notes_list")
    assert outcome(peer, first)["structuredContent"]["notes"] == []
    link_late_to_outside(zone)
    listing = call(peer, "notes_list")
    refused = outcome(peer, listing)
    assert refused["isError"] and REPLACED in refused["content"][0]["text"]
    assert "note-66" not in str(refused)
    delete = call(peer, "notes_delete", {"title": "TPS report"})
    frames = peer.take()
    assert questions(frames) == [] and result_of(frames, delete)["result"]["isError"]
    opened = call(peer, "notes_open", {"note_id": "note-66"})
    assert outcome(peer, opened)["isError"]
    assert untouched(zone)


def test_at_2026_a_late_root_redirected_by_a_link_lists_and_deletes_nothing(zone):
    # without --root: the URI is resolved again on every request, and only the session's
    # memory of what it resolved to the first time can tell (with --root, the new real path
    # falls outside it and nothing overlaps)
    peer = Peer(server())
    answer = {"roots": {"roots": [{"uri": f"file://{late(zone)}"}]}}

    def run(name, arguments, answers=()):
        asked = call(peer, name, arguments, meta=ENVELOPE)
        result = outcome(peer, asked)
        for extra in (answer, *answers):
            if result.get("resultType") != "input_required":
                break
            asked = peer.request("tools/call", {
                "name": name, "arguments": arguments, "_meta": ENVELOPE,
                "requestState": result["requestState"], "inputResponses": extra})
            result = outcome(peer, asked)
        return result

    assert run("notes_list", {})["structuredContent"]["notes"] == []
    link_late_to_outside(zone)
    refused = run("notes_list", {})
    assert refused["isError"] and REPLACED in refused["content"][0]["text"]
    assert "note-66" not in str(refused)
    deleted = run("notes_delete", {"title": "TPS report"}, [{"ask-1": PICK_2024}])
    assert deleted["isError"] and "note-66" not in str(deleted)
    assert untouched(zone)


def test_the_refusal_of_a_redirected_late_root_names_that_root(zone):
    peer = Peer(server(roots=[f"{zone}/zone"])).start([late(zone)])
    link_late_to_outside(zone)
    refused = outcome(peer, call(peer, "notes_list"))
    assert refused["isError"]
    assert f"la carpeta compartida file://{late(zone)} {REPLACED}" in refused["content"][0]["text"]


def test_a_root_reached_through_a_link_put_above_it_later_is_refused(zone):
    os.makedirs(f"{zone}/zone/a/Notas")
    peer = Peer(server()).start([f"{zone}/zone/a/Notas"])
    first = call(peer, "notes_list")
    assert outcome(peer, first)["isError"] is False
    os.rename(f"{zone}/zone/a", f"{zone}/zone/a-antes")
    os.symlink(f"{zone}/zone/a-antes", f"{zone}/zone/a")  # the same folder, through a link
    listing = call(peer, "notes_list")
    refused = outcome(peer, listing)
    assert refused["isError"] and REPLACED in refused["content"][0]["text"]


def test_a_late_root_that_appears_as_a_real_folder_is_used(zone):
    peer = Peer(server(roots=[f"{zone}/zone"])).start([late(zone)])
    os.makedirs(late(zone))
    with open(f"{late(zone)}/nueva.md", "w") as out:
        out.write("id: note-5\ntitle: Nueva\n\ncuerpo\n")
    listing = call(peer, "notes_list")
    notes = outcome(peer, listing)["structuredContent"]["notes"]
    assert [n["id"] for n in notes] == ["note-5"]


def test_a_root_below_a_file_is_missing_not_refused(zone):
    with open(f"{zone}/zone/late", "w") as out:  # a file where a folder would go
        out.write("x")
    peer = Peer(server(roots=[f"{zone}/zone"])).start([late(zone)])
    listed = outcome(peer, call(peer, "notes_list"))
    assert listed["isError"] is False and listed["structuredContent"]["skipped"] == [
        f"la carpeta compartida file://{late(zone)} no existe o no es una carpeta"]
