"""Private uids for sandboxes: a fresh one each time, never one a live process still has.

Learner code runs as a uid of its own (root and plain modes). Without a PID namespace (plain
mode) a process a learner leaves behind would keep running as that uid, so handing the uid to
the next learner would hand it that process. `allocate()` therefore picks at random in a large
range (`GRADER_UID_RANGE=START:COUNT` narrows it, for tests), never a uid this process already
handed out while a fresh one is left, and never one that any process on the machine has as its
real, effective, saved or filesystem uid (read from /proc just before use; the root mode skips
this look, since its PID namespace ends every process of a sandbox with it). grader/hosts/reaper.py
ends every process of a uid when its plain sandbox ends.

Deliberate simplifications: no registry shared between grader processes (two workers picking
the same uid at once is a 1 in 16 million chance per pair, and the /proc check still applies);
zombies do not count as processes (they run nothing).
"""

import os
import random

DEFAULT_RANGE = (1 << 20, 1 << 24)  # uids 1,048,576 .. 17,825,791: far from real accounts
SMALL_RANGE = 4096                   # up to this many uids, every one is looked at
FIRST = 1 << 16                      # a narrowed range starts here or above (real accounts)
_used = set()
_random = random.SystemRandom()


class NoFreeUid(OSError):
    """Every uid of the range has a live process."""


def uid_range():
    """(first uid, how many): GRADER_UID_RANGE=START:COUNT, else the default range."""
    try:
        start, count = (int(part) for part in os.environ.get("GRADER_UID_RANGE", "").split(":"))
        if start >= FIRST and count > 0 and start + count < 0xFFFFFFFF:  # -1: "no change"
            return start, count
    except ValueError:
        pass
    return DEFAULT_RANGE


def uids_of(status):
    """The uids (real, effective, saved, filesystem) in a /proc/PID/status text; empty for a
    zombie."""
    if b"\nState:\tZ" in status:
        return set()
    for line in status.split(b"\n"):
        if line.startswith(b"Uid:"):
            return {int(value) for value in line.split()[1:]}
    return set()


def live_uids():
    """Every uid that some live process on this machine has."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/status", "rb") as handle:
                    found |= uids_of(handle.read())
            except OSError:
                pass
    return found


def allocate(check_live=True):
    """A uid for one sandbox: no live process has it, and this process has not handed it out
    before unless a narrowed range has no other left. Raises NoFreeUid. `check_live=False`
    skips the look at /proc (about 20 ms on a busy machine) where a PID namespace already ends
    every process of a sandbox with it (the root mode)."""
    return allocate_many(1, check_live)[0]


def allocate_many(wanted, check_live=True, busy=()):
    """Up to `wanted` uids as `allocate` gives them (at least one; fewer when a narrowed range
    has no more), with one look at /proc for all of them: a sandbox takes a uid per test. `busy`:
    uids the caller still uses (never handed out again while it does)."""
    start, count = uid_range()
    live = (live_uids() if check_live else set()) | set(busy)
    if count <= SMALL_RANGE:  # every one, in no order: a uid must not say how many came before
        candidates = _random.sample(range(start, start + count), count)
    else:
        candidates = list(dict.fromkeys(start + _random.randrange(count)
                                        for _ in range(64 + wanted)))
    free = [uid for uid in candidates if uid not in live]
    fresh = [uid for uid in free if uid not in _used] or \
        (free if count <= SMALL_RANGE else [])
    if not fresh:
        raise NoFreeUid(f"no uid without a live process in {start}..{start + count - 1}")
    chosen = fresh[:wanted]
    _used.update(chosen)
    return chosen
