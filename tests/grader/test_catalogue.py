"""The reference gets full marks, the starter gets nothing, each one-bug mutant loses exactly
the tests it should. Graded once per module, in parallel, through grader.pool (the same path
as `python -m grader --jobs 2`)."""

import os
import shutil
import zipfile

import pytest
from mutants import MUTANTS, REFERENCE

from grader import pool

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(os.path.dirname(REFERENCE), "solucion.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("catalogue")
    jobs = {"reference-folder": REFERENCE, "reference-notebook": NOTEBOOK,
            "starter": os.path.join(HERE, "fixtures", "starter.ipynb")}
    with zipfile.ZipFile(base / "reference.zip", "w") as archive:
        for name in sorted(os.listdir(REFERENCE)):
            archive.write(os.path.join(REFERENCE, name), f"entrega/soluciones/{name}")
    jobs["reference-zip"] = str(base / "reference.zip")
    only_ex2 = base / "only-ex2"
    only_ex2.mkdir()
    shutil.copy(os.path.join(REFERENCE, "ejercicio2.py"), only_ex2)
    jobs["only-ex2"] = str(only_ex2)
    for mutant in MUTANTS:
        jobs[mutant.name] = mutant.write(str(base / mutant.name))
    work = [{"path": path, "name": name, "only": [], "budget": 240.0}
            for name, path in jobs.items()]
    return {r["submission"]: r for r in pool.grade_all(work, workers=2)}


def scores(result):
    return {t["id"]: (t["score"], t["max_score"]) for t in result["tests"]}


@pytest.mark.parametrize("form", ["reference-folder", "reference-notebook", "reference-zip"])
def test_reference_gets_full_marks_in_every_form(graded, form):
    result = graded[form]
    lost = {k: v for k, v in scores(result).items() if v[0] != v[1]}
    assert not lost, lost
    assert result["max_score"] == 42 and result["score"] == 42
    assert {t["exercise"] for t in result["tests"]} == {"ejercicio2", "ejercicio3", "ejercicio4"}


def test_reference_is_graded_under_both_revisions_for_exercises_2_and_3(graded):
    ids = set(scores(graded["reference-folder"]))
    for exercise in ("ej2", "ej3"):
        assert any(i.startswith(exercise) and "[2025-11-25]" in i for i in ids)
        assert any(i.startswith(exercise) and "[2026-07-28]" in i for i in ids)


def test_starter_scores_zero_on_every_test(graded):
    result = graded["starter"]
    assert result["score"] == 0
    assert all(t["score"] == 0 and t["status"] != "passed" for t in result["tests"])
    assert len(result["tests"]) == len(graded["reference-folder"]["tests"])


def test_missing_exercises_score_zero_with_the_observed_reason(graded):
    result = graded["only-ex2"]
    by_exercise = {}
    for test in result["tests"]:
        by_exercise.setdefault(test["exercise"], []).append(test)
    assert all(t["score"] == t["max_score"] for t in by_exercise["ejercicio2"])
    assert all(t["score"] == 0 and "modo URL" in t["output"]  # the default never uses it
               for t in by_exercise["ejercicio3"])
    assert all(t["score"] == 0 and "revoca todos los handles" in t["output"]  # the default
               for t in by_exercise["ejercicio4"])


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_each_bug_loses_exactly_its_tests(graded, mutant):
    result = graded[mutant.name]
    lost = {test for test, (score, top) in scores(result).items() if score < top}
    assert lost == mutant.loses, {t["id"]: t["output"] for t in result["tests"]
                                  if t["id"] in lost ^ mutant.loses}


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
