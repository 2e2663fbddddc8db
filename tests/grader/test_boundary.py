"""grader.boundary: what the grader does where a submission can write cannot be redirected.

Each test plays the learner's side by hand in a temporary folder (a link, a FIFO, a swapped
folder, a deep chain) and checks that the boundary refuses it without following, opening or
changing anything outside that folder.
"""

import os
import threading

import pytest

from grader import boundary


@pytest.fixture
def area(tmp_path):
    """A data area (the sandbox's, as the grader opened it) and a host folder next to it."""
    (tmp_path / "data").mkdir()
    host = tmp_path / "host"
    host.mkdir()
    (host / "secreto.txt").write_text("del host\n")
    folder = boundary.Folder.trusted(str(tmp_path / "data"))
    yield folder, tmp_path / "data", host
    folder.close()


def test_a_folder_and_a_note_are_created_fresh_and_read_back(area):
    data, path, _ = area
    notes = data.make_dir("Notes")
    notes.write_file("a.md", b"hola\n")
    snapshot = data.snapshot()
    assert list(snapshot) == ["Notes/a.md"]
    assert (path / "Notes" / "a.md").read_bytes() == b"hola\n"
    notes.close()


def test_a_folder_planted_as_a_link_is_refused_and_never_followed(area):
    data, path, host = area
    os.symlink(host, path / "Notes")
    with pytest.raises(boundary.Refused, match="ya existía"):
        data.make_dir("Notes")
    assert os.listdir(host) == ["secreto.txt"]


def test_a_note_planted_as_a_link_is_refused_and_the_target_is_untouched(area):
    data, path, host = area
    notes = data.make_dir("Notes")
    os.symlink(host / "secreto.txt", path / "Notes" / "a.md")
    with pytest.raises(boundary.Refused):
        notes.write_file("a.md", b"texto del corrector")
    assert (host / "secreto.txt").read_text() == "del host\n"
    notes.close()


def test_the_link_the_grader_makes_points_at_a_sibling_and_never_replaces_a_planted_name(area):
    data, path, host = area
    data.make_dir("Archivo").close()
    data.make_link("Atajo", "Archivo")
    assert os.readlink(path / "Atajo") == "Archivo"  # relative: it stays in the data area
    os.symlink(host, path / "Plantado")
    with pytest.raises(boundary.Refused, match="ya existía"):
        data.make_link("Plantado", "Archivo")
    assert os.readlink(path / "Plantado") == str(host)
    with pytest.raises(ValueError):
        data.make_link("Otro", "../host")  # only a sibling's name, never a path
    with pytest.raises(boundary.Refused, match="enlace simbólico"):
        data.snapshot()  # the grader never follows it, its own link included


def test_a_link_found_by_a_snapshot_is_a_finding_not_a_read(area):
    data, path, host = area
    data.make_dir("Notes").close()
    os.symlink(host, path / "Notes" / "carpeta")
    with pytest.raises(boundary.Refused, match="enlace simbólico"):
        data.snapshot()


def test_a_folder_swapped_for_a_link_after_creation_is_not_followed(area):
    data, path, host = area
    notes = data.make_dir("Notes")
    os.rename(path / "Notes", path / "Notes-original")
    os.symlink(host, path / "Notes")
    notes.write_file("a.md", b"sigue en su carpeta")  # the descriptor, not the name
    assert (path / "Notes-original" / "a.md").read_bytes() == b"sigue en su carpeta"
    assert os.listdir(host) == ["secreto.txt"]
    with pytest.raises(boundary.Refused):
        data.snapshot()
    notes.close()


