"""The sandbox's data area where each test's folder is a file system of its own.

In the namespace modes (root, userns) the sandbox's `data` is a `DataArea`: a test's folder
(`make_dir` of a name in the data area itself) is a fresh tmpfs the zygote's mounter mounts for
it (grader/hosts/zygote.py, `Volumes`), and `remove` unmounts it. Everything below a test's
folder is made by the grader as before (grader.boundary.Folder: descriptors, one name at a time).

Why: a file system numbers the inodes it makes in order, never reusing them. In one shared
data area the inode numbers of a test's folder and notes would tell a server how many folders
and notes were made for the tests before its own, a counter of tests (grader/README.md, *No
counter between tests*). On a fresh file system the same layout gets the same numbers in every
test, and the unmounted file system's device number is given to the next.

Deliberate simplifications: only the data area's own entries are volumes (a test's folder);
plain mode, which cannot mount, keeps one data area and lists `inode_numbers` among what a
server can still count by.
"""

import errno
import os
import stat

from grader import boundary
from grader.errors import Refused


class DataArea(boundary.Folder):
    """The data area of a sandbox with volumes; `command` is the sandbox's (op, **fields)."""

    def __init__(self, fd, command):
        super().__init__(fd, "")
        self._command = command

    def make_dir(self, name, owner=None, private=False, label=None):
        """A test's folder `name`: a fresh file system, owned by `owner` (the grader's own when
        None), 0700 when `private`."""
        label = self._label(boundary.valid_name(name)) if label is None else label
        try:
            self._command("volume", name=name, uid=owner, private=private)
        except Exception as exc:  # the sandbox's error (a full disk cannot happen yet)
            raise Refused(f"el corrector no pudo crear {label or 'la carpeta del test'} "
                          f"({exc})") from None
        try:
            fd = os.open(name, boundary.DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise boundary.refusal(label, exc) from None
        try:
            info, here = os.fstat(fd), os.fstat(self.fd)
            expected = os.geteuid() if owner is None else owner
            if not stat.S_ISDIR(info.st_mode) or info.st_dev == here.st_dev \
                    or info.st_uid != expected:
                raise Refused(f"{label} no es la carpeta que el corrector montó para el test; "
                              "el corrector no la usa")
        except (OSError, Refused):
            os.close(fd)
            raise
        boundary.given_times(fd)
        boundary.given_times(self.fd)
        return boundary.Folder(fd, label, owner)

    def remove(self, name):
        """A test is over: its folder's file system goes, with everything in it."""
        try:
            self._command("unvolume", name=boundary.valid_name(name))
        except Exception as exc:
            raise OSError(errno.EIO, f"the test's volume {name} was not removed: {exc}") \
                from None
        boundary.given_times(self.fd)
