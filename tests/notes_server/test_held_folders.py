"""dirfd.Folder, as store.py uses it: a folder held open, reached and acted on one name at a
time, never through a link; the same behaviour in the fallback for platforms without `dir_fd`
(Windows), where a folder moved or replaced is still refused. And where an open handle's file
really is now (`Handle.current_path`), asked through its descriptor.
"""

import os

import pytest

import dirfd
import store
from roots import RootSet


@pytest.fixture(params=["dir_fd", "fallback"])
def mode(request, monkeypatch):
    if request.param == "fallback":
        monkeypatch.setattr(dirfd, "HAVE_DIR_FD", False)
    elif not dirfd.HAVE_DIR_FD:
        pytest.skip("this platform has no dir_fd")
    return request.param


def make(folder, name, note_id, title="Nota"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"id: {note_id}\ntitle: {title}\ncreated: 2025-01-01\n\nx")


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "Notas"
    make(root, "a.md", "note-a")
    make(root / "sub", "b.md", "note-b")
    (tmp_path / "Fuera").mkdir()
    make(tmp_path / "Fuera", "b.md", "note-b", title="FUERA")
    return root


def test_every_operation_works_the_same_in_both_modes(root, mode):
    with RootSet.from_paths([root]) as roots:
        notes = {n.id: n for n in store.scan(roots)}
        assert sorted(notes) == ["note-a", "note-b"]
        assert store.recheck(roots, notes["note-a"]).title == "Nota"
        written = store.write_note(roots, str(root / "sub" / "c.md"), "C", "2025-01-02", "c")
        assert store.recheck(roots, written).id == written.id
        assert store.archive(roots, notes["note-b"]) == str(root / ".archive" / "b.md")
        store.delete(roots, notes["note-a"])
    assert sorted(p.name for p in root.rglob("*.md")) == ["b.md", "c.md"]


def test_a_subfolder_swapped_for_a_link_is_refused_in_both_modes(root, mode):
    with RootSet.from_paths([root]) as roots:
        note = next(n for n in store.scan(roots) if n.id == "note-b")
        (root / "sub").rename(root / "sub-movida")
        (root / "sub").symlink_to(root.parent / "Fuera")
        with pytest.raises(store.StoreError, match="ya no es una carpeta normal"):
            store.delete(roots, note)
        with pytest.raises(store.StoreError, match="ya no es una carpeta normal|enlace"):
            store.write_note(roots, str(root / "sub" / "nueva.md"), "N", "", "")
    assert (root.parent / "Fuera" / "b.md").exists()
    assert not (root.parent / "Fuera" / "nueva.md").exists()


def test_a_root_swapped_for_a_link_is_refused_in_both_modes(root, mode):
    with RootSet.from_paths([root]) as roots:
        note = next(n for n in store.scan(roots) if n.id == "note-a")
        root.rename(root.parent / "Notas-movida")
        root.symlink_to(root.parent / "Fuera")
        for act in (store.scan, lambda r: store.delete(r, note),
                    lambda r: store.archive(r, note)):
            with pytest.raises(store.StoreError, match="ya no es la que aceptaste"):
                act(roots)
    assert sorted(os.listdir(root.parent / "Fuera")) == ["b.md"]


def test_a_link_is_never_opened_as_a_folder_or_a_file(root, mode):
    (root / "enlace").symlink_to(root / "sub")
    (root / "enlace.md").symlink_to(root / "a.md")
    with dirfd.Folder.open(str(root)) as folder:
        kinds = dict(folder.entries())
        assert (kinds["enlace"], kinds["enlace.md"], kinds["sub"], kinds["a.md"]) == \
            ("link", "link", "dir", "file")
        with pytest.raises(OSError):
            folder.child("enlace")
        with pytest.raises(OSError):
            folder.open_file("enlace.md")


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\x00b", None])
def test_a_name_is_one_component_inside_the_folder(tmp_path, name):
    with dirfd.Folder.open(str(tmp_path)) as folder, pytest.raises(ValueError):
        folder.lstat(name)


def test_a_closed_folder_refuses_everything(tmp_path):
    folder = dirfd.Folder.open(str(tmp_path))
    folder.close()
    folder.close()  # twice is harmless
    assert not folder.same_as(str(tmp_path))
    with pytest.raises(OSError):
        folder.entries()


# -- where an open handle's file is now ---------------------------------------------------------
@pytest.fixture
def opened(root):
    with RootSet.from_paths([root]) as roots:
        handles = store.Handles()
        note = next(n for n in store.scan(roots) if n.id == "note-b")
        yield handles, handles.open(roots, note)


def test_a_handle_knows_where_its_file_went_after_its_folder_moved(root, opened):
    handles, handle = opened
    assert handle.current_path() == str(root / "sub" / "b.md")
    (root / "sub").rename(root.parent / "Fuera" / "llevada")
    assert handle.path == str(root / "sub" / "b.md")  # the text is stale
    assert handle.current_path() == str(root.parent / "Fuera" / "llevada" / "b.md")


def test_a_handle_whose_file_was_deleted_or_that_was_revoked_is_nowhere(root, opened):
    handles, handle = opened
    os.unlink(root / "sub" / "b.md")
    assert handle.current_path() is None
    handles.revoke(handle, "prueba")
    assert handle.current_path() is None


def test_without_kernel_help_the_opening_path_counts_only_if_it_is_the_same_file(
        root, opened, monkeypatch):
    handles, handle = opened
    monkeypatch.setattr(store, "_kernel_paths", lambda fd: iter(()))
    assert handle.current_path() == str(root / "sub" / "b.md")
    (root / "sub" / "b.md").rename(root / "sub" / "otra.md")
    make(root / "sub", "b.md", "note-b", title="Impostora")
    assert handle.current_path() is None
