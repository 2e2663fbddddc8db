"""dirfd.Folder, as store.py uses it: a folder held open, reached and acted on one name at a
time, never through a link; the same behaviour in the fallback for platforms without `dir_fd`
(Windows), where a folder moved or replaced is still refused. And where an open handle's file
really is now (`Handle.current_path`), asked through its descriptor.
"""

import errno
import os
import re
import stat
import sys
from types import SimpleNamespace

import pytest

import store
from notes import dirfd
from notes.handles import _kernel_paths
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
    with dirfd.Folder.open(str(tmp_path)) as folder, \
            pytest.raises(ValueError, match="not a single path component"):
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
    monkeypatch.setattr("notes.handles._kernel_paths", lambda fd: iter(()))
    assert handle.current_path() == str(root / "sub" / "b.md")
    (root / "sub" / "b.md").rename(root / "sub" / "otra.md")
    make(root / "sub", "b.md", "note-b", title="Impostora")
    assert handle.current_path() is None


def test_a_kernel_answer_that_goes_through_a_link_is_where_the_link_leads(
        root, opened, monkeypatch):
    # Pyodide's /proc/self/fd repeats the opening path: after the folder moved and a link took
    # its name, that text still reaches the same file, but the file is where the link leads
    handles, handle = opened
    (root / "sub").rename(root.parent / "Fuera" / "llevada")
    (root / "sub").symlink_to(root.parent / "Fuera" / "llevada")
    monkeypatch.setattr("notes.handles._kernel_paths", lambda fd: iter([handle.path]))
    assert handle.current_path() == str(root.parent / "Fuera" / "llevada" / "b.md")


def test_in_pyodide_emscripten_s_file_system_is_asked_first_where_a_file_is(opened,
                                                                           monkeypatch):
    _, handle = opened
    fs = SimpleNamespace(getStream=lambda fd: SimpleNamespace(node=fd),
                         getPath=lambda node: f"/home/pyodide/nodo-{node}.md")
    monkeypatch.setitem(sys.modules, "pyodide_js", SimpleNamespace(FS=fs))
    assert next(_kernel_paths(handle.fd)) == f"/home/pyodide/nodo-{handle.fd}.md"


def test_a_read_cut_inside_a_character_ends_before_that_character(root):
    header = "id: note-c\ntitle: Larga\ncreated: 2025-01-01\n\n"
    body = "x" * (store.MAX_READ_BYTES - len(header) - 1) + "ñ" + "y" * 10  # ñ is 2 bytes
    (root / "larga.md").write_text(header + body)
    with RootSet.from_paths([root]) as roots:
        handles = store.Handles()
        handle = handles.open(roots, next(n for n in store.scan(roots) if n.id == "note-c"))
        shown, size = handles.read_part(handle.id)
    assert (shown, size) == (body[:body.index("ñ")], len((header + body).encode()))


# -- what the mutation benchmark found untested ---------------------------------------------
needs_dir_fd = pytest.mark.skipif(not dirfd.HAVE_DIR_FD, reason="this platform has no dir_fd")


