"""Benchmark (not a test): the learner's check loop, `ui.revisar`, against the in-process check.

    .venv/bin/python benchmarks/loop_bench.py [--rounds 3] [--hosts sandbox,portable]
                                              [--only ejercicio2,...] [--json FILE]

For each exercise of the core (the reference solution, public tests) and each host `revisar`
uses on CPython (the sandbox on Linux, the portable host elsewhere: forced with GRADER_HOST,
as revisar's `--host auto` reads it), four ways of running the same check, interleaved round by
round on an equally busy machine, best of `--rounds`:

- before: `python -m grader soluciones --only EX --tests public --host auto --format json`, a
  new process for every check (what `revisar` ran for every check before issue 47, and still
  runs for the first); `--baseline CHECKOUT` runs it with another checkout's grader;
- after: `revisar` with its helper ready (lessons/mcp_ui/warm.py): the learner's next check,
  once the helper started after the previous one has warmed up (it does while they edit; the
  benchmark waits for that, untimed, as a learner's editing would);
- in-process: the same command with `--host inprocess` (no isolation at all), also its own
  process: the baseline of issue 47's table, and the goal: after <= 2x this, on both hosts;
- in-kernel: `grader.selfcheck.run(..., host="inprocess")` in this warm process (what
  JupyterLite's later checks cost), shown for reference.

Then where one check's time goes, per host and exercise: what the helper pays ahead (its start,
the grader's and pytest's imports, the first collection, and what its host starts ahead: the
sandbox built before its submission is known, or the portable host's fork server; timed from
its start to its ready line), and, timed inside one warm check in this process (with what the
helper starts ahead started first), the host's setup and probe server, the servers the checks
start (spawn + initialize), the waits on the clock, and the rest (the checks' own work, and
pytest's run on the portable host: the sandbox's self-check runs without pytest). "before"
pays all of it at every check; "after" all but the first.

Deliberate simplifications: the reference only (a failing solution's checks end sooner); the
phases are one run each, not a best of.
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "lessons")]

from mcp_ui import review, warm  # noqa: E402

from grader import hosts, runner, selfcheck  # noqa: E402
from grader.checks import lab as lab_module  # noqa: E402
from grader.checks import later  # noqa: E402
from grader.exercises import EXERCISES as KNOWN  # noqa: E402
from grader.hosts import kinds  # noqa: E402

REFERENCE = os.path.join(ROOT, "grader", "reference", "soluciones")
EXERCISES = tuple(e.id for e in KNOWN if not e.optional)  # what a learner checks in the core
GOAL = 2.0  # issue 47: a check at most 2x the in-process check of the same exercise
HOSTS = ("sandbox", "portable")


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def cold(folder, exercise, host, checkout=ROOT):
    """One check in a new grader process (`--host auto`, GRADER_HOST set by the caller), with
    the grader of `checkout`."""
    argv = review.grader_argv(exercise, folder, host)
    done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True)
    return full_marks(done.stdout, (exercise, host, done.stderr[-500:]))


def full_marks(stdout, what):
    result = review.Review.from_output(what[0], stdout)
    assert result.score is not None and result.score == result.max_score, what
    return result


def warm_check(folder, exercise):
    """revisar with its helper ready: the helper is started and warmed up first, untimed."""
    warm.prepare()
    assert warm.wait_ready(120), "the helper did not get ready"
    helper = warm.kept()
    seconds, result = timed(lambda: review.revisar(exercise, folder))
    warm.discard()  # the next check's helper would warm up during the next measurement
    assert helper.returncode is not None, "the check did not run in the ready helper"
    assert result.score == result.max_score, (exercise, result.problem, result.to_text())
    return seconds


def helper_warm_up():
    """Seconds from a helper's start to its ready line."""
    warm.discard()
    seconds, ready = timed(lambda: (warm.prepare(), warm.wait_ready(120))[1])
    assert ready
    warm.discard()
    return seconds


def phases(folder, exercise, host):
    """Where one warm check's time goes (this process), as {label: seconds}: what a helper
    starts ahead (the sandbox built before its submission, the portable host's fork server)
    is started first, untimed, as in the helper (its worker, with the sandbox)."""
    hosts.kind(host).start_ahead()
    time.sleep(0.5)  # the learner editing: what was started ahead gets warm
    spent = collections.Counter()
    wrapped = [(runner, "start", "host setup + probe server"),
               (lab_module.Lab, "server", "servers (spawn + initialize)"),
               (later, "pause", "waits on the clock")]
    saved = []
    for owner, name, label in wrapped:
        original = getattr(owner, name)

        def wrapper(*args, _original=original, _label=label, **kwargs):
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_label] += time.perf_counter() - start
        saved.append((owner, name, original))
        setattr(owner, name, wrapper)
    try:
        total, result = timed(lambda: selfcheck.run(folder, exercise, host=host))
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    assert result["score"] == result["max_score"], (host, exercise)
    spent["checks' own work and pytest"] = total - sum(spent.values())
    return spent


