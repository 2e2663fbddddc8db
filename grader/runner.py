"""Grade one submission: read it, start its host, probe its server, run the checks.

`grade(path)` returns the result dict that every output format is built from:

    {"submission", "score", "max_score", "tests": [{"id", "name", "exercise", "score",
     "max_score", "status", "hidden", "output"}], "suite", "protections", "notice",
     "problems", "output", "execution_time", "internal_errors", "warnings"[, "optional"]}

Which exercises there are, and which are optional, is data (grader/exercises.py). An optional
exercise (the reto, the 2026-07-28 part of exercise 3B) is graded only when the submission
brings its file (or `only` names it), and counted apart: `score`/`max_score` are the required
exercises' (the optional ones' when nothing else was graded), and `optional` lists
{"exercise", "score", "max_score"} for each optional exercise graded, in the data's order.

`tests` ("public" or "all") picks the suites: grader/checks/public/ always, and
grader/checks/hidden/ too with "all" when it is there (the student edition has no hidden
folder: there "all" is the public tests, and the result says so in `suite`). `host` picks where
the servers run (grader/hosts/): the official sandbox, or a self-check host (portable,
in-process), whose report says plainly what is not in force (`notice`).

With the sandbox and the portable host, pytest runs the checks in this (the grader's) process,
with plugin autoload off, `--noconftest`, no cache, `-c`/`--rootdir` on grader/checks: nothing
from the learner's folder is on pytest's path, and the learner's code runs only in its host.
In-process (the browser: no pytest, no threads) grader/checks/direct.py runs the same checks,
and so does a learner's self-check with the sandbox (`tests="public"`, what `ui.revisar`
asks for): the same check functions, specs, order and scoring, without pytest's run around
them (its share of a short check). Official grading (every test, or a run without `--tests
public`) keeps pytest.
Scores come from the checks' records; a test that left no record scores 0 ("no se ejecutó").
pytest's exit code is not used for anything, but a grading file that does not import, a folder
of checks that exists and collects no graded test, or a grading file that changes on disk during
the run is the grader's own fault (`internal_errors`, exit 3).

The budget holds: a watchdog thread ends the host when `budget` seconds have passed since
`grade()` started (not in the browser, which has no threads), and every timeout inside is cut
to what is left of it. The only time added to it is what a batch worker waited to get its busy
slot back after a check's wait on the clock (`idle`, grader/pool.py): the watchdog follows the
moved deadline.

Deliberate simplifications: one host per submission, tests run one after another.
"""

import hashlib
import itertools
import os
import random
import threading
import time

from grader import exercises, hosts
from grader.errors import HostError
from grader.escape import json_safe, one_line
from grader.paths import CHECKS_DIR
from grader.spoken import spoken
from grader.state import SubmissionState

EXERCISES = exercises.IDS
SUITES = ("public", "all")
SUBMISSION_BUDGET = 240.0  # seconds of wall time for all the tests of one submission
PROBE_TIMEOUT = 10.0
PYTEST_ARGS = ["-c", os.path.join(CHECKS_DIR, "pytest.ini"), "--rootdir", CHECKS_DIR,
               "--noconftest", "--capture=sys", "--continue-on-collection-errors",
               "-p", "no:cacheprovider", "-p", "no:terminal",
               "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:logging",
               "-p", "no:warnings", "-p", "no:doctest", "-p", "no:junitxml",
               "-p", "no:pastebin", "-p", "no:faulthandler", "-p", "no:stepwise",
               "-p", "no:debugging", "-p", "no:legacypath"]
PUBLIC_DIR = os.path.join(CHECKS_DIR, "public")
HIDDEN_DIR = os.path.join(CHECKS_DIR, "hidden")
MAX_SERVER_PROBLEMS = 20
SUITE_NOTICE = ("Solo pruebas públicas: la nota oficial incluye además pruebas ocultas con los "
                "mismos comportamientos del enunciado y otros casos.")


def check_files(folder):
    """The grading files of one suite folder, in exercise order ([] if the folder is absent)."""
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if name.startswith(("test_ej", "test_reto")) and name.endswith(".py"))


def suite_files(tests):
    """(suite actually run, check files in the order they run: public first, then hidden).
    "all" without a hidden folder (the student edition) is the public suite."""
    files = check_files(PUBLIC_DIR)
    if tests == "all" and os.path.isdir(HIDDEN_DIR):
        return "all", files + check_files(HIDDEN_DIR)
    return "public", files


def guarded_files():
    found = []
    for parent, dirs, files in os.walk(CHECKS_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.join(parent, name) for name in sorted(files)
                  if name.endswith((".py", ".ini"))]
    return found


def fingerprint():
    """sha256 of each grading file: a grading run must not change them (a tripwire)."""
    prints = {}
    for path in guarded_files():
        try:
            with open(path, "rb") as handle:
                prints[path] = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            prints[path] = None
    return prints


FINGERPRINT = fingerprint()


def watch(state, stop):
    """The budget watchdog's thread: expire `state` at its deadline, which may move later."""
    while not stop.wait(max(0.0, state.deadline - time.monotonic())):
        if time.monotonic() >= state.deadline:
            state.expire()
            return


