"""No position tells a public test from a hidden one: a grading runs its tests in a shuffled
order, public and hidden interleaved (grader/checks/later.py, `waiting_first`), seeded by the
submission and the grading files (grader/runner.py, `shuffled_order`): whatever a server could
count (its test's position, the numbers the file system gave its folders: grader/README.md,
*No counter between tests*) is a public test's for one submission and a hidden one's for the
next, while grading the same submission again gives the same order and scores. The report
keeps the files' order."""

import os

import pytest

from grader import runner
from grader.checks import lab as lab_module

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "grader", "reference", "soluciones")
EXERCISE = "ejercicio4"  # no test of it waits on the clock: one group, all of it shuffled
OTHERS = 2  # submissions that differ from the reference by a comment


@pytest.fixture(scope="module")
def gradings(tmp_path_factory):
    """Exercise 4 graded with every test (as officially, on the in-process host): the
    reference twice, then submissions that differ from it only by a comment. Each: (its
    result, the tests that opened a lab, with whether each was hidden, in the order they
    ran)."""
    with open(os.path.join(REFERENCE, EXERCISE + ".py"), encoding="utf-8") as handle:
        source = handle.read()
    folders = [REFERENCE, REFERENCE]
    for number in range(OTHERS):
        folder = tmp_path_factory.mktemp(f"otra{number}")
        (folder / (EXERCISE + ".py")).write_text(source + f"\n# copia {number}\n",
                                                  encoding="utf-8")
        folders.append(str(folder))
    found = []
    new_lab = lab_module.Lab.__init__

    def recorded(self, state, index, spec=None, key=None):
        if spec is not None:  # None: the submission's probe, before any test
            ran.append((spec["id"], spec["hidden"]))
        return new_lab(self, state, index, spec, key)
    for folder in folders:
        ran = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(lab_module.Lab, "__init__", recorded)
            result = runner.grade(folder, only=[EXERCISE], tests="all", host="inprocess")
        found.append((result, ran))
    return found


def order_of(graded):
    return [test for test, _ in graded[1]]


def test_the_reference_keeps_full_marks_whatever_the_order(gradings):
    for result, _ in gradings:
        assert result["score"] == result["max_score"] > 0


def test_hidden_tests_do_not_all_run_after_the_public_ones(gradings):
    """With 14 tests, 3 of them hidden, a shuffle puts every hidden test last once in 364:
    in none of four different submissions, once in 17 billion."""
    orders = [[hidden for _, hidden in ran] for _, ran in gradings]
    assert all(True in order and False in order for order in orders)
    assert any(order != sorted(order) for order in orders), orders


def test_the_same_submission_graded_again_runs_its_tests_in_the_same_order(gradings):
    assert order_of(gradings[0]) == order_of(gradings[1])


def test_another_submission_runs_them_in_another_order(gradings):
    assert len({tuple(order_of(graded)) for graded in gradings[1:]}) == 1 + OTHERS


def test_the_report_lists_the_tests_in_the_files_order_whatever_order_they_ran_in(gradings):
    listed = {tuple(t["id"] for t in result["tests"]) for result, _ in gradings}
    assert len(listed) == 1
    (report,) = listed
    orders = [order_of(graded) for graded in gradings]
    assert all(sorted(order) == sorted(set(report) & set(order)) for order in orders)
    assert any([test for test in report if test in order] != order for order in orders)
