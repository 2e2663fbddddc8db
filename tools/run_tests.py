"""`make test`: the suites as groups of pytest processes, several at once, and one summary.

    .venv/bin/python tools/run_tests.py [--jobs N] [--only NAME,...] [--plan] [--record]
                                        [--keep] [-- PYTEST OPTIONS]

(`make test` runs it with LESSON_USER=scripted; `make test PYTEST_ARGS="..."` runs one plain
pytest instead, e.g. `make test PYTEST_ARGS="tests/notes_server -k fuzz"`.)

Each group (GROUPS: a few folders or files of tests/; a folder nobody names is a group of its
own, so a new suite runs without being listed) is one `pytest` process with its own
`--basetemp`, its output in build/test-logs/NAME.log. Up to --jobs groups run at once (default:
one per core and one more: the grader's groups spend about a quarter of their time waiting on
the clock, on timeouts of hostile servers and on plain mode's one-learner-at-a-time batch, and
one more group fills those gaps), never more than one browser group per two cores (JupyterLab
or JupyterLite and chromium each want a core). Groups start in order of what they cost: their
CPU seconds in tools/test_costs.json (written by --record from a run's measurements), a browser
group counting the whole chain of browser groups still to run, since those run one after
another. A group missing here (the student edition has no tests/grader) is left out, and said
so.

Every group runs under a small reaper (this script with --reap): a child subreaper
(PR_SET_CHILD_SUBREAPER), so every process a test starts, even one that leaves its session or
outlives its parent, stays its descendant. So:
- a group's CPU time is the user+sys of its whole process tree (the reaper's rusage, which
  holds every descendant it and its children waited for), a measure that does not depend on
  what else the machine is doing, unlike the wall time also shown;
- when pytest ends, a process still alive 5 s later is listed in the log (and the summary)
  and killed by PID;
- on SIGINT or SIGTERM (Ctrl-C, or a SIGTERM to make, which make passes on) each reaper sends
  SIGINT to its pytest's process group, so pytest runs its teardown and stops its servers;
  after TEARDOWN seconds, or at a second signal, it kills pytest's process group and then every
  descendant left, by PID. A reaper whose runner died gets SIGTERM (PR_SET_PDEATHSIG).

The summary gives one line per group (result, pytest's counts, wall and CPU time), the totals,
a last line shaped like pytest's (tools/stress.py reads it), then each failed group's failures
as pytest printed them. Exit 1 if any group failed or did not run (its log says why), 130 when
interrupted.

Deliberate simplifications: groups are whole folders or files (pytest-xdist would split
finer, but the browser suites share one built site and one JupyterLab per module); the costs
are a committed table, refreshed by hand with --record; "browser" is a flag per group, not a
measured load; Linux only for the reaper's guarantees (elsewhere it runs pytest and measures
what it waited for).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
LOGS = REPO / "build" / "test-logs"
COSTS = Path(__file__).with_name("test_costs.json")
TEARDOWN = 60     # seconds pytest gets, after SIGINT, to stop its servers
LINGER = 5        # seconds a process may outlive pytest before it is reported and killed
HEARTBEAT = 300   # seconds between "still running" lines
LEFTOVER = "run_tests: outlived pytest, killed:"
SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|errors?|skipped|deselected)\b.*) in "
                     r"([\d.]+)s\b.*=+$")
COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)")
SECTION = re.compile(r"^=+ (FAILURES|ERRORS|short test summary info) =+$")


@dataclass
class Group:
    """One pytest process: `paths` under the repository, minus the paths other groups claim;
    `part`, a pytest -k expression, when the groups that name one file share it out."""
    name: str
    paths: tuple[str, ...]
    browser: bool = False
    part: str = ""
    ignore: list[str] = field(default_factory=list)


# The suites, split so that two cores stay busy: the browser journeys (JupyterLab, JupyterLite)
# one group at a time, the rest beside them. The rendered edition's cost is running the
# notebooks (its two page loads are light), so it is not a browser group. The grader's hostile
# suite (a class of hostile submissions graded in each sandbox mode) is about half of the
# grader's tests' time, so it is two groups of its own, one per mode (their parametrize ids
# start with the mode): plain mode grades its class one learner at a time, so it is the longest
# group, and the root mode's half runs beside it.
GROUPS = (
    Group("browser", ("tests/browser",), browser=True),
    Group("lite", ("tests/lite",), browser=True),
    Group("hub", ("tests/hub",), browser=True),
    Group("rendered", ("tests/rendered",)),
    Group("hostile_plain", ("tests/grader/test_hostile.py",), part="[plain"),
    Group("hostile_root", ("tests/grader/test_hostile.py",), part="not [plain"),
    Group("grader", ("tests/grader",)),
    Group("notes_server", ("tests/notes_server",)),
    Group("notebooks", ("tests/notebooks",)),
    Group("clients", ("tests/clients",)),
    Group("instructor", ("tests/instructor",)),
    Group("laptop", ("tests/laptop",)),
    Group("top", ("tests/test_*.py",)),
)


def expand(path: str) -> list[str]:
    """The existing paths a group's entry names (a glob is expanded)."""
    if any(ch in path for ch in "*?["):
        return sorted(str(p.relative_to(REPO)) for p in REPO.glob(path))
    return [path] if (REPO / path).exists() else []


