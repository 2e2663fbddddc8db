"""Scores as a learner reads them: with a decimal comma in every text (the report's header, each
test's line, the penalty of a serious mistake, Gradescope's texts); JSON and the CSV gradebook
keep numbers for machines (grader/spoken.py)."""

import csv
import io
import json

import pytest

from grader import report, runner
from grader.checks import grading
from grader.spoken import spoken

HALF = {"id": "ej4/x", "name": "ejercicio4 x", "exercise": "ejercicio4", "score": 4.5,
        "max_score": 10, "hidden": False, "status": "failed", "output": "✘ casi"}


def result_of(tests):
    return {"submission": "ana", "score": 4.5, "max_score": 10, "tests": tests,
            "output": runner.report_lines("ana", tests, [], None, []), "problems": [],
            "protections": {"mode": "portable"}}


def test_the_report_header_writes_scores_with_a_decimal_comma():
    header = runner.report_lines("ana", [HALF], [], None, [])
    assert "Puntuación: 4,5 / 10" in header and "ejercicio4: 4,5 / 10" in header


def test_each_test_line_of_the_text_report_has_a_decimal_comma():
    assert "✘ 4,5/10  ejercicio4 x" in report.text(result_of([HALF]))


def test_the_penalty_of_a_serious_mistake_is_written_with_a_decimal_comma():
    entry = grading._essential("ejercicio4", "ej4/lo_imprescindible", False,
                               [({"name": "ejercicio4 x"}, "un handle vivo fuera")], 7.5)
    assert "penalización: −7,5 puntos" in entry["output"] and entry["score"] == -7.5


def test_json_and_the_gradebook_keep_numbers_for_machines():
    result = result_of([HALF])
    assert json.loads(report.json_line(result))["tests"][0]["score"] == 4.5
    rows = list(csv.DictReader(io.StringIO(report.gradebook([result]))))
    assert rows[0]["score"] == "4.5" and rows[0]["ejercicio4 x"] == "4.5"


@pytest.mark.parametrize("value, said", [(9.5, "9,5"), (19, "19"), (0.25, "0,25"),
                                         (None, "?"), ("x", "?"), (float("nan"), "?")])
def test_a_spoken_number_never_raises(value, said):
    assert spoken(value) == said
