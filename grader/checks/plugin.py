"""The pytest plugin the runner registers: fixtures, test selection and score recording.

The runner sets `state` (the grader.state.SubmissionState of one submission: its sandbox, the
tools its server listed, the exercises to grade) and passes this module to
`pytest.main(plugins=[...])`. Each test is declared with `@graded(exercise, points, title)`;
its score is computed here from the test's `Grade`, never from pytest's outcome or exit code
alone: a test that raised anything we did not expect scores 0 with status "error".

A grading file that fails to import is recorded as the grader's own fault (the runner turns it
into exit code 3), as is a test that fails in a way the learner's data cannot explain.

Deliberate simplifications: one submission per pytest session; the test order is the file
order.
"""

import os
import traceback

import pytest

from grader.checks.harness import Abort, Broken, Grade, Lab
from grader.state import OUT_OF_TIME

state = None  # the SubmissionState being graded; set by grader.runner before pytest.main
# What a test raises when the learner's server sent data of an unexpected shape that a test
# then tripped on: the test scores 0 ("error") and the instructor gets a warning, not exit 3.
SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError,
                UnicodeError)


def graded(exercise, points, title):
    def mark(function):
        function.grading = {"exercise": exercise, "points": points, "title": title}
        return function
    return mark


def spec_of(item):
    spec = getattr(getattr(item, "function", None), "grading", None)
    if spec is None:
        return None
    revision = item.callspec.params.get("revision") if hasattr(item, "callspec") else None
    name = f"{spec['exercise']} [{revision}] {spec['title']}" if revision \
        else f"{spec['exercise']} {spec['title']}"
    test_id = item.nodeid.rsplit("/", 1)[-1].replace("test_ej", "ej").replace(".py::", "/")
    return {**spec, "name": name, "id": test_id}


def pytest_collectreport(report):
    if report.failed:
        state.internal_errors.append(f"grading tests did not import: {report.nodeid}:\n"
                                     f"{str(report.longrepr)[-3000:]}")


def pytest_collection_modifyitems(session, config, items):
    kept, dropped = [], []
    for item in items:
        spec = spec_of(item)
        if spec is not None:
            file = os.path.basename(str(item.path))
            state.collected[file] = state.collected.get(file, 0) + 1
        if spec is None or (state.only and spec["exercise"] not in state.only):
            dropped.append(item)
        else:
            kept.append(item)
            state.expected[item.nodeid] = spec
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.fixture
def grade():
    return Grade()


@pytest.fixture
def lab():
    state.counter += 1
    workspace = Lab(state, state.counter)
    if state.left() <= 0:
        state.broken = state.broken or OUT_OF_TIME
    if state.broken:
        raise Broken(state.broken)
    yield workspace
    workspace.close()
    if state.dirty:  # something misbehaved: nothing it left behind may reach the next test
        state.dirty = False
        try:
            state.sandbox.sweep()
        except Exception:
            pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    spec = state.expected.get(item.nodeid)
    if spec is None or item.nodeid in state.results:
        return
    if call.when == "call" or (call.when == "setup" and report.failed):
        grade = item.funcargs.get("grade") if hasattr(item, "funcargs") else None
        state.results[item.nodeid] = score(spec, grade or Grade(), call.excinfo)


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
        reason = OUT_OF_TIME if state.expired else str(excinfo.value)
        lines = lines + ["✘ " + reason]
    elif state.expired or excinfo.errisinstance(SHAPE_ERRORS):
        value, status = 0.0, "error"
        lines = lines + ["✘ " + (OUT_OF_TIME if state.expired else
                                 "la respuesta de tu servidor tenía una forma inesperada y la "
                                 f"prueba no pudo seguir ({excinfo.type.__name__})")]
        state.warnings.append(f"{spec['id']}: {_trace(excinfo)}")
    else:  # a bug in the grader, or something it did not foresee: never a point
        value, status = 0.0, "error"
        lines = lines + ["✘ error interno del corrector; avisa al profesorado "
                         f"({excinfo.type.__name__})"]
        state.internal_errors.append(_trace(excinfo))
    return {"id": spec["id"], "name": spec["name"], "exercise": spec["exercise"], "score": value,
            "max_score": points, "status": status, "output": "\n".join(lines)}


def _trace(excinfo):
    return "".join(traceback.format_exception(excinfo.type, excinfo.value, excinfo.tb))[-4000:]
