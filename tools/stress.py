"""Stress check: the browser suites pass while every core is kept busy, several rounds in a row.

    .venv/bin/python tools/stress.py [--rounds 3] [--burners N] [--editions source,student]
                                     [--suites PATH... | --make-test] [--keep] [-- PYTEST ARGS]
    make stress                       (STRESS_ARGS="..." passes options)
    make stress-full                  (the same with --make-test)

Each round runs `pytest tests/browser tests/lite` (CI=true, so a missing tool fails instead of
skipping; LESSON_USER=scripted, as `make test` runs it) in each edition, while N CPU burners
run: `python -c "while True: pass"` processes this script starts right before that pytest and
stops right after it, by PID (SIGTERM, then SIGKILL), never by name; they are stopped too if
this script is interrupted. N defaults to one per core (os.cpu_count()), so the kernel, the
JupyterLab server, the setup page and chromium get about half the machine they would get alone.

Editions: `source` is this tree. `student` (only in the instructors' source, where
editions/release/build.py exists) is the student edition built by that script into a
temporary folder and cloned with git, as a learner gets it; the clone gets symlinks to this tree's
.venv, .venv-lite, tests/clients/node_modules and build/lite-cache (downloads only), so nothing
is installed. In the student edition itself, `source` is the only edition.

--make-test runs what CI runs instead of pytest: `CI=true make test` (venv from the pinned
requirements, chromium, the clients, the Lite venv, lint, the whole suite), in a git clone of
this tree's HEAD and in the student clone, each with its own environments (nothing linked in):
round 1 is a fresh clone's `make test`, the later rounds reuse the tree, the way a maintainer
runs it again (a reused tree is where a cached lint verdict once failed). That is issue 23's
done-means as one command. Uncommitted changes reach the student clone (built from the working
tree) but not the source clone (HEAD); the script says so when there are any.

The run stops at the first failing run and exits 1; it prints one line per run (round,
edition, outcome, seconds, pytest's summary line) and keeps every run's output, with the ten
slowest tests, in build/stress/. After a failure the clones are kept (a clone's
tests/artifacts/ has the screenshots and server logs); --keep keeps them always.

Deliberate simplifications: the burners are plain busy loops at normal priority (no memory or
disk pressure), and the student edition is built once per run, from the working tree as it is
(editions/release/build.py includes uncommitted changes and says so). With --make-test the
clones' environments are rebuilt from the package registries and the pip/npm caches (a few
minutes in round 1, about 2 GB of disk while the run lasts).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "build" / "stress"
SUITES = ("tests/browser", "tests/lite")
BURN = "while True: pass"
SHARED = (".venv", ".venv-lite", "tests/clients/node_modules", "build/lite-cache")
TEARDOWN = 120  # seconds an interrupted pytest gets to stop its servers before SIGKILL
MAKE_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
SUMMARY = re.compile(r"^=+ (.*(passed|failed|error|skipped).*) in [\d.]+s.* =+$")


class Burners:
    """N busy-loop processes, started and stopped by PID."""

    def __init__(self, count: int):
        self.count = count
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> Burners:
        for _ in range(self.count):
            self.procs.append(subprocess.Popen([sys.executable, "-c", BURN],
                                               stdin=subprocess.DEVNULL,
                                               start_new_session=True))
        if self.procs:
            print(f"  burners started: PIDs {' '.join(str(p.pid) for p in self.procs)}",
                  flush=True)
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        procs, self.procs = self.procs, []
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if procs:
            print(f"  burners stopped: PIDs {' '.join(str(p.pid) for p in procs)}", flush=True)


def student_edition(work: Path, share: bool) -> Path:
    """editions/release/build.py into `work`, then a git clone of its student/, with this
    tree's environments linked in when `share`; returns the clone."""
    subprocess.run([sys.executable, str(REPO / "editions" / "release" / "build.py"), "--out",
                    str(work / "release")], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    clone = work / "student"
    subprocess.run(["git", "clone", "-q", str(work / "release" / "student"), str(clone)],
                   check=True)
    if not share:
        return clone
    (REPO / "build" / "lite-cache").mkdir(parents=True, exist_ok=True)
    for name in SHARED:
        target = (REPO / name).resolve()
        if target.exists():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            (clone / name).symlink_to(target)
    return clone


def source_clone(work: Path) -> Path:
    """A git clone of this tree's HEAD in `work` (what CI checks out)."""
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    if changed.strip():
        print("  note: uncommitted changes are not in the source clone (it is HEAD)", flush=True)
    clone = work / "source"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    return clone


def command(tree: Path, suites: list[str], pytest_args: list[str], make_test: bool) -> list[str]:
    """What one run executes in `tree`: pytest on `suites`, or `make test`."""
    if make_test:  # without pytest arguments, make test's own groups (each logs its slowest)
        return ["make", "--no-print-directory", "test",
                *(["PYTEST_ARGS=" + " ".join(["--durations=10", *pytest_args])]
                  if pytest_args else [])]
    return [str(tree / ".venv" / "bin" / "python"), "-m", "pytest", "--durations=10", *suites,
            *pytest_args]


def run_once(tree: Path, log: Path, burners: int, cmd: list[str]) -> tuple[bool, str]:
    """`cmd` in `tree` under `burners` burners; (passed, pytest's summary line)."""
    env = dict(os.environ, CI="true", LESSON_USER="scripted")
    for name in MAKE_ENV:  # `make stress-full`'s own flags stay out of the clone's make
        env.pop(name, None)
    summary = ""
    with Burners(burners), open(log, "w", encoding="utf-8") as out:
        # Its own process group, with SIGINT as pytest expects it (a shell's background job
        # inherits it ignored): an interrupt goes to make and pytest alike, and the run ends
        # through pytest's teardown, which stops its servers by PID
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                match = SUMMARY.match(line.strip())
                if match:
                    summary = match[1]
                if line.startswith(("FAILED", "ERROR")):
                    print("    " + line.rstrip(), flush=True)
            proc.wait()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(TEARDOWN)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
    return proc.returncode == 0, summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    instructors = (REPO / "editions" / "release" / "build.py").exists()
    parser.add_argument("--editions", default="source,student" if instructors else "source",
                        help="comma-separated: source (this tree), student (instructors only)")
    parser.add_argument("--keep", action="store_true", help="keep the clones")
    parser.add_argument("--suites", nargs="+", default=list(SUITES),
                        help=f"test paths (default: {' '.join(SUITES)})")
    parser.add_argument("--make-test", action="store_true",
                        help="run CI=true make test in clones with their own environments")
    parser.add_argument("pytest_args", nargs="*", help="after --: extra pytest arguments")
    args = parser.parse_args(argv)
    editions = [e for e in args.editions.split(",") if e]
    if "student" in editions and not instructors:
        parser.error("the student edition is built only in the instructors' source")
    LOGS.mkdir(parents=True, exist_ok=True)

    if args.make_test and args.suites != list(SUITES):
        parser.error("--make-test runs the whole suite: use -- PYTEST ARGS, not --suites")
    what = "CI=true make test" if args.make_test else " ".join(args.suites)

    work = Path(tempfile.mkdtemp(prefix="stress-"))
    trees = {"source": REPO}
    failed = False
    try:
        if args.make_test and "source" in editions:
            trees["source"] = source_clone(work)
        if "student" in editions:
            trees["student"] = student_edition(work, share=not args.make_test)
        print(f"stress: {args.rounds} round(s) of {what} in {', '.join(editions)}, "
              f"{args.burners} burner(s) on {os.cpu_count()} core(s)", flush=True)
        for number in range(1, args.rounds + 1):
            for edition in editions:
                log = LOGS / f"round-{number}-{edition}.log"
                print(f"round {number} {edition}: running ({trees[edition]}, log {log})",
                      flush=True)
                start = time.monotonic()
                cmd = command(trees[edition], args.suites, args.pytest_args, args.make_test)
                passed, summary = run_once(trees[edition], log, args.burners, cmd)
                seconds = time.monotonic() - start
                print(f"round {number} {edition}: {'PASS' if passed else 'FAIL'} in "
                      f"{seconds:.0f} s ({summary or 'no summary line'})", flush=True)
                if not passed:
                    failed = True
                    return 1
        print(f"stress: {args.rounds} round(s) passed in every edition", flush=True)
        return 0
    finally:
        if failed or args.keep:
            print(f"kept: {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


def _interrupted(signum, frame):
    raise KeyboardInterrupt  # unwinds through Burners.__exit__, which stops them by PID


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("stress: interrupted (burners and pytest stopped)", flush=True)
        sys.exit(130)