@needs_dir_fd
def test_a_held_folder_is_listed_and_acted_on_through_its_descriptor_after_a_rename(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.md").write_text("x")
    with dirfd.Folder.open(str(tmp_path / "a")) as a, \
            dirfd.Folder.open(str(tmp_path / "b")) as b:
        (tmp_path / "a").rename(tmp_path / "a-movida")
        assert a.entries() == [("x.md", "file")]
        a.rename("x.md", b, "y.md")
        assert not a.same_as(str(tmp_path / "a"))
    assert os.listdir(tmp_path / "b") == ["y.md"]


def test_a_folder_knows_the_path_it_was_opened_at_and_a_child_its_own(tmp_path, mode):
    (tmp_path / "sub").mkdir()
    with dirfd.Folder.open(str(tmp_path)) as folder, folder.child("sub") as child:
        assert (folder.path, child.path) == (str(tmp_path), str(tmp_path / "sub"))
        assert child.same_as(str(tmp_path / "sub"))


def test_a_path_with_nothing_there_is_not_the_held_folder(tmp_path):
    (tmp_path / "a").mkdir()
    with dirfd.Folder.open(str(tmp_path / "a")) as folder:
        (tmp_path / "a").rename(tmp_path / "b")
        assert not folder.same_as(str(tmp_path / "a"))
        assert folder.same_as(str(tmp_path / "b"))


def test_a_root_renamed_away_with_nothing_in_its_place_is_refused(root, mode):
    with RootSet.from_paths([root]) as roots:
        root.rename(root.parent / "Notas-movida")
        with pytest.raises(store.StoreError, match="ya no es la que aceptaste"):
            store.scan(roots)


def test_a_closed_folder_says_which_folder_and_why(tmp_path):
    folder = dirfd.Folder.open(str(tmp_path))
    folder.close()
    with pytest.raises(FileNotFoundError) as refused:
        folder.entries()
    assert (refused.value.errno, refused.value.strerror, refused.value.filename) == \
        (errno.ENOENT, "la carpeta ya no está donde estaba", str(tmp_path))


def test_nothing_is_moved_into_a_closed_folder(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.md").write_text("x")
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path)
    with dirfd.Folder.open(str(tmp_path / "a")) as a:
        b = dirfd.Folder.open(str(tmp_path / "b"))
        b.close()
        with pytest.raises(OSError):
            a.rename("x.md", b, "y.md")
    assert sorted(os.listdir(tmp_path)) == ["a", "b"] and os.listdir(tmp_path / "a") == ["x.md"]


def test_a_fifo_is_neither_a_folder_nor_a_file_and_never_blocks(tmp_path, mode):
    os.mkfifo(tmp_path / "tubo")
    with dirfd.Folder.open(str(tmp_path)) as folder:
        assert folder.entries() == [("tubo", "other")]
        with pytest.raises(OSError):
            folder.child("tubo")
        with pytest.raises(OSError):
            folder.open_file("tubo")


def test_the_kernel_is_asked_first_and_a_stale_answer_is_passed_over(root, opened, monkeypatch):
    handles, handle = opened
    (root / "sub" / "b.md").rename(root / "sub" / "nueva.md")
    stale, now = str(root / "no-existe.md"), str(root / "sub" / "nueva.md")
    monkeypatch.setattr("notes.handles._kernel_paths", lambda fd: iter([stale, now]))
    assert handle.current_path() == str(root / "sub" / "nueva.md")


def test_macos_f_getpath_is_read_up_to_its_first_nul(root, opened, monkeypatch):
    import fcntl

    handles, handle = opened
    os.link(root / "sub" / "b.md", root / "sub" / "enlazadaX")  # the same file, another name
    answer = os.fsencode(str(root / "sub" / "enlazadaX"))

    def f_getpath(fd, command, buffer):
        assert (fd, command, buffer) == (handle.fd, 50, bytes(1024))
        return answer + b"\0" * (1024 - len(answer))
    monkeypatch.setattr(os, "readlink", lambda path: (_ for _ in ()).throw(OSError(2, "no")))
    monkeypatch.setattr(fcntl, "F_GETPATH", 50, raising=False)
    monkeypatch.setattr(fcntl, "fcntl", f_getpath)
    assert handle.current_path() == str(root / "sub" / "enlazadaX")


def test_a_handle_is_not_opened_when_its_file_cannot_be_opened_or_changed_meanwhile(
        root, monkeypatch):
    (root / "otra.md").write_text("id: note-otra\ntitle: Otra\n\nx")
    with RootSet.from_paths([root]) as roots:
        note = next(n for n in store.scan(roots) if n.id == "note-b")
        handles = store.Handles()
        real = dirfd.Folder.open_file
        calls = []

        def refused_the_second_time(self, name):  # the first open is the re-check's read
            calls.append(name)
            if len(calls) == 1:
                return real(self, name)
            raise PermissionError(errno.EACCES, "Permission denied")
        with monkeypatch.context() as patch:
            patch.setattr(dirfd.Folder, "open_file", refused_the_second_time)
            with pytest.raises(store.StoreError, match=re.escape(
                    "no pude abrir la nota note-b: Permission denied")):
                handles.open(roots, note)
        before = len(os.listdir("/proc/self/fd"))
        calls.clear()

        def another_file(self, name):  # the name now holds another file, just as it opens
            calls.append(name)
            return real(self, name) if len(calls) == 1 else os.open(root / "otra.md", os.O_RDONLY)
        monkeypatch.setattr(dirfd.Folder, "open_file", another_file)
        with pytest.raises(store.StoreError, match=re.escape(
                "la nota note-b cambió mientras la abría")):
            handles.open(roots, note)
        assert len(os.listdir("/proc/self/fd")) == before  # the other file's descriptor closed
        assert handles.live() == []


@pytest.mark.parametrize("what", ["link", "file", "fifo"])
def test_only_a_real_folder_opens_as_a_folder_and_nothing_blocks(tmp_path, mode, what):
    target = tmp_path / what
    if what == "link":
        (tmp_path / "carpeta").mkdir()
        target.symlink_to(tmp_path / "carpeta")
    elif what == "file":
        target.write_text("x")
    else:
        os.mkfifo(target)
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError):
        dirfd.Folder.open(str(target))
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("platform", ["no O_DIRECTORY", "fallback"])
def test_a_file_refused_as_a_folder_says_so_and_keeps_no_descriptor(tmp_path, monkeypatch,
                                                                    platform):
    if platform == "fallback":
        monkeypatch.setattr(dirfd, "HAVE_DIR_FD", False)
    else:  # where open() cannot require a folder, the check after it does
        monkeypatch.setattr(dirfd, "DIRECTORY", 0)
    (tmp_path / "archivo").write_text("x")
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(NotADirectoryError) as refused:
        dirfd.Folder.open(str(tmp_path / "archivo"))
    assert (refused.value.errno, refused.value.strerror, refused.value.filename) == \
        (errno.ENOTDIR, "no es una carpeta", str(tmp_path / "archivo"))
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_chosen_note_whose_path_has_a_nul_is_outside_the_roots(root):
    with RootSet.from_paths([root]) as roots:
        note = next(n for n in store.scan(roots) if n.id == "note-b")
        forged = note._replace(path=str(root / "sub\x00x" / "b.md"))
        with pytest.raises(store.StoreError, match="quedó fuera de las roots"):
            store.recheck(roots, forged)


