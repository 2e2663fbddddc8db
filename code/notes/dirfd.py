"""Folders held open: act on what is inside a folder by name, relative to the folder itself.

A path is text. Between the moment a server checks a path and the moment it acts on it,
anyone who can write to the disk may rename a folder and put a symbolic link in its place,
and an action by path lands wherever the link points now. A descriptor is not text: it names
the folder that was opened, wherever that folder is moved afterwards. So a `Folder` is a
directory descriptor, and everything below it is reached one name at a time, relative to it
(`openat` with O_NOFOLLOW | O_DIRECTORY, so a link is never followed), and acted on by name
relative to the folder that holds it (`unlinkat`, `renameat`, an O_EXCL create, `fstatat`
without following links). A folder is opened by its path the same way: a walk from `/`, one
name at a time, so a link anywhere in the path is refused, not only at its end (O_NOFOLLOW
alone only looks at the last name). `same_as(path)` tells whether a path still names the
held folder (same device and inode, reached without any link): that is how a root replaced
after it was accepted is caught, even when the link is a folder above it.

Fallback: where Python has no `dir_fd` (Windows, where the portable self-check may run), a
Folder keeps its path and the device/inode it had when opened; each operation first checks
that the path still names that folder and that no folder on the way is a link, then acts by
path. That narrows the check-then-act gap to one system call; it does not close it. In
Pyodide (JupyterLite) the `dir_fd` calls exist but descriptors are emulated by path: there
the only code that can change the in-memory disk runs in the same notebook, and `same_as`
still catches a swap.

Deliberate simplifications: a name is one path component (no `/`, `.`, `..` or NUL); a
folder or file that is a link is refused, never resolved; files are opened non-blocking so a
FIFO can never stall the server, and anything that is not a regular file is refused. No
descriptor is inherited by a child process (Python's default since 3.4).
"""

import errno
import os
import stat
import sys

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
# The folders above the one being opened are only passed through: O_PATH (Linux) opens them
# with search permission alone, as a path lookup would (a folder may be 0711: enterable, not
# listable). Elsewhere, and in Pyodide's emulated descriptors, they are opened for reading.
PASS_THROUGH = getattr(os, "O_PATH", 0) if sys.platform == "linux" else 0
LINK_ON_THE_WAY = "hay un enlace simbólico en la ruta"
SEPARATORS = tuple(sep for sep in (os.sep, os.altsep) if sep)  # "/", and "\\" on Windows
# Files made without a name (O_TMPFILE), named later through /proc/self/fd: Linux only (Pyodide
# and other systems write a named temporary file instead).
UNNAMED = getattr(os, "O_TMPFILE", 0) if sys.platform == "linux" and \
    os.path.isdir("/proc/self/fd") else 0
HAVE_DIR_FD = (all(f in os.supports_dir_fd for f in (os.open, os.stat, os.unlink, os.rename,
                                                      os.mkdir))
               and os.scandir in os.supports_fd)


def identity(st):
    """What makes a file the same file: its device and inode."""
    return st.st_dev, st.st_ino