def has_tests(folder: Path) -> bool:
    return any("node_modules" not in p.parts for p in folder.rglob("test_*.py"))


def plan(groups=GROUPS) -> tuple[list[Group], list[str]]:
    """The groups that exist here (a folder of tests/ no group names becomes its own), each
    told to ignore what a more specific group claims; and the names left out."""
    present, missing = [], []
    claimed = set()
    for group in groups:
        paths = [p for entry in group.paths for p in expand(entry)]
        if paths:
            present.append(Group(group.name, tuple(paths), group.browser, part=group.part))
            claimed.update(paths)
        else:
            missing.append(group.name)
    for folder in sorted(p for p in TESTS.iterdir() if p.is_dir()):
        rel = str(folder.relative_to(REPO))
        if rel not in claimed and not any(rel.startswith(c + "/") for c in claimed) \
                and has_tests(folder):
            present.append(Group(folder.name, (rel,)))
            claimed.add(rel)
    for group in present:  # a folder gives up what a group naming a path inside it runs
        group.ignore = sorted(c for c in claimed for p in group.paths
                              if c != p and c.startswith(p.rstrip("/") + "/"))
    return present, missing


def pytest_argv(group: Group, basetemp: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", f"--basetemp={basetemp}", "--durations=10",
            *(f"--ignore={p}" for p in group.ignore), *(["-k", group.part] if group.part else []),
            *extra, *group.paths]


# -- the reaper: one per group ---------------------------------------------------------------
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


def prctl(option: int, value: int) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Live processes below `root`, from /proc (parents before children)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    ppid = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()[:160]
    except OSError:
        return "?"


def reap_all(block_until: float) -> None:
    """Wait for any child (orphans come to us) until none is left or the time is up."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() >= block_until:
                return
            time.sleep(0.1)


def kill_tree(me: int) -> list[str]:
    """SIGKILL every descendant, by PID, until none is left; what was found first."""
    seen: list[str] = []
    for _ in range(50):
        pids = descendants(me)
        if not pids:
            break
        if not seen:
            seen = [f"{pid} {command_line(pid)}" for pid in pids]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap_all(time.monotonic() + 0.5)
    return seen


def reap(argv: list[str]) -> int:
    """Run `argv` (pytest) as this subreaper's child in its own process group; see the
    module docstring. Exit with its status."""
    parent = os.getppid()
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    me, child, signals = os.getpid(), None, []

    def send(how: int) -> None:
        if child is not None:
            try:
                os.killpg(child, how)
            except ProcessLookupError:
                pass

    def interrupted(signum, frame):
        signals.append(signum)
        if len(signals) == 1:
            send(signal.SIGINT)  # pytest's KeyboardInterrupt: its teardown stops its servers
            signal.alarm(TEARDOWN)
        else:
            send(signal.SIGKILL)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGALRM, lambda signum, frame: send(signal.SIGKILL))
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
                signal.signal(sig, signal.SIG_DFL)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    if signals or os.getppid() != parent:  # asked to stop before the fork, or orphaned
        interrupted(signal.SIGTERM, None)
    status = None
    while status is None:
        try:
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            status = os.waitstatus_to_exitcode(code)
    signal.alarm(0)
    reap_all(time.monotonic() + (0 if signals else LINGER))
    left = kill_tree(me)
    if left:
        print(f"\n{LEFTOVER} {len(left)} process(es)", *left, sep="\n  ", flush=True)
    if status is None:
        return 1
    return 128 - status if status < 0 else status


# -- the runner ----------------------------------------------------------------------------
@dataclass
class Run:
    group: Group
    pid: int
    log: Path
    start: float
    wall: float = 0.0
    cpu: float = 0.0
    status: int | None = None

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


def load_costs() -> dict[str, float]:
    try:
        data = json.loads(COSTS.read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in data.get("cpu_seconds", {}).items()}


def record_costs(runs: list[Run]) -> None:
    data = {"about": "CPU seconds (user+sys of the process tree) of each make-test group, "
                     "written by `tools/run_tests.py --record`; the runner starts the "
                     "costliest first.", "cpu_seconds": load_costs()}
    data["cpu_seconds"].update({r.group.name: round(r.cpu) for r in runs})
    data["cpu_seconds"] = dict(sorted(data["cpu_seconds"].items()))
    COSTS.write_text(json.dumps(data, indent=1) + "\n")


def priorities(groups: list[Group], costs: dict[str, float]) -> dict[str, float]:
    """What starting a group early is worth: its cost, or for a browser group the cost of the
    whole chain of browser groups (they run one after another)."""
    known = [c for c in costs.values() if c > 0]
    default = sorted(known)[len(known) // 2] if known else 60.0
    cost = {g.name: costs.get(g.name, default) for g in groups}
    chain = sum(cost[g.name] for g in groups if g.browser)
    return {g.name: chain + cost[g.name] / 1000 if g.browser else cost[g.name] for g in groups}


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def counts(text: str) -> tuple[str, dict[str, int]]:
    """pytest's summary line (without the time) and its counts."""
    for line in reversed(text.splitlines()):
        match = SUMMARY.match(line.strip())
        if match:
            found = {}
            for number, what in COUNT.findall(match[1]):
                what = {"error": "errors", "warning": "warnings"}.get(what, what)
                found[what] = found.get(what, 0) + int(number)
            return match[1], found
    return "", {}


