"""Grades mean the learner's own work: the catalogues, graded once per module, in parallel,
through grader.pool (the same path as `python -m grader --jobs 2`), public and hidden tests.

- the reference, in every form a learner hands in, and correct solutions written in other
  styles get full marks;
- every null solution (tests/grader/null_solutions.py: the starters, hooks delegated to what
  the student edition ships, constant answers, half guards, a tool that asks and never acts, one
  that acts without asking) scores 0 on every test of its exercise, public and hidden;
- every one-bug solution (tests/grader/mutants.py), graded on its own exercise, loses exactly
  the tests it should, and the feedback of one of them names the bug; a severe one (acting
  without or against the user's decision, access outside the roots) leaves its exercise with at
  most half of its points, and the public tests see it (the self-check agrees);
- a submission that behaves once (tests/grader/cheats.py) earns no more than what it shows,
  and one that would misbehave once it remembers an earlier test never remembers.

The optional exercises (the reto, reto.py, and exercise 3B's 2026-07-28 part, both notebook 6)
are graded whenever a submission brings their file and are counted apart: `score`/`max_score`
are the exercises', `optional` lists each optional exercise's own total.
"""

import os
import re
import shutil
import zipfile

import pytest
from cheats import CHEATS
from mutants import MUTANTS, REFERENCE, write_blind
from null_solutions import NULLS

from grader import pool
from grading_points import CHALLENGE, FULL, OPTIONAL_FULL, OPTIONAL_PUBLIC, PUBLIC, TOTAL

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(os.path.dirname(REFERENCE), "solucion.ipynb")
CORRECT = os.path.join(HERE, "correct")
# a_ciegas: mutants.BLIND, no bug; a_ciegas_sobre: the same with the second blind reto
BLIND_STYLES = {"a_ciegas": None, "a_ciegas_sobre": {"reto.py": "reto_sobre.py"}}
STYLES = sorted(os.listdir(CORRECT)) + list(BLIND_STYLES)
EXERCISES = tuple(FULL)
OPTIONAL = tuple(OPTIONAL_FULL)
FULL = {**FULL, **OPTIONAL_FULL}
PUBLIC = {**PUBLIC, **OPTIONAL_PUBLIC}
EXERCISES_TOTAL = TOTAL
# The module's fixture grades every catalogue submission (about 140) on two workers, and the
# first test to use it pays for that: about 4-5 minutes on an idle 2-core machine, over the
# suite's 300 s default when the machine is busy. Each submission has its own budget in
# grader.pool (240 s); this bounds the whole batch.
pytestmark = pytest.mark.timeout(2400)


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
    for style in sorted(os.listdir(CORRECT)):
        jobs[f"correct-{style}"] = (os.path.join(CORRECT, style), [])
    for style, instead in BLIND_STYLES.items():
        jobs[f"correct-{style}"] = (write_blind(str(base / style), instead), [])
    for mutant in MUTANTS:
        jobs[mutant.name] = (mutant.write(str(base / mutant.name)), [mutant.exercise])
    for null in NULLS:
        jobs[f"null-{null.name}"] = (null.write(str(base / "nulls" / null.name)), [null.exercise])
    for cheat in CHEATS:
        jobs[f"cheat-{cheat.name}"] = (cheat.write(str(base / "cheats" / cheat.name)),
                                       [cheat.exercise])
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
    assert result["max_score"] == result["score"] == EXERCISES_TOTAL
    assert result["optional"] == [{"exercise": name, "score": FULL[name], "max_score": FULL[name]}
                                  for name in OPTIONAL]
    assert {t["exercise"] for t in result["tests"]} == {*EXERCISES, *OPTIONAL}


@pytest.mark.parametrize("style", STYLES)
def test_correct_solutions_in_other_styles_get_full_marks(graded, style):
    result = graded[f"correct-{style}"]
    assert not lost_points(result), lost_points(result)
    assert result["score"] == EXERCISES_TOTAL
    for part in result.get("optional", ()):  # graded when the style brings its file
        assert part["score"] == part["max_score"] == FULL[part["exercise"]], part


