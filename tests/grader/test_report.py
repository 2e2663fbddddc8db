"""Learner data is data: every output format takes any string and stays inert and valid.

Results are generated with hypothesis, with arbitrary text (lone surrogates, C0 and C1
controls, terminal escapes, bidirectional overrides, formula starts) in every field a
submission can reach: its name, test outputs, problems, protections.
"""

import csv
import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import report
from grader.escape import clean, csv_cell, file_name, json_text, one_line

ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60) | \
    st.sampled_from(["\ud800", "\x1b[2J\x1b[HPuntuación: 42 / 42", "=HYPERLINK(\"x\")",
                     "+1", "-1", "@SUM(A1)", "\tx", "\rx", "\u202eabc", "\x85", "\u2028",
                     "a\nPuntuación: 42 / 42"])
INVISIBLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                       "\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


@st.composite
def results(draw):
    tests = [{"id": draw(ANY_TEXT), "name": draw(ANY_TEXT), "exercise": "ejercicio2",
              "score": draw(st.sampled_from([0.0, 0.5, 1.0])), "max_score": 1,
              "status": draw(st.sampled_from(["passed", "failed", "error", "raro"])),
              "output": draw(ANY_TEXT)} for _ in range(draw(st.integers(0, 3)))]
    return {"submission": draw(ANY_TEXT), "score": 0.0, "max_score": len(tests),
            "tests": tests, "problems": draw(st.lists(ANY_TEXT, max_size=3)),
            "protections": {"mode": draw(ANY_TEXT), draw(ANY_TEXT): True,
                            "cgroups": draw(st.lists(ANY_TEXT, max_size=2))},
            "output": draw(ANY_TEXT), "execution_time": 1.0,
            "internal_errors": [draw(ANY_TEXT)], "warnings": []}


@settings(max_examples=300, deadline=None)
@given(results())
def test_the_text_report_never_fails_and_has_no_control_character(result):
    text = report.text(result)
    assert not INVISIBLE.search(text), repr(INVISIBLE.search(text))
    text.encode("utf-8")  # never a lone surrogate


@settings(max_examples=300, deadline=None)
@given(results())
def test_learner_text_never_starts_a_line_of_the_text_report(result):
    result["output"] = "Entrega: x\nPuntuación: 0 / 3"  # the grader's own header
    lines = report.text(result).split("\n")
    assert [line for line in lines if line.startswith("Puntuación")] == ["Puntuación: 0 / 3"]


@settings(max_examples=300, deadline=None)
@given(results())
def test_json_lines_are_always_valid_one_line_json_without_raw_controls(result):
    line = report.json_line(result)
    assert line.endswith("\n") and line.count("\n") == 1
    assert not INVISIBLE.search(line[:-1])
    parsed = json.loads(line)
    assert "internal_errors" not in parsed and "warnings" not in parsed
    line.encode("utf-8")
    json.loads(report.gradescope(result))


@settings(max_examples=300, deadline=None)
@given(st.lists(results(), min_size=1, max_size=3))
def test_no_gradebook_cell_starts_a_formula(batch):
    rows = list(csv.reader(io.StringIO(report.gradebook(batch))))
    assert len(rows) == len(batch) + 1
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
            assert not INVISIBLE.search(cell)


@given(ANY_TEXT)
def test_a_safe_file_name_is_one_plain_path_component(name):
    safe = file_name(name)
    assert safe and "/" not in safe and not safe.startswith(".")
    assert re.fullmatch(r"[\w.\-]+", safe)


@given(ANY_TEXT | st.text(max_size=400), st.integers(0, 80))
def test_a_line_cut_at_a_limit_reads_only_what_it_shows(text, limit):
    whole = one_line(text)
    assert one_line(text, limit) == (whole[:limit] + "…" if len(whole) > limit else whole)
    assert one_line(text * 10_000, limit) == one_line(text * (limit + 1), limit)


def test_escapes_are_visible_and_keep_the_text_readable():
    assert one_line("a\nb\x1b[2J\u202e") == "a\\nb\\x1b[2J\\u202e"
    assert clean("línea 1\nlínea 2\x07") == "línea 1\nlínea 2\\x07"
    assert clean("\ud800") == "\ufffd"
    assert csv_cell("=1+1") == "'=1+1" and csv_cell("-3") == "'-3"
    assert csv_cell("según tu servidor") == "según tu servidor"
    assert json.loads(json_text({"a": float("nan"), "\ud800": "\x85"})) == {"\ufffd": "\x85",
                                                                            "a": None}


# -- what Gradescope shows before the due date ---------------------------------------------------
def graded(hidden_scores, broken_in_hidden=False):
    """A result as grader.runner assembles it: two public tests, passed, and two hidden ones."""
    from grader.runner import report_lines
    tests = [{"id": f"ej2/t{n}", "name": f"ejercicio2 pública {n}", "exercise": "ejercicio2",
              "score": 1.0, "max_score": 1, "status": "passed", "hidden": False,
              "output": "✔ bien"} for n in range(2)]
    tests += [{"id": f"ej2_hidden/t{n}", "name": f"ejercicio2 (oculta) {n}",
               "exercise": "ejercicio2", "score": score, "max_score": 2,
               "status": "passed" if score == 2 else "failed", "hidden": True,
               "output": "✔ bien" if score == 2 else "✘ algún caso falla"}
              for n, score in enumerate(hidden_scores)]
    problems = ["durante una prueba oculta tu servidor puso algo"] if broken_in_hidden else []
    broken = "se agotó el tiempo" if broken_in_hidden else None
    return {"submission": "entrega", "score": sum(t["score"] for t in tests),
            "max_score": 6, "tests": tests, "suite": "all", "problems": problems,
            "protections": {"mode": "root", "seccomp": True}, "notice": "",
            "output": report_lines("entrega", tests, [], broken, problems),
            "public_output": report_lines("entrega", tests[:2], [], None, [],
                                          public_only=True),
            "execution_time": 9.0 if broken_in_hidden else 1.0}


def seen_before_the_due_date(results):
    """What a learner sees on Gradescope before the due date (its documented rules): the
    top-level output, the tests marked visible, and the total only when no test is withheld."""
    visible = [t for t in results["tests"] if t["visibility"] == "visible"]
    withheld = any(t["visibility"] in ("after_due_date", "after_published")
                   for t in results["tests"])
    return {"output": results["output"], "tests": visible,
            "total": None if withheld else results.get("score")}


@pytest.mark.parametrize("visibility", ["after_due_date", "after_published", "hidden"])
def test_before_the_due_date_nothing_a_learner_sees_depends_on_a_hidden_test(visibility):
    passing = json.loads(report.gradescope(graded([2.0, 2.0]), visibility))
    failing = json.loads(report.gradescope(graded([0.0, 1.0], broken_in_hidden=True),
                                           visibility))
    assert seen_before_the_due_date(passing) == seen_before_the_due_date(failing)
    assert seen_before_the_due_date(failing)["total"] is None
    assert "ocultas" not in failing["output"].split("Pruebas ocultas:")[0]
    assert "execution_time" not in failing and failing["extra_data"]["execution_time"] == 9.0
    summary = failing["tests"][-1]
    assert summary["max_score"] == 0 and "Pruebas ocultas: 1 / 4" in summary["output"]


def test_with_visible_hidden_tests_gradescope_shows_everything():
    results = json.loads(report.gradescope(graded([0.0, 1.0]), "visible"))
    assert "ocultas 1 / 4" in results["output"]
    assert all(t["visibility"] == "visible" for t in results["tests"])