def valid_name(name):
    """One path component that names something inside a folder (never the folder or above)."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "\x00" not in name
            and not any(sep in name for sep in SEPARATORS))


def _checked(name):
    if not valid_name(name):
        raise ValueError(f"not a single path component: {name!r}")
    return name


def _split(path):
    """The top of an absolute path ("/", or a drive) and the names below it, in order."""
    top, names = path, []
    while (above := os.path.dirname(top)) != top:
        names.append(os.path.basename(top))
        top = above
    return top, names[::-1]


def _below(fd, name, path, passing=False):
    """A descriptor of the subfolder `name` of the folder `fd`, opened without following a
    link: a link is refused as ELOOP, naming the whole `path` being opened. `passing`: only
    to go further down (PASS_THROUGH), not to read it."""
    flags = (PASS_THROUGH if passing and PASS_THROUGH else os.O_RDONLY) | DIRECTORY | NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(fd, name):
            raise OSError(errno.ELOOP, LINK_ON_THE_WAY, path) from None
        raise


def _is_link(fd, name):
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


class Folder:
    """A folder held open. Close it (or use `with`) when done; the roots close theirs."""

    def __init__(self, fd, path, ident):
        self.fd = fd            # None in the fallback (no dir_fd on this platform)
        self.path = path        # where it was when opened: text, may be stale now
        self.identity = ident   # (device, inode) when opened

    @classmethod
    def open(cls, path):
        """Open the folder at `path` (made absolute) by a walk from the top: each name opened
        relative to the folder above it, never through a link. OSError when it is missing or
        no folder, and ELOOP when any name on the way (not only the last) is a link."""
        path = os.path.abspath(path)
        if not HAVE_DIR_FD:
            return cls._open_by_path(path)
        top, names = _split(path)
        fd = os.open(top, (PASS_THROUGH if names and PASS_THROUGH else os.O_RDONLY) | DIRECTORY)
        for depth, name in enumerate(names, 1):
            try:
                below = _below(fd, name, path, passing=depth < len(names))
            finally:
                os.close(fd)
            fd = below
        return cls._adopt(fd, path)

    @classmethod
    def _open_by_path(cls, path):
        """Fallback: `path` and every folder above it checked with lstat (no link anywhere)."""
        st = os.lstat(path)
        here, above = path, os.path.dirname(path)
        while above != here:  # up to the top, which is its own parent
            if stat.S_ISLNK(os.lstat(here).st_mode):
                raise OSError(errno.ELOOP, LINK_ON_THE_WAY, path)
            here, above = above, os.path.dirname(above)
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "no es una carpeta", path)
        return cls(None, path, identity(st))

    @classmethod
    def _adopt(cls, fd, path):
        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "no es una carpeta", path)
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path, identity(st))

    def same_as(self, path):
        """Does `path` name this very folder now, reached without any link on the way (not a
        link, not another folder, not the same folder through a link above it)?"""
        try:
            with Folder.open(path) as now:
                return now.identity == self.identity
        except (OSError, ValueError):
            return False

    def _here(self):
        """Fallback only: the folder's path, after checking it still names this folder."""
        if not self.same_as(self.path):
            raise FileNotFoundError(errno.ENOENT, "la carpeta ya no está donde estaba", self.path)
        return self.path

    def _in(self, name):
        return os.path.join(self._here(), _checked(name))

    def child(self, name):
        """The subfolder `name`, held open (a link or anything else is refused)."""
        if self.fd is None:
            return Folder.open(self._in(name))
        path = os.path.join(self.path, name)
        return Folder._adopt(_below(self.fd, _checked(name), path), path)

    def entries(self):
        """[(name, kind)] of what the folder holds; kind: dir, file, link or other.

        Nothing is followed: a link is reported as a link, whatever it points to."""
        found = []
        with os.scandir(self.fd if self.fd is not None else self._here()) as listing:
            for entry in listing:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
                found.append((entry.name, kind))
        return found

    def lstat(self, name):
        """The status of `name` itself (a link is not followed)."""
        if self.fd is None:
            return os.lstat(self._in(name))
        return os.stat(_checked(name), dir_fd=self.fd, follow_symlinks=False)

    def open_file(self, name, flags=os.O_RDONLY, mode=0o600):
        """A descriptor of the regular file `name` (never through a link, never a FIFO)."""
        flags |= NOFOLLOW | NONBLOCK | BINARY
        if self.fd is None:
            path = self._in(name)
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    raise OSError(errno.ELOOP, "es un enlace simbólico", path)
            except FileNotFoundError:
                pass  # a new file (O_CREAT) or a missing one (os.open says so)
            fd = os.open(path, flags, mode)
        else:
            fd = os.open(_checked(name), flags, mode, dir_fd=self.fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EISDIR, "no es un archivo normal", name)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def create_new(self, name):
        """Create the empty file `name`; FileExistsError if anything already has that name."""
        return self.open_file(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)

    def create_unnamed(self):
        """A descriptor of a new, empty regular file in this folder that has no name yet
        (Linux's O_TMPFILE): if the process dies, it is gone. None where this system or this
        folder's file system cannot make one (then a named file is the only way)."""
        if not UNNAMED or self.fd is None:
            return None
        try:
            return os.open(".", UNNAMED | os.O_WRONLY | BINARY, 0o600, dir_fd=self.fd)
        except OSError:
            return None

    def name_file(self, fd, name):
        """Give the unnamed file of `fd` (from `create_unnamed`) the name `name` in this
        folder; FileExistsError if anything already has that name."""
        os.link(f"/proc/self/fd/{fd}", _checked(name), dst_dir_fd=self.fd)

    def unlink(self, name):
        """Remove the file `name` of this folder (the name itself, never what a link names)."""
        if self.fd is None:
            os.unlink(self._in(name))
        else:
            os.unlink(_checked(name), dir_fd=self.fd)

    def rename(self, name, target, target_name):
        """Move `name` to `target_name` in the Folder `target`, replacing what is there."""
        if self.fd is None or target.fd is None:
            os.replace(self._in(name), target._in(target_name))
        else:
            os.replace(_checked(name), _checked(target_name), src_dir_fd=self.fd,
                       dst_dir_fd=target.fd)

    def mkdir(self, name):
        """Create the subfolder `name`; FileExistsError if something has that name."""
        if self.fd is None:
            os.mkdir(self._in(name))
        else:
            os.mkdir(_checked(name), dir_fd=self.fd)

    def close(self):
        """Let the folder go; a closed Folder refuses every operation."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)
            self.identity = None  # a closed folder is the same as nothing

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Folder({self.path!r}, fd={self.fd})"