def test_a_fifo_is_never_opened(area):
    data, path, _ = area
    data.make_dir("Notes").close()
    fifo = path / "Notes" / "a.md"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer():  # returns from open() only if someone opens the FIFO for reading
        fd = os.open(fifo, os.O_WRONLY)
        opened.set()
        os.close(fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    with pytest.raises(boundary.Refused, match="FIFO"):
        data.snapshot()
    assert not opened.wait(0.3)
    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # let the writer go
    thread.join(5)


def test_a_deep_chain_is_a_finding_not_a_recursion_error(area):
    data, path, _ = area
    deep = path
    for _ in range(50):
        deep = deep / "d"
        deep.mkdir()
    with pytest.raises(boundary.Refused, match="niveles"):
        data.snapshot()


def test_a_flood_of_entries_is_a_finding(area):
    data, path, _ = area
    for number in range(60):
        (path / f"n{number}.md").write_text("x")
    with pytest.raises(boundary.Refused, match="demasiadas entradas"):
        data.snapshot(max_entries=50)


@pytest.mark.skipif(os.geteuid() != 0, reason="changing ownership needs root")
def test_what_the_grader_creates_is_given_to_the_sandbox_uid_on_the_descriptor(tmp_path):
    (tmp_path / "data").mkdir()
    data = boundary.Folder.trusted(str(tmp_path / "data"), owner=201234)
    notes = data.make_dir("Notes")
    notes.write_file("a.md", b"x")
    assert os.stat(tmp_path / "data" / "Notes").st_uid == 201234
    assert os.stat(tmp_path / "data" / "Notes" / "a.md").st_uid == 201234
    notes.close()
    data.close()


def test_remove_tree_deletes_a_chain_deeper_than_any_recursion_without_following_links(tmp_path):
    top = tmp_path / "basura"
    top.mkdir()
    keep = tmp_path / "fuera.txt"
    keep.write_text("no me borres")
    os.symlink(keep, top / "enlace")
    os.symlink(tmp_path, top / "enlace-a-carpeta")
    fd = os.open(top, os.O_RDONLY)
    for _ in range(1500):  # deeper than Python's recursion limit and than PATH_MAX allows
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    boundary.remove_tree(str(top))
    assert not top.exists()
    assert keep.read_text() == "no me borres"


def test_a_note_with_a_second_hard_link_is_refused_and_never_read(area):
    data, path, host = area
    notes = data.make_dir("Notes")
    os.link(host / "secreto.txt", path / "Notes" / "a.md")  # the learner's link to a host file
    with pytest.raises(boundary.Refused, match="más de un enlace duro"):
        data.snapshot()
    notes.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid needs root")
def test_a_note_owned_by_someone_else_is_refused_and_never_read(area):
    data, path, _ = area
    notes = data.make_dir("Notes")
    (path / "Notes" / "a.md").write_text("de otro\n")
    os.chown(path / "Notes" / "a.md", 4242, 4242)
    with pytest.raises(boundary.Refused, match="no es de quien debería"):
        data.snapshot()
    notes.close()


def test_notes_the_sandbox_owns_are_read_when_the_area_belongs_to_the_sandbox(tmp_path):
    (tmp_path / "data").mkdir()
    folder = boundary.Folder.trusted(str(tmp_path / "data"), owner=os.geteuid())
    notes = folder.make_dir("Notes")
    notes.write_file("a.md", b"hola\n")
    assert list(folder.snapshot()) == ["Notes/a.md"]
    notes.close()
    folder.close()


def test_what_the_grader_makes_and_the_folders_it_changes_have_the_same_times(area):
    """No time says when a test began (grader/README.md, *No counter between tests*)."""
    data, path, _ = area
    notes = data.make_dir("Notes")
    notes.write_file("a.md", b"hola\n")
    notes.make_dir("Sub").close()
    notes.make_link("enlace", "Sub")
    notes.move("Sub", notes, "Otra")
    data.make_dir("Papelera").close()
    data.remove("Papelera")
    for place in (path, path / "Notes", path / "Notes" / "a.md", path / "Notes" / "Otra",
                  path / "Notes" / "enlace"):
        info = os.stat(place, follow_symlinks=False)
        assert (info.st_atime_ns, info.st_mtime_ns) == boundary.GIVEN_TIMES_NS, place
    with open(path / "Notes" / "a.md", "rb") as handle:  # reading it leaves them as they are
        handle.read()
    assert os.stat(path / "Notes" / "a.md").st_atime_ns == boundary.GIVEN_TIMES_NS[0]
    notes.close()
