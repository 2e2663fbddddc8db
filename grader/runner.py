"""Grade one submission: prepare it, start its sandbox, probe it, run the checks with pytest.

`grade(path)` returns the result dict that every output format is built from:

    {"submission", "score", "max_score", "tests": [{"id", "name", "exercise", "score",
     "max_score", "status", "output"}], "protections", "problems", "output",
     "execution_time", "internal_errors", "warnings"}

pytest runs in this (the grader's) process, with plugin autoload off, `--noconftest`, no
cache, `-c`/`--rootdir` on grader/checks: nothing from the learner's folder is on pytest's
path, and the learner's code runs only inside the sandbox. Scores come from the plugin's
records; a test that left no record scores 0 ("no se ejecutó"). pytest's exit code is not used
for anything, but a grading test file that does not import, or collects no graded test, or
changes on disk during the run, is the grader's own fault (`internal_errors`, exit 3).

The budget holds: a watchdog thread ends the sandbox when `budget` seconds have passed since
`grade()` started, and every timeout inside is cut to what is left of it.

Deliberate simplifications: one sandbox per submission, tests run one after another.
"""

import hashlib
import os
import threading
import time

from grader import boundary, tempspace
from grader import submission as submissions
from grader.escape import json_safe, one_line
from grader.paths import CHECKS_DIR
from grader.sandbox import Sandbox, SandboxError, detect_mode, plan
from grader.state import SubmissionState

EXERCISES = ("ejercicio2", "ejercicio3", "ejercicio4")
SUBMISSION_BUDGET = 240.0  # seconds of wall time for all the tests of one submission
PROBE_TIMEOUT = 10.0
PYTEST_ARGS = ["-c", os.path.join(CHECKS_DIR, "pytest.ini"), "--rootdir", CHECKS_DIR,
               "--noconftest", "--capture=sys", "--continue-on-collection-errors",
               "-p", "no:cacheprovider", "-p", "no:terminal",
               "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:logging",
               "-p", "no:warnings", "-p", "no:doctest", "-p", "no:junitxml",
               "-p", "no:pastebin", "-p", "no:faulthandler", "-p", "no:stepwise",
               "-p", "no:debugging", "-p", "no:legacypath"]
CHECK_FILES = [os.path.join(CHECKS_DIR, f"test_ej{n}.py") for n in (2, 3, 4)]
GUARDED_FILES = sorted(os.path.join(CHECKS_DIR, name) for name in os.listdir(CHECKS_DIR)
                       if name.endswith((".py", ".ini")))
MAX_SERVER_PROBLEMS = 20


def fingerprint():
    """sha256 of each grading file: a grading run must not change them (a tripwire)."""
    prints = {}
    for path in GUARDED_FILES:
        try:
            with open(path, "rb") as handle:
                prints[path] = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            prints[path] = None
    return prints


FINGERPRINT = fingerprint()


def grade(path, name=None, only=None, budget=SUBMISSION_BUDGET):
    started = time.monotonic()
    state = SubmissionState(only=frozenset(only or ()), budget=budget,
                            deadline=started + budget)
    watchdog = threading.Timer(budget, state.expire)
    watchdog.daemon = True
    watchdog.start()
    workdir = None
    try:
        prepared = submissions.prepare(path, name)
        workdir = tempspace.mkdtemp("sub")
        os.chmod(workdir, 0o700)
        if prepared.files:
            solution = prepared.write(os.path.join(workdir, "solution"))
            start(state, solution, prepared)
        else:
            state.broken = "no hay nada que corregir: " + prepared.problems[-1]
        run_checks(state)
    finally:
        watchdog.cancel()
        for run in state.kept:
            try:
                run.close()
            except Exception:
                pass
        if state.sandbox is not None:
            state.sandbox.close()
        if workdir is not None:
            boundary.remove_tree(workdir)
    if fingerprint() != FINGERPRINT:
        state.internal_errors.append("a grading file in grader/checks changed on disk during "
                                     "this run; every result of this run is suspect")
    return assemble(prepared, state, time.monotonic() - started)


