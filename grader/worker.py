"""A grading worker for `--jobs N`: grades submissions one after another, on request.

The parent (grader.pool) starts N of these with the grader's own interpreter. Each reads jobs
as JSON lines on stdin ({"path", "name", "only", "budget"}) and answers each with one JSON
line carrying the result dict, on a private copy of its original stdout: anything else that
prints (pytest, a stray log) goes to stderr and cannot corrupt the answers.
"""

import json
import os
import sys


def main():
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from grader import runner
    for line in sys.stdin:
        job = json.loads(line)
        try:
            result = runner.grade(job["path"], job.get("name"), job.get("only"),
                                  job.get("budget", runner.SUBMISSION_BUDGET))
        except Exception as exc:  # the grader's own bug: reported, this worker goes on
            result = {"crash": f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(result, ensure_ascii=False) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
