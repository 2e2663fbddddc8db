"""Grade many submissions: inline for one job, or on N worker processes (grader.worker).

Jobs are handed out one at a time to whichever worker is free, so a slow submission (one
that hits its timeouts) does not hold up a whole share of the class. A worker that dies
mid-job is replaced and that submission gets a zero with the reason; results come back in
submission order.

Deliberate simplifications: workers are plain subprocesses talking JSON lines; no
retries (grading is deterministic, a retry would give the same answer).
"""

import json
import queue
import subprocess
import sys
import threading

from grader import runner


def crashed(job, reason):
    return {"submission": job["name"], "score": 0.0, "max_score": 0, "tests": [],
            "protections": {}, "problems": [f"error interno del corrector: {reason}"],
            "output": f"Entrega: {job['name']}\nNo se pudo corregir (error interno del "
                      "corrector); avisa al profesorado.",
            "internal_errors": [reason]}


def grade_all(jobs, workers=1, progress=None):
    """Grade every job ({"path", "name", "only", "budget"}); returns results in order."""
    progress = progress or (lambda done, total, result: None)
    results = [None] * len(jobs)
    if workers <= 1 or len(jobs) <= 1:
        for index, job in enumerate(jobs):
            try:
                results[index] = runner.grade(job["path"], job["name"], job["only"],
                                              job["budget"])
            except Exception as exc:  # the grader's own bug: this submission, not the class
                results[index] = crashed(job, f"{type(exc).__name__}: {exc}")
            progress(index + 1, len(jobs), results[index])
        return results
    pending = queue.Queue()
    for index, job in enumerate(jobs):
        pending.put((index, job))
    lock = threading.Lock()
    done = [0]

    def work():
        proc = None
        while True:
            try:
                index, job = pending.get_nowait()
            except queue.Empty:
                break
            if proc is None or proc.poll() is not None:
                proc = subprocess.Popen([sys.executable, "-m", "grader.worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, encoding="utf-8")
            try:
                proc.stdin.write(json.dumps(job) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                result = json.loads(line) if line else None
            except (OSError, ValueError):
                result = None
            if result is None or "crash" in result:
                reason = result["crash"] if result else "el proceso del corrector terminó"
                result = crashed(job, reason)
            results[index] = result
            with lock:
                done[0] += 1
                progress(done[0], len(jobs), result)
        if proc is not None:
            proc.stdin.close()
            proc.wait()

    threads = [threading.Thread(target=work) for _ in range(min(workers, len(jobs)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