def failures(text: str, limit: int = 2000) -> str:
    """The FAILURES/ERRORS sections and the short summary pytest printed, or the log's end."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if SECTION.match(line)), None)
    if start is None:
        start = max(0, len(lines) - 80)
    shown = lines[start:]
    if len(shown) > limit:
        shown = shown[:limit // 2] + [f"... ({len(shown) - limit} lines cut) ..."] + \
            shown[-limit // 2:]
    return "\n".join(shown)


def start(group: Group, basetemp: Path, extra: list[str]) -> Run:
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{group.name}.log"
    argv = pytest_argv(group, basetemp, extra)
    with open(log, "wb") as out:
        out.write(("$ " + " ".join(argv) + "\n").encode())
        out.flush()
        pid = os.fork()
        if pid == 0:  # the reaper, in a session of its own (a terminal's Ctrl-C reaches us)
            try:
                os.setsid()
                os.chdir(REPO)
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.execv(sys.executable, [sys.executable, __file__, "--reap", "--", *argv])
            finally:
                os._exit(127)
    return Run(group, pid, log, time.monotonic())


def stop(runs: dict[int, Run], how: int) -> None:
    for run in runs.values():
        try:
            os.kill(run.pid, how)
        except ProcessLookupError:
            pass


def schedule(groups: list[Group], jobs: int, browsers: int, extra: list[str], work: Path,
             costs: dict[str, float]) -> tuple[list[Run], bool]:
    """Run every group, at most `jobs` at once and `browsers` browser groups at once."""
    worth = priorities(groups, costs)
    waiting = sorted(groups, key=lambda g: -worth[g.name])
    running: dict[int, Run] = {}
    done: list[Run] = []
    interrupts = []

    def interrupted(signum, frame):
        interrupts.append(signum)
        print(f"\nrun_tests: {signal.Signals(signum).name}: stopping "
              f"{', '.join(r.group.name for r in running.values()) or 'nothing'}"
              + (" now" if len(interrupts) > 1 else
                 f" (pytest teardown, at most {TEARDOWN} s; again to kill now)"), flush=True)
        stop(running, signal.SIGTERM)
        waiting.clear()

    old = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    beat = time.monotonic()
    try:
        while waiting or running:
            busy = sum(r.group.browser for r in running.values())
            for group in list(waiting):
                if len(running) >= jobs:
                    break
                if group.browser and busy >= browsers:
                    continue
                waiting.remove(group)
                run = start(group, work / group.name, extra)
                running[run.pid] = run
                busy += group.browser
                print(f"  start  {group.name:<15} {' '.join(group.paths)}", flush=True)
            if not running:
                break
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                if time.monotonic() - beat > HEARTBEAT:
                    beat = time.monotonic()
                    print("  still running: " + ", ".join(
                        f"{r.group.name} ({minutes(beat - r.start)})"
                        for r in running.values()), flush=True)
                time.sleep(1)
                continue
            run = running.pop(pid, None)
            if run is None:
                continue
            run.wall = time.monotonic() - run.start
            run.cpu = usage.ru_utime + usage.ru_stime
            run.status = os.waitstatus_to_exitcode(status)
            done.append(run)
            line, _ = counts(run.text())
            verdict = "PASS" if run.status == 0 else f"FAIL (exit {run.status})"
            print(f"  done   {run.group.name:<15} {verdict}: {line or 'no summary line'}; "
                  f"wall {minutes(run.wall)}, CPU {minutes(run.cpu)}", flush=True)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    return done, bool(interrupts)


def report(done: list[Run], skipped: list[Group], wall: float, interrupted: bool) -> bool:
    """The summary table and each failure; True if every group passed."""
    total: dict[str, int] = {}
    print("\nmake test: one line per group (wall = elapsed, CPU = user+sys of its processes)")
    print(f"  {'group':<15} {'result':<7} {'wall':>8} {'CPU':>8}  pytest")
    for run in sorted(done, key=lambda r: -r.cpu):
        line, found = counts(run.text())
        for what, number in found.items():
            if not (run.group.part and what == "deselected"):  # another group's part of it
                total[what] = total.get(what, 0) + number
        print(f"  {run.group.name:<15} {'pass' if run.status == 0 else 'FAIL':<7} "
              f"{minutes(run.wall):>8} {minutes(run.cpu):>8}  {line or 'no summary line'}")
        if LEFTOVER in run.text():
            print(f"  {'':<15} processes outlived pytest: see {run.log.relative_to(REPO)}")
    for group in skipped:
        print(f"  {group.name:<15} {'not run':<7}")
    cpu = sum(r.cpu for r in done)
    print(f"  {'total':<15} {'':<7} {minutes(wall):>8} {minutes(cpu):>8}  "
          f"(CPU/wall {cpu / wall if wall else 0:.2f}; logs in {LOGS.relative_to(REPO)}/)")
    failed = [r for r in done if r.status != 0]
    for run in [] if interrupted else failed:
        print(f"\n{'=' * 30} {run.group.name}: exit {run.status} "
              f"({run.log.relative_to(REPO)}) {'=' * 30}")
        print(failures(run.text()))
    ok = not failed and not skipped and not interrupted
    summary = ", ".join(f"{n} {what}" for what, n in sorted(total.items())) or "no tests"
    groups = f"{len(done) - len(failed)}/{len(done) + len(skipped)} groups passed"
    print(f"{'=' * 20} {summary}, {groups} in {wall:.1f}s {'=' * 20}", flush=True)
    return ok


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--reap"]:
        return reap(argv[2:] if argv[1:2] == ["--"] else argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    cores = os.cpu_count() or 1
    parser.add_argument("--jobs", type=int, default=cores + 1,
                        help=f"groups at once ({cores + 1}: one per core, and one more)")
    parser.add_argument("--only", default="", help="comma-separated group names")
    parser.add_argument("--plan", action="store_true", help="print the groups, run nothing")
    parser.add_argument("--record", action="store_true",
                        help=f"write each group's CPU seconds to {COSTS.name}")
    parser.add_argument("--keep", action="store_true", help="keep the groups' basetemps")
    parser.add_argument("pytest_args", nargs="*", help="after --: options for every pytest")
    args = parser.parse_args(argv)
    groups, missing = plan()
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {g.name for g in groups}
        if unknown:
            parser.error(f"no such group here: {', '.join(sorted(unknown))}")
        groups = [g for g in groups if g.name in names]
    jobs, browsers = max(1, args.jobs), max(1, cores // 2)
    costs = load_costs()
    print(f"make test: {len(groups)} groups, up to {jobs} at once and {browsers} browser group "
          f"at a time ({cores} cores); each group's output in {LOGS.relative_to(REPO)}/")
    if missing:
        print(f"  not in this edition: {', '.join(missing)}")
    if args.plan:
        worth = priorities(groups, costs)
        for group in sorted(groups, key=lambda g: -worth[g.name]):
            print(f"  {group.name:<15} {'browser' if group.browser else '':<8} "
                  f"cost {costs.get(group.name, 0):>5.0f} s  "
                  f"{' '.join(pytest_argv(group, Path('BASETEMP'), args.pytest_args)[3:])}")
        return 0
    work = Path(tempfile.mkdtemp(prefix="make-test-"))
    began = time.monotonic()
    try:
        done, interrupted = schedule(groups, jobs, browsers, args.pytest_args, work, costs)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    ran = {r.group.name for r in done}
    ok = report(done, [g for g in groups if g.name not in ran], time.monotonic() - began,
                interrupted)
    if args.record and not interrupted:
        record_costs(done)
        print(f"costs written to {COSTS.relative_to(REPO)}")
    if interrupted:
        print("make test: interrupted; every group's processes were stopped")
        return 130
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
