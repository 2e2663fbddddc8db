"""Grades mean the learner's own work: the catalogues, graded once per module, in parallel,
through grader.pool (the same path as `python -m grader --jobs 2`), public and hidden tests.

- the reference, in every form a learner hands in, and correct solutions written in other
  styles get full marks;
- every null solution (tests/grader/null_solutions.py: the starters, hooks delegated to what
  the student edition ships, constant answers, half guards, a tool that asks and never acts, one
  that acts without asking) scores 0 on every test of its exercise, public and hidden;
- every one-bug solution (tests/grader/mutants.py) loses exactly the tests it should, and the
  feedback of one of them names the bug.
"""

import os
import shutil
import zipfile

import pytest
from mutants import MUTANTS, REFERENCE
from null_solutions import NULLS

from grader import pool

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(os.path.dirname(REFERENCE), "solucion.ipynb")
CORRECT = os.path.join(HERE, "correct")
STYLES = sorted(os.listdir(CORRECT))
EXERCISES = ("ejercicio2", "ejercicio3", "ejercicio4")
FULL = {"ejercicio2": 28, "ejercicio3": 38, "ejercicio4": 9}
PUBLIC = {"ejercicio2": 24, "ejercicio3": 29, "ejercicio4": 5}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("catalogue")
    jobs = {"reference-folder": (REFERENCE, []), "reference-notebook": (NOTEBOOK, []),
            "starter": (os.path.join(HERE, "fixtures", "starter.ipynb"), [])}
    with zipfile.ZipFile(base / "reference.zip", "w") as archive:
        for name in sorted(os.listdir(REFERENCE)):
            archive.write(os.path.join(REFERENCE, name), f"entrega/soluciones/{name}")
    jobs["reference-zip"] = (str(base / "reference.zip"), [])
    only_ex2 = base / "only-ex2"
    only_ex2.mkdir()
    shutil.copy(os.path.join(REFERENCE, "ejercicio2.py"), only_ex2)
    jobs["only-ex2"] = (str(only_ex2), [])
    for style in STYLES:
        jobs[f"correct-{style}"] = (os.path.join(CORRECT, style), [])
    for mutant in MUTANTS:
        jobs[mutant.name] = (mutant.write(str(base / mutant.name)), [])
    for null in NULLS:
        jobs[f"null-{null.name}"] = (null.write(str(base / "nulls" / null.name)), [null.exercise])
    work = [{"path": path, "name": name, "only": only, "budget": 240.0}
            for name, (path, only) in jobs.items()]
    return {r["submission"]: r for r in pool.grade_all(work, workers=2)}


def scores(result):
    return {t["id"]: (t["score"], t["max_score"]) for t in result["tests"]}


def lost_points(result):
    return {t["id"]: t["output"] for t in result["tests"] if t["score"] != t["max_score"]}


@pytest.mark.parametrize("form", ["reference-folder", "reference-notebook", "reference-zip"])
def test_reference_gets_full_marks_in_every_form(graded, form):
    result = graded[form]
    assert not lost_points(result), lost_points(result)
    assert result["max_score"] == result["score"] == sum(FULL.values())
    assert {t["exercise"] for t in result["tests"]} == set(EXERCISES)


@pytest.mark.parametrize("style", STYLES)
def test_correct_solutions_in_other_styles_get_full_marks(graded, style):
    result = graded[f"correct-{style}"]
    assert not lost_points(result), lost_points(result)
    assert result["score"] == sum(FULL.values())


def test_points_per_exercise_public_and_hidden(graded):
    tests = graded["reference-folder"]["tests"]
    for exercise in EXERCISES:
        mine = [t for t in tests if t["exercise"] == exercise]
        assert sum(t["max_score"] for t in mine) == FULL[exercise]
        assert sum(t["max_score"] for t in mine if not t["hidden"]) == PUBLIC[exercise]
        assert any(t["hidden"] for t in mine) and any(not t["hidden"] for t in mine)
    assert graded["reference-folder"]["suite"] == "all"


def test_exercise_2_is_graded_under_both_revisions(graded):
    ids = set(scores(graded["reference-folder"]))
    assert any(i.startswith("ej2/") and "[2025-11-25]" in i for i in ids)
    assert any(i.startswith("ej2/") and "[2026-07-28]" in i for i in ids)


def test_starter_scores_zero_on_every_test(graded):
    result = graded["starter"]
    assert result["score"] == 0
    graded_tests = [t for t in result["tests"] if t["max_score"]]  # not «lo imprescindible»
    assert graded_tests and all(t["score"] == 0 and t["status"] != "passed"
                                for t in graded_tests)
    assert len(result["tests"]) == len(graded["reference-folder"]["tests"])


@pytest.mark.parametrize("null", NULLS, ids=[n.name for n in NULLS])
def test_each_null_solution_scores_zero_on_every_test_of_its_exercise(graded, null):
    result = graded[f"null-{null.name}"]
    assert {t["exercise"] for t in result["tests"]} == {null.exercise}
    assert any(t["hidden"] for t in result["tests"])
    assert result["max_score"] == FULL[null.exercise]
    assert all(t["score"] == 0 for t in result["tests"]), \
        {t["id"]: t["output"] for t in result["tests"] if t["score"]}


def test_the_null_catalogue_covers_every_starter_and_every_exercise():
    starters = {n.exercise for n in NULLS if n.name.startswith("plantilla_")}
    assert starters == set(EXERCISES)
    assert {n.exercise for n in NULLS if not n.name.startswith("plantilla_")} == set(EXERCISES)


def test_missing_exercises_score_zero_with_the_observed_reason(graded):
    result = graded["only-ex2"]
    by_exercise = {}
    for test in result["tests"]:
        by_exercise.setdefault(test["exercise"], []).append(test)
    assert all(t["score"] == t["max_score"] for t in by_exercise["ejercicio2"])
    assert all(t["score"] == 0 for t in by_exercise["ejercicio3"])
    assert any("tu guarda no permitió el modo URL" in t["output"]  # no guard: never URL mode
               for t in by_exercise["ejercicio3"])
    assert all(t["score"] == 0 and "sin @extension.on_roots_changed" in t["output"]
               for t in by_exercise["ejercicio4"] if not t["hidden"])


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_each_bug_loses_exactly_its_tests_and_the_feedback_names_it(graded, mutant):
    result = graded[mutant.name]
    lost = {test for test, (score, top) in scores(result).items() if score < top}
    assert lost == mutant.loses, {t["id"]: t["output"] for t in result["tests"]
                                  if t["id"] in lost ^ mutant.loses}
    outputs = [t["output"] for t in result["tests"] if t["id"] in lost]
    assert any(mutant.says in output for output in outputs), outputs


def test_grading_again_gives_the_same_result(graded, tmp_path):
    names = ["reference-folder", "starter", "revoca_mas_tarde_en_un_hilo", "vuelve_a_preguntar"]
    jobs = [{"path": path_of(name, tmp_path), "name": name, "only": [], "budget": 240.0}
            for name in names]
    for again in pool.grade_all(jobs, workers=2):
        first = graded[again["submission"]]
        assert [(t["id"], t["score"], t["status"], t["output"]) for t in again["tests"]] == \
            [(t["id"], t["score"], t["status"], t["output"]) for t in first["tests"]]


def path_of(name, tmp_path):
    if name == "reference-folder":
        return REFERENCE
    if name == "starter":
        return os.path.join(HERE, "fixtures", "starter.ipynb")
    return next(m for m in MUTANTS if m.name == name).write(str(tmp_path / name))
