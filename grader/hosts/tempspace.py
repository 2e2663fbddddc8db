"""The grader's temporary folders and cgroups: named after their owner, removed when it dies.

Every temporary folder is `<tmp>/grader-<pid>.<start>-<kind>-XXXXXXXX` and every cgroup
`grader-<pid>.<start>-job-XXXXXXXX`, where `<pid>.<start>` names the grader process that made
it: its process id and its start time (clock ticks since boot, from /proc/<pid>/stat), so a
recycled pid never matches. The sandbox launchers die with the grader process that started
them (parent-death signal), so what a killed grader leaves behind is only folders and empty
cgroups, and, in plain mode (no PID namespace), the processes a learner started in a new
session: a plain sandbox's job folder names its uid (`uid`, root's), so `clean_stale()` kills
every process of that uid and removes what it left in the shared temp folders
(grader/hosts/reaper.py) before it removes the folders and cgroups of grader processes that no
longer exist. It runs when the grader starts and whenever the pool replaces a worker it had to
kill.

Names that do not follow the pattern (anything another program made) are never touched.

Deliberate simplifications: the temp dir is tempfile.gettempdir() of the process that cleans
(TMPDIR); a grader that used another TMPDIR cleans its own leftovers on its next start.
"""

import os
import re
import signal
import tempfile
import time

from grader import boundary
from grader.hosts import reaper, uids

PATTERN = re.compile(r"^grader-(\d+)\.(\d+)-[a-z]+-")
CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_CONTROLLERS = ("pids", "memory", "cpu")
_tags = {}


def start_time(pid):
    """The start time of process `pid` (clock ticks since boot), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        if not os.path.isdir("/proc/self"):  # no procfs: the pid alone
            try:
                os.kill(pid, 0)
                return 0
            except ProcessLookupError:
                return None
            except OSError:
                return 0
        return None


def tag():
    pid = os.getpid()
    if pid not in _tags:
        _tags[pid] = f"{pid}.{start_time(pid) or 0}"
    return _tags[pid]


def mkdtemp(kind):
    """A new private folder named after this process (mode 0700)."""
    return tempfile.mkdtemp(prefix=f"grader-{tag()}-{kind}-")


def _owner_alive(name):
    match = PATTERN.match(name)
    if not match:
        return True  # not ours: never touched
    return start_time(int(match.group(1))) == int(match.group(2))


def _mine(name):
    return name.startswith(f"grader-{tag()}-")


def cgroup_parents():
    """{controller: the folder our sandboxes' cgroups go in} (those that exist)."""
    try:
        with open("/proc/self/cgroup") as handle:
            mine = {line.split(":")[1]: line.split(":", 2)[2].strip()
                    for line in handle if line.count(":") >= 2}
    except OSError:
        return {}
    parents = {}
    for controller in CGROUP_CONTROLLERS:
        folder = os.path.join(CGROUP_ROOT, controller, mine.get(controller, "/").lstrip("/"))
        if os.path.isdir(folder):
            parents[controller] = folder
    return parents


def remove_cgroup(path, wait=1.0):
    """Stop, then kill, whatever is still in a cgroup of ours, and remove it (retrying while it
    empties: a process that forks while it is being killed is stopped first, so it cannot)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            try:
                with open(os.path.join(path, "cgroup.procs")) as handle:
                    pids = handle.read().split()
            except OSError:
                pids = []
            for pid in pids:
                try:
                    os.kill(int(pid), signum)
                except (OSError, ValueError):
                    pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _sweep(select):
    """Processes first (a plain sandbox's uid, every member of a cgroup), folders last: nothing
    is still writing into a folder while it is removed. A folder that cannot go now (something
    still holds it) is left for the next sweep."""
    top = tempfile.gettempdir()
    try:
        folders = [os.path.join(top, name) for name in os.listdir(top)
                   if PATTERN.match(name) and select(name)]
    except OSError:
        folders = []
    for folder in folders:
        end_processes(folder)
    for parent in cgroup_parents().values():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if PATTERN.match(name) and select(name):
                remove_cgroup(os.path.join(parent, name), REAP_SECONDS)
    for folder in folders:
        try:
            boundary.remove_tree(folder)
        except OSError:
            pass


UID_FILE = "uid"  # uid.<number>: one file per private uid of a plain sandbox
REAP_SECONDS = 5.0


def record_uid(job, uid):
    """Name a private uid of a plain sandbox (its own, or one of a test's) in its job folder
    (root's, 0600, one file per uid; a narrowed range hands a uid out again: named once)."""
    try:
        fd = os.open(os.path.join(job, f"{UID_FILE}.{int(uid)}"),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    try:
        os.write(fd, str(uid).encode())
    finally:
        os.close(fd)


def end_processes(folder):
    """If `folder` is a plain sandbox's job folder, end every process of each uid it names (a
    dead grader could not) and remove what they left in the shared temp folders."""
    try:  # the folder itself never through a link, and the files are ours, written by us
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        for name in os.listdir(top):
            if name.startswith(UID_FILE + "."):
                uid = _recorded_uid(top, name)
                if uid is not None:
                    reaper.kill_uid(uid, REAP_SECONDS)
                    reaper.clean_shared(uid)
    finally:
        os.close(top)


def _recorded_uid(top, name):
    """The uid in the file `name` of the job folder `top`, when it is ours and in range."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=top)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        text = os.read(fd, 32) if info.st_uid == os.geteuid() and info.st_nlink == 1 else b""
    finally:
        os.close(fd)
    start, count = uids.uid_range()
    if text.isdigit() and (start <= int(text) < start + count
                           or int(text) >= uids.DEFAULT_RANGE[0]):
        return int(text)
    return None


def clean_stale():
    """Remove the temp folders and cgroups of grader processes that no longer exist."""
    _sweep(lambda name: not _owner_alive(name))


def remove_own():
    """Remove this process's temp folders and cgroups (it is about to exit)."""
    _sweep(_mine)
