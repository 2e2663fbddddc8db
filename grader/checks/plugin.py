"""The pytest plugin the runner registers: fixtures, test selection and score recording.

The runner sets `state` (the grader.state.SubmissionState of one submission: its host, the
tools its server listed, the exercises and the suite to grade) and passes this module to
`pytest.main(plugins=[...])`. Each test is declared with `@graded(...)` (grader/checks/grading.py,
which also names, scores and redacts it; a test with `revisions=` is parametrized here, once per
revision). Its score is computed from the test's `Grade`, never from pytest's outcome or exit
code alone: a test that raised anything we did not expect scores 0 with status "error".

A grading file that fails to import is recorded as the grader's own fault (the runner turns it
into exit code 3), as is a test that fails in a way the learner's data cannot explain.

Tests that wait on the clock start first and are finished by grader/checks/later.py between
the tests that follow (and after the last one); within each group the order is shuffled,
public and hidden tests interleaved (`later.waiting_first`, seeded by grader/runner.py).

Deliberate simplifications: one submission per pytest session; the report lists the tests in
the order of the files the runner gives (public before hidden), whatever order they ran in.
"""

import os

import pytest

from grader.checks import grading, later
from grader.checks.lab import close_lab, open_lab

state = None  # the SubmissionState being graded; set by grader.runner before pytest.main


def spec_of(item):
    function = getattr(item, "function", None)
    if getattr(function, "grading", None) is None:
        return None
    revision = item.callspec.params.get("revision") if hasattr(item, "callspec") else None
    return grading.spec_for(function, str(item.path), revision)


def pytest_generate_tests(metafunc):
    spec = getattr(metafunc.function, "grading", None)
    if spec and spec["revisions"] and "revision" in metafunc.fixturenames:
        metafunc.parametrize("revision", spec["revisions"])


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
    items[:] = later.waiting_first(kept, lambda item: state.expected[item.nodeid], state.order)


@pytest.fixture
def grade(request):
    return grading.new_grade(state.expected[request.node.nodeid])


@pytest.fixture
def lab(request):
    later.run_due(state)
    workspace = open_lab(state, state.expected[request.node.nodeid], request.node.nodeid)
    yield workspace
    close_lab(state, workspace)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    yield
    try:
        later.finish(state)
    except Exception:
        state.internal_errors.append(f"finishing the tests that wait:\n{grading.trace_now()}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    spec = state.expected.get(item.nodeid)
    if spec is None or item.nodeid in state.results:
        return
    workspace = item.funcargs.get("lab") if hasattr(item, "funcargs") else None
    if call.when == "call" and getattr(workspace, "waiting", False):
        return  # scored by grader/checks/later.py when its wait is over
    if call.when == "call" or (call.when == "setup" and report.failed):
        grade = item.funcargs.get("grade") if hasattr(item, "funcargs") else None
        exc = call.excinfo.value if call.excinfo is not None else None
        state.results[item.nodeid] = grading.score(state, spec, grade or grading.new_grade(spec),
                                                   exc)
