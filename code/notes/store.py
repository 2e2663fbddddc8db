"""The notes on disk: listing them, acting on a chosen one, and writing one in one step.

Every operation starts from a root folder held open since the roots were accepted
(roots.RootSet.folder) and goes down one name at a time without following links
(dirfd.Folder): listing (`scan`) walks every folder of every root; checking a chosen note
again (`recheck`), `delete`, `archive` and writing (`write_note`) reach the one file they act
on through place.Place, the same walk the handles use (handles.py). So what is checked is
what is acted on: a folder renamed and replaced by a link while a form was open leads nowhere,
and a note is acted on only if it is still the same file (device, inode and id) that was
listed. Writes go to a temporary file in the same folder (unnamed until the rename, where the
system allows it) and are renamed over the target, so a note is never half-written; deletes
are one unlink; archiving is one rename into the root's `.archive/` folder that refuses to
overwrite.

Listing is honest about what it leaves out (`skipped`): names that are not UTF-8, links (never
followed), a title too long for the header (never shown cut), and every file of an id that
two files claim (ids are unique in a listing: an ambiguous id is no answer to "which note?").
Every path in those reasons goes through `printable`, so no file name can forge a line of
what the user reads. A failure that would make the listing wrong (a root replaced, no
descriptors left) is an error, never an empty list; a shared folder that is not there holds
no notes, and the listing says so.

The note's text is note_format.py's (`Note`, `render`, `parse_header`), the open notes are
handles.py's (`Handles`); both are importable from here too (`store.Note`, `store.Handles`),
as the tools, the notebooks and the exercises use them.

Deliberate simplifications: notes are found by walking the roots on every listing (a stat per
file; a file is parsed again only when its inode, size or mtime changed); between the last
identity check and the unlink or rename of one name inside a held folder, another program
writing in that same folder could still swap that one name (no portable call acts on a name
only if it is a given inode); a named temporary file is removed when the write fails or the
server is told to stop (`stop_writes`, on any signal that stops it), not at start, since no
name alone proves it was ours: so a SIGKILL, which nothing can catch, leaves one only in the
instant between naming the copy and renaming it (Linux), or during the whole write elsewhere.
"""

import os
import secrets
import stat
import threading

from notes.dirfd import Folder
from notes.handles import MAX_OPEN_HANDLES, MAX_READ_BYTES, MAX_REVOKED_KEPT, Handle, Handles
from notes.note_format import (
    HEADER_BYTES,
    ID_PATTERN,
    LINE_BREAKS,
    MAX_TITLE_CHARS,
    NOT_A_NOTE,
    SUFFIX,
    TITLE_CUT,
    Note,
    StoreError,
    as_note,
    derived_id,
    file_of,
    note_from,
    parse_header,
    render,
    valid_date,
)
from notes.place import NO_DESCRIPTORS, OUT_OF_DESCRIPTORS, Place, header_in, note_in
from notes.roots import MissingRoot, RootError

# The store's names, and those of note_format, place and handles that callers (the tools, the
# notebooks, the exercises' solutions) reach as store.X.
__all__ = [
    "ARCHIVE_DIR", "HEADER_BYTES", "ID_PATTERN", "LINE_BREAKS", "MAX_DEPTH", "MAX_OPEN_HANDLES",
    "MAX_READ_BYTES", "MAX_REVOKED_KEPT", "MAX_TITLE_CHARS", "NO_DESCRIPTORS", "NOT_A_NOTE",
    "OUT_OF_DESCRIPTORS", "SUFFIX", "TEMP_PREFIX", "TITLE_CUT", "Folder", "Handle", "Handles",
    "Note", "StoreError", "archive", "as_note", "delete", "derived_id", "file_of", "note_from",
    "parse_header", "printable", "read_note", "recheck", "remove_temporaries", "render", "scan",
    "stop_writes", "valid_date", "write_atomic", "write_note"]

ARCHIVE_DIR = ".archive"
TEMP_PREFIX = ".tmp-notas-"    # only this server makes names like this (hidden: never listed)
MAX_DEPTH = 16                 # folders below a root that a listing goes into


def read_note(path: str) -> Note | None:
    """The Note stored at `path`, or None. By path: for showing files (the notebooks), not
    for deciding what the server may touch (that is `recheck`, through the roots)."""
    try:
        with Folder.open(os.path.realpath(os.path.dirname(path) or ".")) as folder:
            return note_in(folder, os.path.basename(path), path)
    except (OSError, ValueError):
        return None


# -- listing ------------------------------------------------------------------------------------
def scan(roots, skipped=None):
    """Every note inside the roots, through their held folders; links are never followed.

    What is left out is explained in `skipped` (a list, when given). StoreError when the
    listing cannot be trusted: a root moved or replaced, or no descriptors left."""
    skipped = [] if skipped is None else skipped
    found = {}  # (device, inode) -> Note: one file reached twice is one note
    for root in roots.roots:
        try:
            folder = roots.folder(root)
        except MissingRoot as exc:  # nothing there: no notes, said so
            skipped.append(printable(str(exc)))
            continue
        except RootError as exc:  # moved or replaced since accepted: never followed
            raise StoreError(str(exc)) from None
        _walk(folder, root.path, 0, found, skipped)
    return sorted(_unique_ids(found.values(), skipped),
                  key=lambda n: (n.title.lower(), n.created, n.id))