def grade(path, name=None, only=None, budget=SUBMISSION_BUDGET, tests="all", host="sandbox",
          idle=None):
    """Grade one submission; `idle(seconds)`: how its checks wait on the clock (a batch
    worker lends its slot meanwhile, grader/worker.py), returning the seconds it then waited
    for the slot again."""
    started = time.monotonic()
    kind = hosts.kind(host)
    suite, files = suite_files(tests)
    state = SubmissionState(only=frozenset(only or ()), budget=budget, suite=suite,
                            deadline=started + budget)
    if idle is not None:
        state.idle = idle
    stop = threading.Event()
    if kind.threads:
        threading.Thread(target=watch, args=(state, stop), daemon=True,
                         name="budget-watchdog").start()
    workdir = None
    try:
        prepared = kind.prepare(path, name)
        take_optional(state, prepared)
        workdir = kind.workspace()
        if prepared.files:
            solution = kind.write(prepared, os.path.join(workdir, "solution"))
            prepared.files.clear()  # on disk now: the grader keeps no copy
            start(state, kind, solution, workdir, prepared)
        else:
            state.broken = "no hay nada que corregir: " + prepared.problems[-1]
        run_checks(state, kind, files, tests)
    finally:
        stop.set()
        if state.host is not None:
            state.host.close()
        if workdir is not None:
            kind.remove(workdir)
    if fingerprint() != FINGERPRINT:
        state.internal_errors.append("a grading file in grader/checks changed on disk during "
                                     "this run; every result of this run is suspect")
    return assemble(prepared, state, kind, time.monotonic() - started)


def take_optional(state, prepared):
    """What the grader reads in the submission's files (as text, grader/checks/sources.py), and
    which files it brought (a test of an exercise whose file is not there scores 0 at once and
    starts no server: grader/checks/lab.py, `open_lab`); an optional exercise whose file the
    submission does not bring is not graded at all, unless it was asked for by name."""
    from grader.checks import sources
    state.sources = sources.read(prepared.files)
    state.files = frozenset(prepared.files)
    state.order = shuffled_order(prepared.files, suite_files(state.suite)[1])
    state.only = frozenset(exercises.graded_for(prepared.files, state.only))


def shuffled_order(solution_files, check_files):
    """What shuffles a submission's tests (grader/checks/later.py, `waiting_first`): seeded by
    the submission's files and the grading files' contents, hidden ones included. So grading
    the same submission again runs its tests in the same order and gives the same scores, even
    where a limit of the whole submission (its time, its frames' bytes) cuts its last tests;
    and no learner can work out the official order, which depends on the hidden tests."""
    digest = hashlib.sha256()
    for name in sorted(solution_files):
        text = solution_files[name]
        data = text if isinstance(text, bytes) else str(text).encode("utf-8", "surrogatepass")
        for part in (name.encode("utf-8", "surrogatepass"), data):
            digest.update(len(part).to_bytes(8, "big") + part)
    for path in check_files:
        digest.update(str(FINGERPRINT.get(path)).encode())
    return random.Random(digest.digest())


def start(state, kind, solution, workdir, prepared):
    host = kind.open(solution, workdir)
    try:
        host.start()
    except HostError as exc:
        host.close()
        state.broken = f"no se pudo crear el entorno de corrección ({exc})"
        state.internal_errors.append(f"host {kind.name}: {exc}")
        return
    with state.lock:
        state.host = host
        expired = state.expired
    if expired:
        host.kill()
        return
    probe(state, prepared)


def probe(state, prepared):
    """Start the learner's server once: it must answer initialize and tools/list.

    The tools it lists are what exercise 2's gate observes; what it says it loaded (`_meta`)
    is only shown, attributed to the server, as feedback."""
    from grader.checks.grading import Broken
    from grader.checks.lab import Lab
    from shared.protocol import LATEST_HANDSHAKE
    lab = Lab(state, 0)
    try:
        run = lab.server(LATEST_HANDSHAKE, roots=[], connect=False)
        run.connect(PROBE_TIMEOUT)
        state.tools = frozenset(run.tools())
        prepared.problems += server_reported_problems(run.client.server_info)
    except Broken as exc:
        state.broken = f"el servidor no arrancó con tu solución: {exc}"
    finally:
        lab.close()


def server_reported_problems(info):
    """What the server says went wrong loading the solution, as escaped, attributed lines."""
    from shared.protocol import SOLUTION_META_KEY
    meta = info.get("_meta") if isinstance(info, dict) else None
    meta = meta.get(SOLUTION_META_KEY) if isinstance(meta, dict) else None
    errors = meta.get("errors") if isinstance(meta, dict) else None
    if not isinstance(errors, dict):
        return []
    first = list(itertools.islice(errors.items(), MAX_SERVER_PROBLEMS))  # the rest is not read
    lines = [f"según tu servidor, {one_line(file, 80)} no se cargó: {one_line(problem, 300)}"
             for file, problem in sorted(first, key=lambda item: one_line(item[0], 80))]
    return lines


