"""The notes on disk: one small text file per note, and the notes a client holds open.

A note is a `.md` file that starts with a header, a blank line, then the body:

    id: note-14
    title: TPS report
    created: 2025-03-02

    Body text...

Every operation the server does on a note starts from a root folder held open since the roots
were accepted (roots.RootSet.folder) and goes down one name at a time without following links
(dirfd.Folder): listing (`scan`), checking a chosen note again (`recheck`), `delete`,
`archive`, writing (`write_note`) and opening a handle (`Handles.open`). So what is checked is
what is acted on: a folder renamed and replaced by a link while a form was open leads nowhere,
and a note is acted on only if it is still the same file (device, inode and id) that was
listed. Writes go to a temporary file in the same folder and are renamed over the target, so a
note is never half-written; deletes are one unlink; archiving is one rename into the root's
`.archive/` folder that refuses to overwrite.

Listing is honest about what it leaves out (`skipped`): names that are not UTF-8, links (never
followed), a title too long for the header (never shown cut), and every file of an id that
two files claim (ids are unique in a listing: an ambiguous id is no answer to "which note?").
Every path in those reasons goes through `printable`, so no file name can forge a line of
what the user reads. A failure that would make the listing wrong (a root replaced, no
descriptors left) is an error, never an empty list; a shared folder that is not there holds
no notes, and the listing says so.

A handle (`Handles`) reads through its own descriptor, at most MAX_READ_BYTES of it (and says
so); before a read the tool re-checks that the file is still inside the roots (`recheck`).

Deliberate simplifications: notes are found by walking the roots on every listing (a stat per
file; a file is parsed again only when its inode, size or mtime changed); between the last
identity check and the unlink or rename of one name inside a held folder, another program
writing in that same folder could still swap that one name (no portable call acts on a name
only if it is a given inode); a temporary file is removed when the write fails or the server is
told to stop (SIGTERM), not at start, since no name alone proves it was ours (where signals
cannot be held off, a SIGTERM in the instant between creating it and recording it leaves it).
"""

import codecs
import datetime
import errno
import hashlib
import itertools
import os
import re
import secrets
import signal
import stat
import sys
from collections import namedtuple

from dirfd import Folder, identity, valid_name
from roots import MissingRoot, RootError, bounded, path_to_uri

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SUFFIX = ".md"
ARCHIVE_DIR = ".archive"
TEMP_PREFIX = ".tmp-notas-"    # only this server makes names like this (hidden: never listed)
HEADER_BYTES = 4096
TITLE_CUT = "title cut"        # what a header read finds when its title goes past HEADER_BYTES
MAX_TITLE_CHARS = 500          # a title the server writes (so its header always fits)
MAX_READ_BYTES = 256 * 1024    # of a note through a handle: fits one answer, whatever it holds
MAX_DEPTH = 16                 # folders below a root that a listing goes into
MAX_OPEN_HANDLES = 32          # per session
MAX_REVOKED_KEPT = 64          # revoked handles remembered to say why they stopped
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # every break str.splitlines() knows
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)
NO_DESCRIPTORS = ("el servidor no puede abrir más archivos ahora mismo (demasiados abiertos); "
                  "cierra handles con notes_close y vuelve a probar")


class StoreError(Exception):
    """A note operation that could not be done; nothing was changed. Its text says why."""


class Note(namedtuple("Note", "id title created path dev ino ctime_ns")):
    """A note as it was listed: which file it is and where it was then.

    `id`, `title` and `created` (YYYY-MM-DD) come from its header; `path` is its real path
    when it was listed (text: for showing and finding its root). The file is its device and
    inode (`dev`, `ino`), and the time its inode last changed (`ctime_ns`): an inode number
    freed by a deletion may be given to the next file created, so the number alone could
    mistake a replacement for the original. A tuple, so `list(note)` can go through
    `ctx.memo` and `Note(*fields)` rebuilds it.
    """

    __slots__ = ()

    def file(self) -> tuple[int, int, int]:
        """Which file this is: (device, inode, inode change time)."""
        return self.dev, self.ino, self.ctime_ns

    @property
    def uri(self) -> str:
        """The note's `file://` URI (from its path when listed)."""
        return path_to_uri(self.path)

    def summary(self) -> dict[str, str]:
        """What a tool result shows of a note: id, title, created and uri."""
        return {"id": self.id, "title": self.title, "created": self.created, "uri": self.uri}