def measure(folder, exercise, rounds, baseline):
    """{way: best seconds} for one exercise, the four ways interleaved round by round."""
    ways = {"before": lambda: timed(lambda: cold(folder, exercise, "auto", baseline))[0],
            "after": lambda: warm_check(folder, exercise),
            "in-process": lambda: timed(lambda: cold(folder, exercise, "inprocess"))[0],
            "in-kernel": lambda: timed(lambda: selfcheck.run(folder, exercise,
                                                             host="inprocess"))[0]}
    best = {way: float("inf") for way in ways}
    for _ in range(rounds):
        for way, run in ways.items():
            best[way] = min(best[way], run())
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", default=",".join(HOSTS))
    parser.add_argument("--only", default=",".join(EXERCISES))
    parser.add_argument("--goal", type=float, default=GOAL)
    parser.add_argument("--baseline", metavar="CHECKOUT",
                        help="the checkout whose grader runs the 'before' checks (e.g. a clone "
                             "of a commit before issue 47; default: this one, cold)")
    parser.add_argument("--json", metavar="FILE", help="also write the result there (make bench)")
    args = parser.parse_args()
    baseline = os.path.abspath(args.baseline) if args.baseline else ROOT
    hosts = [h for h in args.hosts.split(",") if h
             and (h != "sandbox" or kinds.sandbox_possible())]  # Linux only
    exercises = [e for e in args.only.split(",") if e]
    saved_host = os.environ.get("GRADER_HOST")
    rows, phase_rows, worst = [], [], None
    with tempfile.TemporaryDirectory(prefix="loop-") as tmp:
        folder = os.path.join(tmp, "soluciones")
        shutil.copytree(REFERENCE, folder)
        for exercise in exercises:  # warm caches (bytecode, file system) and this process
            selfcheck.run(folder, exercise, host="inprocess")
        try:
            for host in hosts:
                os.environ["GRADER_HOST"] = host
                ahead = min(helper_warm_up() for _ in range(args.rounds))
                for exercise in exercises:
                    best = measure(folder, exercise, args.rounds, baseline)
                    rows.append((host, exercise, best))
                    spent = phases(folder, exercise, host)
                    phase_rows.append((host, exercise, ahead, spent))
                    ratio = best["after"] / best["in-process"]
                    if worst is None or ratio > worst[0]:
                        worst = (ratio, host, exercise)
        finally:
            warm.discard()
            if saved_host is None:
                os.environ.pop("GRADER_HOST", None)
            else:
                os.environ["GRADER_HOST"] = saved_host
    print(f"the learner's check loop, the reference's public tests, best of {args.rounds} "
          f"rounds (seconds; ratios to the in-process check in its own process)")
    print(f"{'host':9} {'exercise':12} {'before':>8} {'after':>8} {'in-process':>10} "
          f"{'in-kernel':>9}  {'before/in-p':>11} {'after/in-p':>10} {'after/in-kernel':>15}")
    for host, exercise, best in rows:
        print(f"{host:9} {exercise:12} {best['before']:8.2f} {best['after']:8.2f} "
              f"{best['in-process']:10.2f} {best['in-kernel']:9.3f}  "
              f"{best['before'] / best['in-process']:10.1f}x "
              f"{best['after'] / best['in-process']:9.1f}x "
              f"{best['after'] / best['in-kernel']:14.1f}x")
    print("where one check's time goes (seconds): before = ahead + the check; after = the check")
    labels = ["host setup + probe server", "servers (spawn + initialize)", "waits on the clock",
              "checks' own work and pytest"]
    print(f"{'host':9} {'exercise':12} {'ahead*':>7} " + " ".join(f"{lab[:14]:>14}"
                                                          for lab in labels))
    for host, exercise, ahead, spent in phase_rows:
        print(f"{host:9} {exercise:12} {ahead:7.2f} "
              + " ".join(f"{spent.get(lab, 0.0):14.2f}" for lab in labels))
    print("  * ahead: a new grader process, its imports (the grader, pytest), pytest's first "
          "collection of the checks and what its host starts ahead (the sandbox, the fork "
          "server); the helper pays it while the learner edits")
    ratio, host, exercise = worst
    met = ratio <= args.goal
    print(f"slowest check against the in-process check: {ratio:.2f}x ({host}, {exercise}); "
          f"goal at most {args.goal:g}x: {'OK' if met else 'MISSED'}")
    if args.json:
        detail = "; ".join(f"{h} {e} {b['after'] / b['in-process']:.1f}x "
                           f"(before {b['before'] / b['in-process']:.1f}x)" for h, e, b in rows)
        slowest = max(phase_rows, key=lambda row: row[0] == host and row[1] == exercise)[3]
        cause = ", ".join(f"{label} {seconds:.2f} s" for label, seconds in
                          sorted(slowest.items(), key=lambda item: -item[1]))
        with open(args.json, "w") as out:
            json.dump({"goal": "revisar (warm) / the in-process check, worst exercise and host",
                       "value": ratio, "limit": args.goal, "unit": "x", "met": met,
                       "detail": detail,
                       "cause": "" if met else f"{host} {exercise}: {cause}"}, out)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
