"""Grade many submissions on N worker processes (grader.worker), or inline (self-check hosts).

With the sandbox every submission is graded in a worker process, even a single one: its hard
deadline is kept here, in a process that runs nothing of the submission and never waits for the
worker's interpreter lock. The budget watchdog inside the worker (grader.runner) ends the
sandbox when `--budget` runs out, and everything the worker does with what a submission sent is
linear and capped, so a submission ends within its budget plus a second or two (stopping the
sandbox, removing its files). `HARD_MARGIN` seconds past the budget a worker that has not
answered is killed, as is one that dies mid-job: it is replaced, that submission gets a zero
with the reason (the grader's own fault, exit 3: the watchdog should have ended it first), and
what the dead worker left behind (temp folders, cgroups) is removed at once. The other
submissions are graded as usual. Jobs are handed out one at a time to whichever worker is free,
so a slow submission does not hold up a whole share of the class. Results come back in
submission order.

`--jobs N` counts busy slots, not processes (`Slots`). A worker holds a slot while it grades;
while its checks only wait on the clock (a link's lifetime passing, grader/checks/later.py) it
gives the slot back and another learner's grading runs meanwhile. So there are more workers
than slots (`WORKERS_PER_SLOT`), and a worker whose wait is over gets the next free slot before
any new submission starts. The time it waits for that slot is added to its job's budget (here
and in the worker), so a learner never loses time to the scheduling. Each submission is still
graded in one worker. Not in plain mode (`alone`),
where no two learners' code may ever run at once: a waiting learner's servers are still up, so
there it is one worker per slot.

Workers die with the grader (parent-death signal), and their sandboxes with them. The
self-check hosts (portable, in-process) grade one job inline, in this process: they run where
there may be no fork, no pipes to select on, no parent-death signal.

Deliberate simplifications: workers are plain subprocesses talking JSON lines; no
retries (grading is deterministic, a retry would give the same answer).
"""

import json
import os
import queue
import select
import subprocess
import sys
import threading
import time

from grader import hosts, runner

HARD_MARGIN = 15.0  # seconds a job may take beyond its budget (starting the worker, cleaning up)
WORKERS_PER_SLOT = 3  # a grading holds its slot about half of its time: the rest is waiting
_workers = set()  # live worker processes (for the exit handler)


def crashed(job, reason):
    return {"submission": job["name"], "score": 0.0, "max_score": 0, "tests": [],
            "protections": described(job), "problems": [f"error interno del corrector: {reason}"],
            "output": f"Entrega: {job['name']}\nNo se pudo corregir (error interno del "
                      "corrector); avisa al profesorado.",
            "internal_errors": [reason]}


def described(job):
    """The protections of the job's host (its mode is in every report, even this one)."""
    try:
        return kind_of(job).describe()
    except Exception:  # describing must not turn one crash into another
        return {"mode": "?"}


def kind_of(job):
    """The host kind of a job (grader/hosts/kinds.py), by the name the command line resolved."""
    return hosts.kind(job.get("host", "sandbox"))


class Slots:
    """The `--jobs` busy slots, shared by the threads that drive the workers. A worker coming
    back from a wait on the clock (`returning`) is served before any new job starts."""

    def __init__(self, count):
        self.free, self.returning = count, 0
        self.changed = threading.Condition()

    def take(self, returning=False):
        with self.changed:
            self.returning += returning
            try:
                while self.free == 0 or (self.returning and not returning):
                    self.changed.wait()
                self.free -= 1
            finally:
                self.returning -= returning

    def give(self):
        with self.changed:
            self.free += 1
            self.changed.notify_all()


