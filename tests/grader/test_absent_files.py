"""An absent file costs nothing: a test of an exercise whose file the submission does not bring
scores 0 at once, says why, and starts no server (grader/checks/lab.py, `open_lab`)."""

import os
import shutil

import pytest

from grader import runner
from grader.checks import lab as lab_module
from grader.exercises import by_id

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "grader", "reference", "soluciones")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A submission that brings only exercise 3A's file (the reference's), graded with the
    public tests: (its result, the exercise of every test that started a server; None: the
    submission's probe)."""
    folder = tmp_path_factory.mktemp("entrega")
    shutil.copy(os.path.join(REFERENCE, "ejercicio3a.py"), folder / "ejercicio3a.py")
    started = []
    server = lab_module.Lab.server

    def counted(self, *args, **kwargs):
        started.append(self.spec["exercise"] if self.spec else None)
        return server(self, *args, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lab_module.Lab, "server", counted)
        result = runner.grade(str(folder), tests="public", host="inprocess")
    return result, started


def test_a_submission_with_one_exercise_file_starts_servers_only_for_that_exercise(graded):
    result, servers_started = graded
    assert "ejercicio3a" in servers_started
    assert set(servers_started) <= {"ejercicio3a", None}, set(servers_started)
    mine = [t for t in result["tests"] if t["exercise"] == "ejercicio3a"]
    assert mine and all(t["score"] == t["max_score"] for t in mine), mine


def test_each_test_of_an_absent_exercise_scores_zero_and_names_the_missing_file(graded):
    result, _ = graded
    absent = [t for t in result["tests"] if t["exercise"] in ("ejercicio2", "ejercicio3b",
                                                                "ejercicio4") and t["max_score"]]
    assert {t["exercise"] for t in absent} == {"ejercicio2", "ejercicio3b", "ejercicio4"}
    for test in absent:
        assert test["score"] == 0 and test["status"] == "failed", test
        assert f"no entregaste {by_id(test['exercise']).file}" in test["output"], test
    assert not result["internal_errors"], result["internal_errors"]


def test_optional_exercises_whose_file_is_absent_are_not_graded(graded):
    result, _ = graded
    assert "optional" not in result
    assert not any(by_id(t["exercise"]).optional for t in result["tests"])
