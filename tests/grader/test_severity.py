"""Points follow severity: a serious mistake (a failed check marked severe) leaves its exercise
with at most half of its points, and where the penalty shows depends only on where the mistake
was seen (public or hidden tests), never on a hidden test's outcome. Pure scoring: no server."""

import pytest

from grader.checks.grading import Broken, Grade, essentials, graded, score, spec_for


class State:
    expired = False
    warnings: list = []
    internal_errors: list = []


def spec(name, points, hidden=False, severe=None, exercise="ejercicio2"):
    @graded(exercise, points, name, hidden=hidden, severe=severe)
    def test():
        pass
    test.__name__ = f"test_{name}"
    return spec_for(test, "test_ej2_hidden.py" if hidden else "test_ej2.py")


def result(spec_, *checks):
    """The scored result of a test whose checks are (passed, severe) pairs."""
    grade = Grade(hidden=spec_["hidden"], severe=spec_.get("severe"))
    for number, (passed, severe) in enumerate(checks):
        grade.check(passed, f"comprobación {number}", severe=severe)
    return score(State(), spec_, grade, None)


def total(tests):
    return round(sum(t["score"] for t in tests), 2)


def test_an_exercise_without_severe_tests_gets_no_entries():
    plain = spec("positivo", 10)
    assert essentials([plain], [result(plain, (True, False))]) == []


def test_a_public_serious_mistake_leaves_at_most_half_of_the_exercise():
    positive, decline, hidden = (spec("positivo", 10), spec("rechazo", 6, severe="no archivar"),
                                 spec("oculta", 4, hidden=True))
    tests = [result(positive, (True, False)), result(decline, (True, False), (False, True)),
             result(hidden, (True, False))]
    entries = essentials([positive, decline, hidden], tests)
    public, secret = entries
    assert total(tests + entries) == 10  # half of 20, though the checks alone gave 17
    assert public["score"] == -7 and public["status"] == "failed" and not public["hidden"]
    assert "comprobación 1" in public["output"] and "rechazo" in public["output"]
    assert secret["score"] == 0 and secret["hidden"]


def test_a_mistake_seen_only_in_a_hidden_test_is_charged_in_the_hidden_entry():
    positive, decline, hidden = (spec("positivo", 10), spec("rechazo", 6, severe="no archivar"),
                                 spec("oculta", 4, hidden=True, severe="roots"))
    clean = [result(positive, (True, False)), result(decline, (True, True))]
    tests = clean + [result(hidden, (True, False), (False, True))]
    public, secret = essentials([positive, decline, hidden], tests)
    assert total(tests + [public, secret]) == 10
    assert public["score"] == 0 and public["status"] == "passed"
    assert secret["hidden"] and secret["score"] < 0
    assert "comprobación" not in secret["output"]  # a hidden test's texts stay hidden
    # the public entry is the same whether the hidden test saw the mistake or not
    fine = clean + [result(hidden, (True, False), (True, True))]
    assert essentials([positive, decline, hidden], fine)[0] == public


def test_a_total_already_below_half_costs_nothing_more_but_is_still_reported():
    positive, decline = spec("positivo", 10), spec("rechazo", 10, severe="no archivar")
    tests = [result(positive, (False, False)), result(decline, (True, False), (False, True))]
    (public,) = essentials([positive, decline], tests)
    assert public["score"] == 0 and public["status"] == "failed"


def test_a_mistake_counts_even_when_the_test_ends_badly_afterwards():
    decline = spec("rechazo", 6, severe="no archivar")
    grade = Grade(severe="no archivar")
    grade.check(False, "archivó tras decline", severe=True)
    crashed = score(State(), decline, grade, RuntimeError("luego el servidor murió"))
    assert crashed["violations"] == ["archivó tras decline"]


def test_a_severe_check_needs_a_test_declared_severe():
    with pytest.raises(ValueError):
        Grade().check(False, "algo grave", severe=True)


def must_not(name, points, severe="no archivar"):
    @graded("ejercicio2", points, name, severe=severe, must_not=True)
    def test():
        pass
    test.__name__ = f"test_{name}"
    return spec_for(test, "test_ej2.py")


def test_refusing_everything_in_a_severe_must_not_test_costs_what_its_bug_costs():
    positive, decline = spec("positivo", 10), must_not("rechazo", 10)
    grade = Grade(severe="no archivar", must_not=True)
    grade.check(True, "tras decline no cambió nada")
    grade.still_works(False, "después, archivar no funcionó")
    tests = [result(positive, (True, False)), score(State(), decline, grade, None)]
    (public,) = essentials([positive, decline], tests)
    assert tests[1]["score"] == 0 and tests[1]["violations"]
    assert public["status"] == "failed" and total(tests + [public]) == 10


def test_a_server_that_dies_in_a_severe_must_not_test_costs_what_its_bug_costs():
    decline = must_not("rechazo", 10)
    grade = Grade(severe="no archivar", must_not=True)
    grade.check(True, "tras decline no cambió nada")
    crashed = score(State(), decline, grade, Broken("tu servidor terminó"))
    assert crashed["status"] == "error" and crashed["violations"]


def test_a_failed_legitimate_action_in_a_must_not_test_that_is_not_severe_costs_that_test():
    @graded("ejercicio2", 1, "una vez", must_not=True)
    def test_once():
        pass
    once = spec_for(test_once, "test_ej2.py")
    grade = Grade(must_not=True)
    grade.check(True, "una pregunta")
    grade.still_works(False, "después, archivar no funcionó")
    assert "violations" not in score(State(), once, grade, None)
