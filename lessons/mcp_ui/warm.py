"""The grader for the learner's next `revisar`, started ahead while they edit (CPython only).

A check is mostly fixed cost paid again each time: a Python process, the grader's and pytest's
imports, pytest's collection of the checks. `revisar` pays it once, cold, and then keeps one
helper ready (`python -m grader.warm`, grader/warm.py) that has paid it already:

    helper = take(key)   # the ready helper, if it was started for this very setting
    stdout, stderr, status = run(helper, args, timeout)   # it runs one check, then exits
    prepare()            # after the check: a new helper for the next one

A helper serves exactly one check and is spent: the learner's files are read and every server
started only once the command line reaches it (a sandbox may be built ahead, its solution
folder empty until then: grader/hosts/ahead.py), and it exits afterwards. The
next helper is started only after a check is over, so it was never there while a learner's
server ran. A helper is used only for the setting it was started in (`key`: this Python, the
course folder, the environment, and the grader's and code/'s files as they were on disk): a
changed `GRADER_HOST`, or an edited grader, makes `take` end it and the check runs cold.

Deliberate simplifications: one helper at a time (revisar checks one exercise at a time); the
key sees a file changed by its size and modification time, not by its contents.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys

from .env import REPO

READY = b"ready\n"  # grader/warm.py's first line
_ready: tuple | None = None  # (key, the helper's Popen)
_exit_hook = []  # discard() registered with atexit, once a helper was started


def key() -> tuple:
    """What a helper's work depends on besides its one command line."""
    stamp = []
    for folder in (REPO / "grader", REPO / "code"):
        for parent, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".ini")):
                    try:
                        info = os.stat(os.path.join(parent, name))
                    except OSError:
                        continue
                    stamp.append((parent, name, info.st_size, info.st_mtime_ns))
    return (sys.executable, str(REPO), tuple(sorted(os.environ.items())), tuple(stamp))


def start() -> subprocess.Popen:
    """A new helper (it warms up on its own; its first output line says when it is ready)."""
    return subprocess.Popen([sys.executable, "-m", "grader.warm"], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)


def prepare() -> None:
    """Start the helper for the next check (ending any other)."""
    global _ready
    discard()
    if not _exit_hook:
        _exit_hook.append(atexit.register(discard))
    _ready = (key(), start())


def take(wanted: tuple) -> subprocess.Popen | None:
    """The ready helper if it was started for `wanted` and is still alive, else None. Either
    way it is no longer kept: a helper is handed out once."""
    global _ready
    kept, _ready = _ready, None
    if kept is None:
        return None
    started_for, helper = kept
    if started_for != wanted or helper.poll() is not None:
        end(helper)
        return None
    return helper


def kept() -> subprocess.Popen | None:
    """The helper kept for the next check, if any."""
    return _ready[1] if _ready is not None else None


def wait_ready(timeout: float) -> bool:
    """Wait until the kept helper has warmed up (the benchmark's learner, done editing)."""
    if _ready is None:
        return False
    helper = _ready[1]
    if getattr(helper, "ready", False):
        return True
    import selectors
    with selectors.DefaultSelector() as selector:
        selector.register(helper.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return False
    line = helper.stdout.readline()  # unbuffered: reads only this line, byte by byte
    helper.ready = line == READY
    return helper.ready


def run(helper: subprocess.Popen, args: list[str],
        timeout: float) -> tuple[str, str, int] | None:
    """Run one `python -m grader` command line (`args`, without the program) in `helper`: its
    stdout and stderr as text, and its exit status; None if the helper died before it was
    ready (nothing was graded: run the check another way). On a timeout the helper is killed
    and subprocess.TimeoutExpired raised, as subprocess.run does."""
    line = json.dumps(args).encode() + b"\n"
    try:
        out, err = helper.communicate(line, timeout=timeout)
    except subprocess.TimeoutExpired:
        end(helper)
        raise
    if out.startswith(READY):
        out = out[len(READY):]
    elif not getattr(helper, "ready", False):
        return None
    return (out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), helper.returncode)


def end(helper: subprocess.Popen) -> None:
    if helper.poll() is None:
        helper.kill()
    helper.communicate()


def discard() -> None:
    """End the kept helper, if any."""
    global _ready
    kept, _ready = _ready, None
    if kept is not None:
        end(kept[1])

