"""A grading worker for `--jobs N`: grades submissions one after another, on request.

The parent (grader.pool) starts N of these as `python -m grader.worker PARENT_PID` (with
`warm` after it, a worker started ahead of its first job, grader/warm.py, first imports the
grader and pytest, collects the checks once, nothing run, builds the sandbox its first job
will claim, before any file of it is known (grader/hosts/ahead.py), and says
`{"warm": true}`). Each
dies with its parent (parent-death signal, checked against PARENT_PID), reads jobs as JSON lines on
stdin ({"path", "name", "only", "budget", "tests", "host"}) and answers each with one JSON line
carrying the result dict. Both go through private copies of its original stdin and stdout:
anything else that prints (pytest, a stray log) goes to stderr and cannot corrupt the answers,
and nothing else can read the parent's lines (stdin becomes /dev/null).

While a job's checks wait on the clock (grader/checks/later.py) the worker lends its busy slot:
it says `{"slot": "free"}`, sleeps, says `{"slot": "want"}` and works again only once the parent
answers `{"slot": "yours"}` on stdin (grader/pool.py's `Slots`). What it waited for that answer
is added to the job's budget.
"""

import ctypes
import json
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1


def die_with_parent(parent):
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                   ctypes.c_ulong(0), ctypes.c_ulong(0))
    if parent and os.getppid() != parent:  # the parent died before that took effect
        os._exit(1)


def lender(requests, answers):
    """The `idle` of this worker's jobs: sleep without the slot, then wait to get it back."""
    def idle(seconds):
        say(answers, {"slot": "free"})
        time.sleep(seconds)
        asked = time.monotonic()
        say(answers, {"slot": "want"})
        if json.loads(requests.readline() or "{}").get("slot") != "yours":
            os._exit(1)  # the parent is gone, or said something else: nothing to grade for
        return time.monotonic() - asked
    return idle


def say(answers, message):
    answers.write(json.dumps(message) + "\n")
    answers.flush()


def main():
    die_with_parent(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # pytest captures sys.stdin: the parent's lines come on a private copy
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    idle = lender(requests, answers)
    if "warm" in sys.argv[2:]:  # started ahead of its first job (grader/pool.py start_spare)
        from grader import hosts
        from grader.warm import warm_up
        warm_up()
        hosts.kind("auto").start_ahead()  # the sandbox, for that job (grader/hosts/ahead.py)
        say(answers, {"warm": True})
    from grader import runner
    from grader.escape import json_text
    for line in requests:
        job = json.loads(line)
        try:
            result = runner.grade(job["path"], job.get("name"), job.get("only"),
                                  job.get("budget", runner.SUBMISSION_BUDGET),
                                  job.get("tests", "all"), job.get("host", "sandbox"),
                                  idle=idle)
        except Exception as exc:  # the grader's own bug: reported, this worker goes on
            result = {"crash": f"{type(exc).__name__}: {exc}"}
        answers.write(json_text(result) + "\n")
        answers.flush()
    from grader.warm import exit_lightly
    exit_lightly()  # the parent waits for this exit before it reports (grader/pool.py)


if __name__ == "__main__":
    main()
