"""How a graded test is declared, scored and redacted: `@graded`, `Grade` and the points. No pytest.

The official grader runs the checks with pytest (grader/checks/plugin.py); the in-process
self-check in the browser, where there is no pytest, runs the very same check functions with
grader/checks/direct.py. Both go through this module, so a test is named, scored and
redacted the same way whoever runs it.

A test is a function `test_x(lab, grade[, revision])` declared with
`@graded(exercise, points, title, hidden=False, revisions=None)`. With `revisions` (usually
`protocol.REVISIONS`, the two the lesson teaches), it runs once per protocol revision (pytest
parametrizes it; direct.py loops). A test that must let a lifetime pass (a link's, a
requestState's) is a generator: it sets its scenario up, `yield`s the seconds to wait, then
checks; grader/checks/later.py overlaps that wait with the tests that run meanwhile.

`Grade.check` records one expectation in Spanish (what was sent, what came back, what was
expected); `Grade.require` is a gate: when it fails the test scores 0 with that reason
(`Abort`). A gate on a scenario another test grades names that test (`gate=`): the cause is
reported once, in that test, and every test that needs it says only that it needs it first
(a hidden test shows nothing else anyway). `Broken` means the server crashed, hung or sent
garbage: the test scores 0 with status "error".

A test of what must NOT happen (`@graded(..., must_not=True)`: nothing archived after a
decline, a handle dead outside the roots...) could be passed by a server that stopped doing
anything after the first test. So such a test ends with the legitimate action, on the same
server, in the same test, and records it with `grade.still_works(ok, text)`: unless it
succeeded the test scores 0, whatever its checks said (a serious mistake seen before still
counts). A must-not test that ends without `still_works` is a grader bug (an internal error). In a
must-not test declared `severe`, a failed legitimate action (or a server that stopped answering
during the test) is recorded as a serious mistake too (`REFUSED_ALL`): a submission that refuses
everything, once it has spotted the test, gets no more than an honest one with that test's bug.

Feedback is plain Spanish: values a learner's server sent are written out in words by `short`
(never as Python or JSON literals such as None, null, True or a dict's repr).

Scores come from the test's `Grade`, never from an exit code: a test that raised anything we
did not expect scores 0 with status "error". Hidden tests are redacted by construction:
- `Grade(hidden=True)` drops `got`/`expected` from every check (the texts of a hidden test are
  written without its inputs and expected values);
- a failed gate shows its own (constant) text, or only the title of the public test whose
  scenario it needs;
- a crash, a hang, a grader fault or a finding during a hidden test shows a fixed sentence,
  never the server's words (they could echo the test's inputs);
- the result carries `"hidden": true`.
"""

import functools
import inspect
import os
import traceback

from grader.escape import one_line
from grader.spoken import spoken
from grader.state import OUT_OF_TIME

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
NEEDS = ("esta prueba necesita que antes funcione «{gate}»; qué falló allí, y qué mirar, lo "
         "dice esa prueba")


class Abort(Exception):
    """A gate failed: the behaviour under test never happened, so nothing else counts.

    `gate` is the title of the (public) test that grades the scenario this gate is about, when
    the gate is not this test's own: a hidden test shows only that title."""

    def __init__(self, text, gate=None):
        super().__init__(text)
        self.gate = gate


class Broken(Exception):
    """The server crashed, hung or broke the protocol: zero for this test, status error."""


class MissingFinal(Exception):
    """A must-not test ended without its legitimate action (`Grade.still_works`): a grader bug."""


class TooSlow(Exception):
    """The grading machine was too slow for a lifetime the test relies on (a legitimate flow
    outlived it on the grader's side): not the learner's doing, so an internal error (exit 3,
    grade again on a quieter machine), never a lost point."""


STILL_WORKS = ("una prueba de lo que no debe pasar solo cuenta si después, en el mismo servidor, "
               "lo que sí debe pasar sigue funcionando")