def test_a_note_written_by_the_server_is_its_owners_alone(root, mode):
    old = os.umask(0o022)
    try:
        with RootSet.from_paths([root]) as roots:
            store.write_note(roots, str(root / "privada.md"), "P", "", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(root / "privada.md").st_mode) == 0o600


def test_the_fallback_refuses_a_file_link_saying_which_and_why(tmp_path, monkeypatch):
    monkeypatch.setattr(dirfd, "HAVE_DIR_FD", False)
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "enlace.md").symlink_to(tmp_path / "a.md")
    with dirfd.Folder.open(str(tmp_path)) as folder, pytest.raises(OSError) as refused:
        folder.open_file("enlace.md")
    assert (refused.value.errno, refused.value.strerror, refused.value.filename) == \
        (errno.ELOOP, "es un enlace simbólico", str(tmp_path / "enlace.md"))


def test_a_file_on_the_way_is_no_folder_and_a_link_on_the_way_is_a_link(tmp_path, mode):
    (tmp_path / "archivo").write_text("x")
    (tmp_path / "real" / "dentro").mkdir(parents=True)
    (tmp_path / "enlace").symlink_to(tmp_path / "real")
    with pytest.raises(OSError) as through_a_file:
        dirfd.Folder.open(str(tmp_path / "archivo" / "dentro"))
    with pytest.raises(OSError) as through_a_link:
        dirfd.Folder.open(str(tmp_path / "enlace" / "dentro"))
    assert through_a_file.value.errno == errno.ENOTDIR
    assert (through_a_link.value.errno, through_a_link.value.strerror,
            through_a_link.value.filename) == (errno.ELOOP, "hay un enlace simbólico en la ruta",
                                               str(tmp_path / "enlace" / "dentro"))
    with dirfd.Folder.open(str(tmp_path / "real" / "dentro")) as folder:  # the way itself
        assert folder.same_as(str(tmp_path / "real" / "dentro"))
        assert not folder.same_as(str(tmp_path / "enlace" / "dentro"))


