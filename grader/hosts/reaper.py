"""Ending every process of a sandbox that has no PID namespace (plain mode), and its litter.

In the root and userns modes the kernel ends everything when the sandbox's PID namespace dies.
Plain mode has none: a learner's process can start a new session, fork twice and outlive
everything the grader started. What still holds:

- with a private uid (the grader runs as root): `kill_uid(uid, seconds)` runs
  `kill(-1, SIGSTOP)` then `kill(-1, SIGKILL)` as that uid (stopped, a process cannot fork
  away), so the kernel signals every process of the uid but the caller (and nobody else's,
  even if a pid was recycled), and repeats until /proc shows no process of the uid left, or
  `seconds` pass;
- without one (the grader's own uid): `kill_descendants(pid, seconds)` kills every descendant
  of the zygote, which is a child subreaper (an orphan of the sandbox is re-parented to it, so
  it stays its descendant), until none is left;
- `clean_shared(uid)` removes what a private uid left in the machine's world-writable temp
  folders (/tmp, /var/tmp, /dev/shm, /run/lock, the grader's TMPDIR and the world-writable
  folders in them), without following links, once no process of the uid is left.

Deliberate simplifications: files a uid left in other world-writable places stay (nothing runs
as that uid again, grader/hosts/uids.py); the zygote keeps its own copies of the two loops (it runs
chrooted, on the system Python, and imports nothing of the grader).
"""

import os
import signal
import stat
import subprocess
import tempfile
import time

from grader import boundary
from grader.hosts import uids
from grader.hosts.uids import uids_of

SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
SHARED_DEPTH = 3
# kill(-1) only once it is certainly that uid and not root (as root it would hit everything)
KILLER = ("/usr/bin/python3", "-I", "-S", "-c",
          "import os, sys; u = int(sys.argv[1]); ok = u > 0 and os.getresuid() == (u, u, u)\n"
          "if ok:\n for s in (19, 19, 9): os.kill(-1, s)")  # stopped, a process cannot fork
FIRST_SANDBOX_UID = uids.FIRST  # below this, uids may be real accounts: never reaped


def processes_of(uid):
    """Pids of the live processes that have `uid` as any of their uids."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/status", "rb") as handle:
                    if uid in uids_of(handle.read()):
                        pids.append(int(name))
            except OSError:
                pass
    return pids


def kill_uid(uid, seconds):
    """SIGKILL every process of `uid` until none is left; False if some outlived `seconds`."""
    if not FIRST_SANDBOX_UID <= uid < 0xFFFFFFFF:
        raise ValueError(f"uid {uid} is not a sandbox's")
    deadline = time.monotonic() + seconds
    while processes_of(uid):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            subprocess.run((*KILLER, str(uid)), user=uid, group=uid, extra_groups=[], cwd="/",
                           env={}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=max(0.5, left))
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.005)
    return True


def descendants(root):
    """Pids of the live descendants of `root` (not `root` itself)."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                if fields[0] != b"Z":
                    parents[int(name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
    below, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - below
        below |= frontier
    return below


def kill_descendants(root, seconds):
    """SIGKILL every descendant of `root` until none is left; False if some outlived
    `seconds`."""
    deadline = time.monotonic() + seconds
    while below := descendants(root):
        if time.monotonic() > deadline:
            return False
        for signum in (signal.SIGSTOP, signal.SIGKILL):  # stopped first: it cannot fork
            for pid in below:
                try:
                    os.kill(pid, signum)
                except OSError:
                    pass
        time.sleep(0.002)
    return True


def clean_shared(uid, folders=SHARED_TEMP):
    """Remove what `uid` owns in the world-writable temp folders, the grader's TMPDIR
    included when others may write there (never through a link)."""
    pending = [(folder, 0) for folder in (*folders, tempfile.gettempdir())]
    while pending:
        folder, depth = pending.pop()
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            for name in os.listdir(fd):
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if info.st_uid == uid and stat.S_ISDIR(info.st_mode):
                    boundary.remove_tree(os.path.join(folder, name))
                elif info.st_uid == uid:
                    try:
                        os.unlink(name, dir_fd=fd)
                    except OSError:
                        pass
                elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH \
                        and depth + 1 < SHARED_DEPTH:
                    pending.append((os.path.join(folder, name), depth + 1))
        finally:
            os.close(fd)
