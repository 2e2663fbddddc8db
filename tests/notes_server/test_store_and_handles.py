"""The notes on disk (atomic writes, deletes, archives) and the handles a client holds open,
which must stop working the moment their root is removed."""

import os
import threading

import pytest

import store
from client.sync_client import Client
from server import Config, NotesServer
from transports.transport import start_in_process


def test_write_replaces_the_file_in_one_step_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "n.md"
    store.write_atomic(str(target), "uno")
    store.write_atomic(str(target), "dos")
    assert target.read_text() == "dos"
    assert os.listdir(tmp_path) == ["n.md"]


def test_a_failed_write_keeps_the_old_note_intact(tmp_path, monkeypatch):
    target = tmp_path / "n.md"
    store.write_atomic(str(target), "original")

    def crash(*args, **kwargs):
        raise OSError("disco lleno")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        store.write_atomic(str(target), "a medias")
    assert target.read_text() == "original"
    assert os.listdir(tmp_path) == ["n.md"]


def test_write_refuses_to_follow_a_symlinked_target(tmp_path):
    outside = tmp_path / "fuera.md"
    outside.write_text("no tocar")
    (tmp_path / "enlace.md").symlink_to(outside)
    with pytest.raises(store.StoreError):
        store.write_atomic(str(tmp_path / "enlace.md"), "x")
    assert outside.read_text() == "no tocar"


def test_archive_moves_the_note_and_never_overwrites(tmp_path):
    from roots import RootSet
    root = tmp_path / "Notas"
    root.mkdir()
    note_path = root / "a.md"
    store.write_atomic(str(note_path), store.render("note-1", "A", "2025-01-01", "uno"))
    with RootSet.from_paths([root]) as roots:
        store.archive(roots, store.read_note(str(note_path)))
        assert not note_path.exists()
        assert (root / ".archive" / "a.md").read_text().endswith("uno")
        store.write_atomic(str(note_path), store.render("note-2", "A", "2025-01-02", "dos"))
        with pytest.raises(store.StoreError, match="ya hay"):
            store.archive(roots, store.read_note(str(note_path)))
    assert note_path.read_text().endswith("dos")
    assert (root / ".archive" / "a.md").read_text().endswith("uno")


def test_archived_and_hidden_notes_are_not_listed(tmp_path):
    from roots import RootSet
    root = tmp_path / "Notas"
    (root / ".archive").mkdir(parents=True)
    store.write_atomic(str(root / "a.md"), store.render("note-1", "A", "2025-01-01", ""))
    store.write_atomic(str(root / ".archive" / "b.md"), store.render("note-2", "B", "", ""))
    assert [n.id for n in store.scan(RootSet.from_paths([root]))] == ["note-1"]


def test_a_hand_written_note_gets_a_stable_id(tmp_path):
    path = tmp_path / "a.md"
    path.write_text("title: Hecha a mano\n\ncuerpo")
    first, second = store.read_note(str(path)), store.read_note(str(path))
    assert first.id == second.id and first.id.startswith("note-")


def test_a_title_with_a_newline_is_refused():
    with pytest.raises(store.StoreError):
        store.render("note-1", "uno\nid: note-2", "2025-01-01", "")


# -- handles through the server --------------------------------------------------------------
class Served:
    def __init__(self):
        self.server = NotesServer(Config())
        self.clients = []

    def connect(self, *roots):
        client = Client(*start_in_process(self.server), roots=[str(r) for r in roots]).connect()
        self.clients.append(client)
        return client


@pytest.fixture
def served():
    served = Served()
    yield served
    for client in served.clients:
        client.close()
    served.server.close()


def open_handle(client, note_id):
    return client.call_tool("notes_open", {"note_id": note_id})["structuredContent"]["handle"]


def read(client, handle):
    return client.call_tool("notes_read", {"handle": handle})


def test_an_open_handle_reads_its_note(tree, served):
    client = served.connect(tree.notes)
    assert read(client, open_handle(client, "note-3"))["content"][0]["text"] == \
        "cuerpo de note-3\n"


def test_without_a_solution_any_roots_change_revokes_every_handle(tree, served):
    client = served.connect(tree.notes, tree.work)
    handles = [open_handle(client, "note-3"), open_handle(client, "note-21")]
    client.set_roots([tree.notes, tree.work, tree.private])  # even a wider set
    for handle in handles:
        revoked = read(client, handle)
        assert revoked["isError"] and "las roots cambiaron" in revoked["content"][0]["text"]


def test_a_reactions_revocations_apply_with_the_new_roots_at_once(tree, served):
    client = served.connect(tree.notes, tree.work)
    kept, gone = open_handle(client, "note-3"), open_handle(client, "note-21")
    seen = []

    def revoke_note_21(change):  # a test reaction: it decides by note id, not by roots
        seen.append((len(change.old_roots), len(change.new_roots), len(change.handles)))
        for handle in change.handles:
            if handle.note_id == "note-21":
                change.revoke(handle, "revocado por la prueba")
    served.server.roots_reaction = revoke_note_21
    client.set_roots([tree.notes])
    assert not read(client, kept)["isError"]
    revoked = read(client, gone)
    assert revoked["isError"] and "revocado por la prueba" in revoked["content"][0]["text"]
    assert seen == [(2, 1, 2)]


def test_a_closed_handle_cannot_be_read(tree, served):
    client = served.connect(tree.notes)
    handle = open_handle(client, "note-3")
    assert not client.call_tool("notes_close", {"handle": handle})["isError"]
    assert read(client, handle)["isError"]


def test_a_broken_reaction_fails_closed_and_revokes_everything(tree, served):
    client = served.connect(tree.notes)
    handle = open_handle(client, "note-3")

    def broken(change):
        raise RuntimeError("bug")
    served.server.roots_reaction = broken
    client.set_roots([tree.notes])
    assert read(client, handle)["isError"]


def test_handles_of_one_client_are_invisible_to_another(tree, served):
    first, second = served.connect(tree.notes), served.connect(tree.notes)
    assert read(second, open_handle(first, "note-3"))["isError"]


def test_concurrent_calls_never_see_a_half_swapped_boundary(tree, served):
    client = served.connect(tree.notes)
    in_notes = {"note-1", "note-3", "note-7", "note-14"}
    in_work = {"note-21"}
    seen = []

    def keep_listing():
        for _ in range(30):
            notes = client.call_tool("notes_list")["structuredContent"]["notes"]
            seen.append({n["id"] for n in notes})
    workers = [threading.Thread(target=keep_listing) for _ in range(3)]
    for worker in workers:
        worker.start()
    flips = 0
    while any(worker.is_alive() for worker in workers):
        client.set_roots([tree.work] if flips % 2 == 0 else [tree.notes])
        flips += 1
    for worker in workers:
        worker.join()
    assert len(seen) == 90 and flips >= 5
    assert in_notes in seen or in_work in seen
    assert all(ids in (in_notes, in_work) for ids in seen), \
        [ids for ids in seen if ids not in (in_notes, in_work)]