def file_of(st):
    """Which file a stat result describes (see Note.file)."""
    return st.st_dev, st.st_ino, st.st_ctime_ns


# -- the header ---------------------------------------------------------------------------------
def parse_header(text):
    """(fields, body): the header's `key: value` lines, split at "\\n" only."""
    header, _, body = text.partition("\n\n")
    fields = {}
    for line in header.split("\n"):
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields, body


def _one_line(text):
    return "".join(" " if c in LINE_BREAKS else c for c in text)


def derived_id(path):
    """The id of a note whose header has none (a hand-written file): stable for its path."""
    return "note-" + hashlib.sha256(path.encode()).hexdigest()[:8]


def _note_from(data, path, st):
    """The Note in these first bytes of the file at `path`; None if it is no note, TITLE_CUT
    if its title does not fit in the HEADER_BYTES read (a title is never shown cut)."""
    head, blank, _ = data.partition(b"\n\n")  # only the header must be UTF-8
    cut = not blank and len(data) >= HEADER_BYTES  # the header may go on past what was read
    if cut:  # so its last line may be cut: it is never used
        head, _, last = head.rpartition(b"\n")
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=bool(blank))
    except UnicodeDecodeError:
        return None
    fields, _ = parse_header(text)
    if "title" not in fields:
        return TITLE_CUT if cut and last.lstrip().lower().startswith(b"title") else None
    note_id = fields.get("id", "")
    if not ID_PATTERN.fullmatch(note_id):  # a hand-written file: derive a stable id
        note_id = derived_id(path)
    return Note(note_id, _one_line(fields["title"]), _one_line(fields.get("created", "")),
                path, *file_of(st))


def _read_in(folder, name, path):
    """The Note in `name` of `folder`, read through a descriptor, or None."""
    note = _read_header(folder, name, path)
    return None if note is TITLE_CUT else note


def _read_header(folder, name, path):
    """What `_note_from` finds in `name` of `folder`, read through a descriptor."""
    try:
        fd = folder.open_file(name)
    except OSError as exc:
        if exc.errno in OUT_OF_DESCRIPTORS:
            raise StoreError(NO_DESCRIPTORS) from None
        return None
    try:
        return _note_from(os.read(fd, HEADER_BYTES), path, os.fstat(fd))
    finally:
        os.close(fd)


def read_note(path: str) -> Note | None:

    """The Note stored at `path`, or None. By path: for showing files (the notebooks), not
    for deciding what the server may touch (that is `recheck`, through the roots)."""
    try:
        with Folder.open(os.path.realpath(os.path.dirname(path) or ".")) as folder:
            return _read_in(folder, os.path.basename(path), path)
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
        note = _read_header(folder, name, path)
        if isinstance(note, Note) and note.file() != key:
            return None  # replaced between the stat and the open: next listing sees it
        cached = _parsed[key] = (stamp, note)
    return cached[1]


# -- acting on one note -------------------------------------------------------------------------
def as_note(value):
    """A Note from a Note or its fields (as `ctx.memo` gives them back); StoreError if not."""
    try:
        note = value if isinstance(value, Note) else Note(*value)
    except TypeError:
        note = None
    if note is None or not all(isinstance(v, str) for v in note[:4]) or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in note[4:]):
        raise StoreError(NOT_A_NOTE)
    try:
        bounded(note.path)
    except RootError:
        raise StoreError(NOT_A_NOTE) from None
    return note


NOT_A_NOTE = "eso no es una nota de la lista (id, título, fecha, ruta y qué archivo es)"