def _walk(folder, path, depth, found, skipped):
    try:
        entries = folder.entries()
    except OSError as exc:
        _trouble(exc, path, skipped)
        return
    for name, kind in sorted(entries):
        if name.startswith("."):
            continue
        here = os.path.join(path, name)
        if not _utf8(name):
            skipped.append(f"se omitió «{printable(here)}»: su nombre no es UTF-8 válido "
                           "(renómbralo para verlo)")
        elif kind == "dir":
            if depth >= MAX_DEPTH:
                skipped.append(f"no entré en {printable(here)}: hay más de {MAX_DEPTH} "
                               "carpetas de profundidad")
                continue
            try:
                child = folder.child(name)
            except OSError as exc:
                _trouble(exc, here, skipped)
                continue
            with child:
                _walk(child, here, depth + 1, found, skipped)
        elif name.endswith(SUFFIX) and kind == "link":
            skipped.append(f"no sigo enlaces simbólicos: se omitió {printable(here)}")
        elif name.endswith(SUFFIX) and kind == "file":
            note = _cached(folder, name, here)
            if note is TITLE_CUT:
                skipped.append(f"se omitió {printable(here)}: su título no cabe en los primeros "
                               f"{HEADER_BYTES} bytes del archivo, y no lo muestro cortado")
            elif note is not None:
                found.setdefault(note.file(), note)


def _trouble(exc, path, skipped):
    if exc.errno in OUT_OF_DESCRIPTORS:
        raise StoreError(NO_DESCRIPTORS) from None
    skipped.append(f"no pude leer {printable(path)}: {exc.strerror or exc}")


def _utf8(name):
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes come back as lone surrogates
        return False
    return True


def printable(path):
    """`path` as a listing shows it, on one line whatever its names hold: bytes that are not
    UTF-8 become «\ufffd»; line breaks, control characters and the invisible marks that
    reorder text (bidi) are written as escapes (`\\n`, `\\x1b`, `\\u202e`), so a file name
    can never forge a line, or the look of one, in what the user reads."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text.translate(_ESCAPES)


_ESCAPES = {c: chr(c).encode("unicode_escape").decode() for c in [
    *range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x2028, 0x202F),
    *range(0x2066, 0x206A)]}


def _unique_ids(notes, skipped):
    by_id = {}
    for note in notes:
        by_id.setdefault(note.id, []).append(note)
    for note_id, same in by_id.items():
        if len(same) > 1:
            files = ", ".join(sorted(printable(n.path) for n in same))
            skipped.append(f"el id {note_id} está en {len(same)} archivos ({files}): no listo "
                           "ninguno hasta que cada nota tenga su propio id")
    return [same[0] for same in by_id.values() if len(same) == 1]


_parsed = {}  # (device, inode) -> (stamp, Note or None): unchanged files are not read again


def _cached(folder, name, path):
    try:
        st = folder.lstat(name)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    key, stamp = file_of(st), (st.st_mtime_ns, st.st_size, path)
    cached = _parsed.get(key)
    if cached is None or cached[0] != stamp:
        if len(_parsed) > 50_000:
            _parsed.clear()
        note = header_in(folder, name, path)
        if isinstance(note, Note) and note.file() != key:
            return None  # replaced between the stat and the open: next listing sees it
        cached = _parsed[key] = (stamp, note)
    return cached[1]


# -- acting on one note -------------------------------------------------------------------------
def recheck(roots, note):
    """The note as it is now: still inside `roots` (its root folder neither moved nor
    replaced), the same file (device and inode) and the same id. StoreError otherwise."""
    with Place.of(roots, note) as place:
        return place.verify()


def delete(roots, note):
    """Re-check the note (as `recheck`) and unlink it, relative to its held folder."""
    with Place.of(roots, note) as place:
        current = place.verify()
        try:
            place.folder.unlink(place.name)
        except FileNotFoundError:
            raise StoreError(f"la nota {current.id} ya no existe") from None
        return current


def archive(roots, note):
    """Re-check the note and move it into `<its root>/.archive/` in one rename.

    The target name is first reserved with an exclusive create (it fails if a file with that
    name is already archived, or a link was planted there), then the note is renamed over the
    reservation: the same file, moved in one step, and nothing is ever replaced. Returns the
    archived file's path."""
    with Place.of(roots, note) as place:
        current = place.verify()
        try:
            place.root_folder.mkdir(ARCHIVE_DIR)
        except FileExistsError:
            pass
        try:
            target = place.root_folder.child(ARCHIVE_DIR)
        except OSError:
            raise StoreError(f"{ARCHIVE_DIR} no es una carpeta normal (¿un enlace?); no la "
                             "uso") from None
        with target:
            try:
                os.close(target.create_new(place.name))
            except FileExistsError:
                raise StoreError(f"ya hay una nota archivada con el nombre {place.name}") \
                    from None
            try:
                place.folder.rename(place.name, target, place.name)
            except BaseException as exc:
                target.unlink(place.name)
                if isinstance(exc, FileNotFoundError):
                    raise StoreError(f"la nota {current.id} ya no existe") from None
                raise
        return os.path.join(place.root.path, ARCHIVE_DIR, place.name)


