"""The pytest plugin the runner registers: fixtures, test selection and score recording.

The runner sets `STATE` (one submission: its sandbox, what the server said it loaded, the
exercises to grade) and passes this module to `pytest.main(plugins=[...])`. Each test is
declared with `@graded(exercise, points, title)`; its score is computed here from the test's
`Grade`, never from pytest's outcome or exit code alone: a test that raised anything we did
not expect scores 0 with status "error".

Deliberate simplifications: one submission per pytest session; the test order is the file
order.
"""

import time
import traceback

import pytest

from grader.checks.harness import Abort, Broken, Grade, Lab

STATE = None  # set by grader.runner before pytest.main


def graded(exercise, points, title):
    def mark(function):
        function.grading = {"exercise": exercise, "points": points, "title": title}
        return function
    return mark


def spec_of(item):
    spec = getattr(item.function, "grading", None)
    if spec is None:
        return None
    revision = item.callspec.params.get("revision") if hasattr(item, "callspec") else None
    name = f"{spec['exercise']} [{revision}] {spec['title']}" if revision \
        else f"{spec['exercise']} {spec['title']}"
    test_id = item.nodeid.rsplit("/", 1)[-1].replace("test_ej", "ej").replace(".py::", "/")
    return {**spec, "name": name, "id": test_id}


def pytest_collection_modifyitems(session, config, items):
    kept, dropped = [], []
    for item in items:
        spec = spec_of(item)
        if spec is None or (STATE.only and spec["exercise"] not in STATE.only):
            dropped.append(item)
        else:
            kept.append(item)
            STATE.expected[item.nodeid] = spec
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.fixture
def grade():
    return Grade()


@pytest.fixture
def lab():
    STATE.counter += 1
    workspace = Lab(STATE, STATE.counter)
    if time.monotonic() > STATE.deadline:
        STATE.broken = STATE.broken or "se agotó el tiempo total de corrección de esta entrega"
    if STATE.broken:
        raise Broken(STATE.broken)
    yield workspace
    workspace.close()
    if STATE.dirty:  # something misbehaved: nothing it left behind may reach the next test
        STATE.dirty = False
        try:
            STATE.sandbox.sweep()
        except Exception:
            pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    spec = STATE.expected.get(item.nodeid)
    if spec is None or item.nodeid in STATE.results:
        return
    if call.when == "call" or (call.when == "setup" and report.failed):
        grade = item.funcargs.get("grade") if hasattr(item, "funcargs") else None
        STATE.results[item.nodeid] = score(spec, grade or Grade(), call.excinfo)


def score(spec, grade, excinfo):
    points = spec["points"]
    lines = grade.lines()
    if excinfo is None:
        value = round(points * grade.fraction(), 2)
        status = "passed" if grade.checks and grade.fraction() == 1 else "failed"
    elif excinfo.errisinstance(Abort):
        value, status = 0.0, "failed"
        lines = lines + ["✘ " + str(excinfo.value)]
    elif excinfo.errisinstance(Broken):
        value, status = 0.0, "error"
        lines = lines + ["✘ " + str(excinfo.value)]
    else:  # a bug in the grader, or something it did not foresee: never a point
        value, status = 0.0, "error"
        lines = lines + ["✘ error interno del corrector; avisa al profesorado "
                         f"({excinfo.type.__name__})"]
        STATE.internal_errors.append("".join(traceback.format_exception(
            excinfo.type, excinfo.value, excinfo.tb)))
    return {"id": spec["id"], "name": spec["name"], "exercise": spec["exercise"], "score": value,
            "max_score": points, "status": status, "output": "\n".join(lines)}
