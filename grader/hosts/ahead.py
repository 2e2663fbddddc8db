"""A sandbox built ahead of its submission, by the grading worker a warm helper starts ahead.

What a sandbox costs before its first server (its zygote's Python start, the namespaces and
the tree, the hardening, the server code's imports and warm-up) is about a third of a short
self-check, and none of it depends on the learner's files. So the worker that a warm helper
starts ahead (grader/warm.py, grader/pool.py) also builds one, once it has warmed up
(kinds.SandboxKind `start_ahead`): a workspace like any other and, in it, an empty solution
folder (the modes grader/intake/submission.py `write` gives it), which the new sandbox binds
in (read-only inside, as always) and its zygote holds for FreshTimes. When the helper's one
command line arrives, the worker reads the learner's files (grader/intake/), writes them into
that folder (submission `fill`) and only then does the zygote hold them, compile them and
fork its template (grader/hosts/zygote.py, `op_submission`); no server can be spawned before.
From there on the check is the same as in a sandbox built for its submission.

Nothing of one check reaches another: the sandbox is built in a new worker, which serves one
check, before any learner's file is read; it is claimed once, by the first sandbox grading in
that process (`claim`), and spent with it (closed, its folders removed); one never used dies
with its worker (its folders and cgroups are removed by the next grader run,
grader/hosts/tempspace.py). The zygote runs no learner code, here as anywhere.

Deliberate simplifications: at most one sandbox ahead per process; one that fails to build is
dropped, and the check builds its own as it would without a helper. A helper kept idle holds
its sandbox too (its two processes, about 22 MB here, no template forked yet).
"""

import os

from grader import boundary
from grader.errors import HostError
from grader.hosts.sandbox import START_TIMEOUT, Sandbox

_built = []     # (workspace, SandboxAhead) built and not claimed yet: at most one
_claimed = {}   # workspace -> its SandboxAhead, claimed by a grading and not opened yet


class SandboxAhead(Sandbox):
    """A sandbox started with its solution folder still empty: `build()` starts it, `start()`
    (what a grading calls, grader/runner.py) says its submission is there now."""

    ahead = True

    def build(self):
        Sandbox.start(self)
        self.command("status", pid=0)  # answered once the zygote has warmed up (its loop)
        return self

    def start(self):
        self.command("submission", timeout=START_TIMEOUT)
        return self


def build(workspace):
    """Build a sandbox ahead in `workspace` (a new one: kinds.SandboxKind `workspace`); False
    if it could not be built (then nothing of it is left but the workspace)."""
    solution, box = os.path.join(workspace, "solution"), None
    try:
        os.mkdir(solution, 0o755)
        os.chmod(solution, 0o755)
        box = SandboxAhead(solution)
        box.build()
    except (HostError, OSError):  # as a check would fail to start it: that check builds its own
        if box is not None:
            box.close()
        return False
    _built.append((workspace, box))
    return True


def claim():
    """The workspace of the sandbox built ahead, for the grading that asks first (once); None
    if there is none, or it died meanwhile."""
    while _built:
        workspace, box = _built.pop()
        if box.proc is not None and box.proc.poll() is None:
            _claimed[workspace] = box
            return workspace
        box.close()
        boundary.remove_tree(workspace)
    return None


def waiting(solution_dir):
    """True if `solution_dir` is the (empty) solution folder of a claimed sandbox."""
    return any(box.solution_dir == solution_dir for box in _claimed.values())


def opened(workspace, solution_dir):
    """The claimed sandbox of `workspace` for its solution, handed out once; else None."""
    box = _claimed.get(workspace)
    if box is None or box.solution_dir != solution_dir:
        return None
    return _claimed.pop(workspace)


def drop(workspace):
    """The grading of `workspace` is over: a sandbox claimed for it and never opened (there was
    nothing to grade) is closed now."""
    box = _claimed.pop(workspace, None)
    if box is not None:
        box.close()

