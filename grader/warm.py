"""A grader started ahead of the learner's next self-check (`ui.revisar` on CPython).

    python -m grader.warm        # started by the kernel (lessons/mcp_ui/warm.py), then:
    <- b"ready\\n"                # on its standard output, once it is warm
    -> ["soluciones", "--only", "ejercicio2", ...]\\n   # one line on its standard input
    <- exactly what `python -m grader soluciones --only ejercicio2 ...` prints, and its status

What every check pays before it reads anything of the learner's is paid here ahead of time,
while the learner edits: Python's start, importing the command line, pytest and the checks, and
pytest's first collection of the public checks (a collection only: nothing runs, no host starts,
no server is spawned, and the state it fills is thrown away; a batch worker grades several
submissions in one process the same way). With the sandbox, which grades every submission in
a worker process (grader/pool.py), that worker is what is started and warmed up ahead (with
the helper, and it dies with it), and it builds the check's sandbox ahead too, its solution
folder still empty (grader/hosts/ahead.py); the portable host grades in the helper itself, and
its fork server (grader/hosts/forks.py: one warm process that forks the check's servers; it
runs no learner code) is started ahead too, for the one host this check builds. Then the
helper waits for one command line and runs it with grader/cli.py `main`, as `python -m grader`
would: the learner's files are read (and written into that sandbox's folder), and every server
is started, after that line arrives. The helper and its worker then exit without a last
garbage collection of their heaps (`exit_lightly`): their exit is in the learner's wait.

One helper serves one check and is then spent: it exits with the command's status, so nothing
of one check (its files, its host, its servers, anything the learner's code could have reached)
is there at the next; the kernel starts a new helper for the next check once this one is over.
A helper whose standard input closes before a line came exits at once, warm or not, without
grading anything (the kernel went away).

Deliberate simplifications: the line is trusted as the grader's own command line (only the
kernel that started the helper writes it); a helper idle for IDLE_LIMIT seconds exits (its
memory back to the machine, about 22 MB, 36 MB for its sandbox worker and 22 MB for the
sandbox that worker built ahead here, or 22 MB for the portable host's fork server: on a hub,
per learner who checked in the last half hour; the next check then starts cold).
"""

import json
import os
import sys
import threading

IDLE_LIMIT = 1800.0  # seconds a helper waits for its one check before it gives up
READY = b"ready\n"


def warm_up(collect=True):
    """Import what a check needs, learn what the host `--host auto` picks can do here (the
    sandbox probes its strongest mode once per process), and (`collect`) let pytest collect
    the public checks once, nothing run."""
    import grader.cli  # noqa: F401  (the command line: hosts, pool, report, intake)
    from grader import hosts
    hosts.kind("auto").mode()
    if collect:
        collect_checks()


def collect_checks():
    """pytest's collection of the public checks, for a state thrown away."""
    from grader import runner
    from grader.state import SubmissionState
    runner.run_with_pytest(SubmissionState(suite="public"), runner.suite_files("public")[1],
                           "--collect-only")


def command(line):
    """The command line the kernel sent: a JSON list of strings, else None."""
    try:
        argv = json.loads(line.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(argv, list) or not all(isinstance(arg, str) for arg in argv):
        return None
    return argv


def main():
    line = []  # the one command line, once it came

    def read():
        got = sys.stdin.buffer.readline()
        if not got:
            os._exit(0)  # the kernel went away before asking: nothing to grade, no warm-up
        line.append(got)

    reader = threading.Thread(target=read, daemon=True, name="command-line")
    reader.start()
    from grader import hosts, pool
    grades_in_a_worker = hosts.kind("auto").in_workers
    if grades_in_a_worker:  # the sandbox grades in a worker: that one is warmed up too,
        pool.start_spare()  # and builds its sandbox ahead (grader/worker.py)
    else:
        hosts.kind("auto").start_ahead()  # the portable host's fork server, while we warm up
    warm_up(collect=not grades_in_a_worker)  # the self-check hosts grade in this process
    if grades_in_a_worker:  # ready once it is (one that died is replaced by a new worker)
        pool.spare_warm(IDLE_LIMIT)
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    reader.join(IDLE_LIMIT)
    if not line:
        return 0  # idle too long: the next check starts cold
    argv = command(line[0])
    if argv is None:
        return 2
    from grader.cli import main as grader_main
    try:
        return grader_main(argv)
    finally:
        exit_lightly()


def exit_lightly():
    """This process is about to exit: no last garbage collection of its whole heap (frozen),
    which was most of its exit's 50 to 70 ms (the grader, pytest and the checks imported), in
    the learner's wait. Its atexit handlers still run, its streams are still flushed."""
    import gc
    gc.disable()
    gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
