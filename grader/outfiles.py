"""The grader's own output folders (`--out`, `<batch>-resultados`), written without following links.

The grader often runs as root, and a results folder may already hold things it did not write
(a previous run, or a link someone planted there to make root overwrite another file). So the
results folder is opened once, as a directory descriptor, before grading starts, and everything
below it is reached from there one name at a time, as grader/boundary.py does in the sandbox:

- the folder itself (the last component of the path given; the folders above it are the
  instructor's) is created if missing and opened with `O_DIRECTORY | O_NOFOLLOW`: a link there
  is refused before anything is graded (`OutputError`, a Spanish sentence);
- a subfolder (`informes`, one per learner for Gradescope) is opened the same way; whatever else
  holds its name (a link, a file, a FIFO) is removed first, never followed (`unlinkat` removes a
  link itself);
- a file is written to a new temporary name (`O_CREAT | O_EXCL | O_NOFOLLOW`, never an existing
  file, never through a link) and then renamed over its name with `renameat`, which replaces
  whatever is there (a link is replaced, not followed); a folder in the way is moved aside first.

Report names come from grader.cli, which makes them unique and keeps them apart from the
grader's own files (`notas.csv`, `informes`), so no report ever overwrites another.

Where folders cannot be opened as descriptors (Windows, where only the portable self-check
runs), `OutputFolder.open` gives a `PathFolder`, which writes by path: the learner's own files
on the learner's own machine, nothing to defend.

Deliberate simplifications: no fsync; what was moved aside is left for the instructor.
"""

import errno
import os
import secrets
import stat

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW | CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC
DESCRIPTORS = NOFOLLOW != 0 and os.open in os.supports_dir_fd


class OutputError(Exception):
    """The results folder cannot be used; the message is Spanish."""


class OutputFolder:
    """A results folder, held open; everything below it is reached from its descriptor."""

    def __init__(self, fd, label):
        self.fd, self.label = fd, label

    @classmethod
    def open(cls, path):
        """The folder at `path`, created if missing (and its parents); never through a link."""
        if not DESCRIPTORS:
            return PathFolder.open(path)
        parent, name = os.path.split(os.path.normpath(path))
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)
            parent_fd = os.open(parent or ".", DIR_FLAGS & ~NOFOLLOW)
        except OSError as exc:
            raise OutputError(f"no se puede usar la carpeta de resultados {path} "
                              f"({exc.strerror or type(exc).__name__})") from None
        try:
            return cls(_subfolder(parent_fd, name, path, replace=False), path)
        finally:
            os.close(parent_fd)

    def folder(self, name):
        """The subfolder `name`, created if missing; whatever else had that name is removed."""
        return OutputFolder(_subfolder(self.fd, _component(name), f"{self.label}/{name}",
                                       replace=True), f"{self.label}/{name}")

    def write(self, name, text):
        """Write `text` (UTF-8) as the file `name` here, replacing whatever had that name."""
        name = _component(name)
        data = text.encode("utf-8", "replace")
        while True:
            temporary = f".{name[:40]}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(temporary, NEW_FILE_FLAGS, 0o666, dir_fd=self.fd)
                break
            except FileExistsError:
                continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            os.close(fd)
            _quietly(os.unlink, temporary, dir_fd=self.fd)
            raise
        os.close(fd)
        try:
            info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):  # a folder in the way: moved aside, never entered
                os.rename(name, f".{name[:40]}.apartado-{secrets.token_hex(6)}",
                          src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except FileNotFoundError:
            pass
        os.rename(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class PathFolder:
    """The same, by path, where there are no folder descriptors (the portable self-check)."""

    def __init__(self, path):
        self.path = path

    @classmethod
    def open(cls, path):
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"no se puede usar la carpeta de resultados {path} "
                              f"({exc.strerror or type(exc).__name__})") from None
        return cls(path)

    def folder(self, name):
        return PathFolder.open(os.path.join(self.path, _component(name)))

    def write(self, name, text):
        target = os.path.join(self.path, _component(name))
        temporary = f"{target}.{secrets.token_hex(6)}.tmp"
        with open(temporary, "x", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
        os.replace(temporary, target)

    def close(self):
        pass


def _component(name):
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not one path component: {name!r}")  # a grader bug: names are made safe
    return name


def _subfolder(parent_fd, name, label, replace):
    """A descriptor of the folder `name` in `parent_fd`, made if missing. With `replace`, a
    non-folder that has its name is removed first; without, it is refused."""
    for _ in range(3):
        try:
            os.mkdir(name, 0o777, dir_fd=parent_fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise OutputError(f"no se puede crear la carpeta de resultados {label} "
                              f"({exc.strerror or type(exc).__name__})") from None
        try:
            return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise OutputError(f"no se puede abrir la carpeta de resultados {label} "
                                  f"({exc.strerror or type(exc).__name__})") from None
            if not replace:
                raise OutputError(f"la carpeta de resultados {label} es un enlace simbólico o "
                                  "no es una carpeta; el corrector no escribe a través de "
                                  "enlaces: indica la carpeta real") from None
            _quietly(os.unlink, name, dir_fd=parent_fd)  # the link itself, never its target
    raise OutputError(f"la carpeta de resultados {label} cambia sin parar; no se usa")


def _quietly(function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except OSError:
        pass
