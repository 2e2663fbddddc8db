"""store.py at its edges, as the tools and a learner's solution use it: how a note file is read
(header, id, date), in which order notes are listed, when a changed file is read again, what a
write, a delete or an archive refuses, and the life of an open handle."""

import hashlib
import os
import subprocess
import sys
import tempfile

import pytest

from notes import store  # the module itself: these tests set its limits and state
from roots import RootSet


def note_file(folder, name, text):
    path = folder / name
    path.write_text(text)
    return str(path)


# -- reading notes ---------------------------------------------------------------------------
def test_a_header_is_read_up_to_the_first_blank_line_whatever_its_case_and_spacing():
    fields, body = store.parse_header(
        "ID:  note-5 \n  Title : Mi nota\nsin dos puntos\ncreated:2025-03-02\n\ncuerpo\n\nmás")
    assert fields == {"id": "note-5", "title": "Mi nota", "created": "2025-03-02"}
    assert body == "cuerpo\n\nmás"


def test_a_note_is_read_with_its_id_title_date_and_which_file_it_is(tmp_path):
    path = note_file(tmp_path, "a.md", "id: note-5\ntitle: Mi nota\ncreated: 2025-03-02\n\nx")
    st = os.stat(path)
    assert store.read_note(path) == store.Note("note-5", "Mi nota", "2025-03-02", path,
                                               st.st_dev, st.st_ino, st.st_ctime_ns)


def test_only_the_header_must_be_utf8(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"id: note-a\ntitle: A\n\ncuerpo \xff roto\n\nm\xe1s")
    assert store.read_note(str(path)).id == "note-a"


def test_a_header_cut_in_the_middle_of_a_character_is_no_note(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"id: note-a\ntitle: A\xc3\n\ncuerpo")
    assert store.read_note(str(path)) is None


def test_a_note_without_a_date_has_an_empty_one(tmp_path):
    path = note_file(tmp_path, "a.md", "id: note-5\ntitle: Mi nota\n\nx")
    assert store.read_note(path).created == ""


@pytest.mark.parametrize("bad_id", ["", "-empieza-mal", "con espacio", "x" * 65, "ñandú"])
def test_a_missing_or_odd_id_is_derived_from_the_path(tmp_path, bad_id):
    path = note_file(tmp_path, "a.md", f"id: {bad_id}\ntitle: Hecha a mano\n\nx")
    derived = "note-" + hashlib.sha256(path.encode()).hexdigest()[:8]
    assert store.read_note(path).id == derived


def test_what_is_not_a_readable_note_is_not_a_note(tmp_path):
    no_title = note_file(tmp_path, "a.md", "id: note-1\n\ncuerpo")
    binary = tmp_path / "b.md"
    binary.write_bytes(b"title: \xff\xfe\n\n")
    assert store.read_note(no_title) is None
    assert store.read_note(str(binary)) is None
    assert store.read_note(str(tmp_path / "no-existe.md")) is None


def test_notes_are_listed_by_title_then_date_then_id(tmp_path):
    for name, note_id, title, created in [("1.md", "note-3", "beta", "2024-01-01"),
                                          ("2.md", "note-2", "Alfa", "2025-01-01"),
                                          ("3.md", "note-1", "alfa", "2025-01-01"),
                                          ("4.md", "note-4", "ALFA", "2023-01-01")]:
        store.write_atomic(str(tmp_path / name), store.render(note_id, title, created, ""))
    listed = store.scan(RootSet.from_paths([tmp_path]))
    assert [n.id for n in listed] == ["note-4", "note-1", "note-2", "note-3"]


def test_a_changed_note_is_read_again_and_a_special_file_is_skipped(tmp_path):
    path = tmp_path / "a.md"
    store.write_atomic(str(path), store.render("note-1", "Antes", "2025-01-01", ""))
    roots = RootSet.from_paths([tmp_path])
    assert [n.title for n in store.scan(roots)] == ["Antes"]
    store.write_atomic(str(path), store.render("note-1", "Después, más largo", "2025-01-01", ""))
    os.mkfifo(tmp_path / "tuberia.md")
    assert [n.title for n in store.scan(roots)] == ["Después, más largo"]


@pytest.mark.parametrize("text, valid", [
    ("2025-01-31", True), ("2024-02-29", True), ("2025-02-29", False), ("2025-1-31", False),
    ("31/01/2025", False), ("", False), (None, False), (20250131, False)])
def test_a_date_is_a_real_calendar_day_written_yyyy_mm_dd(text, valid):
    assert store.valid_date(text) is valid


# -- writing, deleting, archiving -----------------------------------------------------------
@pytest.mark.parametrize("title, created", [("uno\rdos", "2025-01-01"), ("uno", "2025\n-01")])
def test_a_header_value_on_more_than_one_line_is_refused(title, created):
    with pytest.raises(store.StoreError, match="una sola línea"):
        store.render("note-1", title, created, "")


def test_a_note_is_rendered_header_blank_line_body():
    assert store.render("note-1", "T", "2025-01-01", "cuerpo") == \
        "id: note-1\ntitle: T\ncreated: 2025-01-01\n\ncuerpo"