def start(state, solution, prepared):
    sandbox = Sandbox(solution)
    try:
        sandbox.start()
    except SandboxError as exc:
        sandbox.close()
        state.broken = f"no se pudo crear el entorno aislado ({exc})"
        state.internal_errors.append(f"sandbox: {exc}")
        return
    with state.lock:
        state.sandbox = sandbox
        expired = state.expired
    if expired:
        sandbox.kill()
        return
    probe(state, prepared)


def probe(state, prepared):
    """Start the learner's server once: it must answer initialize and tools/list.

    The tools it lists are what exercise 2's gate observes; what it says it loaded (`_meta`)
    is only shown, attributed to the server, as feedback."""
    from grader.checks.harness import Broken, Lab
    lab = Lab(state, 0)
    try:  # the probe server stays on as exercise 2's shared 2025-11-25 server
        run = lab.server("2025-11-25", roots=[], connect=False, keep=True)
        run.connect(PROBE_TIMEOUT)
        state.shared["2025-11-25"] = run
        state.tools = frozenset(run.tools())
        prepared.problems += server_reported_problems(run.client.server_info)
    except Broken as exc:
        state.broken = f"el servidor no arrancó con tu solución: {exc}"
    finally:
        lab.close()


def server_reported_problems(info):
    """What the server says went wrong loading the solution, as escaped, attributed lines."""
    from protocol import SOLUTION_META_KEY
    meta = info.get("_meta") if isinstance(info, dict) else None
    meta = meta.get(SOLUTION_META_KEY) if isinstance(meta, dict) else None
    errors = meta.get("errors") if isinstance(meta, dict) else None
    if not isinstance(errors, dict):
        return []
    lines = [f"según tu servidor, {one_line(file, 80)} no se cargó: {one_line(problem, 300)}"
             for file, problem in sorted(errors.items(), key=lambda item: one_line(item[0]))]
    return lines[:MAX_SERVER_PROBLEMS]


def run_checks(state):
    import pytest

    from grader.checks import plugin
    plugin.state = state
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only for this run: no installed plugins
    try:
        pytest.main(PYTEST_ARGS + CHECK_FILES, plugins=[plugin])
    except BaseException as exc:  # pytest itself failed: every test scores 0
        state.internal_errors.append(f"pytest: {type(exc).__name__}: {exc}")
    finally:
        plugin.state = None
        if autoload is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload
    for path in CHECK_FILES:
        if not state.collected.get(os.path.basename(path)):
            state.internal_errors.append(f"{path}: no graded test was collected from it")


def assemble(prepared, state, seconds):
    tests = []
    for nodeid, spec in state.expected.items():
        result = state.results.get(nodeid) or {
            "id": spec["id"], "name": spec["name"], "exercise": spec["exercise"], "score": 0.0,
            "max_score": spec["points"], "status": "error",
            "output": "✘ " + (state.broken or "esta prueba no se ejecutó")}
        tests.append(result)
    if not tests:
        state.internal_errors.append("no grading test was collected")
    score = round(sum(t["score"] for t in tests), 2)
    max_score = sum(t["max_score"] for t in tests)
    protections = plan(state.sandbox.mode) if state.sandbox else \
        {"mode": detect_mode(), "note": "no se ejecutó nada de la entrega"}
    problems = list(prepared.problems) + [f"{text} (el corrector no lo siguió ni lo abrió)"
                                          for text in state.findings]
    lines = [f"Entrega: {one_line(prepared.name)}", f"Puntuación: {score:g} / {max_score:g}"]
    for exercise in EXERCISES:
        mine = [t for t in tests if t["exercise"] == exercise]
        if mine:
            lines.append(f"  {exercise}: {sum(t['score'] for t in mine):g} / "
                         f"{sum(t['max_score'] for t in mine):g}")
    if state.broken:
        lines.append(f"Problema: {one_line(state.broken)}")
    lines += [f"Aviso: {one_line(p)}" for p in problems]
    return json_safe({"submission": prepared.name, "score": score, "max_score": max_score,
                      "tests": tests, "protections": protections, "problems": problems,
                      "output": "\n".join(lines), "execution_time": round(seconds, 2),
                      "internal_errors": state.internal_errors, "warnings": state.warnings})