def run_checks(state, kind, files, tests="all"):
    """The checks of `files`, with pytest, or without it (grader/checks/direct.py) on a host
    without pytest and for a sandbox's self-check (only the public tests asked for)."""
    if kind.pytest and not (tests == "public" and kind.self_check_without_pytest):
        run_with_pytest(state, files)
    else:
        from grader.checks import direct
        direct.run(state, files)
    for folder in (PUBLIC_DIR, HIDDEN_DIR) if state.suite == "all" else (PUBLIC_DIR,):
        if not any(os.path.dirname(path) == folder for path in files):
            state.internal_errors.append(f"{folder}: no grading file in it")
    for path in files:
        if not state.collected.get(os.path.basename(path)):
            state.internal_errors.append(f"{path}: no graded test was collected from it")


def run_with_pytest(state, files, *options):
    """pytest on `files` for `state` (with `options`, e.g. --collect-only: grader/warm.py)."""
    import pytest

    from grader.checks import plugin
    plugin.state = state
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only for this run: no installed plugins
    try:
        pytest.main([*PYTEST_ARGS, *options, *files], plugins=[plugin])
    except BaseException as exc:  # pytest itself failed: every test scores 0
        state.internal_errors.append(f"pytest: {type(exc).__name__}: {exc}")
    finally:
        plugin.state = None
        if autoload is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload


def assemble(prepared, state, kind, seconds):
    tests = []
    for key, spec in state.expected.items():
        result = state.results.get(key) or {
            "id": spec["id"], "name": spec["name"], "exercise": spec["exercise"], "score": 0.0,
            "max_score": spec["points"], "status": "error", "hidden": spec["hidden"],
            "output": "✘ " + (state.broken or "esta prueba no se ejecutó")}
        tests.append(result)
    if not tests:
        state.internal_errors.append("no grading test was collected")
    from grader.checks.grading import essentials
    tests += essentials(list(state.expected.values()), tests)
    counted = [t for t in tests if not exercises.optional(t["exercise"])] or tests
    score = round(sum(t["score"] for t in counted), 2)
    max_score = sum(t["max_score"] for t in counted)
    protections = state.host.protections() if state.host is not None else \
        {**kind.describe(), "note": "no se ejecutó nada de la entrega"}
    notices = [state.host.notice] if getattr(state.host, "notice", "") else []
    if state.suite == "public":
        notices.append(SUITE_NOTICE)
    found = "{} (el corrector no lo siguió ni lo abrió)"
    problems = list(prepared.problems) + [found.format(text) for text in state.findings]
    public = list(prepared.problems) + [found.format(text) for text in state.public_findings]
    output = report_lines(prepared.name, tests, notices, state.broken, problems)
    public_output = report_lines(
        prepared.name, [t for t in tests if not t["hidden"]], notices,
        None if state.broken_in_hidden else state.broken, public, public_only=True)
    result = {"submission": prepared.name, "score": score, "max_score": max_score,
              "tests": tests, "suite": state.suite, "protections": protections,
              "notice": " ".join(notices), "problems": problems,
              "output": output, "public_output": public_output,
              "execution_time": round(seconds, 2),
              "internal_errors": state.internal_errors, "warnings": state.warnings}
    optional = [{"exercise": exercise,
                 "score": round(sum(t["score"] for t in mine), 2),
                 "max_score": sum(t["max_score"] for t in mine)}
                for exercise in sorted(exercises.OPTIONAL, key=EXERCISES.index)
                if (mine := [t for t in tests if t["exercise"] == exercise])]
    if optional:
        result["optional"] = optional
    return json_safe(result)


def report_lines(name, tests, notices, broken, problems, public_only=False):
    """The report's header: the total, each exercise (public and hidden), notes and problems.
    `public_only`: what is known before any hidden test ran (its tests are the public ones;
    `broken` and `problems` are those that came outside the hidden tests)."""
    counted = [t for t in tests if not exercises.optional(t["exercise"])]
    lines = [f"Entrega: {one_line(name)}"]
    if counted or not tests:
        lines.append(f"Puntuación{' de las pruebas públicas' if public_only else ''}: "
                     f"{spoken(sum(t['score'] for t in counted))} / "
                     f"{spoken(sum(t['max_score'] for t in counted))}")
    for exercise in EXERCISES:
        mine = [t for t in tests if t["exercise"] == exercise]
        if mine:
            hidden = [t for t in mine if t["hidden"]]
            split = (f" (públicas {spoken(sum(t['score'] for t in mine if not t['hidden']))} / "
                     f"{spoken(sum(t['max_score'] for t in mine if not t['hidden']))}; ocultas "
                     f"{spoken(sum(t['score'] for t in hidden))} / "
                     f"{spoken(sum(t['max_score'] for t in hidden))})") if hidden else ""
            label = exercises.by_id(exercise).shown
            lines.append(f"  {label}: {spoken(sum(t['score'] for t in mine))} / "
                         f"{spoken(sum(t['max_score'] for t in mine))}{split}")
    lines += [f"Nota: {text}" for text in notices]
    if broken:
        lines.append(f"Problema: {one_line(broken)}")
    lines += [f"Aviso: {one_line(p)}" for p in problems]
    return "\n".join(lines)
