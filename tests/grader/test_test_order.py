"""No position tells a public test from a hidden one: a grading runs its tests in a fresh random
order, public and hidden interleaved (grader/checks/later.py, `waiting_first`), so whatever a
server could count (its test's position, the time since its sandbox started, the numbers the
file system gave its folders: grader/README.md, *No counter between tests*) is a public test's
in one grading and a hidden one's in the next. The report keeps the files' order."""

import os

import pytest

from grader import runner
from grader.checks import lab as lab_module

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "grader", "reference", "soluciones")
EXERCISE = "ejercicio4"  # no test of it waits on the clock: one group, all of it shuffled
GRADINGS = 3


@pytest.fixture(scope="module")
def gradings():
    """The reference's exercise 4 graded GRADINGS times with every test (as officially, on the
    in-process host): (its result, whether each test that opened a lab was hidden, in the
    order they ran)."""
    found = []
    new_lab = lab_module.Lab.__init__

    def recorded(self, state, index, spec=None, key=None):
        if spec is not None:  # None: the submission's probe, before any test
            ran.append((spec["id"], spec["hidden"]))
        return new_lab(self, state, index, spec, key)
    for _ in range(GRADINGS):
        ran = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(lab_module.Lab, "__init__", recorded)
            result = runner.grade(REFERENCE, only=[EXERCISE], tests="all", host="inprocess")
        found.append((result, ran))
    return found


def test_the_reference_keeps_full_marks_whatever_the_order(gradings):
    for result, _ in gradings:
        assert result["score"] == result["max_score"] > 0


def test_hidden_tests_do_not_all_run_after_the_public_ones(gradings):
    """With 14 tests, 3 of them hidden, a random order puts every hidden test last once in 364:
    three gradings in a row, once in 48 million."""
    orders = [[hidden for _, hidden in ran] for _, ran in gradings]
    assert all(True in order and False in order for order in orders)
    assert any(order != sorted(order) for order in orders), orders


def test_the_order_changes_from_one_grading_to_the_next(gradings):
    orders = {tuple(test for test, _ in ran) for _, ran in gradings}
    assert len(orders) > 1


def test_the_report_lists_the_tests_in_the_files_order_whatever_order_they_ran_in(gradings):
    listed = {tuple(t["id"] for t in result["tests"]) for result, _ in gradings}
    assert len(listed) == 1
    (report,) = listed
    ran = [[test for test, _ in ran] for _, ran in gradings]
    assert all(sorted(order) == sorted(set(report) & set(order)) for order in ran)
    assert any([test for test in report if test in order] != order for order in ran)