# What a severe must-not test records when the legitimate action failed, or the server stopped
# answering: refusing everything (or dying) hides the test's bug as well as getting it right
# would, so it costs what that bug costs (the exercise keeps at most half of its points).
REFUSED_ALL = ("lo que sí debe pasar dejó de funcionar en una prueba de lo que no debe pasar: "
               "negarse a todo no vale más que el error grave que esa prueba busca")


class Grade:
    def __init__(self, hidden=False, severe=None, must_not=False):
        self.hidden = hidden
        self.severe = severe  # the test's essential behaviour (see `essentials`), or None
        self.must_not = must_not  # a test of what must not happen: it ends with `still_works`
        self.checks = []      # (passed, text)
        self.notes = []       # context lines shown before the checks
        self.violations = []  # texts of the failed checks marked severe
        self.finals = []      # (passed, text): the legitimate action that ends the test (once
        #                       per server when a must-not test uses several, in order)

    def note(self, text):
        self.notes.append(text)

    def check(self, passed, text, got=None, expected=None, severe=False):
        """One expectation. In a hidden test only `text` (written without inputs) is kept.

        `severe=True` (only in a test declared with `@graded(..., severe=...)`): failing it is a
        serious mistake (acting against or without the user's decision, access outside the
        roots, a secret on the wire...), and the exercise as a whole keeps at most half its
        points (`essentials`)."""
        if severe and not self.severe:
            raise ValueError("a severe check needs @graded(..., severe=...) on its test")
        detail = text
        if not passed and not self.hidden and (got is not None or expected is not None):
            detail += f" (llegó: {short(got)}; se esperaba: {short(expected)})"
        self.checks.append((bool(passed), detail))
        if severe and not passed:
            self.violations.append(text)
        return bool(passed)

    def require(self, passed, text, gate=None):
        if not passed:
            raise Abort(text, gate)

    def still_works(self, passed, text):
        """The legitimate action that ends a must-not test, on the same server (a test with
        several servers ends each with one): it must have succeeded, or the test scores 0.
        `text` says what was done and what happened (in a hidden test, without its inputs).
        Returns whether it succeeded."""
        if not self.must_not:
            raise ValueError("still_works ends a test declared @graded(..., must_not=True)")
        self.finals.append((bool(passed), text))
        return bool(passed)

    def fraction(self):
        if not self.checks:
            return 0.0
        return sum(1 for ok, _ in self.checks if ok) / len(self.checks)

    def lines(self):
        return self.notes + [("✔ " if ok else "✘ ") + text for ok, text in self.checks]


def short(value, limit=300):
    """A learner's value as one escaped line of at most `limit` characters, in plain Spanish.

    Text is shown as it is; everything else is written out in words, never as a Python or
    JSON literal: nothing (None) is «nada», booleans «verdadero» / «falso», a list its items
    («a, b y c»), a dict «clave: valor; otra: valor». Bounded: it stops writing at `limit`."""
    return one_line(plain(value, limit), limit)


def plain(value, limit=300):
    """`value` in words (see `short`), at most about `limit` characters; never raises."""
    out, budget = [], [limit + 1]

    def put(text):
        if budget[0] > 0:
            out.append(text[:budget[0]])
            budget[0] -= len(text)

    def walk(item, depth):
        if budget[0] <= 0:
            return
        if isinstance(item, str):
            put(item if item else "un texto vacío")
        elif item is None:
            put("nada")
        elif isinstance(item, bool):
            put("verdadero" if item else "falso")
        elif isinstance(item, (int, float)):
            put(str(item) if not isinstance(item, float) or item == item else "un número")
        elif depth > 6:
            put("…")
        elif isinstance(item, dict):
            if not item:
                put("nada (un objeto vacío)")
            for number, (key, inner) in enumerate(item.items()):
                if budget[0] <= 0:
                    break
                put("; " if number else "")
                put(f"{key}: " if isinstance(key, str) else "")
                nested = isinstance(inner, (dict, list, tuple)) and inner
                put("(" if nested else "")
                walk(inner, depth + 1)
                put(")" if nested else "")
        elif isinstance(item, (list, tuple, set, frozenset)):
            items = sorted(item, key=str) if isinstance(item, (set, frozenset)) else item
            if not items:
                put("ninguno")
            for number, inner in enumerate(items):
                if budget[0] <= 0:
                    break
                put("" if not number else " y " if number == len(items) - 1 else ", ")
                walk(inner, depth + 1)
        else:
            put(f"un valor de tipo {type(item).__name__}")

    try:
        walk(value, 0)
    except (RecursionError, TypeError, ValueError):
        return "un valor que no se puede mostrar"
    return "".join(out)


