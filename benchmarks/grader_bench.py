"""Benchmark (not a test): what grading one learner costs, as a ratio to a bare interpreter start.

    .venv/bin/python benchmarks/grader_bench.py [--copies 8] [--jobs 1,2] [--rounds 2]
                                                [--baseline OTHER_CHECKOUT]... [--selfcheck]
                                                [--phases] [--json FILE]

Grades a class made of `--copies` copies of the reference solution plus a few one-bug
solutions and the starter, the way instructors do (`python -m grader --batch DIR --jobs N`,
every protection the machine offers; the report prints which ones were in force), and
measures, in the same run and side by side, a bare `python3 -c pass` start (both the system
interpreter and the grader's own). The cost per submission is the batch's wall time divided
by the number of submissions; the best of `--rounds` rounds is shown.

`--baseline DIR` grades the same class with the grader of another checkout too (for example
a clone of an older commit), interleaved with this one round by round, so that before and
after are measured in one run on an equally busy machine.

The goal (issue 21): at most 25x a bare `python3 -c pass` per submission with `--jobs 2`;
the exit status says whether it was met. `--phases` also grades one reference in this
process and says where its time goes: the sandbox's setup, the probe server, the servers the
checks start, and each exercise's checks.

`--selfcheck` also times `ui.revisar`'s work (the public tests of one exercise on the
reference, grader.selfcheck.run) on each host: the sandbox, the portable host and the
in-process host (best of `--rounds`).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "grader")]

from mutants import MUTANTS, REFERENCE  # noqa: E402

from grader import selfcheck  # noqa: E402
from grader.exercises import EXERCISES as KNOWN  # noqa: E402
from grader.hosts.sandbox import detect_mode, plan  # noqa: E402

STARTER = os.path.join(ROOT, "tests", "grader", "fixtures", "starter.ipynb")
EXERCISES = tuple(e.id for e in KNOWN if not e.optional)  # what ui.revisar checks in the core
GOAL = 25.0  # issue 21: grading one learner costs at most 25 bare interpreter starts
CHEAP_BUGS = ("archiva_con_confirm_false", "compara_versiones_como_texto",
              "compara_rutas_con_startswith", "copia_y_borra")


def bare_start(python, runs=25):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([python, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def make_class(folder, copies):
    """The batch folder: `copies` references, the cheap one-bug solutions, the starter."""
    batch = os.path.join(folder, "clase")
    os.makedirs(batch)
    for n in range(copies):
        shutil.copytree(REFERENCE, os.path.join(batch, f"referencia-{n}"))
    for mutant in MUTANTS:
        if mutant.name in CHEAP_BUGS:
            mutant.write(os.path.join(batch, mutant.name))
    shutil.copy(STARTER, os.path.join(batch, "plantilla.ipynb"))
    return batch, copies + len(CHEAP_BUGS) + 1


def grade(checkout, batch, workers, out):
    """Seconds to grade the class with `checkout`'s grader, and its results."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "grader", "--batch", batch, "--jobs",
                          str(workers), "--format", "json", "--out", out], cwd=checkout,
                         capture_output=True, text=True)
    seconds = time.perf_counter() - start
    results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return seconds, results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", action="append", default=[], metavar="CHECKOUT")
    parser.add_argument("--selfcheck", action="store_true")
    parser.add_argument("--phases", action="store_true",
                        help="also say where one reference's grading time goes")
    parser.add_argument("--goal", type=float, default=GOAL)
    parser.add_argument("--json", metavar="FILE", help="also write the result there (make bench)")
    args = parser.parse_args()
    mode = detect_mode()
    on = [k for k, v in plan(mode).items() if v not in (False, None)]
    print(f"machine: {os.cpu_count()} cores; sandbox mode {mode}; in force: {', '.join(on)}")
    checkouts = [("this checkout", ROOT)] + [(path, os.path.abspath(path))
                                             for path in args.baseline]
    with tempfile.TemporaryDirectory() as folder:
        batch, count = make_class(folder, args.copies)
        out = os.path.join(folder, "notas")
        for _, checkout in checkouts:  # warm caches (file system, bytecode)
            grade(checkout, batch, 2, out)
        rows = []
        for workers in (int(x) for x in args.jobs.split(",")):
            bare_system = bare_start("/usr/bin/python3") if os.path.exists(
                "/usr/bin/python3") else None
            bare_own = bare_start(sys.executable)
            best = {name: None for name, _ in checkouts}
            for _ in range(args.rounds):
                for name, checkout in checkouts:
                    seconds, results = grade(checkout, batch, workers, out)
                    if checkout == ROOT:
                        refs = [r for r in results if r["submission"].startswith("referencia")]
                        assert len(refs) == args.copies and all(
                            r["score"] == r["max_score"] for r in refs), "reference lost points"
                    per = seconds / count
                    best[name] = per if best[name] is None else min(best[name], per)
            for name, _ in checkouts:
                rows.append((name, workers, best[name], bare_system, bare_own))
    print(f"{count} submissions ({args.copies} x reference, {len(CHEAP_BUGS)} one-bug, "
          f"1 starter); best of {args.rounds} rounds")
    print("grader         jobs  s/submission  bare /usr/bin/python3  ratio  "
          "bare grader python  ratio")
    for name, workers, per, bare_system, bare_own in rows:
        system = f"{bare_system * 1000:9.1f} ms  {per / bare_system:5.1f}x" if bare_system \
            else "      n/a        "
        print(f"{name[-14:]:14} {workers:4}  {per:12.3f}  {system}  {bare_own * 1000:12.1f} ms  "
              f"{per / bare_own:5.1f}x")
    if args.selfcheck:
        self_checks(args.rounds)
    where, busy = phases() if args.phases else (None, None)
    # The goal: --jobs 2 (or the largest measured), this checkout, against python3 -c pass.
    name, workers, per, bare_system, bare_own = max(
        (row for row in rows if row[0] == "this checkout"), key=lambda row: (row[1] == 2, row[1]))
    bare = bare_system or bare_own
    ratio = per / bare
    met = ratio <= args.goal
    print(f"grading per learner with --jobs {workers}: {ratio:.1f}x a bare start "
          f"(goal: at most {args.goal:g}x) {'OK' if met else 'MISSED'}")
    if busy is not None:  # a learner holds a slot while busy: N slots go no faster than this
        print(f"  floor with these checks: one reference's busy time / {workers} slots = "
              f"{busy / workers:.2f} s per learner, {busy / workers / bare:.0f}x a bare start")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"goal": f"grading per learner (--jobs {workers}) / bare interpreter start",
                       "value": ratio, "limit": args.goal, "unit": "x", "met": met,
                       "detail": f"{per:.2f} s per submission, bare {bare * 1000:.1f} ms"
                                 + (f"; one reference: {where}" if where else "")
                                 + (f"; floor (busy / slots): {busy / workers:.2f} s"
                                    if busy is not None else ""),
                       "cause": "" if met else (f"where one reference's time goes: {where}"
                                                if where else "run with --phases to see")}, out)
    return 0 if met else 1


