"""Benchmark (not a test): what grading one learner costs, as a ratio to a bare interpreter start.

    .venv/bin/python benchmarks/grader_bench.py [--copies 8] [--jobs 1,2]

Grades a class made of `--copies` copies of the reference solution plus a few one-bug
solutions and the starter, with every protection the machine offers (the report prints which
ones were in force), and measures, in the same run and side by side, a bare `python3 -c pass`
start (both the system interpreter and the grader's own). The cost per submission is the
batch's wall time divided by the number of submissions.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "grader")]

from mutants import MUTANTS, REFERENCE  # noqa: E402

from grader import pool  # noqa: E402
from grader.sandbox import Sandbox, detect_mode  # noqa: E402

STARTER = os.path.join(ROOT, "tests", "grader", "fixtures", "starter.ipynb")
CHEAP_BUGS = ("archiva_con_confirm_false", "compara_versiones_como_texto",
              "compara_rutas_con_startswith", "copia_y_borra")


def bare_start(python, runs=25):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([python, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def batch(folder, copies):
    jobs = [{"path": REFERENCE, "name": f"referencia-{n}", "only": [], "budget": 240.0}
            for n in range(copies)]
    for mutant in MUTANTS:
        if mutant.name in CHEAP_BUGS:
            jobs.append({"path": mutant.write(os.path.join(folder, mutant.name)),
                         "name": mutant.name, "only": [], "budget": 240.0})
    jobs.append({"path": STARTER, "name": "plantilla", "only": [], "budget": 240.0})
    return jobs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--jobs", default="1,2")
    args = parser.parse_args()
    mode = detect_mode()
    protections = Sandbox(REFERENCE, mode=mode).protections()
    on = [k for k, v in protections.items() if v not in (False, None)]
    print(f"machine: {os.cpu_count()} cores; sandbox mode {mode}; in force: {', '.join(on)}")
    with tempfile.TemporaryDirectory() as folder:
        jobs = batch(folder, args.copies)
        pool.grade_all(jobs[:1])  # warm caches (compiled code copy, pytest import)
        rows = []
        for workers in (int(x) for x in args.jobs.split(",")):
            bare_system = bare_start("/usr/bin/python3") if os.path.exists(
                "/usr/bin/python3") else None
            bare_own = bare_start(sys.executable)
            start = time.perf_counter()
            results = pool.grade_all(jobs, workers=workers)
            per = (time.perf_counter() - start) / len(jobs)
            refs = [r for r in results if r["submission"].startswith("referencia")]
            assert all(r["score"] == r["max_score"] for r in refs), "reference lost points"
            rows.append((workers, per, bare_system, bare_own))
    print(f"{len(jobs)} submissions ({args.copies} x reference, {len(CHEAP_BUGS)} one-bug, "
          "1 starter)")
    print("jobs  s/submission  bare /usr/bin/python3  ratio  bare grader python  ratio")
    for workers, per, bare_system, bare_own in rows:
        system = f"{bare_system * 1000:9.1f} ms  {per / bare_system:5.1f}x" if bare_system \
            else "      n/a        "
        print(f"{workers:4}  {per:12.3f}  {system}  {bare_own * 1000:12.1f} ms  "
              f"{per / bare_own:5.1f}x")


if __name__ == "__main__":
    main()
