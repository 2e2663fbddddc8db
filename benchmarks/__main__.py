"""`make bench`: the course's seven speed goals, measured in one run and shown side by side.

    .venv/bin/python -m benchmarks [--only demo,grading,gradescope,serve,serve-http,lite,loop]
                                   [--full-lite]

Runs, one after another on the same machine, each benchmark with its own baseline measured
in the same run (every goal is a ratio, or seconds after opening):
- demo: `python3 code/main.py` / a bare `python3 -c pass` (benchmarks/demo_bench.py), at most 10x;
- grading: one learner with `--jobs 2` / a bare start (benchmarks/grader_bench.py), at most
  25x, with where one reference's time goes (`--phases`);
- gradescope: one submission's results through the bundle's `run_autograder`, hidden tests
  included (benchmarks/gradescope_bench.py), at most 10 s, beside a bare start;
- serve: `serve` / the SDK's MCPServer doing the same work (benchmarks/serve_bench.py), at
  most 0.5;
- serve-http: `serve --http` / the SDK's MCPServer on its own Streamable HTTP transport, the
  same calls through the SDK client over HTTP (benchmarks/serve_bench.py --http), at most 0.5;
- lite: the JupyterLite lesson's first answered form, seconds after opening
  (benchmarks/lite_bench.py --quick), at most 15 s, beside the same site without its
  bytecode (build.py --no-bytecode) loaded in turn. `--full-lite` also times the cold build;
- loop: the learner's check loop, `ui.revisar` on each exercise with its grader helper ready,
  on the sandbox and the portable host / the same check on the in-process host
  (benchmarks/loop_bench.py), at most 2x, with the cold check before issue 47 beside it and
  where the time goes.

Each benchmark's own report is printed as it runs (one that is not in this edition, like the
grading benchmark in the student edition, is skipped and said so); then one table: each goal,
the measured value, met or missed. Exit 0 when every goal was met, 1 otherwise; each miss is
named with its cause (the benchmark's own explanation: the slowest imports, where the grading
time goes, what each server adds per call, the slowest phase of the page).

Deliberate simplifications: one run of each (the benchmarks take medians or best-of inside);
numbers on a shared machine are noisy, so a goal missed by a hair is worth a second run.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCHES = {
    "demo": ["demo_bench.py"],
    "grading": ["grader_bench.py", "--jobs", "2", "--rounds", "2", "--phases"],
    "gradescope": ["gradescope_bench.py", "--rounds", "3"],
    "serve": ["serve_bench.py", "--no-demo"],
    "serve-http": ["serve_bench.py", "--http"],
    "lite": ["lite_bench.py", "--quick"],
    "loop": ["loop_bench.py", "--rounds", "3"],
}


def run(name, argv, folder):
    """Run one benchmark (its report goes to our stdout); its result dict, or a failure."""
    result = os.path.join(folder, name + ".json")
    print(f"\n== {name}: {' '.join(argv)}", flush=True)
    if not os.path.exists(os.path.join(HERE, argv[0])):  # the student edition has no grader
        print(f"{argv[0]} is not in this edition: skipped")  # bench (it grades the reference)
        return {"goal": name, "value": None, "limit": None, "unit": "", "met": None,
                "detail": f"{argv[0]} is not in this edition", "cause": ""}
    start = time.monotonic()
    done = subprocess.run([sys.executable, os.path.join(HERE, argv[0]), *argv[1:],
                           "--json", result], cwd=ROOT)
    seconds = time.monotonic() - start
    if not os.path.exists(result):
        return {"goal": name, "value": None, "limit": None, "unit": "", "met": False,
                "detail": f"took {seconds:.0f} s",
                "cause": f"{argv[0]} exited {done.returncode} without a result"}
    with open(result) as answer:
        return {**json.load(answer), "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(BENCHES),
                        help="which goals to measure (default: all seven)")
    parser.add_argument("--full-lite", action="store_true",
                        help="the whole JupyterLite benchmark (cold and warm builds, 3 loads)")
    args = parser.parse_args()
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in names if name not in BENCHES]
    if unknown:
        parser.error(f"unknown goal(s): {', '.join(unknown)} (known: {', '.join(BENCHES)})")
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        for name in names:
            argv = BENCHES[name]
            if name == "lite" and args.full_lite:
                argv = ["lite_bench.py"]
            results[name] = run(name, argv, folder)
    print("\n== speed goals (issues 21, 36, 45 and 47), measured in this run")
    print(f"{'goal':58} {'measured':>9} {'goal':>8}  met")
    for r in results.values():
        value = "-" if r["value"] is None else f"{r['value']:.2f}{r['unit']}"
        limit = "-" if r["limit"] is None else f"<= {r['limit']:g}{r['unit']}"
        met = {True: "yes", False: "NO", None: "skipped"}[r["met"]]
        print(f"{r['goal'][:58]:58} {value:>9} {limit:>8}  {met}")
        print(f"{'':4}{r['detail']}")
    missed = [name for name, r in results.items() if r["met"] is False]
    for name in missed:
        print(f"MISSED {name}: {results[name]['cause']}")
    print("every goal met" if not missed else f"{len(missed)} goal(s) missed: "
          + ", ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
