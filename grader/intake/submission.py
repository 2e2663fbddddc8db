"""Read what a learner handed in, on disk, as the official grader must: through descriptors.

The submission is as hostile as the learner's server (the instructor only chose its path), so
it is read like grader/boundary.py reads the sandbox: from descriptors, one name at a time,
never following a link (the submission itself included), never opening a FIFO or a device
(O_PATH, then S_ISREG), never a file with more than one hard link or owned by anyone but the
submission's owner (the owner of the path given), with caps on file sizes, folder entries,
the number and total apparent size of the files read, zip entries and unpacked bytes.
A .zip is read in memory: nothing is unpacked to disk. Anything wrong in it (a damaged,
encrypted or truncated archive, a notebook nested too deep, text that is not UTF-8) becomes a
Spanish sentence in the report, never an exception.

What is read and how notebooks, folders and archives become solution files is in
grader/intake/solutions.py (shared with the self-checks, which read by path); this module adds the
descriptor-based folder (`DiskFolder`), `prepare(path)` and `write(prepared, folder)` (or
`fill`, into a folder made ahead).
"""

import errno
import os
import stat

from grader import boundary
from grader.intake.solutions import (  # noqa: F401  (the reading rules, re-exported for callers)
    MAX_ARCHIVE,
    MAX_FILE,
    MAX_FOLDER_ENTRIES,
    MAX_NOTEBOOK,
    MAX_ZIP_ENTRIES,
    MAX_ZIP_TOTAL,
    SOLUTION_NAMES,
    WRITEFILE,
    MemoryFolder,
    Prepared,
    Unreadable,
    nothing_found,
    read_file,
    read_folder,
    read_zip,
)


# -- a folder on disk, read through its descriptor ----------------------------------------------
class DiskFolder:
    """A folder of the submission, read through its descriptor. Its files are read only when
    they have one link and belong to `owner` (the submission's own owner)."""

    def __init__(self, fd, owner=None):
        self.fd = fd
        self.owner = owner

    def entries(self):
        """[(name, kind)] sorted by name; kind: "file", "dir", "link" or "other"."""
        found = []
        with os.scandir(self.fd) as scan:
            for entry in scan:
                if len(found) >= MAX_FOLDER_ENTRIES:
                    raise Unreadable(f"la carpeta tiene más de {MAX_FOLDER_ENTRIES} entradas; "
                                     "no se lee")
                try:
                    mode = os.stat(entry.name, dir_fd=self.fd, follow_symlinks=False).st_mode
                except FileNotFoundError:
                    continue
                kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) \
                    else "link" if stat.S_ISLNK(mode) else "other"
                found.append((entry.name, kind))
        return sorted(found)

    def size(self, name):
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_size

    def read(self, name, limit):
        data, _ = boundary.read_regular(self.fd, name, limit, owner=self.owner)
        return data

    def folder(self, name):
        return DiskFolder(os.open(name, boundary.DIR_FLAGS, dir_fd=self.fd), self.owner)

    def close(self):
        os.close(self.fd)


# -- reading --------------------------------------------------------------------------------------
def prepare(path, name=None):
    """Read a submission at `path`; never raises for anything inside it."""
    prepared = Prepared(name or os.path.basename(os.path.normpath(path)) or path)
    try:
        read_submission(prepared, path)
    except Unreadable as exc:
        prepared.problem(str(exc))
    except (OSError, ValueError, RecursionError, MemoryError, boundary.Refused) as exc:
        prepared.problem(f"no se pudo leer la entrega ({type(exc).__name__})")
    nothing_found(prepared)
    return prepared


def write(prepared, folder):
    """Write the solution files into `folder` (new, the grader's own; made here)."""
    os.mkdir(folder, 0o755)
    fill(prepared, folder)
    os.chmod(folder, 0o755)
    return folder


def fill(prepared, folder):
    """Write the solution files into `folder`, the grader's own and empty (made by `write`, or
    ahead with its sandbox: grader/hosts/ahead.py, which set its modes)."""
    target = boundary.Folder.trusted(folder)
    try:
        for name, text in prepared.files.items():
            target.write_file(name, text.encode("utf-8", "surrogatepass"))
    finally:
        target.close()
    return folder


def read_submission(prepared, path):
    parent, base = os.path.split(os.path.normpath(path))
    try:
        parent_fd = os.open(parent or ".", os.O_RDONLY | os.O_DIRECTORY | boundary.CLOEXEC)
    except OSError:
        prepared.problem("no existe o no es un archivo ni una carpeta")
        return
    try:
        if base in ("", ".", ".."):  # the path names a folder through "." or "/"
            folder = DiskFolder(os.dup(parent_fd), os.fstat(parent_fd).st_uid)
            kind = "dir"
        else:
            try:
                info = os.stat(base, dir_fd=parent_fd, follow_symlinks=False)
            except FileNotFoundError:
                prepared.problem("no existe o no es un archivo ni una carpeta")
                return
            mode, owner = info.st_mode, info.st_uid  # every file read must be the owner's
            kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) \
                else "link" if stat.S_ISLNK(mode) else "other"
            folder = DiskFolder(os.open(base, boundary.DIR_FLAGS, dir_fd=parent_fd), owner) \
                if kind == "dir" else None
        if kind == "link":
            prepared.problem("la entrega es un enlace simbólico; no se sigue")
        elif kind == "other":
            prepared.problem("la entrega no es un archivo normal ni una carpeta (¿una FIFO, un "
                             "socket o un dispositivo?); no se abre")
        elif kind == "dir":
            try:
                read_folder(prepared, folder, "")
            finally:
                folder.close()
        elif base.endswith(".zip"):
            read_zip(prepared, DiskFolder(parent_fd, owner), base)
        else:
            read_file(prepared, DiskFolder(parent_fd, owner), base, base, top=True)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            prepared.problem("la entrega cambió mientras se leía (un enlace simbólico); no se "
                             "sigue")
        else:
            raise
    finally:
        os.close(parent_fd)