def test_a_subfolder_that_is_a_link_is_refused_naming_its_path(tmp_path, mode):
    (tmp_path / "real").mkdir()
    (tmp_path / "enlace").symlink_to(tmp_path / "real")
    with dirfd.Folder.open(str(tmp_path)) as folder, pytest.raises(OSError) as refused:
        folder.child("enlace")
    assert (refused.value.errno, refused.value.filename) == \
        (errno.ELOOP, str(tmp_path / "enlace"))


def test_the_top_of_the_filesystem_opens_as_a_folder_that_can_be_listed(mode):
    # a client may share file:/// itself: the top is the folder read, not one passed through
    with dirfd.Folder.open("/") as top:
        assert sorted(name for name, _ in top.entries()) == sorted(os.listdir("/"))


@needs_dir_fd
def test_without_o_directory_a_file_on_the_way_is_no_folder_never_a_link(tmp_path, monkeypatch):
    monkeypatch.setattr(dirfd, "DIRECTORY", 0)  # a platform where open() cannot require one
    (tmp_path / "archivo").write_text("x")
    with pytest.raises(OSError) as refused:
        dirfd.Folder.open(str(tmp_path / "archivo" / "dentro"))
    assert refused.value.errno == errno.ENOTDIR


def test_in_the_fallback_a_folder_replaced_at_its_path_is_not_the_held_one(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(dirfd, "HAVE_DIR_FD", False)
    (tmp_path / "a").mkdir()
    with dirfd.Folder.open(str(tmp_path / "a")) as folder:
        (tmp_path / "a").rename(tmp_path / "b")
        (tmp_path / "a").mkdir()  # another folder under the same name
        assert not folder.same_as(str(tmp_path / "a"))
        with pytest.raises(FileNotFoundError):
            folder.entries()


def test_a_folder_under_an_enterable_but_unlistable_folder_opens_as_a_path_lookup_would(
        tmp_path, mode):
    """The walk needs what a path lookup needs: search permission on the folders above, not
    read permission (a grader's job folder may be 0711). Tried by an ordinary user in a child
    process: as root (the CI), as nobody; otherwise as this user, the folder above searchable
    and unreadable for its owner."""
    above = tmp_path / "enterable"
    make(above / "Notas", "a.md", "note-a")
    for folder in (tmp_path.parents[1], tmp_path.parent, tmp_path):  # nobody may pass by
        os.chmod(folder, os.stat(folder).st_mode | 0o111)
    os.chmod(above, 0o711 if os.geteuid() == 0 else 0o311)
    os.chmod(above / "Notas", 0o755)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: drop to nobody (as root), try, report through the pipe
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
            try:
                os.listdir(above)
                said = "listable"
            except PermissionError:
                with dirfd.Folder.open(above / "Notas") as notas:
                    said = ",".join(sorted(name for name, _ in notas.entries()))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            said = f"{type(exc).__name__}: {exc}"
        os.write(write, said.encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode()
    os.chmod(above, 0o700)
    assert said == "a.md"
