"""The one trust boundary: every file operation the grader makes where a submission can write.

The grader runs as root outside the sandbox, while the learner's processes may change the data
area under it at any moment: swap a folder for a symbolic link, put a FIFO where a note was,
chain a thousand folders. So nothing here ever resolves a path that goes through a place the
submission can write. Every operation starts from a directory descriptor that the grader
opened before any learner code ran (`Folder.trusted`) and goes down one name at a time:

- a name is one path component (never "", ".", "..", never a "/"), looked up with `dir_fd` and
  `O_NOFOLLOW`: a symbolic link (`/proc/self/...` magic links included) is never traversed;
- folders are opened with `O_DIRECTORY | O_NOFOLLOW`: the kernel refuses a link, a FIFO or a
  device before opening anything;
- files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` (never an existing file, never through
  a link) and handed to the sandbox's uid with `fchown` on that very descriptor; folders are
  created with `mkdir` and then opened and checked (a folder, made by us) before `fchown`;
- files are read by taking an `O_PATH` descriptor, checking with `fstat` that it is a regular
  file with one link (a hard link can be any file of the system the learner could link, such
  as a root-only one) owned by whom it should be (the sandbox's uid in the data area, the
  submission's owner in a submission), and only then reopening that same inode read-only
  through /proc/self/fd: a FIFO, a device or another user's file is never opened, so it can
  neither block the grader nor be read with its privileges;
- caps on depth, entries and bytes: a deep chain, a flood of entries or a huge file is a
  finding, never a stall, a crash or a RecursionError;
- the one kind of link the grader makes (exercise 4's root given through a symlinked folder,
  a folder swapped for a link while a form or a handle is open) is made with `symlinkat` in a
  folder it made, pointing at a sibling's name (or a path of names, never ".."), and fails
  if the name exists; the grader never follows it (a snapshot refuses it like any other link)
  and removes it with `unlinkat` only while it is still a link; folders it made are moved
  with `renameat` between its own descriptors, never onto an existing name.

Every file, folder and link the grader makes has the same access and modification times
(`GIVEN_TIMES_NS`), and so has the folder it changed: a time would tell a server how long the
grading has run, that is, its test's position (grader/README.md, *No memory between tests*).

What is not what the grader made (a link, a special file, a name that was there before the
grader created it, a folder swapped under it) raises `Refused`, with a Spanish sentence for the
learner's report. A full disk raises `Full` (a subclass): the sandbox's tmpfs is its own, so
only the submission can have filled it. `remove_tree` deletes a folder the grader made that a
submission may have filled, without following links and without recursion.

Deliberate simplifications: Linux semantics (O_PATH, /proc/self/fd); where O_PATH does not
exist, files are opened with O_NONBLOCK | O_NOFOLLOW and checked after opening.
"""

import errno
import hashlib
import os
import stat

from grader.errors import Full, Refused  # noqa: F401  (raised here, caught by the harness)

