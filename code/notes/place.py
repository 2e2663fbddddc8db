"""Where a note is: the held folder that contains it, reached from its root one name at a time.

Every action on one file (checking a listed note again, deleting, archiving, writing, opening
a handle, re-checking a handle) starts here. `Place(roots, path)` finds the root that holds
`path`, takes that root's folder held open since the roots were accepted (roots.RootSet.folder,
which refuses a root moved or replaced since), and goes down the path's folders one name at a
time with dirfd.Folder.child, which never follows a link. What the caller then acts on is
`place.folder` and `place.name`: the folder it holds and a name inside it, never a path that
could be swapped between a check and the act. `verify` says whether the file there is still
the note that was listed (same device, inode, inode change time and id).

`header_in` and `note_in` read a note's header through a descriptor opened in a held folder
(the text itself is note_format's job).

The errors tell two stories apart: a listed note (`Place.of`) was there, so a folder on its
way that is gone or is a link now means it was moved; a file about to be written (no note)
may never have been there, so its errors say what is missing.

Deliberate simplifications: the folders opened on the way are closed when the place is left
(`with`), so a place lives for one action; between `verify` and the unlink or rename of one
name inside a held folder, another program writing in that same folder could still swap that
one name (no portable call acts on a name only if it is a given inode).
"""

import errno
import os
import stat

from notes.dirfd import valid_name
from notes.note_format import HEADER_BYTES, TITLE_CUT, StoreError, as_note, file_of, note_from
from notes.roots import RootError

OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)
NO_DESCRIPTORS = ("el servidor no puede abrir más archivos ahora mismo (demasiados abiertos); "
                  "cierra handles con notes_close y vuelve a probar")


def header_in(folder, name, path):
    """What `note_format.note_from` finds in `name` of the held `folder` (a Note, None or
    TITLE_CUT), read through a descriptor; `path` is the text path it is shown with."""
    try:
        fd = folder.open_file(name)
    except OSError as exc:
        if exc.errno in OUT_OF_DESCRIPTORS:
            raise StoreError(NO_DESCRIPTORS) from None
        return None
    try:
        return note_from(os.read(fd, HEADER_BYTES), path, os.fstat(fd))
    finally:
        os.close(fd)


def note_in(folder, name, path):
    """The Note in `name` of the held `folder`, read through a descriptor, or None."""
    note = header_in(folder, name, path)
    return None if note is TITLE_CUT else note


class Place:
    """Where the file at real path `path` is: `root` (the roots.Root that holds it),
    `root_folder` (that root's held folder), `folder` (the held folder that contains the file)
    and `name` (its name there). `note` is the listed Note it should be (see `verify`), or None
    for a file about to be written. StoreError when it cannot be reached. Use it in `with`:
    the folders opened on the way are closed when it is left."""

    def __init__(self, roots, path, note=None):
        self.note = note
        self.root = root = roots.root_of(path) if os.path.isabs(path) else None
        if root is None:
            raise StoreError(self._outside(roots, path))
        try:
            self.root_folder = roots.folder(root)
        except RootError as exc:
            raise StoreError(str(exc)) from None
        parts = os.path.relpath(path, root.path).split(os.sep)
        if not all(valid_name(part) for part in parts):
            raise StoreError(f"la nota {note.id} quedó fuera de las roots" if note else
                             "esa ruta no nombra un archivo dentro de la root")
        self.name, self.folder, self._opened = parts[-1], self.root_folder, []
        for part in parts[:-1]:
            try:
                self.folder = self.folder.child(part)
            except OSError as exc:
                self.close()
                raise StoreError(self._unreachable(exc, part, path)) from None
            self._opened.append(self.folder)

    @classmethod
    def of(cls, roots, note):
        """The place of a listed note (a Note or its fields)."""
        note = as_note(note)
        return cls(roots, note.path, note)

    def _outside(self, roots, path):
        if self.note is None:
            return f"{path} está fuera de las roots"
        refused = roots.refusals()  # its root may have been moved or replaced since
        return refused[0] if refused else f"la nota {self.note.id} quedó fuera de las roots"

    def _unreachable(self, exc, part, path):
        """Why the folder `part` on the way to `path` could not be entered."""
        if exc.errno in OUT_OF_DESCRIPTORS:
            return NO_DESCRIPTORS
        if self.note is not None:  # it was there when listed
            return (f"la carpeta {part} de la nota {self.note.id} ya no es una carpeta normal "
                    "(la movieron, la borraron o la cambiaron por un enlace)")
        if isinstance(exc, FileNotFoundError):
            return f"la carpeta {os.path.dirname(path)} no existe"
        return f"{part} no es una carpeta normal (¿un enlace?)"

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
        current = note_in(self.folder, self.name, note.path)
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
