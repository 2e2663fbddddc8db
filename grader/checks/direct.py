"""Run the grading checks without pytest: the in-process self-check (JupyterLite has no pytest).

`run(state, files)` imports each check file (grader/checks/public/test_ej*.py, then the hidden
ones when they are there), takes its `@graded` functions in file order, runs each (once per
revision when it has `revisions`) with a fresh `lab` and `grade`, and records the result in
`state.results` exactly as the pytest plugin does: the same specs, the same scoring, the same
redaction (grader/checks/grading.py), and the same order: the tests that wait on the clock
first among the public and among the hidden ones, finished by grader/checks/later.py. A file
that does not import is the grader's own fault (`state.internal_errors`), as under pytest.

Deliberate simplifications: no fixtures but `lab`, `grade` and `revision` (the checks use no
other); no test selection beyond `state.only`.
"""

import importlib
import inspect
import os

from grader.checks import grading, later
from grader.checks.lab import close_lab, open_lab
from grader.paths import REPO_DIR


def module_name(path):
    relative = os.path.relpath(os.path.splitext(path)[0], REPO_DIR)
    return relative.replace(os.sep, ".")


def graded_functions(module):
    """The module's own @graded functions, in the order they are defined."""
    return [value for value in vars(module).values()
            if inspect.isfunction(value) and getattr(value, "grading", None) is not None
            and value.__module__ == module.__name__]


def graded_runs(module, path):
    """(spec, function, revision) for each run of the module's @graded tests, in file order: a
    test declared with `revisions` runs (and scores) once per revision."""
    return [(grading.spec_for(function, path, revision), function, revision)
            for function in graded_functions(module)
            for revision in function.grading["revisions"] or (None,)]


def run(state, files):
    tests = []
    for path in files:
        try:
            module = importlib.import_module(module_name(path))
        except Exception:
            state.internal_errors.append(f"grading tests did not import: {path}:\n"
                                         f"{grading.trace_now()}")
            continue
        runs = graded_runs(module, path)
        state.collected[os.path.basename(path)] = len(runs)
        for spec, function, revision in runs:
            if state.only and spec["exercise"] not in state.only:
                continue
            state.expected[spec["id"]] = spec  # the report's order: the files'
            tests.append((spec, function, revision))
    for spec, function, revision in later.waiting_first(tests, lambda test: test[0], state.order):
        later.run_due(state)
        result = run_one(state, spec, function, revision)
        if result is not None:
            state.results[spec["id"]] = result
    later.finish(state)


def run_one(state, spec, function, revision):
    """The test's result, or None when it waits on the clock (later.py scores it then)."""
    grade = grading.new_grade(spec)
    try:
        lab = open_lab(state, spec, spec["id"])
    except Exception as exc:
        return grading.score(state, spec, grade, exc)
    try:
        arguments = {"lab": lab, "grade": grade}
        if revision is not None:
            arguments["revision"] = revision
        function(**arguments)
        exc = None
    except Exception as raised:
        exc = raised
    finally:
        close_lab(state, lab)
    return None if lab.waiting else grading.score(state, spec, grade, exc)
