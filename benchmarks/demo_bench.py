"""Benchmark (not a test): what the demo costs, as a ratio to a bare interpreter start.

    python3 benchmarks/demo_bench.py [--runs 9] [--goal 10]

Runs `python3 code/main.py` (the whole demo, every scenario on the real wire, output thrown
away) and a bare `python3 -c pass` interleaved, run by run, so both see the same machine, and
prints the median of each, their ratio against the goal (issue 21: at most 10x a bare start),
and where the demo's import time goes (`-X importtime`, the ten slowest modules it imports),
so a regression names its cause. Exit 1 when the ratio misses the goal.

Deliberate simplifications: the system interpreter only (the demo needs nothing installed);
wall time, not CPU time (a learner waits for the wall clock).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "code", "main.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=ROOT)
    return time.perf_counter() - start


def slowest_imports(count=10):
    """[(cumulative microseconds, module)] of the demo's slowest imports."""
    run = subprocess.run([PYTHON, "-X", "importtime", DEMO], cwd=ROOT, text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    rows = re.findall(r"^import time:\s+\d+ \|\s+(\d+) \|(\s*)(\S+)$", run.stderr, re.M)
    top = [(int(cumulative), name) for cumulative, indent, name in rows if len(indent) <= 2]
    return sorted(top, reverse=True)[:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--goal", type=float, default=10.0)
    args = parser.parse_args()
    bare, demo = [], []
    for _ in range(args.runs):  # interleaved: a busy moment slows both, not one
        bare.append(timed([PYTHON, "-c", "pass"]))
        demo.append(timed([PYTHON, DEMO]))
    bare_s, demo_s = statistics.median(bare), statistics.median(demo)
    ratio = demo_s / bare_s
    print(f"bare start   {bare_s * 1000:8.1f} ms (median of {args.runs})")
    print(f"demo         {demo_s * 1000:8.1f} ms (median of {args.runs}, every scenario)")
    print(f"ratio        {ratio:8.1f}x (goal: at most {args.goal:g}x) "
          f"{'OK' if ratio <= args.goal else 'MISSED'}")
    print("slowest top-level imports of the demo (cumulative):")
    for micros, name in slowest_imports():
        print(f"  {micros / 1000:7.1f} ms  {name}")
    return 0 if ratio <= args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
