"""The notes a client holds open across calls: a descriptor each, re-checked before it reads.

`Handles.open` re-checks a listed note (place.Place.verify) and keeps a descriptor of that
very file. The descriptor follows the file wherever it is moved; so before a read the tool
asks `Handles.recheck` whether the file is still inside the roots. `Handle.current_path` asks
the kernel where the file is now, and `recheck` accepts that answer only if the same file is
reached there from its root's held folder, one name at a time and never through a link (the
same walk as every other action: place.Place). A handle that fails it is revoked for good
(exercise 4 decides which handles a roots change keeps).

A read goes through the handle's own descriptor, at most MAX_READ_BYTES of it (and says so).

Over HTTP at 2026-07-28 each client has its own handles, whose ids end in the client's name
(`h-1.cXYZ...`, streamable_http.py): another client's `h-1` is not yours.

Deliberate simplifications: at most MAX_OPEN_HANDLES per session and the last
MAX_REVOKED_KEPT revoked ones remembered (to say why they stopped); where neither the kernel
(/proc/self/fd, F_GETPATH) nor Pyodide can name the file, the opening path resolved again is
the only candidate, so a handle whose file moved there stops reading; no lock (the session
core runs one tool at a time).
"""

from __future__ import annotations

import codecs
import itertools
import os
import stat
import sys

from notes.dirfd import identity
from notes.note_format import StoreError, file_of, parse_header
from notes.place import Place
from notes.roots import path_to_uri

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from collections.abc import Iterable

    from notes.roots import RootSet

MAX_READ_BYTES = 256 * 1024    # of a note through a handle: fits one answer, whatever it holds
MAX_OPEN_HANDLES = 32          # per session
MAX_REVOKED_KEPT = 64          # revoked handles remembered to say why they stopped


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
        with Place(roots, path) as place:
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

    def __init__(self, suffix=""):
        self._open = {}
        self._ids = itertools.count(1)
        self.suffix = suffix  # after each id: the client's name where several share a server

    def open(self, roots, note):
        """Open `note` (re-checked as `recheck` does) and return its Handle; StoreError if
        the note changed, left the roots or too many are open."""
        if len(self.live()) >= MAX_OPEN_HANDLES:
            raise StoreError(f"ya tienes {MAX_OPEN_HANDLES} notas abiertas, el máximo: cierra "
                             "alguna con notes_close antes de abrir otra")
        with Place.of(roots, note) as place:
            current = place.verify()
            try:
                fd = place.folder.open_file(place.name)
            except OSError as exc:
                raise StoreError(f"no pude abrir la nota {current.id}: {exc.strerror}") \
                    from None
            if file_of(os.fstat(fd)) != current.file():
                os.close(fd)
                raise StoreError(f"la nota {current.id} cambió mientras la abría")
        handle = Handle(f"h-{next(self._ids)}{self.suffix}", current.id, current.path, fd)
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


# -- a roots change (exercise 4's reaction gets one; server.py re-exports it) -------------
class RootsChange:
    """What a roots-change reaction sees. It stages revocations; the session applies them
    together with the new RootSet once the reaction returns."""

    def __init__(self, old_roots: RootSet, new_roots: RootSet, handles: Iterable[Handle]
                 ) -> None:
        self.old_roots, self.new_roots = old_roots, new_roots
        self.handles = list(handles)
        self.revoked = {}

    def revoke(self, handle: Handle, reason: str = "su nota quedó fuera de las roots") -> None:
        """Close `handle` (one of `self.handles`) when the change is applied; a later
        `notes_read` on it answers with `reason`."""
        self.revoked[handle.id] = (handle, reason)