def test_points_per_exercise_public_and_hidden(graded):
    tests = graded["reference-folder"]["tests"]
    for exercise in (*EXERCISES, *OPTIONAL):
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
    result = graded["starter"]  # the exercises' starters (the optional reto's is a null below)
    assert result["score"] == 0
    assert all(t["score"] == 0 and t["status"] != "passed" for t in result["tests"]
               if t["max_score"])  # (not the zero-point «lo imprescindible» entries)
    assert len(result["tests"]) == len([t for t in graded["reference-folder"]["tests"]
                                        if t["exercise"] != CHALLENGE])
    # 3B's file is there, so its optional part is graded (apart): nothing yet
    assert result["optional"] == [{"exercise": "ejercicio3b_2026", "score": 0,
                                   "max_score": FULL["ejercicio3b_2026"]}]


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
    assert starters == {*EXERCISES, *OPTIONAL}
    assert {n.exercise for n in NULLS if not n.name.startswith("plantilla_")} == \
        {*EXERCISES, CHALLENGE}


def test_missing_exercises_score_zero_and_name_the_missing_file(graded):
    result = graded["only-ex2"]
    by_exercise = {}
    for test in result["tests"]:
        by_exercise.setdefault(test["exercise"], []).append(test)
    assert all(t["score"] == t["max_score"] for t in by_exercise["ejercicio2"])
    for exercise in ("ejercicio3a", "ejercicio3b", "ejercicio4"):
        assert all(t["score"] == 0 and f"no entregaste {exercise}.py" in t["output"]
                   for t in by_exercise[exercise] if t["max_score"]), by_exercise[exercise]


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_each_bug_loses_exactly_its_tests_and_the_feedback_names_it(graded, mutant):
    result = graded[mutant.name]
    lost = {test for test, (score, top) in scores(result).items() if score < top}
    assert lost - mutant.may_lose == mutant.loses, \
        {t["id"]: t["output"] for t in result["tests"] if t["id"] in
         (lost - mutant.may_lose) ^ mutant.loses}
    outputs = [t["output"] for t in result["tests"] if t["id"] in lost]
    assert any(mutant.says in output for output in outputs), outputs
    assert not mutant.never_says or not any(mutant.never_says in t["output"]
                                            for t in result["tests"]), outputs
    assert {t["exercise"] for t in result["tests"]} == {mutant.exercise}
    if mutant.severe:  # at most half of the exercise, whatever else passed
        assert result["score"] <= result["max_score"] / 2, result["score"]


def test_no_severe_bug_is_seen_only_by_the_hidden_tests(graded):
    """Every kind of serious mistake the statements of exercises 2 and 4 name has a public
    test: the self-check and the official grade agree on which severe mistakes a solution
    has (the hidden tests only vary the inputs)."""
    for mutant in MUTANTS:
        if mutant.severe and mutant.exercise in ("ejercicio2", "ejercicio4"):
            public = next(t for t in graded[mutant.name]["tests"]
                          if t["id"] == mutant.exercise.replace("ejercicio", "ej") +
                          "/lo_imprescindible")
            assert public["status"] == "failed", mutant.name


@pytest.mark.parametrize("cheat", CHEATS, ids=[c.name for c in CHEATS])
def test_behaving_once_or_remembering_earns_nothing(graded, cheat):
    result = graded[f"cheat-{cheat.name}"]
    assert cheat.at_least <= result["score"] <= cheat.at_most, \
        {t["id"]: t["output"] for t in result["tests"] if t["score"] < t["max_score"]}
    assert not cheat.says or any(cheat.says in t["output"] for t in result["tests"])


def test_every_severe_bug_is_said_under_lo_imprescindible(graded):
    for mutant in (m for m in MUTANTS if m.severe):
        entries = [t for t in graded[mutant.name]["tests"] if t["max_score"] == 0]
        assert any(t["status"] == "failed" for t in entries), mutant.name


LITERALS = re.compile(r"\b(None|null|True|False|true|false)\b|\{'|\['|\{\"")


def test_exercise_2_3_and_4_feedback_shows_no_python_or_json_literal(graded):
    """Values are written in words (grading.short): no None, null, True, a dict's repr...
    outside what a learner's own server said (quoted between «»)."""
    seen = {}
    for result in graded.values():
        for test in result["tests"]:
            if test["exercise"] != CHALLENGE:
                said = re.sub(r"«[^»]*»", "«»", test["output"])
                if LITERALS.search(said):
                    seen.setdefault(test["id"], said)
    assert not seen, seen


def test_grading_again_gives_the_same_result(graded, tmp_path):
    names = ["reference-folder", "starter", "revoca_mas_tarde_en_un_hilo", "vuelve_a_preguntar"]
    jobs = [{"path": path_of(name, tmp_path), "name": name, "budget": 240.0,
             "only": [m.exercise for m in MUTANTS if m.name == name]} for name in names]
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