class _Place:
    """Where a file is: the held folder that contains it and its name there, reached from its
    root's held folder one name at a time (never through a link). `what` names the file in
    the errors ("la nota note-3"); `note` is the Note it should be, if any (see `verify`)."""

    def __init__(self, roots, path, what, note=None):
        self.note = note
        self.root = root = roots.root_of(path) if os.path.isabs(path) else None
        if root is None:
            refused = roots.refusals()
            raise StoreError(refused[0] if refused else f"{what} quedó fuera de las roots")
        try:
            self.root_folder = roots.folder(root)
        except RootError as exc:
            raise StoreError(str(exc)) from None
        parts = os.path.relpath(path, root.path).split(os.sep)
        if not all(valid_name(part) for part in parts):
            raise StoreError(f"{what} quedó fuera de las roots")
        self.name, self._opened = parts[-1], []
        self.folder = self.root_folder
        try:
            for part in parts[:-1]:
                self.folder = self.folder.child(part)
                self._opened.append(self.folder)
        except OSError as exc:
            self.close()
            if exc.errno in OUT_OF_DESCRIPTORS:
                raise StoreError(NO_DESCRIPTORS) from None
            raise StoreError(f"la carpeta {part} de {what} ya no es una carpeta normal (la "
                             "movieron, la borraron o la cambiaron por un enlace)") from None

    @classmethod
    def of(cls, roots, note):
        """The place of a listed note (a Note or its fields)."""
        note = as_note(note)
        return cls(roots, note.path, f"la nota {note.id}", note)

    def verify(self):
        """The note as it is now, if it is still the same file with the same id."""
        note = self.note
        try:
            st = self.folder.lstat(self.name)
        except FileNotFoundError:
            raise StoreError(f"la nota {note.id} ya no existe") from None
        except OSError as exc:
            raise StoreError(f"no pude comprobar la nota {note.id}: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode) or file_of(st) != note.file():
            raise StoreError(f"en el sitio de la nota {note.id} ahora hay otro archivo")
        current = _read_in(self.folder, self.name, note.path)
        if current is None or current.file() != note.file() or \
                current.id != note.id:
            raise StoreError(f"la nota {note.id} cambió: ya no es la que se listó")
        return current

    def close(self):
        for folder in reversed(self._opened):
            folder.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def recheck(roots, note):
    """The note as it is now: still inside `roots` (its root folder neither moved nor
    replaced), the same file (device and inode) and the same id. StoreError otherwise."""
    with _Place.of(roots, note) as place:
        return place.verify()


def delete(roots, note):
    """Re-check the note (as `recheck`) and unlink it, relative to its held folder."""
    with _Place.of(roots, note) as place:
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
    with _Place.of(roots, note) as place:
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
def valid_date(text):
    """Is `text` a real calendar day written YYYY-MM-DD?"""
    try:
        return datetime.date.fromisoformat(text).isoformat() == text
    except (TypeError, ValueError):
        return False


def render(note_id, title, created, body):
    """The text of a note; a header value with a line break of any kind is refused, and so
    is a title longer than MAX_TITLE_CHARS (kept as written or not at all: never cut)."""
    for value in (title, created):
        if any(c in LINE_BREAKS for c in value):
            raise StoreError("el título y la fecha van en una sola línea (sin saltos de línea "
                             "de ningún tipo)")
    if len(title) > MAX_TITLE_CHARS:
        raise StoreError(f"el título tiene {len(title)} caracteres y el máximo es "
                         f"{MAX_TITLE_CHARS}; no lo recorto: escribe uno más corto")
    return f"id: {note_id}\ntitle: {title}\ncreated: {created}\n\n{body}"


def write_note(roots, path, title, created, body):
    """Write the note at real path `path` inside `roots` (its id kept if it exists); the Note.

    The folders down to it are reached from the held root, never through a link."""
    root = roots.root_of(path)
    if root is None:
        raise StoreError(f"{path} está fuera de las roots")
    try:
        top = roots.folder(root)
    except RootError as exc:
        raise StoreError(str(exc)) from None
    parts = os.path.relpath(path, root.path).split(os.sep)
    if not all(valid_name(part) for part in parts):
        raise StoreError("esa ruta no nombra un archivo dentro de la root")
    opened, folder = [], top
    try:
        for part in parts[:-1]:
            try:
                folder = folder.child(part)
            except FileNotFoundError:
                raise StoreError(f"la carpeta {os.path.dirname(path)} no existe") from None
            except OSError:
                raise StoreError(f"{part} no es una carpeta normal (¿un enlace?)") from None
            opened.append(folder)
        existing = _read_in(folder, parts[-1], path)
        note_id = existing.id if existing else "note-" + secrets.token_hex(4)
        st = _write_in(folder, parts[-1], render(note_id, title, created, body))
        return Note(note_id, title, created, path, *file_of(st))
    finally:
        for child in reversed(opened):
            child.close()


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


_temporaries = set()  # (Folder, name) of each temporary file of a write in progress


def _write_in(folder, name, text):
    """Write `text` as `name` in `folder` through a temporary file; the new file's stat."""
    try:
        st = folder.lstat(name)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise StoreError(f"no pude mirar el destino: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise StoreError("el destino no es un archivo normal")
    temporary = f"{TEMP_PREFIX}{secrets.token_hex(8)}{SUFFIX}"
    ours = (folder, temporary)
    try:
        fd = _create_ours(folder, temporary)
    except OSError as exc:
        raise StoreError(f"no pude escribir en la carpeta: {exc.strerror}") from None
    try:
        try:
            data = text.encode("utf-8")
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        folder.rename(temporary, folder, name)
        written = folder.lstat(name)  # after the rename, which changes the inode's ctime
    except BaseException:
        _remove(folder, temporary)
        raise
    finally:
        _temporaries.discard(ours)
    return written


def _create_ours(folder, name):
    """Create the temporary file `name` and record it as ours in one step: SIGTERM, whose
    handler removes every recorded copy (main.py), is held off in between where the system can
    (POSIX, the main thread's mask); elsewhere a stop in that instant can leave one empty copy."""
    hold = getattr(signal, "pthread_sigmask", None)
    try:
        held = hold(signal.SIG_BLOCK, {signal.SIGTERM}) if hold else None
    except Exception:  # a platform that has the call but not the masks (e.g. in a browser)
        held = None
    try:
        fd = folder.create_new(name)
        _temporaries.add((folder, name))
        return fd
    finally:
        if held is not None:
            hold(signal.SIG_SETMASK, held)  # a SIGTERM that came meanwhile is handled now


def _remove(folder, name):
    try:
        folder.unlink(name)
    except OSError:
        pass


def remove_temporaries():
    """Remove the temporary files of writes still in progress (the server is stopping).

    Only names this process created itself, exclusively (O_EXCL), and still owns; the write
    that made one then fails, and leaves the note it was replacing as it was."""
    for folder, name in list(_temporaries):
        _temporaries.discard((folder, name))
        _remove(folder, name)


# -- open handles -----------------------------------------------------------------------------
class Handle:
    """An open note: `fd` reads the very file that was opened, wherever it is now.

    `id` is the handle's, `note_id` its note's. `path` is the text path it had when opened,
    and may be stale; `current_path()` asks the kernel where the file is now. `judged` is
    where the file was when it was last found inside the roots (opened, re-checked, or kept
    by a roots change). `revoked` says why it stopped working (empty while it works)."""

    revoked = ""

    def __init__(self, id, note_id, path, fd):
        self.id, self.note_id, self.path, self.fd = id, note_id, path, fd
        self.judged = self.current_path()

    def __repr__(self):
        return f"Handle({self.id!r}, note_id={self.note_id!r}, path={self.path!r}, fd={self.fd})"

    def summary(self):
        """What a tool result shows of a handle: its id, its note's id and its uri."""
        return {"handle": self.id, "note_id": self.note_id, "uri": path_to_uri(self.path)}

    def current_path(self):
        """The real path of the open file now, asked through its descriptor; None when it
        has no name any more (deleted), the handle is revoked or nobody can tell.

        Linux: /proc/self/fd; macOS: fcntl F_GETPATH; Pyodide (JupyterLite): its own file
        table, whose /proc/self/fd only repeats the opening path. Elsewhere (and as a last
        try) the opening path resolved again. Each answer is resolved (a link on the way is
        not where the file is) and accepted only if it names the very file the descriptor
        holds (same device and inode)."""
        if self.revoked:
            return None
        try:
            held = identity(os.fstat(self.fd))
        except OSError:
            return None
        for candidate in [*_kernel_paths(self.fd), self.path]:
            try:
                candidate = candidate and os.path.realpath(candidate)
                if candidate and identity(os.stat(candidate)) == held:
                    return candidate
            except (OSError, ValueError):
                continue
        return None


def _holds(roots, path, fd):
    """Is the file of descriptor `fd` the one at `path`, reached inside `roots` from its root's
    held folder, one name at a time and never through a link?"""
    try:
        with _Place(roots, path, "la nota") as place:
            st = place.folder.lstat(place.name)
    except (StoreError, OSError):
        return False
    return stat.S_ISREG(st.st_mode) and identity(st) == identity(os.fstat(fd))


def _kernel_paths(fd):
    emscripten = getattr(sys.modules.get("pyodide_js"), "FS", None)  # loaded by Pyodide itself
    if emscripten is not None:
        try:  # the file's node, followed up its folders as they are named now
            yield emscripten.getPath(emscripten.getStream(fd).node)
        except Exception:  # a JavaScript error: no such stream
            pass
    try:
        yield os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    try:
        import fcntl
        yield os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))
    except (ImportError, AttributeError, OSError):
        pass


