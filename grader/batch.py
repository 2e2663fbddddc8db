"""`--batch DIR`: the submissions a class folder holds, in the layouts a class produces.

- flat: each entry of DIR is one learner's submission (.zip, .ipynb, .py or a folder with
  soluciones/ or the notebooks): graded by its path, as always (a folder is searched as a
  home only when it has no soluciones/ of its own and one is found below it);
- a JupyterHub's homes (DIR/<learner>/, the course somewhere inside, e.g.
  ~/curso/lessons/soluciones/): the folder holding soluciones/ is found at most MAX_DEPTH
  folders down and graded as that learner's submission;
- nbgrader's (DIR/submitted/<learner>/<assignment>/, DIR being nbgrader's course folder, or
  DIR itself named submitted): each assignment folder is a submission, named after the learner
  (`<learner>-<assignment>` when a learner has several).

A home is its learner's, so everything in it is hostile (links, FIFOs, huge folders, names):
it is searched through descriptors, one name at a time, never following a link (O_NOFOLLOW),
never opening anything but a folder (O_DIRECTORY), with caps on entries (the intake's) and on
the folders visited. The folder found is read at once, through the descriptor held since the
search, by the intake's own reader (grader/intake: owner, sizes, links, notebooks), and its
solution files are written into a staging folder of the grader's (0700, removed by
`Batch.close()`), which is what gets graded: no path the learner can change between the
search and the grading is opened again. What the reader said about it (a link ignored...) is
in `notes`, printed by the CLI.

Deliberate simplifications: when a home holds several copies of the course, the first in
name order is graded and the note says so; nbgrader's `autograded/` and `feedback/` folders
are not read.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile

from grader import boundary
from grader.intake.solutions import SKIP_DIRS, Prepared, Unreadable, read_folder
from grader.intake.submission import DiskFolder, write

MAX_DEPTH = 3          # folders below a home where the course may be (~/curso/lessons)
MAX_VISITED = 200      # folders opened while searching one home
SOLUTIONS = "soluciones"
NBGRADER = "submitted"
SKIPPED = SKIP_DIRS | {"node_modules"}


class Batch:
    """The submissions of DIR: `entries` [(path, name)], `notes` [(name, text)]."""

    def __init__(self, root):
        self.root = root
        self.entries: list[tuple[str, str]] = []
        self.notes: list[tuple[str, str]] = []
        self._staging = None

    def close(self):
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def staged(self, name, folder, owner):
        """Read the course folder `folder` (a DiskFolder) now and stage its solution files
        as `name`'s submission."""
        if self._staging is None:
            self._staging = tempfile.mkdtemp(prefix="grader-batch-")
        prepared = Prepared(name)
        try:
            read_folder(prepared, DiskFolder(folder, owner), "")
        except Unreadable as exc:
            prepared.problem(str(exc))
        except (OSError, ValueError, RecursionError, MemoryError, boundary.Refused) as exc:
            prepared.problem(f"no se pudo leer la entrega ({type(exc).__name__})")
        finally:
            os.close(folder)
        path = os.path.join(self._staging, str(len(self.entries)))
        write(prepared, path)
        self.entries.append((path, name))
        self.notes += [(name, text) for text in prepared.problems]


def discover(root):
    """The Batch of `root` (the instructor's folder; its own path is trusted)."""
    batch = Batch(root)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | boundary.CLOEXEC)
    try:
        names = _entries(fd)
        if os.path.basename(os.path.normpath(root)) == NBGRADER:
            _nbgrader(batch, os.dup(fd))
        elif names.get(NBGRADER) == "dir":
            _nbgrader(batch, os.open(NBGRADER, boundary.DIR_FLAGS, dir_fd=fd))
        else:
            for name in sorted(names):
                if not name.startswith("."):
                    _learner(batch, fd, name, names[name])
    finally:
        os.close(fd)
    return batch


def _learner(batch, parent, name, kind):
    """One entry of a flat class folder or of a hub's homes."""
    path = os.path.join(batch.root, name)
    if kind != "dir":  # a file, a link, a FIFO: the intake says what it is
        batch.entries.append((path, name))
        return
    try:
        home = os.open(name, boundary.DIR_FLAGS, dir_fd=parent)
    except OSError:
        batch.entries.append((path, name))
        return
    owner = os.fstat(home).st_uid
    try:
        if _is_course(home):
            batch.entries.append((path, name))  # flat: graded by its path, as before
            return
        found, more = _find_course(home)
    finally:
        os.close(home)
    if found is None:
        batch.entries.append((path, name))  # nothing to grade: the intake says so
        return
    fd, where = found
    if more:
        batch.notes.append((name, f"hay más de una copia del curso ({', '.join(more)}); se "
                                  f"corrige {where}"))
    batch.staged(name, fd, owner)


def _nbgrader(batch, submitted):
    """DIR/submitted/<learner>/<assignment>/: one submission per assignment folder."""
    try:
        for learner, kind in sorted(_entries(submitted).items()):
            if learner.startswith(".") or kind != "dir":
                continue
            try:
                folder = os.open(learner, boundary.DIR_FLAGS, dir_fd=submitted)
            except OSError:
                continue
            try:
                assignments = sorted(a for a, k in _entries(folder).items()
                                     if k == "dir" and not a.startswith("."))
                for assignment in assignments:
                    name = learner if len(assignments) == 1 else f"{learner}-{assignment}"
                    try:
                        fd = os.open(assignment, boundary.DIR_FLAGS, dir_fd=folder)
                    except OSError:
                        continue
                    batch.staged(name, fd, os.fstat(fd).st_uid)
            except Unreadable as exc:
                batch.notes.append((learner, str(exc)))
            finally:
                os.close(folder)
    finally:
        os.close(submitted)


def _entries(fd):
    """{name: kind} of a held folder (DiskFolder's rules: capped, links never followed)."""
    return dict(DiskFolder(fd).entries())


def _is_course(fd):
    """Does this folder hold soluciones/ itself (or is it too big to search)?"""
    try:
        return _entries(fd).get(SOLUTIONS) == "dir"
    except Unreadable:
        return True  # the intake reports a folder too big to read


def _find_course(home):
    """((descriptor, relative path), [other paths]) of the first folder under `home` (breadth
    first, by name) that holds soluciones/, or (None, []). Descriptors only, links never
    followed, at most MAX_DEPTH down and MAX_VISITED folders opened."""
    level, visited, found = [(os.dup(home), "")], 0, []
    try:
        for _ in range(MAX_DEPTH):
            below = []
            for fd, where in level:
                try:
                    names = _entries(fd)
                except (Unreadable, OSError):
                    continue
                for name, kind in sorted(names.items()):
                    if kind != "dir" or name.startswith(".") or name in SKIPPED \
                            or visited >= MAX_VISITED:
                        continue
                    try:
                        child = os.open(name, boundary.DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        continue
                    visited += 1
                    path = f"{where}{name}/"
                    if not stat.S_ISDIR(os.fstat(child).st_mode):
                        os.close(child)
                    elif _holds_solutions(child):
                        found.append((child, path))
                    else:
                        below.append((child, path))
            for fd, _ in level:
                os.close(fd)
            level = below
            if found:
                break
    finally:
        for fd, _ in level:
            os.close(fd)
    if not found:
        return None, []
    for fd, _ in found[1:]:
        os.close(fd)
    return found[0], [path for _, path in found[1:]]


def _holds_solutions(fd):
    try:
        return _entries(fd).get(SOLUTIONS) == "dir"
    except Unreadable:
        return False