WAITS = "expiry checks' waits left over after the other checks (grader/checks/later.py)"


def phases():
    """Where one reference's grading time goes, measured by timing the grader's own steps
    (wrapped here, in this process): the sandbox host's setup, the probe server, every
    server a check starts (spawn + initialize), what is left of the expiry checks' waits, and
    each exercise's checks (pytest's setup/call/teardown durations, their server starts and
    sleeps included). Prints a table and returns
    it as one line."""
    import collections

    import pytest

    from grader import runner
    from grader.checks import lab as lab_module
    from grader.checks import later

    spent, count = collections.Counter(), collections.Counter()

    def timed(owner, name, label):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - start
                count[label] += 1
        setattr(owner, name, wrapper)
        return original

    class Durations:
        @staticmethod
        def pytest_runtest_logreport(report):
            exercise = os.path.basename(report.nodeid.split("::")[0])
            spent["checks " + exercise] += report.duration
            count["checks " + exercise] += report.when == "call"

    main_before = pytest.main
    saved = [(runner, "start", timed(runner, "start", "host setup + probe server")),
             (runner, "probe", timed(runner, "probe", "probe server (spawn + initialize)")),
             (lab_module.Lab, "server",
              timed(lab_module.Lab, "server", "servers the checks start (spawn + initialize)")),
             (runner, "run_checks", timed(runner, "run_checks", "all checks")),
             (later, "pause", timed(later, "pause", WAITS))]
    pytest.main = lambda args, plugins=(): main_before(args, plugins=[*plugins, Durations()])
    try:
        start, own, machine = time.perf_counter(), time.process_time(), machine_cpu()
        result = runner.grade(REFERENCE)
        total = time.perf_counter() - start
        own, machine = time.process_time() - own, machine_cpu() - machine
    finally:
        pytest.main = main_before
        for owner, name, original in saved:
            setattr(owner, name, original)
    assert result["score"] == result["max_score"], "reference lost points"
    spent["host setup (sandbox, before the probe)"] = (spent["host setup + probe server"]
                                                      - spent["probe server (spawn + initialize)"])
    count["host setup (sandbox, before the probe)"] = 1
    del spent["host setup + probe server"]
    print(f"where one reference's grading goes ({total:.2f} s in all, --jobs 1, "
          "the sandbox host):")
    for label, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {seconds:7.2f} s  {label} ({count[label]}x)")
    busy = total - spent[WAITS]
    print(f"  busy (not waiting on the clock): {busy:.2f} s. CPU: the grader {own:.2f} s, the rest "
          f"of the machine {max(machine - own, 0):.2f} s (the sandbox's zygote and servers, "
          "when nothing else runs)")
    largest = [(label, seconds) for label, seconds in
               sorted(spent.items(), key=lambda item: -item[1]) if label != "all checks"]
    return "; ".join(f"{label} {seconds:.2f} s" for label, seconds in largest[:5]), busy


def machine_cpu():
    """Seconds of CPU the whole machine has spent (every process, the kernel too)."""
    if not os.path.exists("/proc/stat"):
        return 0.0
    with open("/proc/stat") as handle:
        ticks = [int(x) for x in handle.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # not idle, not iowait


def self_checks(rounds):
    """Seconds for ui.revisar's work (one exercise, public tests) on each host."""
    print("self-check (public tests of one exercise, the reference), best of "
          f"{rounds} rounds")
    print("host        " + "".join(f"{e:>12}" for e in EXERCISES))
    for host in ("sandbox", "portable", "inprocess"):
        cells = []
        for exercise in EXERCISES:
            best = None
            for _ in range(rounds):
                start = time.perf_counter()
                result = selfcheck.run(REFERENCE, exercise, host=host)
                seconds = time.perf_counter() - start
                assert result["score"] == result["max_score"], (host, exercise)
                best = seconds if best is None else min(best, seconds)
            cells.append(f"{best:10.2f} s")
        print(f"{host:12}" + "".join(cells))


if __name__ == "__main__":
    sys.exit(main())