def test_a_write_into_a_missing_folder_or_over_a_folder_is_refused(tmp_path):
    with pytest.raises(store.StoreError, match="no existe"):
        store.write_atomic(str(tmp_path / "falta" / "a.md"), "x")
    (tmp_path / "carpeta.md").mkdir()
    with pytest.raises(store.StoreError, match="no es un archivo normal"):
        store.write_atomic(str(tmp_path / "carpeta.md"), "x")
    assert sorted(os.listdir(tmp_path)) == ["carpeta.md"]


@pytest.fixture
def roots(tmp_path):
    with RootSet.from_paths([tmp_path]) as held:
        yield held


def test_deleting_a_note_that_is_gone_says_so(tmp_path, roots):
    note = make_note(tmp_path)
    os.unlink(note.path)
    with pytest.raises(store.StoreError, match="note-1 ya no existe"):
        store.delete(roots, note)


def make_note(root, name="a.md", body="uno"):
    path = root / name
    store.write_atomic(str(path), store.render("note-1", "A", "2025-01-01", body))
    return store.read_note(str(path))


def test_archive_returns_where_the_note_went(tmp_path, roots):
    target = store.archive(roots, make_note(tmp_path))
    assert target == str(tmp_path / ".archive" / "a.md")
    assert os.listdir(tmp_path / ".archive") == ["a.md"]


def test_archiving_a_note_that_is_gone_leaves_no_trace(tmp_path, roots):
    note = make_note(tmp_path)
    os.unlink(note.path)
    with pytest.raises(store.StoreError, match="note-1 ya no existe"):
        store.archive(roots, note)
    assert not (tmp_path / ".archive").exists()


def test_a_failed_archive_move_removes_its_reservation(tmp_path, roots, monkeypatch):
    note = make_note(tmp_path)

    def full_disk(*args, **kwargs):
        raise OSError("disco lleno")
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="disco lleno"):
        store.archive(roots, note)
    assert os.listdir(tmp_path / ".archive") == []
    assert os.path.exists(note.path)


def test_a_move_that_finds_the_note_gone_says_so_and_removes_its_reservation(tmp_path, roots,
                                                                             monkeypatch):
    note = make_note(tmp_path)

    def gone(*args, **kwargs):
        raise FileNotFoundError(2, "No such file")
    monkeypatch.setattr(os, "replace", gone)
    with pytest.raises(store.StoreError, match="note-1 ya no existe"):
        store.archive(roots, note)
    assert os.listdir(tmp_path / ".archive") == []


def test_archive_never_writes_through_a_planted_link(tmp_path, roots):
    note = make_note(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-fuera.md"
    (tmp_path / ".archive").mkdir()
    (tmp_path / ".archive" / "a.md").symlink_to(outside)
    with pytest.raises(store.StoreError, match="ya hay una nota archivada"):
        store.archive(roots, note)
    assert not outside.exists() and os.path.exists(note.path)


# -- handles -------------------------------------------------------------------------------------
def test_handles_are_numbered_and_summarised(tmp_path, roots):
    handles = store.Handles()
    note = make_note(tmp_path)
    first, second = handles.open(roots, note), handles.open(roots, note)
    assert (first.id, second.id) == ("h-1", "h-2")
    assert first.summary() == {"handle": "h-1", "note_id": "note-1",
                               "uri": f"file://{tmp_path}/a.md"}


def test_a_handle_reads_its_notes_body_even_after_the_file_changes(tmp_path, roots):
    handles = store.Handles()
    note = make_note(tmp_path, body="primera versión")
    handle = handles.open(roots, note)
    os.unlink(note.path)
    assert handles.read(handle.id) == "primera versión"


def test_a_handle_never_opens_through_a_symlink(tmp_path, roots):
    note = make_note(tmp_path)
    (tmp_path / "enlace.md").symlink_to(note.path)
    linked = note._replace(path=str(tmp_path / "enlace.md"))
    with pytest.raises(store.StoreError, match="otro archivo"):
        store.Handles().open(roots, linked)


def test_an_unknown_closed_or_revoked_handle_says_why_it_cannot_be_used(tmp_path, roots):
    handles = store.Handles()
    note = make_note(tmp_path)
    closed, revoked, kept = (handles.open(roots, note), handles.open(roots, note),
                             handles.open(roots, note))
    handles.close(closed.id)
    handles.revoke(revoked, "la root se quitó")
    handles.revoke(revoked, "otra razón")  # the first reason stays
    with pytest.raises(store.StoreError, match="ningún handle abierto llamado 'h-1'"):
        handles.read(closed.id)
    with pytest.raises(store.StoreError, match="h-9"):
        handles.get("h-9")
    with pytest.raises(store.StoreError, match="h-2 ya no es válido: la root se quitó"):
        handles.read(revoked.id)
    assert handles.live() == [kept]
    handles.close_all()
    assert handles.live() == [] and kept.revoked
    with pytest.raises(OSError):
        os.fstat(kept.fd)  # its descriptor is closed


# -- what the mutation benchmark found untested --------------------------------------------
def test_a_title_may_contain_colons(tmp_path):
    path = note_file(tmp_path, "a.md", "id: note-1\ntitle: Acta: reunión 10:30\n\nx")
    assert store.read_note(path).title == "Acta: reunión 10:30"


def test_notes_are_written_and_read_as_utf8_whatever_the_locale(tmp_path):
    # A learner's self-check may run where the locale is not UTF-8 (Windows, LANG=C with the
    # coercions turned off); accented titles must still be written and read.
    note_file(tmp_path, "a.md", "id: note-1\ntitle: Señal añadida\n\nx")
    script = ("import sys, store\n"
              "text = store.render('note-2', 'A\\u00f1o nuevo', '', '\\u00f1')\n"
              "store.write_atomic(sys.argv[2], text)\n"
              "sys.stdout.buffer.write(repr(store.read_note(sys.argv[1]).title).encode())")
    env = dict(os.environ, LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0",
               PYTHONPATH=os.path.dirname(os.path.dirname(store.__file__)))  # code/
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "a.md"),
                          str(tmp_path / "b.md")], env=env, capture_output=True, check=True).stdout
    assert out == repr("Señal añadida").encode()
    written = (tmp_path / "b.md").read_text(encoding="utf-8")
    assert written.endswith("title: Año nuevo\ncreated: \n\nñ")