class Handles:
    """The notes a client holds open across calls (exercise 4 re-checks them).

    At most MAX_OPEN_HANDLES are open at once. The session core runs one tool at a time, so
    this class needs no lock."""

    def __init__(self):
        self._open = {}
        self._ids = itertools.count(1)

    def open(self, roots, note):
        """Open `note` (re-checked as `recheck` does) and return its Handle; StoreError if
        the note changed, left the roots or too many are open."""
        if len(self.live()) >= MAX_OPEN_HANDLES:
            raise StoreError(f"ya tienes {MAX_OPEN_HANDLES} notas abiertas, el máximo: cierra "
                             "alguna con notes_close antes de abrir otra")
        with _Place.of(roots, note) as place:
            current = place.verify()
            try:
                fd = place.folder.open_file(place.name)
            except OSError as exc:
                raise StoreError(f"no pude abrir la nota {current.id}: {exc.strerror}") \
                    from None
            if file_of(os.fstat(fd)) != current.file():
                os.close(fd)
                raise StoreError(f"la nota {current.id} cambió mientras la abría")
        handle = Handle(f"h-{next(self._ids)}", current.id, current.path, fd)
        self._open[handle.id] = handle
        return handle

    def get(self, handle_id):
        """The open Handle with this id; StoreError (saying why) if unknown or revoked."""
        handle = self._open.get(handle_id)
        if handle is None:
            raise StoreError(f"no hay ningún handle abierto llamado {handle_id!r}")
        if handle.revoked:
            raise StoreError(f"el handle {handle_id} ya no es válido: {handle.revoked}")
        return handle

    def recheck(self, roots, handle_id, reason, always=False):
        """The handle, after checking that its file is still inside `roots`: reached from a
        held root folder without links, it is the very file the descriptor holds. Otherwise
        the handle is revoked with `reason` (StoreError).

        `always` (2026-07-28, where each request brings its own roots) checks every time.
        Otherwise (2025-11-25) only a file that moved since it was last judged is checked: a
        roots change judges every handle it keeps (the reaction's decision, exercise 4), and
        between two changes a note moved out of the roots stops reading here."""
        handle = self.get(handle_id)
        where = handle.current_path()
        if always or where != handle.judged:
            if where is None or not _holds(roots, where, handle.fd):
                self.revoke(handle, reason)
                raise StoreError(f"el handle {handle_id} ya no es válido: {reason}")
            handle.judged = where
        return handle

    def judged_now(self):
        """A roots change kept the live handles: where their files are now is judged."""
        for handle in self.live():
            handle.judged = handle.current_path()

    def read(self, handle_id):
        """The body of the note, read through the handle's descriptor (see `read_part`)."""
        return self.read_part(handle_id)[0]

    def read_part(self, handle_id):
        """(body, size): the body, read through the handle's descriptor, and None when the
        whole file was read, or the file's size in bytes when only its first MAX_READ_BYTES
        fit (a body cut at a character, never inside one)."""
        handle = self.get(handle_id)
        data = os.pread(handle.fd, MAX_READ_BYTES + 1, 0)
        size = None
        if len(data) > MAX_READ_BYTES:
            data, size = data[:MAX_READ_BYTES], os.fstat(handle.fd).st_size
        text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=size is None)
        return parse_header(text)[1], size

    def close(self, handle_id):
        """Close the handle with this id (StoreError if it is unknown or revoked)."""
        handle = self.get(handle_id)
        os.close(handle.fd)
        del self._open[handle_id]

    def revoke(self, handle, reason):
        """Stop `handle` for good (its descriptor is closed); the first reason stays."""
        if not handle.revoked:
            os.close(handle.fd)
            handle.revoked = reason
            revoked = [h.id for h in self._open.values() if h.revoked]
            for old in revoked[:-MAX_REVOKED_KEPT]:
                del self._open[old]

    def live(self):
        """The handles that still work."""
        return [h for h in self._open.values() if not h.revoked]

    def close_all(self):
        """Revoke every handle that still works (the session ended)."""
        for handle in self.live():
            self.revoke(handle, "la sesión terminó")
