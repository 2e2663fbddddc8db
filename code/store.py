"""The notes on disk: one small text file per note, and the notes a client holds open.

A note is a `.md` file that starts with a header, a blank line, then the body:

    id: note-14
    title: TPS report
    created: 2025-03-02

    Body text...

Writes go to a temporary file in the same folder and are renamed over the target, so a note
is never half-written; deletes are a single unlink; archiving is a single rename into the
root's `.archive/` folder that refuses to overwrite. Nothing here decides *whether* a path is
allowed: callers pass paths that the roots already approved (see context.ToolContext.hold).

Deliberate simplifications: notes are found by walking the roots on every listing (a stat
per file; a file is parsed again only when its inode, size or mtime changed), and an open
handle is a plain read-only file descriptor.
"""

import datetime
import hashlib
import itertools
import os
import re
import stat
import tempfile
from dataclasses import dataclass

from roots import path_to_uri

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # Windows has none (a learner's self-check runs there)
SUFFIX = ".md"
ARCHIVE_DIR = ".archive"
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class StoreError(Exception):
    """A note operation that could not be done; nothing was changed."""


@dataclass(frozen=True)
class Note:
    id: str
    title: str
    created: str  # YYYY-MM-DD
    path: str     # resolved real path

    @property
    def uri(self):
        return path_to_uri(self.path)

    def summary(self):
        return {"id": self.id, "title": self.title, "created": self.created, "uri": self.uri}


def parse_header(text):
    header, _, body = text.partition("\n\n")
    fields = {}
    for line in header.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields, body


def read_note(path):
    """The Note stored at `path`, or None when the file is not a readable note."""
    try:
        with open(path, encoding="utf-8") as handle:
            fields, _ = parse_header(handle.read(4096))
    except (OSError, UnicodeDecodeError):
        return None
    if "title" not in fields:
        return None
    note_id = fields.get("id", "")
    if not ID_PATTERN.fullmatch(note_id):  # a hand-written file: derive a stable id
        note_id = "note-" + hashlib.sha256(path.encode()).hexdigest()[:8]
    return Note(note_id, fields["title"], fields.get("created", ""), path)


def scan(rootset):
    """Every note inside the roots. Symlinks that lead outside a root are skipped."""
    notes = []
    for root in rootset.roots:
        _walk(root.path, rootset, notes)
    return sorted(notes, key=lambda n: (n.title.lower(), n.created, n.id))


def _walk(folder, rootset, notes):
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):  # symlinked folders are not followed
            _walk(entry.path, rootset, notes)
        elif entry.name.endswith(SUFFIX):
            path = entry.path
            if entry.is_symlink():  # only a symlink can lead outside: resolve and re-check
                path = os.path.realpath(path)
                if not rootset.contains(path):
                    continue
            note = _read_cached(path)
            if note is not None:
                notes.append(note)


_parsed = {}  # path -> (stat stamp, Note or None): unchanged files are not read again


def _read_cached(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
    cached = _parsed.get(path)
    if cached is None or cached[0] != stamp:
        if len(_parsed) > 50_000:
            _parsed.clear()
        cached = _parsed[path] = (stamp, read_note(path))
    return cached[1]


def valid_date(text):
    try:
        return datetime.date.fromisoformat(text).isoformat() == text
    except (TypeError, ValueError):
        return False


def render(note_id, title, created, body):
    for value in (title, created):
        if "\n" in value or "\r" in value:
            raise StoreError("el título y la fecha van en una sola línea")
    return f"id: {note_id}\ntitle: {title}\ncreated: {created}\n\n{body}"


def write_atomic(path, text):
    """Replace `path` with `text` in one step; the old file stays intact on any failure."""
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise StoreError(f"la carpeta {folder} no existe")
    if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
        raise StoreError("el destino no es un archivo normal")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def delete(note):
    try:
        os.unlink(note.path)
    except FileNotFoundError:
        raise StoreError(f"la nota {note.id} ya no existe") from None


def archive(note, root_path):
    """Move the note into `<root>/.archive/` in one rename; never overwrite anything.

    The target name is first reserved with an exclusive create (it fails if a file with that
    name is already archived), then the note is renamed over the reservation: the same file,
    moved in one step, and no other note is ever replaced.
    """
    target_dir = os.path.join(root_path, ARCHIVE_DIR)
    os.makedirs(target_dir, exist_ok=True)
    target = os.path.join(target_dir, os.path.basename(note.path))
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600))
    except FileExistsError:
        raise StoreError(f"ya hay una nota archivada con el nombre {os.path.basename(target)}") \
            from None
    try:
        os.rename(note.path, target)
    except FileNotFoundError:
        os.unlink(target)
        raise StoreError(f"la nota {note.id} ya no existe") from None
    except BaseException:
        os.unlink(target)
        raise
    return target


# -- open handles -----------------------------------------------------------------------------
@dataclass
class Handle:
    id: str
    note_id: str
    path: str
    fd: int
    revoked: str = ""  # why it stopped working, empty while it works

    def summary(self):
        return {"handle": self.id, "note_id": self.note_id, "uri": path_to_uri(self.path)}


class Handles:
    """The notes a client holds open across calls (exercise 4 re-checks them).

    Callers hold the server's boundary lock around every method, so this class has none.
    """

    def __init__(self):
        self._open = {}
        self._ids = itertools.count(1)

    def open(self, note):
        fd = os.open(note.path, os.O_RDONLY | NOFOLLOW)
        handle = Handle(f"h-{next(self._ids)}", note.id, note.path, fd)
        self._open[handle.id] = handle
        return handle

    def get(self, handle_id):
        handle = self._open.get(handle_id)
        if handle is None:
            raise StoreError(f"no hay ningún handle abierto llamado {handle_id!r}")
        if handle.revoked:
            raise StoreError(f"el handle {handle_id} ya no es válido: {handle.revoked}")
        return handle

    def read(self, handle_id):
        handle = self.get(handle_id)
        data = os.pread(handle.fd, 1 << 20, 0)
        return parse_header(data.decode("utf-8", errors="replace"))[1]

    def close(self, handle_id):
        handle = self.get(handle_id)
        os.close(handle.fd)
        del self._open[handle_id]

    def revoke(self, handle, reason):
        if not handle.revoked:
            os.close(handle.fd)
            handle.revoked = reason

    def live(self):
        return [h for h in self._open.values() if not h.revoked]

    def close_all(self):
        for handle in self.live():
            self.revoke(handle, "la sesión terminó")
