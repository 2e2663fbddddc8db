"""A grading worker for `--jobs N`: grades submissions one after another, on request.

The parent (grader.pool) starts N of these as `python -m grader.worker PARENT_PID`. Each dies
with its parent (parent-death signal, checked against PARENT_PID), reads jobs as JSON lines on
stdin ({"path", "name", "only", "budget", "tests", "host"}) and answers each with one JSON line
carrying the result dict, on a private copy of its original stdout: anything else that prints
(pytest, a stray log) goes to stderr and cannot corrupt the answers.
"""

import ctypes
import json
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(parent):
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                   ctypes.c_ulong(0), ctypes.c_ulong(0))
    if parent and os.getppid() != parent:  # the parent died before that took effect
        os._exit(1)


def main():
    die_with_parent(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from grader import runner
    from grader.escape import json_text
    for line in sys.stdin:
        job = json.loads(line)
        try:
            result = runner.grade(job["path"], job.get("name"), job.get("only"),
                                  job.get("budget", runner.SUBMISSION_BUDGET),
                                  job.get("tests", "all"), job.get("host", "sandbox"))
        except Exception as exc:  # the grader's own bug: reported, this worker goes on
            result = {"crash": f"{type(exc).__name__}: {exc}"}
        answers.write(json_text(result) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
