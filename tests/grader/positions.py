"""Submissions that try to tell which test is running, for tests/grader/test_no_counter.py.

- `recorder(folder)`: the reference, with a first block in every exercise file that writes on
  its server's stderr, as one line `SEEN {json}`, everything a server could count tests by:
  its pid and its parent's, its parent's and grandparent's /proc stat (CPU ticks, memory,
  start time) and its own, the /proc listing, the time since boot, its uid and groups, its
  folders, the times of the files and folders it was given (and how long ago each changed or
  was born), the interpreter's heap (allocated
  blocks, objects the collector tracks), what the frames above the learner's code hold, and the
  inode numbers of its standard streams and of a pipe and a memory file it makes.
  Its resident memory is not recorded: it moves by a page with the machine's page cache,
  whatever the position. `seen(stderr_lines)` parses the records.
- `pid_threshold(folder)`: the reference, except that exercise 2's tool archives nothing once
  the server's pid (or its distance to its parent's) passes a threshold that only the first
  servers of a grading stay under where a pid counts servers: it would keep the public points
  and lose hidden ones.

`COUNTERS` are the recorded values that could count tests; the uid is fresh in every test by
design (where the host has private uids) and must not follow the tests' order instead.
"""

import os

from mutants import REFERENCE, write_solutions

SEEN = r'''
def _seen_by_this_server():
    import gc, os, sys, time

    def look(action):
        try:
            return action()
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__

    def stat_of(pid):  # utime stime cutime cstime, starttime vsize rss (proc(5) 14-17, 22-24)
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return fields[11:15] + fields[19:22]

    def times(path):
        info = os.stat(path, follow_symlinks=False)
        return [info.st_mtime_ns, info.st_atime_ns]

    def age(path):  # seconds since its last change: the grading's time so far?
        return (time.time_ns() - os.stat(path, follow_symlinks=False).st_ctime_ns) / 1e9

    def birth(path):  # statx: a birth time (its age, as above), or why there is none
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        buffer = ctypes.create_string_buffer(256)
        if libc.statx(-100, path.encode(), 0x100, 0x800, buffer) != 0:  # AT_SYMLINK_NOFOLLOW
            return "errno " + str(ctypes.get_errno())
        if not int.from_bytes(buffer.raw[0:4], "little") & 0x800:
            return "no birth time"
        return int(time.time()) - int.from_bytes(buffer.raw[0x50:0x58], "little", signed=True)

    def above():  # what the frames that called the learner's code hold, by type and size
        frame, found = sys._getframe(1), []
        while frame is not None:
            for value in list(frame.f_locals.values()):
                for name in ("children", "uids"):
                    held = getattr(value, name, None)
                    if isinstance(held, (dict, set)):
                        found.append([type(value).__name__, name, len(held)])
            frame = frame.f_back
        return found

    # First, before any value below is alive: an int of -5..256 is a shared object and a
    # larger one a new block, so a value still being recorded (plain mode's pid - ppid, which
    # that mode lists as visible) would move the count by one. And once the server's own
    # threads are idle (its clock's thread may not have reached its wait yet on a busy
    # machine): two looks 20 ms apart that agree.
    heap = None
    for _ in range(100):
        looked = [sys.getallocatedblocks(), len(gc.get_objects())]
        if looked == heap:
            break
        heap = looked
        time.sleep(0.02)
    here = os.path.dirname(os.path.abspath(__file__))
    ppid = os.getppid()

    def made():  # what the kernel numbers machine-wide: a pipe, a memory file
        read, write = os.pipe()
        numbers = [os.fstat(read).st_ino, look(lambda: os.fstat(os.memfd_create("n")).st_ino)]
        os.close(read)
        os.close(write)
        return numbers

    given = [here, os.path.abspath(__file__), os.getcwd(), os.environ.get("TMPDIR", "/tmp"),
             os.environ.get("HOME", "/"), sys.path[0]]
    made = [os.path.dirname(here), os.path.join(sys.path[0], "main.py"),  # the sandbox made
            os.path.join(sys.path[0], "__pycache__")]
    SYSTEM = ["/", "/etc", "/etc/passwd"]  # the sandbox's own tree, or (plain) the machine's
    return {
        "pid": os.getpid(), "ppid": ppid, "pgid": os.getpgid(0), "sid": os.getsid(0),
        "pid_minus_ppid": os.getpid() - ppid,
        "parent_stat": look(lambda: stat_of(ppid)),
        "grandparent_stat": look(lambda: stat_of(int(open(f"/proc/{ppid}/stat").read()
                                                     .rsplit(")", 1)[1].split()[1]))),
        "self_stat": look(lambda: stat_of("self")),
        "proc": look(lambda: sorted(os.listdir("/proc"))),
        "uptime": look(lambda: open("/proc/uptime").read()),
        "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
        "folder": here, "cwd": os.getcwd(), "code": sys.path[0],
        "times": {path: look(lambda path=path: times(path)) for path in given},
        "system_times": {path: look(lambda path=path: times(path)) for path in ("/", "/etc",
                                                                               "/etc/passwd")},
        "ages": {path: look(lambda path=path: age(path)) for path in given + made},
        "births": {path: look(lambda path=path: birth(path)) for path in given + made},
        "system_ages": {path: look(lambda path=path: age(path)) for path in SYSTEM},
        "system_births": {path: look(lambda path=path: birth(path)) for path in SYSTEM},
        "heap": heap,
        "stdio_inodes": [look(lambda fd=fd: os.fstat(fd).st_ino) for fd in (0, 1, 2)],
        "made_inodes": look(made),
        "above": above(),
        "monotonic": time.monotonic(),
    }


import json as _json
import sys as _sys

_sys.stderr.write("SEEN " + _json.dumps(_seen_by_this_server()) + "\n")
_sys.stderr.flush()
'''