# -- writing ------------------------------------------------------------------------------------
def write_note(roots, path, title, created, body):
    """Write the note at real path `path` inside `roots` (its id kept if it exists); the Note.

    The folders down to it are reached from the held root, never through a link (Place)."""
    with Place(roots, path) as place:
        existing = note_in(place.folder, place.name, path)
        note_id = existing.id if existing else "note-" + secrets.token_hex(4)
        st = _write_in(place.folder, place.name, render(note_id, title, created, body))
    return Note(note_id, title, created, path, *file_of(st))


def write_atomic(path, text):
    """Replace the file at `path` with `text` in one step; the old one stays on any failure.

    For preparing folders (tests, the demo, the notebooks): the server writes with
    `write_note`, through the roots."""
    folder_path = os.path.dirname(os.path.abspath(path))
    try:
        folder = Folder.open(os.path.realpath(folder_path))
    except OSError:
        raise StoreError(f"la carpeta {folder_path} no existe") from None
    with folder:
        _write_in(folder, os.path.basename(path), text)


_temporaries = set()  # (Folder, name) of each named temporary file of a write in progress
_temporaries_lock = threading.RLock()  # guards them and `_stopped` (RLock: a signal handler
#                                        may run in a thread that holds it)
_stopped = False  # stop_writes() ran: no write gives a temporary file a name any more
STOPPING = "el servidor se está deteniendo: no escribí nada"


def _write_in(folder, name, text):
    """Write `text` as `name` in `folder` through a temporary file; the new file's stat.

    The copy is written and synced while it has no name, where the system allows it (Linux:
    O_TMPFILE), and is named only for the rename over `name`; elsewhere it is named from the
    start. A name is recorded as ours before it exists, under the same lock `stop_writes`
    takes: whichever comes first, that stop or this name, no temporary file outlives a stop,
    from any thread, at any point (a signal's handler included)."""
    try:
        st = folder.lstat(name)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise StoreError(f"no pude mirar el destino: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise StoreError("el destino no es un archivo normal")
    temporary = f"{TEMP_PREFIX}{secrets.token_hex(8)}{SUFFIX}"
    fd = None
    try:
        fd = folder.create_unnamed()
        unnamed = fd is not None
        if not unnamed:
            fd = _named(folder, temporary, folder.create_new)
        try:
            data = memoryview(text.encode("utf-8"))  # what is left, never copied
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
            if unnamed:
                _named(folder, temporary, lambda name: folder.name_file(fd, name))
        finally:
            os.close(fd)
        folder.rename(temporary, folder, name)
        return folder.lstat(name)  # after the rename, which changes the inode's ctime
    except BaseException:
        _remove_ours(folder, temporary)
        raise
    finally:
        with _temporaries_lock:
            _temporaries.discard((folder, temporary))


def _named(folder, name, make):
    """Record `name` as ours, then make it (`make(name)`: an O_EXCL create or a link that
    fails when the name exists), both under the lock; StoreError once the server stops."""
    with _temporaries_lock:
        if _stopped:
            raise StoreError(STOPPING)
        _temporaries.add((folder, name))
        try:
            return make(name)
        except OSError as exc:  # nothing was made: not ours
            _temporaries.discard((folder, name))
            raise StoreError(f"no pude escribir en la carpeta: {exc.strerror}") from None


def _remove(folder, name):
    try:
        folder.unlink(name)
    except OSError:
        pass


def _remove_ours(folder, name):
    """Remove `name` if it is still recorded as ours (a failed write's copy)."""
    with _temporaries_lock:
        if (folder, name) in _temporaries:
            _temporaries.discard((folder, name))
            _remove(folder, name)


def remove_temporaries():
    """Remove the named temporary files of writes still in progress.

    Only names this process created itself (O_EXCL, or a link that fails on an existing
    name) and still owns; the write that made one then fails, and leaves the note it was
    replacing as it was."""
    with _temporaries_lock:
        for folder, name in list(_temporaries):
            _temporaries.discard((folder, name))
            _remove(folder, name)


def stop_writes():
    """The server is stopping (a signal, from any thread): from now on no write names a
    temporary file, and those named are removed. Writes in progress fail and change
    nothing; a copy still unnamed disappears with the process."""
    global _stopped
    with _temporaries_lock:
        _stopped = True
        remove_temporaries()
