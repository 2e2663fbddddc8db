"""A listing says what it left out, and never passes a failure off as "no notes".

A file or folder name that is not UTF-8 is skipped and explained (never a lasting "Error
interno"); a FIFO never blocks the server; the notes a session may hold open are limited, with
a clear error, so that the descriptors a listing needs are always there (without the limit,
about 60 `notes_open` under a 64-descriptor limit made `notes_list` answer "0 nota(s)"); and a
listing that cannot be trusted (no descriptors left) is an error.
"""

import errno
import json
import os
import resource
import subprocess

import pytest

from client.simulated_user import ScriptedUser
from client.sync_client import Client
from notes import (
    dirfd,
    store,  # the module itself: these tests set its limits and state
)
from roots import RootSet
from server import Config, NotesServer
from server_support import serve_argv
from shared.protocol import REVISIONS


@pytest.fixture(scope="module")
def served():
    server = NotesServer(Config())
    yield server
    server.close()


def connect(server, protocol, *folders):
    return Client.local(server, protocol=protocol, roots=[str(f) for f in folders],
                        user=ScriptedUser()).connect()


def text(result):
    return result["content"][0]["text"]


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_name_that_is_not_utf8_is_skipped_explained_and_never_breaks_later_listings(
        tree, served, protocol):
    raw = os.fsencode(str(tree.notes)) + b"/nota-\xff.md"
    with open(raw, "wb") as handle:
        handle.write(b"id: note-raro\ntitle: Rara\n\nx")
    os.mkdir(os.fsencode(str(tree.notes)) + b"/carpeta-\xfe")
    client = connect(served, protocol, tree.notes)
    for _ in range(2):  # the second listing is as good as the first
        listed = client.call_tool("notes_list")
        assert not listed["isError"], text(listed)
        notes = listed["structuredContent"]["notes"]
        assert {n["id"] for n in notes} == {"note-1", "note-3", "note-7", "note-14"}
        skipped = listed["structuredContent"]["skipped"]
        assert sorted(skipped) == sorted(
            f"se omitió «{tree.notes}/{name}»: su nombre no es UTF-8 válido (renómbralo para "
            "verlo)" for name in ("carpeta-\ufffd", "nota-\ufffd.md"))
        json.dumps(listed, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_fifo_named_like_a_note_never_blocks_a_listing(tree, served, protocol):
    os.mkfifo(tree.notes / "tuberia.md")
    listed = connect(served, protocol, tree.notes).call_tool("notes_list")
    assert {n["id"] for n in listed["structuredContent"]["notes"]} == \
        {"note-1", "note-3", "note-7", "note-14"}


def test_folders_deeper_than_the_limit_are_skipped_and_explained(tmp_path):
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(store.MAX_DEPTH + 1)])
    deep.mkdir(parents=True)
    (deep / "honda.md").write_text("id: note-honda\ntitle: Honda\n\nx")
    (tmp_path / "d0" / "cerca.md").write_text("id: note-cerca\ntitle: Cerca\n\nx")
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        assert [n.id for n in store.scan(roots, skipped)] == ["note-cerca"]
    assert len(skipped) == 1 and f"más de {store.MAX_DEPTH} carpetas" in skipped[0]