# Values that could count tests: every server of a submission must see the same, in every
# run (public only, or all), in the modes that close them (plain mode lists what it cannot).
COUNTERS = ("pid", "ppid", "pgid", "sid", "pid_minus_ppid", "parent_stat", "grandparent_stat",
            "self_stat", "proc", "uptime", "gid", "groups", "cwd", "times", "system_times", "heap",
            "above", "births", "system_births", "stdio_inodes", "made_inodes")
# Seconds since each given file last changed: they grow with the clock between two servers
# unless each server's own start gave the times again (test_no_counter compares their spread
# with the grading's).
AGES = ("ages", "system_ages")


def recorder(folder):
    """The reference with `SEEN` first in every exercise file."""
    texts = {}
    for name in sorted(os.listdir(REFERENCE)):
        with open(os.path.join(REFERENCE, name), encoding="utf-8") as handle:
            source = handle.read()
        end = source.index('"""', 3) + 4 if source.startswith('"""') else 0  # docstring first
        texts[name] = source[:end] + SEEN + source[end:]
    return write_solutions(folder, texts)


THRESHOLD = 24  # the first servers of a grading stay under it, where a pid counts servers
ARCHIVE_CALL = "def notes_archive("


def pid_threshold(folder):
    """The reference, except that exercise 2's tool does nothing once a pid counts servers."""
    with open(os.path.join(REFERENCE, "ejercicio2.py"), encoding="utf-8") as handle:
        source = handle.read()
    assert source.count(ARCHIVE_CALL) == 1
    at = source.index(ARCHIVE_CALL)
    body = source.index(":\n", at) + 2
    source = ("import os as _os\n" + source[:body] +
              f"    if _os.getpid() > {THRESHOLD} or _os.getpid() - _os.getppid() > {THRESHOLD}:\n"
              "        return ok('No se archivó nada.')\n" + source[body:])
    return write_solutions(folder, {"ejercicio2.py": source})


def seen(stderr_lines):
    """The SEEN records among a server's stderr lines."""
    import json
    return [json.loads(line[len("SEEN "):]) for line in stderr_lines if line.startswith("SEEN ")]
