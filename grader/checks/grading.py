"""How a graded test is declared, named, set up, scored and redacted. No pytest in here.

The official grader runs the checks with pytest (grader/checks/plugin.py); the in-process
self-check in the browser, where there is no pytest, runs the very same check functions with
grader/checks/direct.py. Both go through this module, so a test is named, scored and
redacted the same way whoever runs it.

A test is a function `test_x(lab, grade[, revision])` declared with
`@graded(exercise, points, title, hidden=False, revisions=None)`. With `revisions`, it runs once
per protocol revision (pytest parametrizes it; direct.py loops).

Scores come from the test's `Grade`, never from an exit code: a test that raised anything we
did not expect scores 0 with status "error". Hidden tests are redacted by construction:
- `Grade(hidden=True)` drops `got`/`expected` from every check;
- a failed gate shows its own (constant) text, or only the title of the public test whose
  scenario it needs;
- a crash, a hang, a grader fault or a finding during a hidden test shows a fixed sentence,
  never the server's words (they could echo the test's inputs);
- the result carries `"hidden": true`.
"""

import os
import traceback

from grader.checks.harness import Abort, Broken, Grade, Lab
from grader.state import OUT_OF_TIME

REVISIONS = ("2025-11-25", "2026-07-28")
# What a test raises when the learner's server sent data of an unexpected shape that a test
# then tripped on: the test scores 0 ("error") and the instructor gets a warning, not exit 3.
SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError,
                UnicodeError)
HIDDEN_MARK = "(oculta)"
HIDDEN_BROKEN = ("tu servidor falló durante esta prueba oculta (terminó, no respondió a tiempo "
                 "o respondió algo que no es MCP); prueba tu solución con casos parecidos a los "
                 "del enunciado")
HIDDEN_SHAPE = "la respuesta de tu servidor tenía una forma inesperada en esta prueba oculta"
INTERNAL = "error interno del corrector; avisa al profesorado"


def graded(exercise, points, title, hidden=False, revisions=None):
    def mark(function):
        function.grading = {"exercise": exercise, "points": points, "title": title,
                            "hidden": bool(hidden),
                            "revisions": tuple(revisions) if revisions else None}
        return function
    return mark


def spec_for(function, module_file, revision=None):
    """The spec of one graded test (in one revision): what every report and score uses."""
    spec = function.grading
    where = f" [{revision}]" if revision else ""
    mark = f" {HIDDEN_MARK}" if spec["hidden"] else ""
    stem = os.path.splitext(os.path.basename(module_file))[0].replace("test_ej", "ej", 1)
    return {**spec, "name": f"{spec['exercise']}{where}{mark} {spec['title']}",
            "id": f"{stem}/{function.__name__}" + (f"[{revision}]" if revision else "")}


def open_lab(state, spec):
    """The `lab` of one test: a fresh workspace, or Broken when nothing can run any more."""
    state.counter += 1
    state.hidden_now = spec["hidden"]
    state.hidden_started = state.hidden_started or spec["hidden"]
    lab = Lab(state, state.counter)
    if state.left() <= 0:
        state.fail(OUT_OF_TIME)
    if state.broken:
        raise Broken(state.broken)
    return lab


def close_lab(state, lab):
    lab.close()
    if state.dirty:  # something misbehaved: nothing it left behind may reach the next test
        state.dirty = False
        try:
            state.host.sweep()
        except Exception:
            pass
    state.hidden_now = False


def new_grade(spec):
    return Grade(hidden=spec["hidden"])


def score(state, spec, grade, exc):
    """The result of one test from its Grade and what it raised (None: it returned)."""
    points, hidden = spec["points"], spec["hidden"]
    lines = grade.lines()
    if exc is None:
        value = round(points * grade.fraction(), 2)
        status = "passed" if grade.checks and grade.fraction() == 1 else "failed"
    elif isinstance(exc, Abort):
        value, status = 0.0, "failed"
        if hidden and exc.gate:
            lines = lines + [f"✘ esta prueba oculta necesita que antes funcione «{exc.gate}»"]
        else:
            lines = lines + ["✘ " + str(exc)]
    elif isinstance(exc, Broken):
        value, status = 0.0, "error"
        reason = OUT_OF_TIME if state.expired else HIDDEN_BROKEN if hidden else str(exc)
        lines = lines + ["✘ " + reason]
    elif state.expired or isinstance(exc, SHAPE_ERRORS):
        value, status = 0.0, "error"
        shape = HIDDEN_SHAPE if hidden else (
            "la respuesta de tu servidor tenía una forma inesperada y la prueba no pudo seguir "
            f"({type(exc).__name__})")
        lines = lines + ["✘ " + (OUT_OF_TIME if state.expired else shape)]
        state.warnings.append(f"{spec['id']}: {trace(exc)}")
    else:  # a bug in the grader, or something it did not foresee: never a point
        value, status = 0.0, "error"
        lines = lines + [f"✘ {INTERNAL} ({type(exc).__name__})"]
        state.internal_errors.append(f"{spec['id']}: {trace(exc)}")
    return {"id": spec["id"], "name": spec["name"], "exercise": spec["exercise"],
            "score": value, "max_score": points, "status": status, "hidden": hidden,
            "output": "\n".join(lines)}


def trace(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]


def trace_now():
    """The traceback of the exception being handled."""
    return traceback.format_exc()[-3000:]
