"""store.py's actions on one chosen note, at their edges: what `as_note` accepts (a Note, or
its fields back from `ctx.memo`), what `recheck`, `delete`, `archive` and `write_note` refuse
and how they say it, and the temporary copies of writes in progress, which only this process
removes. Each refusal changes nothing.
"""

import errno
import os
import re
import threading

import pytest

from notes import (
    dirfd,
    place,
    store,  # the module itself: these tests set its limits and state
)
from roots import RootSet


@pytest.fixture
def root(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("id: note-a\ntitle: A\ncreated: 2025-01-01\n\nuno")
    return tmp_path


@pytest.fixture
def roots(root):
    with RootSet.from_paths([root]) as held:
        yield held


@pytest.fixture
def note(roots):
    return store.scan(roots)[0]


# -- a note, or its fields -------------------------------------------------------------------
def test_a_note_or_its_fields_from_a_memo_are_the_same_note(note):
    assert store.as_note(note) is note
    assert store.as_note(list(note)) == note
    assert isinstance(store.as_note(list(note)), store.Note)


@pytest.mark.parametrize("fields", [
    42, None, "note-a", ["note-a", "A"],
    ["note-a", "A", "", "/x/a.md", 1, 2, 3, 4],
    ["note-a", "A", "", 7, 1, 2, 3],          # a path that is no text
    ["note-a", "A", "", "/x/a.md", "1", 2, 3],  # a device that is no number
    ["note-a", "A", "", "/x/a.md", 1, 2, "3"],  # nor a change time
    ["note-a", "A", "", "/x/a.md", True, 2, 3],
], ids=["int", "none", "text", "short", "long", "path", "dev", "ctime", "bool"])
def test_anything_else_is_refused_as_no_note_of_the_list(fields):
    with pytest.raises(store.StoreError, match=re.escape(
            "eso no es una nota de la lista (id, título, fecha, ruta y qué archivo es)")):
        store.as_note(fields)


def test_a_memo_that_is_not_a_note_changes_nothing(root, roots):
    before = sorted(p.name for p in root.rglob("*"))
    for act in (store.recheck, store.delete, store.archive):
        with pytest.raises(store.StoreError, match="no es una nota de la lista"):
            act(roots, [str(root / "sub" / "a.md")])
    assert sorted(p.name for p in root.rglob("*")) == before


# -- recheck ---------------------------------------------------------------------------------
def test_a_relative_or_outside_path_is_outside_the_roots(roots, note, tmp_path):
    for path in ("sub/a.md", str(tmp_path.parent / "otra" / "a.md"), str(tmp_path)):
        with pytest.raises(store.StoreError, match=re.escape(
                f"la nota {note.id} quedó fuera de las roots")):
            store.recheck(roots, note._replace(path=path))


def test_a_note_given_another_id_is_not_the_note_that_was_listed(roots, note):
    with pytest.raises(store.StoreError, match=re.escape(
            "la nota note-x cambió: ya no es la que se listó")):
        store.recheck(roots, note._replace(id="note-x"))


def test_a_file_that_no_longer_reads_as_a_note_is_refused(roots, note, monkeypatch):
    monkeypatch.setattr(place, "note_in", lambda *args: None)
    with pytest.raises(store.StoreError, match="cambió: ya no es la que se listó"):
        store.recheck(roots, note)


def test_a_note_that_cannot_be_looked_at_says_why(roots, note, monkeypatch):
    def forbidden(self, name):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(dirfd.Folder, "lstat", forbidden)
    with pytest.raises(store.StoreError, match=re.escape(
            "no pude comprobar la nota note-a: Permission denied")):
        store.recheck(roots, note)


# -- delete and archive -----------------------------------------------------------------------
def test_a_note_gone_just_before_the_unlink_says_so(roots, note, monkeypatch):
    def gone(self, name):
        raise FileNotFoundError(errno.ENOENT, "No such file")
    monkeypatch.setattr(dirfd.Folder, "unlink", gone)
    with pytest.raises(store.StoreError, match=re.escape("la nota note-a ya no existe")):
        store.delete(roots, note)


@pytest.mark.parametrize("planted", ["link", "file"])
def test_an_archive_folder_that_is_a_link_or_a_file_is_never_used(root, roots, note, tmp_path,
                                                                  planted):
    outside = tmp_path.parent / f"{tmp_path.name}-fuera"
    outside.mkdir()
    if planted == "link":
        (root / store.ARCHIVE_DIR).symlink_to(outside)
    else:
        (root / store.ARCHIVE_DIR).write_text("no soy una carpeta")
    with pytest.raises(store.StoreError, match=re.escape(
            ".archive no es una carpeta normal (¿un enlace?); no la uso")):
        store.archive(roots, note)
    assert os.listdir(outside) == [] and (root / "sub" / "a.md").exists()


# -- write_note ----------------------------------------------------------------------------------
def test_a_write_outside_the_roots_is_refused(roots, tmp_path):
    outside = str(tmp_path.parent / "fuera.md")
    with pytest.raises(store.StoreError, match=re.escape(f"{outside} está fuera de las roots")):
        store.write_note(roots, outside, "T", "", "")


def test_a_write_over_the_root_itself_is_refused(roots, root):
    with pytest.raises(store.StoreError, match="esa ruta no nombra un archivo dentro de la root"):
        store.write_note(roots, str(root), "T", "", "")


def test_a_write_into_a_missing_folder_names_it(roots, root):
    with pytest.raises(store.StoreError, match=re.escape(
            f"la carpeta {root}/falta/otra no existe")):
        store.write_note(roots, str(root / "falta" / "otra" / "n.md"), "T", "", "")


def test_a_write_through_a_folder_that_is_a_link_names_that_folder(roots, root):
    (root / "sub").rename(root / "sub-movida")
    (root / "sub").symlink_to(root / "sub-movida")
    with pytest.raises(store.StoreError, match=re.escape(
            "sub no es una carpeta normal (¿un enlace?)")):
        store.write_note(roots, str(root / "sub" / "n.md"), "T", "", "")
    assert os.listdir(root / "sub-movida") == ["a.md"]


def test_a_listed_note_whose_folder_became_a_link_names_that_folder(roots, root, note):
    (root / "sub").rename(root / "sub-movida")
    (root / "sub").symlink_to(root / "sub-movida")
    with pytest.raises(store.StoreError, match=re.escape(
            "la carpeta sub de la nota note-a ya no es una carpeta normal")):
        store.recheck(roots, note)


def test_a_written_note_holds_its_header_then_its_body(roots, root):
    written = store.write_note(roots, str(root / "n.md"), "T", "2025-03-02", "cuerpo\n")
    assert (root / "n.md").read_text() == (
        f"id: {written.id}\ntitle: T\ncreated: 2025-03-02\n\ncuerpo\n")


def test_a_write_under_a_replaced_root_names_the_root(roots, root, tmp_path):
    root.rename(tmp_path.parent / f"{tmp_path.name}-movida")
    root.mkdir()
    with pytest.raises(store.StoreError, match=re.escape(
            f"la carpeta compartida file://{root} ya no es la que aceptaste")):
        store.write_note(roots, str(root / "n.md"), "T", "", "")
    assert os.listdir(root) == []


def test_rewriting_a_note_keeps_its_id_even_a_derived_one(roots, root):
    rewritten = store.write_note(roots, str(root / "sub" / "a.md"), "A2", "2025-02-02", "dos")
    assert rewritten.id == "note-a"
    (root / "mano.md").write_text("title: Hecha a mano\n\nx")
    derived = store.derived_id(str(root / "mano.md"))
    assert store.write_note(roots, str(root / "mano.md"), "Mano", "", "y").id == derived
    assert (root / "mano.md").read_text().startswith(f"id: {derived}\n")
    assert store.write_note(roots, str(root / "nueva.md"), "N", "", "").id != derived


def test_a_target_that_cannot_be_looked_at_or_written_says_why(roots, root, monkeypatch):
    def forbidden(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")
    with monkeypatch.context() as patch:  # neither a named copy nor naming an unnamed one
        patch.setattr(dirfd.Folder, "create_new", forbidden)
        patch.setattr(dirfd.Folder, "name_file", forbidden)
        with pytest.raises(store.StoreError, match=re.escape(
                "no pude escribir en la carpeta: Permission denied")):
            store.write_note(roots, str(root / "n.md"), "T", "", "")
    real = dirfd.Folder.lstat

    def unreadable(self, name):
        if name == "n.md":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(self, name)
    monkeypatch.setattr(dirfd.Folder, "lstat", unreadable)
    with pytest.raises(store.StoreError, match=re.escape(
            "no pude mirar el destino: Permission denied")):
        store.write_note(roots, str(root / "n.md"), "T", "", "")
    assert not (root / "n.md").exists()


# -- temporary copies ------------------------------------------------------------------------
def test_a_finished_write_leaves_nothing_to_remove(root, roots):
    store.write_note(roots, str(root / "n.md"), "T", "", "")
    with pytest.raises(store.StoreError):
        store.write_note(roots, str(root / "falta" / "n.md"), "T", "", "")
    assert store._temporaries == set()


def test_a_temporary_copy_is_named_by_this_server_only(root, roots, monkeypatch):
    seen = []
    real_create, real_name = dirfd.Folder.create_new, dirfd.Folder.name_file
    monkeypatch.setattr(dirfd.Folder, "create_new",
                        lambda self, name: seen.append(name) or real_create(self, name))
    monkeypatch.setattr(dirfd.Folder, "name_file",
                        lambda self, fd, name: seen.append(name) or real_name(self, fd, name))
    store.write_note(roots, str(root / "n.md"), "T", "", "")
    assert len(seen) == 1
    assert re.fullmatch(re.escape(store.TEMP_PREFIX) + r"[0-9a-f]{16}\.md", seen[0])


def test_stopping_removes_the_copy_of_a_write_running_elsewhere(root, roots, monkeypatch):
    """Another thread's write is in its fsync when the server stops: its copy is removed (or
    never named), the write fails, and the note it was replacing is as it was."""
    monkeypatch.setattr(store, "_stopped", False)  # the stop ends with this test
    writing, release = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def slow_fsync(fd):
        writing.set()
        release.wait(10)
        real_fsync(fd)
    monkeypatch.setattr(os, "fsync", slow_fsync)
    failed = []

    def write():
        try:
            store.write_note(roots, str(root / "sub" / "a.md"), "Nueva", "", "x")
        except (OSError, store.StoreError) as exc:
            failed.append(exc)
    worker = threading.Thread(target=write)
    worker.start()
    assert writing.wait(10)
    store.stop_writes()
    assert os.listdir(root / "sub") == ["a.md"]
    release.set()
    worker.join(10)
    assert failed and os.listdir(root / "sub") == ["a.md"]
    assert (root / "sub" / "a.md").read_text().endswith("uno")
    assert store._temporaries == set()