class Worker:
    """One `python -m grader.worker` process and its answers, read with a deadline."""

    command = (sys.executable, "-m", "grader.worker")  # + this process's pid

    def __init__(self, slots, warm=False):
        self.proc = subprocess.Popen([*self.command, str(os.getpid()), *(["warm"] * warm)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        _workers.add(self.proc)
        self.buffer = bytearray()
        self.slots = slots
        self.holding = False  # this worker has a busy slot

    def take_slot(self, returning=False):
        self.slots.take(returning)
        self.holding = True

    def give_slot(self):
        if self.holding:
            self.holding = False
            self.slots.give()

    def ask(self, job, timeout):
        """The worker's result for `job`; None if it died; "timeout" past the deadline (moved
        by the time it waited for its slot again after each wait on the clock)."""
        if not self.send(job):
            return None
        deadline = time.monotonic() + timeout
        while True:
            message = self.answer(deadline)
            if not isinstance(message, dict) or set(message) != {"slot"}:
                return message
            if message["slot"] == "free":
                self.give_slot()
            elif message["slot"] == "want" and not self.holding:
                asked = time.monotonic()
                self.take_slot(returning=True)
                deadline += time.monotonic() - asked
                if not self.send({"slot": "yours"}):
                    return None
            else:  # a worker only says these two, in turn
                return None

    def send(self, message):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except OSError:
            return False

    def answer(self, deadline):
        """The worker's next line as a dict; None if it died or said no dict; "timeout"."""
        fd = self.proc.stdout.fileno()
        end = self.buffer.find(b"\n")
        while end < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            end = chunk.find(b"\n")
            if end >= 0:
                end += len(self.buffer)
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        try:
            result = json.loads(line)
        except ValueError:
            return None
        return result if isinstance(result, dict) else None

    def alive(self):
        return self.proc.poll() is None

    def kill(self, kind):
        """Kill it; what its hosts of `kind` left (folders, cgroups) goes now."""
        self.proc.kill()
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()
        _workers.discard(self.proc)
        kind.clean_leftovers()  # its sandboxes died with it

    def finish(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        _workers.discard(self.proc)


def kill_workers():
    """Kill every worker (the grader is exiting); their sandboxes die with them."""
    for proc in list(_workers):
        try:
            proc.kill()
            proc.wait()
        except OSError:
            pass
        _workers.discard(proc)


_spare = []  # a worker started ahead of this run's first job (grader/warm.py), at most one


def start_spare():
    """Start, ahead of the jobs, the worker the first job will go to: it imports the grader
    and pytest and collects the checks once (nothing run), then says so (`spare_warm`)."""
    _spare.append(Worker(None, warm=True))


def spare_warm(timeout):
    """True once the worker started ahead said it is warm, within `timeout` seconds."""
    return bool(_spare) and _spare[0].answer(time.monotonic() + timeout) == {"warm": True}


def take_spare(slots):
    """The worker started ahead, if it is still alive (once), else None."""
    worker = _spare.pop() if _spare else None
    if worker is None or not worker.alive():
        return None
    worker.slots = slots
    return worker


def grade_all(jobs, workers=1, progress=None, alone=False):
    """Grade every job ({"path", "name", "only", "budget", "tests", "host"}); returns results
    in order. `alone`: never two learners' code at once (plain mode), so one worker per slot:
    a learner's servers stay up while its checks wait, and nobody else's start meanwhile."""
    progress = progress or (lambda done, total, result: None)
    results = [None] * len(jobs)
    in_workers = all(kind_of(job).in_workers for job in jobs)
    if not in_workers and (workers <= 1 or len(jobs) <= 1):
        for index, job in enumerate(jobs):
            try:
                results[index] = runner.grade(job["path"], job["name"], job["only"],
                                              job["budget"], job.get("tests", "all"),
                                              job.get("host", "sandbox"))
            except Exception as exc:  # the grader's own bug: this submission, not the class
                results[index] = crashed(job, f"{type(exc).__name__}: {exc}")
            progress(index + 1, len(jobs), results[index])
        return results
    pending = queue.Queue()
    for index, job in enumerate(jobs):
        pending.put((index, job))
    lock = threading.Lock()
    done = [0]
    slots = Slots(workers)

    def work():
        worker = None
        held = False  # a slot taken before there was a worker to hold it
        try:
            while True:
                slots.take()
                held = True
                try:
                    index, job = pending.get_nowait()
                except queue.Empty:
                    break
                if worker is None or not worker.alive():
                    worker = take_spare(slots) or Worker(slots)
                worker.holding, held = True, False
                limit = float(job.get("budget") or runner.SUBMISSION_BUDGET) + HARD_MARGIN
                result = worker.ask(job, limit)
                worker.give_slot()
                if result == "timeout":
                    worker.kill(kind_of(job))
                    worker = None
                    result = crashed(job, f"la corrección pasó de {limit:.0f} s y se detuvo")
                elif result is None or "crash" in result:
                    reason = result["crash"] if result else "el proceso del corrector terminó"
                    if result is None:
                        worker.kill(kind_of(job))
                        worker = None
                    result = crashed(job, reason)
                results[index] = result
                with lock:
                    done[0] += 1
                    progress(done[0], len(jobs), result)
        finally:
            if held:
                slots.give()
            if worker is not None:
                worker.give_slot()
                worker.finish()

    threads = [threading.Thread(target=work, daemon=True)
               for _ in range(min(workers * (1 if alone else WORKERS_PER_SLOT), len(jobs)))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        kill_workers()
    return results