def graded(exercise, points, title, hidden=False, revisions=None, severe=None, must_not=False):
    """Declare a graded test. `severe`: a Spanish phrase naming the essential behaviour some of
    its checks guard (`Grade.check(..., severe=True)`), e.g. "no archivar nada si el usuario
    rechaza"; see `essentials`. `must_not`: it tests what must not happen, so it ends with the
    legitimate action on the same server (`Grade.still_works`), without which it scores 0."""
    def mark(function):
        waits = inspect.isgeneratorfunction(function)
        test = started_then_kept(function) if waits else function
        test.grading = {"exercise": exercise, "points": points, "title": title,
                        "hidden": bool(hidden),
                        "revisions": tuple(revisions) if revisions else None,
                        "severe": severe, "must_not": bool(must_not), "waits": waits}
        return test
    return mark


def started_then_kept(steps_of):
    """The test a runner calls for a generator test `steps_of`: it runs the steps up to the
    first `yield seconds` and hands the rest to its lab (`Lab.wait_then`), which keeps its
    servers and folders until grader/checks/later.py finishes it (or, after a sweep killed
    those servers, runs `steps_of` again from the start, waiting inline)."""
    @functools.wraps(steps_of)
    def test(lab, grade, **rest):
        steps = steps_of(lab=lab, grade=grade, **rest)
        seconds = next(steps, None)
        if seconds is not None:
            lab.wait_then(seconds, steps, grade, steps_of, rest)
    return test


def spec_for(function, module_file, revision=None):
    """The spec of one graded test (in one revision): what every report and score uses."""
    spec = function.grading
    where = f" [{revision}]" if revision else ""
    mark = f" {HIDDEN_MARK}" if spec["hidden"] else ""
    stem = os.path.splitext(os.path.basename(module_file))[0].removeprefix("test_")
    return {**spec, "name": f"{spec['exercise']}{where}{mark} {spec['title']}",
            "id": f"{stem}/{function.__name__}" + (f"[{revision}]" if revision else "")}


def new_grade(spec):
    return Grade(hidden=spec["hidden"], severe=spec.get("severe"),
                 must_not=spec.get("must_not", False))


def score(state, spec, grade, exc):
    """The result of one test from its Grade and what it raised (None: it returned)."""
    points, hidden = spec["points"], spec["hidden"]
    lines = grade.lines()
    if exc is None and grade.must_not and not grade.finals:
        exc = MissingFinal(f"{spec['id']} is a must-not test and ended without still_works")
    if exc is None:
        value = round(points * grade.fraction(), 2)
        status = "passed" if grade.checks and grade.fraction() == 1 else "failed"
        lines = lines + [("✔ " if works else "✘ ") + text for works, text in grade.finals]
        if not all(works for works, _ in grade.finals):
            value, status = 0.0, "failed"
            lines.append(f"✘ {STILL_WORKS}")
            if grade.severe:
                grade.violations.append(REFUSED_ALL)
    elif isinstance(exc, Abort):
        value, status = 0.0, "failed"
        if hidden and exc.gate:
            lines = lines + [f"✘ esta prueba oculta necesita que antes funcione «{exc.gate}»"]
        elif exc.gate:  # the cause is reported once, in the test that grades that scenario
            lines = lines + [f"✘ {NEEDS.format(gate=exc.gate)}"]
        else:
            lines = lines + ["✘ " + str(exc)]
    elif isinstance(exc, Broken):
        value, status = 0.0, "error"
        if grade.must_not and grade.severe and not state.expired and str(exc) != OUT_OF_TIME:
            grade.violations.append(REFUSED_ALL)
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
    result = {"id": spec["id"], "name": spec["name"], "exercise": spec["exercise"],
              "score": value, "max_score": points, "status": status, "hidden": hidden,
              "output": "\n".join(lines)}
    if grade.violations:  # observed, whatever ended the test afterwards
        result["violations"] = list(grade.violations)
    return result