def test_only_the_first_4_kib_of_a_file_are_read_for_its_header(tmp_path):
    # a header that only starts being a note after 4 KiB (or a big file that is no note)
    # is not read whole
    late = note_file(tmp_path, "a.md", "relleno: " + "x" * 5000 + "\ntitle: Tarde\n")
    assert store.read_note(late) is None


def test_hidden_entries_never_hide_the_notes_beside_them(tmp_path):
    # dot-entries (the archive, temporary files) interleaved with notes, in every position
    # a directory listing may return them
    for i in range(8):
        (tmp_path / f".oculta-{i}").mkdir()
        store.write_atomic(str(tmp_path / f"n{i}.md"), store.render(f"note-{i}", f"N{i}", "", ""))
    (tmp_path / ".ultima.md").write_text("id: note-x\ntitle: Oculta\n\n")
    listed = store.scan(RootSet.from_paths([tmp_path]))
    assert sorted(n.id for n in listed) == [f"note-{i}" for i in range(8)]


def test_a_link_in_a_subfolder_is_checked_against_the_roots_too(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "fuera"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    store.write_atomic(str(outside / "x.md"), store.render("note-9", "Fuera", "", ""))
    store.write_atomic(str(root / "sub" / "a.md"), store.render("note-1", "Dentro", "", ""))
    (root / "sub" / "enlace-fuera.md").symlink_to(outside / "x.md")
    (root / "sub" / "enlace-dentro.md").symlink_to(root / "sub" / "a.md")
    skipped = []
    listed = store.scan(RootSet.from_paths([root]), skipped)
    assert [n.title for n in listed] == ["Dentro"]  # links are never followed, inside or out
    assert sorted(skipped) == [f"no sigo enlaces simbólicos: se omitió {root}/sub/{name}"
                               for name in ("enlace-dentro.md", "enlace-fuera.md")]


def test_an_unchanged_note_is_not_read_again(tmp_path, monkeypatch):
    store.write_atomic(str(tmp_path / "a.md"), store.render("note-1", "A", "", ""))
    roots = RootSet.from_paths([tmp_path])
    assert [n.id for n in store.scan(roots)] == ["note-1"]
    reads = []
    real = store.header_in  # what the listing reads a file's header with
    monkeypatch.setattr(store, "header_in", lambda *args: reads.append(args) or real(*args))
    assert [n.id for n in store.scan(roots)] == ["note-1"]
    assert reads == []


def test_a_write_does_not_depend_on_the_system_temporary_folder(tmp_path, monkeypatch):
    # the temporary copy lives beside the note, so the final rename stays on one filesystem
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-existe"))
    store.write_atomic(str(tmp_path / "a.md"), "title: A\n\n")
    assert os.listdir(tmp_path) == ["a.md"]


def test_a_listing_taken_during_a_write_shows_the_note_once(tmp_path, monkeypatch):
    roots = RootSet.from_paths([tmp_path])
    seen = []
    real_fsync = os.fsync

    def list_while_writing(fd):
        real_fsync(fd)
        seen.extend(n.id for n in store.scan(roots))
    monkeypatch.setattr(os, "fsync", list_while_writing)
    store.write_atomic(str(tmp_path / "a.md"), store.render("note-1", "A", "", ""))
    assert seen == []  # the half-done copy is hidden until it is renamed into place
    assert [n.id for n in store.scan(roots)] == ["note-1"]


def test_a_handle_reads_bytes_that_are_not_utf8_as_replacement_characters(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"id: note-1\ntitle: A\n\ncuerpo \xff roto")
    handles = store.Handles()
    with RootSet.from_paths([tmp_path]) as roots:
        handle = handles.open(roots, store.read_note(str(path)))
    assert handles.read(handle.id) == "cuerpo \ufffd roto"