def test_running_out_of_descriptors_is_an_error_not_an_empty_listing(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()

    def no_descriptors(self, name):
        raise OSError(errno.EMFILE, "Too many open files")
    monkeypatch.setattr(dirfd.Folder, "child", no_descriptors)
    with RootSet.from_paths([tmp_path]) as roots, \
            pytest.raises(store.StoreError, match="no puede abrir más archivos"):
        store.scan(roots)


def test_a_folder_that_cannot_be_read_is_explained(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    real = dirfd.Folder.child

    def forbidden(self, name):
        if name == "sub":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(self, name)
    monkeypatch.setattr(dirfd.Folder, "child", forbidden)
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        store.scan(roots, skipped)
    assert skipped == [f"no pude leer {tmp_path}/sub: Permission denied"]


# -- the handle limit ---------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", REVISIONS)
def test_open_handles_are_limited_with_a_clear_error(tree, served, protocol):
    client = connect(served, protocol, tree.notes)
    opened = [client.call_tool("notes_open", {"note_id": "note-3"})
              for _ in range(store.MAX_OPEN_HANDLES)]
    assert not any(result["isError"] for result in opened)
    refused = client.call_tool("notes_open", {"note_id": "note-3"})
    assert refused["isError"]
    assert f"ya tienes {store.MAX_OPEN_HANDLES} notas abiertas" in text(refused)
    assert "notes_close" in text(refused)
    first = opened[0]["structuredContent"]["handle"]
    assert not client.call_tool("notes_close", {"handle": first})["isError"]
    assert not client.call_tool("notes_open", {"note_id": "note-3"})["isError"]


def test_under_64_descriptors_listing_still_works_after_many_opens(tree):
    """The server of the issue: `serve` with RLIMIT_NOFILE 64, 80 notes_open, then a list."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "notes_open", "arguments": {"note_id": "note-3"}}}
              for i in range(1, 81)]
    lines.append({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                  "params": {"name": "notes_list", "arguments": {}}})
    out = subprocess.run(serve_argv("--root", tree.notes), preexec_fn=limit,
                         input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                         capture_output=True, timeout=60).stdout
    answers = {m["id"]: m for m in map(json.loads, out.splitlines())}
    opened = [answers[i]["result"] for i in range(1, 81)]
    assert sum(not r["isError"] for r in opened) == store.MAX_OPEN_HANDLES
    assert all("notas abiertas" in r["content"][0]["text"] for r in opened if r["isError"])
    listed = answers[99]["result"]
    assert not listed["isError"]
    assert {n["id"] for n in listed["structuredContent"]["notes"]} == \
        {"note-1", "note-3", "note-7", "note-14"}


def test_revoked_handles_are_forgotten_beyond_a_bound(tmp_path):
    (tmp_path / "a.md").write_text("id: note-1\ntitle: A\n\nx")
    handles = store.Handles()
    with RootSet.from_paths([tmp_path]) as roots:
        note = store.read_note(str(tmp_path / "a.md"))
        for _ in range(store.MAX_REVOKED_KEPT + 5):
            handles.revoke(handles.open(roots, note), "las roots cambiaron")
    with pytest.raises(store.StoreError, match="ningún handle abierto llamado 'h-1'"):
        handles.get("h-1")
    last = f"h-{store.MAX_REVOKED_KEPT + 5}"
    with pytest.raises(store.StoreError, match=f"{last} ya no es válido: las roots cambiaron"):
        handles.get(last)
    assert len(handles._open) == store.MAX_REVOKED_KEPT


def out_of_descriptors(*args, **kwargs):
    raise OSError(errno.EMFILE, "Too many open files")


def test_no_descriptor_left_to_read_a_note_is_an_error_not_a_shorter_listing(tmp_path,
                                                                           monkeypatch):
    (tmp_path / "a.md").write_text("id: note-a\ntitle: A\n\nx")
    with RootSet.from_paths([tmp_path]) as roots:
        store._parsed.clear()
        monkeypatch.setattr(dirfd.Folder, "open_file", out_of_descriptors)
        with pytest.raises(store.StoreError, match="no puede abrir más archivos"):
            store.scan(roots)


def test_no_descriptor_left_to_reach_a_chosen_note_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("id: note-a\ntitle: A\n\nx")
    with RootSet.from_paths([tmp_path]) as roots:
        note = store.scan(roots)[0]
        monkeypatch.setattr(dirfd.Folder, "child", out_of_descriptors)
        with pytest.raises(store.StoreError, match="no puede abrir más archivos"):
            store.delete(roots, note)
    assert (tmp_path / "sub" / "a.md").exists()


def test_no_descriptor_left_to_reach_the_folder_of_a_write_is_that_error(tmp_path, monkeypatch):
    # the write goes down the same walk as a chosen note (place.Place): not «no es una carpeta»
    (tmp_path / "sub").mkdir()
    with RootSet.from_paths([tmp_path]) as roots:
        monkeypatch.setattr(dirfd.Folder, "child", out_of_descriptors)
        with pytest.raises(store.StoreError, match="no puede abrir más archivos"):
            store.write_note(roots, str(tmp_path / "sub" / "n.md"), "T", "", "")
    assert os.listdir(tmp_path / "sub") == []


def test_no_descriptor_left_to_open_a_root_is_said_as_such(tmp_path, monkeypatch):
    roots = RootSet.from_paths([tmp_path])
    monkeypatch.setattr(dirfd.Folder, "open", classmethod(out_of_descriptors))
    with pytest.raises(store.StoreError, match="demasiados archivos abiertos"):
        store.scan(roots)


# -- what the mutation benchmark found untested ---------------------------------------------
def test_the_deepest_folder_a_listing_enters_is_max_depth_below_the_root(tmp_path):
    folders = [tmp_path.joinpath(*[f"d{i}" for i in range(depth)])
               for depth in (store.MAX_DEPTH, store.MAX_DEPTH + 1)]
    for folder, note_id in zip(folders, ("note-limite", "note-pasada"), strict=True):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{note_id}.md").write_text(f"id: {note_id}\ntitle: {note_id}\n\nx")
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        assert [n.id for n in store.scan(roots, skipped)] == ["note-limite"]
    assert skipped == [f"no entré en {folders[1]}: hay más de {store.MAX_DEPTH} carpetas de "
                       "profundidad"]


def test_a_skipped_folder_does_not_hide_what_comes_after_it(tmp_path, monkeypatch):
    (tmp_path / "a-prohibida").mkdir()
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / "b" / "d.md").write_text("id: note-d\ntitle: D\n\nx")
    (tmp_path / "zeta.md").write_text("id: note-zeta\ntitle: Zeta\n\nx")
    real = dirfd.Folder.child

    def forbidden(self, name):
        if name == "a-prohibida":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(self, name)
    monkeypatch.setattr(dirfd.Folder, "child", forbidden)
    monkeypatch.setattr(store, "MAX_DEPTH", 1)  # b/c is too deep, and sorts before b/d.md
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        assert [n.id for n in store.scan(roots, skipped)] == ["note-d", "note-zeta"]
    assert len(skipped) == 2


@pytest.mark.parametrize("problem, expected", [
    (PermissionError(errno.EACCES, "Permission denied"), "skipped"),
    (OSError(errno.EMFILE, "Too many open files"), "error"),
])
def test_a_folder_whose_entries_cannot_be_listed_is_explained_or_an_error(
        tmp_path, monkeypatch, problem, expected):
    (tmp_path / "sub").mkdir()
    (tmp_path / "z.md").write_text("id: note-z\ntitle: Z\n\nx")
    real = dirfd.Folder.entries

    def entries(self):
        if self.path.endswith("/sub"):
            raise problem
        return real(self)
    monkeypatch.setattr(dirfd.Folder, "entries", entries)
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        if expected == "error":
            with pytest.raises(store.StoreError, match="no puede abrir más archivos"):
                store.scan(roots, skipped)
        else:
            assert [n.id for n in store.scan(roots, skipped)] == ["note-z"]
            assert skipped == [f"no pude leer {tmp_path}/sub: Permission denied"]


def test_a_missing_root_does_not_hide_the_roots_after_it(tmp_path):
    (tmp_path / "hay").mkdir()
    (tmp_path / "hay" / "a.md").write_text("id: note-a\ntitle: A\n\nx")
    with RootSet.from_paths([tmp_path / "falta", tmp_path / "hay"]) as roots:
        assert [n.id for n in store.scan(roots)] == ["note-a"]


def test_only_md_files_are_notes(tmp_path):
    (tmp_path / "nota.txt").write_text("id: note-txt\ntitle: Texto\n\nx")
    (tmp_path / "nota.md").write_text("id: note-md\ntitle: Nota\n\nx")
    with RootSet.from_paths([tmp_path]) as roots:
        assert [n.id for n in store.scan(roots)] == ["note-md"]


def test_titles_sort_ignoring_case_as_lowercase_text(tmp_path):
    for note_id, title in (("note-1", "alfa"), ("note-2", "_guion"), ("note-3", "Beta")):
        (tmp_path / f"{note_id}.md").write_text(f"id: {note_id}\ntitle: {title}\n\nx")
    with RootSet.from_paths([tmp_path]) as roots:
        assert [n.title for n in store.scan(roots)] == ["_guion", "alfa", "Beta"]


def test_the_files_of_a_duplicated_id_are_named(tmp_path):
    for name in ("b.md", "a.md"):
        (tmp_path / name).write_text("id: note-dup\ntitle: D\n\nx")
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        store.scan(roots, skipped)
    assert skipped == [f"el id note-dup está en 2 archivos ({tmp_path}/a.md, {tmp_path}/b.md): "
                       "no listo ninguno hasta que cada nota tenga su propio id"]


def test_a_note_is_read_by_a_path_relative_to_the_working_folder(tmp_path, monkeypatch):
    (tmp_path / "a.md").write_text("id: note-a\ntitle: A\n\nx")
    monkeypatch.chdir(tmp_path)
    assert store.read_note("a.md").id == "note-a"


def test_a_md_file_that_is_no_note_is_left_out_quietly(tmp_path):
    (tmp_path / "a.md").write_text("sin cabecera: solo texto\n")
    (tmp_path / "b.md").write_text("id: note-b\ntitle: B\n\nx")
    skipped = []
    with RootSet.from_paths([tmp_path]) as roots:
        assert [n.id for n in store.scan(roots, skipped)] == ["note-b"]
    assert skipped == []