# -- severity: a serious mistake costs at least half of its exercise --------------------------
ESSENTIALS_TITLE = "lo imprescindible"
ESSENTIALS_HIDDEN = ("una prueba oculta vio un error grave (actuar sin la decisión del usuario, "
                     "tocar algo fuera de las roots, dejar un secreto a la vista o aceptar un "
                     "token falsificado o repetido); repasa «lo imprescindible» del enunciado")


def essentials(specs, tests):
    """The severity rule (grader/README.md, *Points follow severity*): when a check marked
    severe failed, the exercise keeps at most half of its points.

    For every exercise with a test declared `severe`, two zero-point entries carry the penalty
    as a negative score: a public one (the public tests saw a serious mistake) and, when the
    suite has hidden tests of that exercise, a hidden one (only a hidden test saw it). Which
    entry carries it depends only on where the mistake was seen, so nothing a learner sees
    before the due date depends on a hidden test's outcome."""
    entries = []
    for exercise in dict.fromkeys(spec["exercise"] for spec in specs):
        mine = [spec for spec in specs if spec["exercise"] == exercise]
        if not any(spec.get("severe") for spec in mine):
            continue
        results = [t for t in tests if t["exercise"] == exercise]
        total = sum(t["score"] for t in results)
        ceiling = sum(t["max_score"] for t in results) / 2
        excess = round(max(0.0, total - ceiling), 2)
        public = [(t, v) for t in results if not t["hidden"] for v in t.get("violations", ())]
        hidden = [(t, v) for t in results if t["hidden"] for v in t.get("violations", ())]
        stem = exercise.replace("ejercicio", "ej", 1)
        entries.append(_essential(exercise, f"{stem}/lo_imprescindible", False, public,
                                  excess if public else 0.0))
        if any(spec["hidden"] for spec in mine):
            entries.append(_essential(exercise, f"{stem}/lo_imprescindible_oculto", True, hidden,
                                      excess if hidden and not public else 0.0))
    return entries


def _essential(exercise, test_id, hidden, seen, penalty):
    if not seen:
        lines = ["✔ ningún error grave" + (" en las pruebas ocultas" if hidden else "")]
    elif hidden:
        lines = [f"✘ {ESSENTIALS_HIDDEN}"]
    else:
        lines = ["✘ un error grave: este ejercicio se queda como mucho con la mitad de sus "
                 "puntos"] + [f"  · {text} (en «{test['name']}»)" for test, text in seen]
    if penalty:
        lines.append(f"  penalización: −{spoken(penalty)} puntos")
    mark = f" {HIDDEN_MARK}" if hidden else ""
    return {"id": test_id, "name": f"{exercise}{mark} {ESSENTIALS_TITLE}",
            "exercise": exercise, "score": -penalty if penalty else 0.0, "max_score": 0,
            "status": "failed" if seen else "passed", "hidden": hidden,
            "output": "\n".join(lines)}


def trace(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]


def trace_now():
    """The traceback of the exception being handled."""
    return traceback.format_exc()[-3000:]
