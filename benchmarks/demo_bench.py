"""Benchmark (not a test): what the demo costs, as a ratio to a bare interpreter start.

    python3 benchmarks/demo_bench.py [--runs 11] [--goal 10] [--json FILE] [--baseline CHECKOUT]

Runs `python3 code/main.py` (the whole demo, every scenario on the real wire, output thrown
away) and a bare `python3 -c pass` interleaved, run by run, so both see the same machine, and
prints the median of each, their ratio against the goal (issue 21: at most 10x a bare start),
and where the demo's import time goes (`-X importtime`, the ten slowest modules it imports),
so a regression names its cause. Exit 1 when the ratio misses the goal.

The goal is measured as a learner runs the demo the second time on: code/'s bytecode is
cached (Python writes it on the first run). Each measurement runs its own copy of code/ in a
temporary folder, so the tree's own __pycache__ (stale or missing, or PYTHONDONTWRITEBYTECODE
in the environment) cannot change the numbers. The first run, which also compiles code/, is
shown for information ("first run").

Deliberate simplifications: the system interpreter only (the demo needs nothing installed);
wall time, not CPU time (a learner waits for the wall clock).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = os.path.join(ROOT, "code")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def timed(argv, env):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=ROOT, env=env)
    return time.perf_counter() - start


def copy_of_code(folder, name, code=CODE):
    """A copy of `code` without any bytecode: its own __pycache__ starts empty."""
    copy = os.path.join(folder, name)
    shutil.copytree(code, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return os.path.join(copy, "main.py")


def slowest_imports(demo, env, count=10):
    """[(cumulative microseconds, module)] of the demo's slowest imports."""
    run = subprocess.run([PYTHON, "-X", "importtime", demo], cwd=ROOT, text=True, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    rows = re.findall(r"^import time:\s+\d+ \|\s+(\d+) \|(\s*)(\S+)$", run.stderr, re.M)
    top = [(int(cumulative), name) for cumulative, indent, name in rows if len(indent) <= 2]
    return sorted(top, reverse=True)[:count]


def measure(runs, baseline=None):
    """Seconds of each run: a bare start, the demo (bytecode cached), its first run, and the
    demo of `baseline`'s code/ (bytecode cached) when given; and the slowest imports."""
    warm_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    first_env = {**warm_env, "PYTHONDONTWRITEBYTECODE": "1"}  # each run compiles code/ anew
    with tempfile.TemporaryDirectory(prefix="demo-bench-") as folder:
        warm, first = copy_of_code(folder, "warm"), copy_of_code(folder, "first")
        other = baseline and copy_of_code(folder, "baseline", os.path.join(baseline, "code"))
        for demo in (warm, other) if other else (warm,):
            timed([PYTHON, demo], warm_env)  # the learner's first run: writes the bytecode
        bare, demo, compiling, before = [], [], [], []
        for _ in range(runs):  # interleaved: a busy moment slows all of them, not one
            bare.append(timed([PYTHON, "-c", "pass"], warm_env))
            demo.append(timed([PYTHON, warm], warm_env))
            compiling.append(timed([PYTHON, first], first_env))
            if other:
                before.append(timed([PYTHON, other], warm_env))
        imports = slowest_imports(warm, warm_env)
    return bare, demo, compiling, before, imports


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--goal", type=float, default=10.0)
    parser.add_argument("--json", metavar="FILE", help="also write the result there (make bench)")
    parser.add_argument("--baseline", metavar="CHECKOUT",
                        help="also time the demo of another checkout, interleaved (before/after)")
    args = parser.parse_args()
    bare, demo, compiling, before, imports = measure(args.runs, args.baseline)
    bare_s, demo_s, first_s = (statistics.median(x) for x in (bare, demo, compiling))
    ratio = demo_s / bare_s
    met = ratio <= args.goal
    print(f"bare start   {bare_s * 1000:8.1f} ms (median of {args.runs})")
    print(f"demo         {demo_s * 1000:8.1f} ms (median of {args.runs}, every scenario, bytecode "
          f"cached; range {min(demo) * 1000:.0f}-{max(demo) * 1000:.0f} ms)")
    print(f"ratio        {ratio:8.1f}x (goal: at most {args.goal:g}x) {'OK' if met else 'MISSED'}")
    print(f"first run    {first_s * 1000:8.1f} ms = {first_s / bare_s:.1f}x (compiles code/ too; "
          "once per learner)")
    if before:
        before_s = statistics.median(before)
        print(f"baseline     {before_s * 1000:8.1f} ms = {before_s / bare_s:.1f}x "
              f"({args.baseline}, bytecode cached)")
    print("slowest top-level imports of the demo (cumulative, with -X importtime's overhead):")
    for micros, name in imports:
        print(f"  {micros / 1000:7.1f} ms  {name}")
    if args.json:
        cause = "" if met else ("slowest imports: " + ", ".join(
            f"{name} {micros / 1000:.0f} ms" for micros, name in imports[:4]))
        with open(args.json, "w") as out:
            json.dump({"goal": "demo / bare interpreter start", "value": ratio,
                       "limit": args.goal, "unit": "x", "met": met,
                       "detail": f"demo {demo_s * 1000:.0f} ms, bare {bare_s * 1000:.1f} ms; "
                                 f"first run {first_s / bare_s:.1f}x",
                       "cause": cause}, out)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
