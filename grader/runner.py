"""Grade one submission: prepare it, start its sandbox, probe it, run the checks with pytest.

`grade(path)` returns the result dict that every output format is built from:

    {"submission", "score", "max_score", "tests": [{"id", "name", "exercise", "score",
     "max_score", "status", "output"}], "protections", "problems", "output",
     "execution_time", "internal_errors"}

pytest runs in this (the grader's) process, with plugin autoload off, `--noconftest`, no
cache, `-c`/`--rootdir` on grader/checks: nothing from the learner's folder is on pytest's
path, and the learner's code runs only inside the sandbox. Scores come from the plugin's
records; a test that left no record scores 0 ("no se ejecutó"). pytest's exit code is not
used for anything.

Deliberate simplifications: one sandbox per submission, tests run one after another.
"""

import os
import shutil
import tempfile
import time

from grader import submission as submissions
from grader.paths import CHECKS_DIR
from grader.sandbox import Sandbox, SandboxError, detect_mode

EXERCISES = ("ejercicio2", "ejercicio3", "ejercicio4")
SUBMISSION_BUDGET = 240.0  # seconds of wall time for all the tests of one submission
PROBE_TIMEOUT = 10.0
PYTEST_ARGS = ["-c", os.path.join(CHECKS_DIR, "pytest.ini"), "--rootdir", CHECKS_DIR,
               "--noconftest", "--capture=sys", "-p", "no:cacheprovider", "-p", "no:terminal",
               "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:logging",
               "-p", "no:warnings", "-p", "no:doctest", "-p", "no:junitxml",
               "-p", "no:pastebin", "-p", "no:faulthandler", "-p", "no:stepwise",
               "-p", "no:debugging", "-p", "no:legacypath"]
CHECK_FILES = [os.path.join(CHECKS_DIR, f"test_ej{n}.py") for n in (2, 3, 4)]


class Context:
    """What the checks see of one submission (grader.checks.plugin.STATE)."""

    def __init__(self, only, budget):
        self.only = set(only or ())
        self.sandbox = None
        self.meta = {}
        self.broken = None
        self.strikes = {}
        self.memo = {}
        self.expected = {}
        self.results = {}
        self.internal_errors = []
        self.counter = 0
        self.dirty = False
        self.deadline = time.monotonic() + budget


def grade(path, name=None, only=None, budget=SUBMISSION_BUDGET):
    started = time.monotonic()
    prepared = submissions.prepare(path, name)
    state = Context(only, budget)
    workdir = tempfile.mkdtemp(prefix="grader-sub-")
    os.chmod(workdir, 0o700)
    try:
        if prepared.files:
            solution = prepared.write(os.path.join(workdir, "solution"))
            start(state, solution, prepared)
        else:
            state.broken = "no hay nada que corregir: " + prepared.problems[-1]
        run_checks(state)
    finally:
        for run in state.memo.get("kept", []):
            run.close()
        if state.sandbox is not None:
            state.sandbox.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return assemble(prepared, state, time.monotonic() - started)


def start(state, solution, prepared):
    try:
        state.sandbox = Sandbox(solution).start()
    except SandboxError as exc:
        state.broken = f"no se pudo crear el entorno aislado ({exc})"
        state.internal_errors.append(f"sandbox: {exc}")
        return
    probe(state, prepared)


def probe(state, prepared):
    """Start the learner's server once and read what it says it loaded."""
    from grader.checks.harness import Broken, Lab
    lab = Lab(state, 0)
    try:  # the probe server stays on as exercise 2's shared 2025-11-25 server
        run = lab.server("2025-11-25", roots=[], connect=False, keep=True)
        run.client.timeout = PROBE_TIMEOUT
        run.connect()
        run.client.timeout = lab_timeout()
        meta = (run.client.server_info or {}).get("_meta", {}).get(
            "io.github.curso-mcp/solution")
        if not isinstance(meta, dict):
            raise Broken("el servidor no informó de qué cargó de tu solución")
        state.meta = meta
        state.memo.setdefault("shared", {})["2025-11-25"] = run
        for file, problem in sorted((meta.get("errors") or {}).items()):
            prepared.problems.append(f"{file} no se cargó: {problem}")
    except Broken as exc:
        state.broken = f"el servidor no arrancó con tu solución: {exc}"
    finally:
        lab.close()


def lab_timeout():
    from grader.checks.harness import CONNECT_TIMEOUT
    return CONNECT_TIMEOUT


def run_checks(state):
    import pytest

    from grader.checks import plugin
    plugin.STATE = state
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only for this run: no installed plugins
    try:
        pytest.main(PYTEST_ARGS + CHECK_FILES, plugins=[plugin])
    except BaseException as exc:  # pytest itself failed: every test scores 0
        state.internal_errors.append(f"pytest: {type(exc).__name__}: {exc}")
    finally:
        plugin.STATE = None
        if autoload is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload


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
    protections = state.sandbox.protections() if state.sandbox else \
        {"mode": detect_mode(), "note": "no se ejecutó nada de la entrega"}
    lines = [f"Entrega: {prepared.name}", f"Puntuación: {score:g} / {max_score:g}"]
    for exercise in EXERCISES:
        mine = [t for t in tests if t["exercise"] == exercise]
        if mine:
            lines.append(f"  {exercise}: {sum(t['score'] for t in mine):g} / "
                         f"{sum(t['max_score'] for t in mine):g}")
    if state.broken:
        lines.append(f"Problema: {state.broken}")
    lines += [f"Aviso: {p}" for p in prepared.problems]
    return {"submission": prepared.name, "score": score, "max_score": max_score,
            "tests": tests, "protections": protections, "problems": list(prepared.problems),
            "output": "\n".join(lines), "execution_time": round(seconds, 2),
            "internal_errors": state.internal_errors}