O_PATH = getattr(os, "O_PATH", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC
MAX_DEPTH = 12
MAX_ENTRIES = 2000
MAX_FILE_BYTES = 1 << 20     # what is hashed of one file (the grader's notes are tiny)
MAX_TOTAL_BYTES = 32 << 20   # what one snapshot reads in all
FULL = {errno.ENOSPC, errno.EDQUOT}
# The (access, modification) times of everything the grader gives a server: modified on
# 2025-03-02 (the notes' own date), accessed on 2100-01-01, so that reading it never updates
# the access time (relatime only does when it is not after the modification and change times
# or is over a day old): a time of first reading would be as telling as a time of making.
GIVEN_TIMES_NS = (4_102_444_800 * 10**9, 1_740_873_600 * 10**9)


def given_times(target, dir_fd=None):
    """Set `target`'s access and modification times to GIVEN_TIMES_NS: a descriptor or a path,
    or a name in `dir_fd` (never followed: a link gets its own times). Best effort: a
    submission that removed the entry meanwhile only loses its own view."""
    times = GIVEN_TIMES_NS
    try:
        if dir_fd is None:
            os.utime(target, ns=times)
        else:
            os.utime(valid_name(target), ns=times, dir_fd=dir_fd, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


def valid_name(name):
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not a single path component: {name!r}")  # a grader bug
    return name


def refusal(label, exc):
    if isinstance(exc, OSError) and exc.errno in FULL:
        return Full("el disco del entorno aislado está lleno (lo llenó tu solución); el "
                    f"corrector no pudo crear {label}")
    if isinstance(exc, OSError) and exc.errno == errno.EEXIST:
        return Refused(f"{label} ya existía antes de que el corrector lo creara: algo de tu "
                       "solución lo puso ahí; el corrector no lo usa")
    if isinstance(exc, OSError) and exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return Refused(f"{label} fue sustituido por un enlace simbólico o por algo que no es "
                       "una carpeta; el corrector no lo sigue")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
    return Refused(f"el corrector no pudo usar {label} ({reason})")


def _kind(mode):
    if stat.S_ISLNK(mode):
        return "un enlace simbólico"
    if stat.S_ISFIFO(mode):
        return "una FIFO"
    if stat.S_ISSOCK(mode):
        return "un socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "un dispositivo"
    return "un archivo especial"


def _own_file(info, label, owner):
    """Refused unless `info` is a regular file with one link, owned by `owner` (when given)."""
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{label} es {_kind(info.st_mode)}, no un archivo normal; el corrector no "
                      "lo abre")
    if info.st_nlink == 0:
        raise FileNotFoundError(errno.ENOENT, "removed meanwhile", label)
    if info.st_nlink > 1:
        raise Refused(f"{label} tiene más de un enlace duro (podría ser cualquier otro archivo "
                      "del sistema); el corrector no lo abre")
    if owner is not None and info.st_uid != owner:
        raise Refused(f"{label} no es de quien debería (es del usuario {info.st_uid}); el "
                      "corrector no lo abre")


def read_regular(dir_fd, name, limit, label=None, owner=None):
    """(bytes, stat) of the regular file `name` in `dir_fd`: at most `limit` + 1 bytes.

    Never follows a link and never opens anything but a regular file with one link, owned by
    `owner` when it is given."""
    label = label or name
    if O_PATH and os.path.isdir("/proc/self/fd"):
        handle = os.open(valid_name(name), O_PATH | os.O_NOFOLLOW | CLOEXEC, dir_fd=dir_fd)
        try:
            _own_file(os.fstat(handle), label, owner)
            fd = os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | os.O_NOCTTY | CLOEXEC)
        finally:
            os.close(handle)
    else:
        fd = os.open(valid_name(name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC,
                     dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        _own_file(info, label, owner)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks), info
    finally:
        os.close(fd)


class Folder:
    """An open folder; everything below it is reached from its descriptor, one name at a time.

    `owner` (a uid) is who gets what the grader creates in it (None: leave it to the grader)."""

    def __init__(self, fd, label, owner=None):
        self.fd, self.label, self.owner = fd, label, owner

    @classmethod
    def trusted(cls, path, owner=None, expect_uid=None):
        """Open a folder on a path no submission can write to (checked: a folder, its owner)."""
        fd = os.open(path, DIR_FLAGS)
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode) or (expect_uid is not None
                                              and info.st_uid != expect_uid):
            os.close(fd)
            raise OSError(errno.EPERM, f"{path} is not the folder the grader made")
        return cls(fd, "", owner)

    def _label(self, name):
        return f"{self.label}/{name}" if self.label else name

    def make_dir(self, name, owner=None, private=False, label=None):
        """A new folder `name` here (it must not exist), owned by `owner` (this folder's when
        None); everything the grader makes below it goes to that owner too. `private`: 0700
        (one test's folder: no other test's uid gets in). `label`: how reports name it."""
        owner = self.owner if owner is None else owner
        label = self._label(name) if label is None else label
        try:
            os.mkdir(valid_name(name), 0o700 if private else 0o755, dir_fd=self.fd)
            fd = os.open(name, DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise refusal(label, exc) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                raise Refused(f"{label} fue sustituida por otra carpeta justo después de "
                              "crearla; el corrector no la usa")
            if owner is not None:
                os.fchown(fd, owner, owner)
        except OSError as exc:
            os.close(fd)
            raise refusal(label, exc) from None
        except Refused:
            os.close(fd)
            raise
        given_times(fd)
        given_times(self.fd)
        return Folder(fd, label, owner)

    def write_file(self, name, data):
        """A new regular file `name` here with `data` (it must not exist), owned by `owner`."""
        label = self._label(name)
        try:
            fd = os.open(valid_name(name), NEW_FILE_FLAGS, 0o644, dir_fd=self.fd)
        except OSError as exc:
            raise refusal(label, exc) from None
        try:
            if self.owner is not None:
                os.fchown(fd, self.owner, self.owner)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            given_times(fd)
        except OSError as exc:
            raise refusal(label, exc) from None
        finally:
            os.close(fd)
        given_times(self.fd)

    def make_link(self, name, target):
        """A new symbolic link `name` here pointing at `target`: a sibling's name, a path of
        names below a sibling ("Fondo/Dentro"), or an absolute path of names (where the server
        sees a folder the grader made); never "..". `name` must not exist. The grader never
        follows it itself: only the server resolves it."""
        label = self._label(name)
        absolute = target.startswith("/")
        parts = target[1:].split("/") if absolute else target.split("/")
        try:
            os.symlink("/" * absolute + "/".join(valid_name(part) for part in parts),
                       valid_name(name), dir_fd=self.fd)
        except OSError as exc:
            raise refusal(label, exc) from None
        given_times(name, dir_fd=self.fd)
        given_times(self.fd)

    def move(self, name, to, new_name):
        """Rename the entry `name` here to `new_name` in the folder `to` (both folders the
        grader made): the entry itself moves, a link is never followed, and a `new_name` that
        exists there is refused. Exercise 4's folder moved while a handle is open."""
        label = self._label(name)
        try:
            os.stat(valid_name(new_name), dir_fd=to.fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise refusal(to._label(new_name), exc) from None
        else:
            raise refusal(to._label(new_name), OSError(errno.EEXIST, "exists"))
        try:
            os.rename(valid_name(name), valid_name(new_name), src_dir_fd=self.fd, dst_dir_fd=to.fd)
        except OSError as exc:
            raise refusal(label, exc) from None
        given_times(self.fd)
        given_times(to.fd)

    def remove(self, name):
        """Delete the entry `name` here and everything below it (a test's folder, once the
        test is over): never follows a link, never recurses (see `remove_tree`)."""
        try:
            info = os.stat(valid_name(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(info.st_mode):
            _quietly(os.unlink, name, dir_fd=self.fd)
            given_times(self.fd)
            return
        try:
            top = os.open(name, DIR_FLAGS, dir_fd=self.fd)
        except OSError:
            return
        try:
            _empty(top)
        finally:
            os.close(top)
        _quietly(os.rmdir, name, dir_fd=self.fd)
        given_times(self.fd)

    def remove_link(self, name):
        """Remove the symbolic link `name` the grader made here (the link, never its target);
        Refused when something else took its place."""
        label = self._label(name)
        try:
            info = os.stat(valid_name(name), dir_fd=self.fd, follow_symlinks=False)
            if not stat.S_ISLNK(info.st_mode):
                raise Refused(f"{label} ya no es el enlace que puso el corrector (es "
                              f"{_kind(info.st_mode)}); el corrector no lo toca")
            os.unlink(valid_name(name), dir_fd=self.fd)
        except OSError as exc:
            raise refusal(label, exc) from None
        given_times(self.fd)

    def snapshot(self, max_depth=MAX_DEPTH, max_entries=MAX_ENTRIES,
                 max_file=MAX_FILE_BYTES, max_total=MAX_TOTAL_BYTES, folders=None):
        """{relative path: (sha256 of the first `max_file` bytes, inode)} of every file below;
        with a set as `folders`, the relative path of every folder below is added to it (an
        empty folder holds no file, so only this way can it be seen).

        Raises Refused for a link, a special file, a swapped folder, or when a cap is hit."""
        files, entries, total = {}, 0, 0
        pending = [(os.dup(self.fd), "", 0)]
        try:
            while pending:
                fd, prefix, depth = pending.pop()
                try:
                    names = sorted(_listing(fd, max_entries - entries, prefix or "."))
                    entries += len(names)
                    for name in names:
                        relative = f"{prefix}/{name}" if prefix else name
                        label = self._label(relative)
                        try:
                            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                        except FileNotFoundError:  # moved away by the server meanwhile
                            continue
                        if stat.S_ISDIR(info.st_mode):
                            if depth + 1 >= max_depth:
                                raise Refused(f"{label}: demasiados niveles de carpetas (más "
                                              f"de {max_depth}); el corrector no sigue")
                            try:
                                child = os.open(name, DIR_FLAGS, dir_fd=fd)
                            except FileNotFoundError:
                                continue
                            except OSError as exc:
                                raise refusal(label, exc) from None
                            if os.fstat(child).st_ino != info.st_ino:
                                os.close(child)
                                raise Refused(f"{label} cambió mientras el corrector la leía")
                            pending.append((child, relative, depth + 1))
                            if folders is not None:
                                folders.add(relative)
                        elif stat.S_ISREG(info.st_mode):
                            try:
                                data, opened = read_regular(fd, name, max_file, label,
                                                            self._file_owner())
                            except FileNotFoundError:
                                continue
                            except OSError as exc:
                                raise refusal(label, exc) from None
                            total += min(len(data), max_file)
                            if total > max_total:
                                raise Refused("las notas ocupan demasiado (más de "
                                              f"{max_total >> 20} MiB); el corrector no sigue")
                            files[relative] = (hashlib.sha256(data[:max_file]).hexdigest(),
                                               opened.st_ino)
                        else:
                            raise Refused(f"{label} es {_kind(info.st_mode)}; el corrector no "
                                          "lo sigue ni lo abre")
                finally:
                    os.close(fd)
        finally:
            for fd, _, _ in pending:
                os.close(fd)
        return files

    def _file_owner(self):
        """Whom the files below must belong to: the sandbox's uid, or the grader's."""
        return self.owner if self.owner is not None else os.geteuid()

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _listing(fd, room, label):
    """The names in the folder `fd`; Refused when there are more than `room`."""
    names = []
    with os.scandir(fd) as scan:
        for entry in scan:
            if len(names) >= room:
                raise Refused(f"demasiadas entradas en las carpetas de notas ({label}); el "
                              "corrector no sigue")
            names.append(entry.name)
    return names


def remove_tree(path):
    """Delete `path` and everything below it; never follows a link, never recurses.

    Subfolders are moved up next to the one being emptied (renameat within the same folder
    tree), so a chain thousands of levels deep needs three descriptors, not thousands."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    top = os.open(path, DIR_FLAGS)
    try:
        _empty(top)
    finally:
        os.close(top)
    _quietly(os.rmdir, path)


def _empty(top):
    """Delete everything in the folder `top` (a descriptor): see `remove_tree`."""
    counter = 0
    progress = True
    while progress:  # a pass that removes nothing means what is left cannot be removed
        progress = False
        with os.scandir(top) as scan:
            names = [entry.name for entry in scan]
        for name in names:
            try:
                info = os.stat(name, dir_fd=top, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                progress |= _quietly(os.unlink, name, dir_fd=top)
                continue
            try:
                fd = os.open(name, DIR_FLAGS, dir_fd=top)
            except OSError:
                continue
            try:
                os.fchmod(fd, 0o700)
                with os.scandir(fd) as scan:
                    inner = [entry.name for entry in scan]
                for child in inner:
                    try:
                        kind = os.stat(child, dir_fd=fd, follow_symlinks=False).st_mode
                    except FileNotFoundError:
                        continue
                    if stat.S_ISDIR(kind):
                        counter += 1
                        progress |= _quietly(os.rename, child,
                                             f".grader-rm-{os.getpid()}-{counter}",
                                             src_dir_fd=fd, dst_dir_fd=top)
                    else:
                        progress |= _quietly(os.unlink, child, dir_fd=fd)
            except OSError:
                pass
            finally:
                os.close(fd)
            progress |= _quietly(os.rmdir, name, dir_fd=top)


def _quietly(function, *args, **kwargs):
    try:
        function(*args, **kwargs)
        return True
    except OSError:
        return False
