"""Note folders by path, and what else the self-check hosts (portable, in-process) share.

The official grader touches the sandbox's data area only through grader/boundary.py
(descriptors, one name at a time), because the learner's server may attack it. A self-check runs
the learner's own code on the learner's own machine, where there is nothing to defend, and on
systems where those descriptor calls do not exist (Windows, the browser). `PlainData` offers the
same operations as `boundary.Folder` (make_dir, write_file, make_link, move, remove,
remove_link, snapshot, close) with plain paths, and keeps the same rules a test can observe: a
new name must not exist, a link or a special file where a note should be is refused (never
followed), and a snapshot is {relative path: (sha256, inode)} with a depth cap.

`SelfCheckHost` is the rest the two hosts share: one user (yours), and their folders (the
notes' among them) in the workspace the host kind gave them.

Deliberate simplifications: no caps on entries or bytes beyond the depth; names are checked
to be one path component.
"""

import hashlib
import os
import shutil
import stat

from grader.errors import Refused

MAX_DEPTH = 12


def _name(name):
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name \
            or "\0" in name:
        raise ValueError(f"not a single path component: {name!r}")  # a grader bug
    return name


class PlainData:
    """A folder the self-check made; everything below it is reached by path."""

    def __init__(self, path, label=""):
        self.path, self.label = path, label

    def _label(self, name):
        return f"{self.label}/{name}" if self.label else name

    def make_dir(self, name, owner=None, private=False, label=None):
        """As boundary.Folder.make_dir; `owner` means nothing here (one user: yours)."""
        path = os.path.join(self.path, _name(name))
        label = self._label(name) if label is None else label
        try:
            os.mkdir(path, 0o700 if private else 0o777)
        except FileExistsError:
            raise Refused(f"{label} ya existía antes de que el corrector lo creara; "
                          "el corrector no lo usa") from None
        return PlainData(path, label)

    def remove(self, name):
        """Delete the entry `name` and everything below it (a link itself, never its target)."""
        path = os.path.join(self.path, _name(name))
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            try:
                os.unlink(path)
            except OSError:
                pass

    def write_file(self, name, data):
        try:
            with open(os.path.join(self.path, _name(name)), "xb") as handle:
                handle.write(data)
        except FileExistsError:
            raise Refused(f"{self._label(name)} ya existía antes de que el corrector lo creara; "
                          "el corrector no lo usa") from None

    def make_link(self, name, target):
        try:
            absolute = target.startswith("/")
            parts = [_name(part) for part in (target[1:] if absolute else target).split("/")]
            os.symlink(os.sep * absolute + os.path.join(*parts),
                       os.path.join(self.path, _name(name)), target_is_directory=True)
        except OSError as exc:  # Windows without the symlink privilege, or the name exists
            raise Refused(f"el corrector no pudo crear el enlace {self._label(name)} "
                          f"({exc.strerror or type(exc).__name__})") from None

    def move(self, name, to, new_name):
        target = os.path.join(to.path, _name(new_name))
        if os.path.lexists(target):
            raise Refused(f"{to._label(new_name)} ya existía antes de que el corrector lo "
                          "creara; el corrector no lo usa")
        os.rename(os.path.join(self.path, _name(name)), target)

    def remove_link(self, name):
        path = os.path.join(self.path, _name(name))
        if not os.path.islink(path):
            raise Refused(f"{self._label(name)} ya no es el enlace que puso el corrector; el "
                          "corrector no lo toca")
        os.unlink(path)

    def snapshot(self, folders=None):
        """{relative path: (sha256, inode)} of every file below; a link or a special file where
        a note should be is refused (never followed). With a set as `folders`, every folder's
        relative path is added to it."""
        files, pending = {}, [(self.path, "", 0)]
        while pending:
            folder, prefix, depth = pending.pop()
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
            for entry in entries:
                relative = f"{prefix}/{entry.name}" if prefix else entry.name
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode) and not entry.is_symlink():
                    if depth + 1 >= MAX_DEPTH:
                        raise Refused(f"{self._label(relative)}: demasiados niveles de carpetas")
                    pending.append((entry.path, relative, depth + 1))
                    if folders is not None:
                        folders.add(relative)
                elif stat.S_ISREG(info.st_mode) and not entry.is_symlink():
                    with open(entry.path, "rb") as handle:
                        digest = hashlib.sha256(handle.read()).hexdigest()
                    files[relative] = (digest, info.st_ino)
                else:
                    raise Refused(f"{self._label(relative)} no es un archivo ni una carpeta "
                                  "normal; el corrector no lo sigue ni lo abre")
        return files

    def close(self):
        pass


class SelfCheckHost:
    """The part of a self-check host that does not depend on how its servers run: the learner's
    own code on the learner's own machine, as one user, with its folders in `workspace`."""

    self_check = True
    folders = ("data",)  # made in the workspace by start(); "data" holds the notes

    def __init__(self, solution_dir, workspace):
        self.solution_dir = solution_dir
        self.root = workspace
        self.data = None

    def start(self):
        for name in self.folders:
            os.makedirs(os.path.join(self.root, name))
        self.data = PlainData(os.path.join(self.root, "data"))
        return self

    def inner(self, name):
        return self.solution_dir if name == "solution" else os.path.join(self.root, name)

    def identity(self):
        """One user here (yours): every test's servers run as you."""
        return None

    def lend(self, lending):
        """Nothing: a self-check grades one submission, nobody else's runs beside it."""

    def release(self, identity):
        """Nothing to end beyond the test's own servers (each stops when its run is closed)."""

    def protections(self):
        return dict(self.plan)
