"""What went wrong in a solution's code is named, with the solution's line (code/core/tooling.py).

`crash_text` gives an exception's type and message and the innermost line of the learner's
file it passed through (the server's log says it for a tool, a page route, the URL guard and
the roots reaction); `url_entry_problem` says why a −32042's `data.elicitations` holds no
URL-mode elicitation, in the Spanish the notebook's client and the grader both show.
"""

import functools

import pytest

from tooling import crash_text, url_entry_problem, where_in_spanish

SOLUTION = '''def helper(value):
    return value.upper()


def handler(page):
    return helper(None)
'''


def solution_function(tmp_path, name="handler"):
    path = tmp_path / "ejercicio3b.py"
    path.write_text(SOLUTION, encoding="utf-8")
    namespace = {}
    exec(compile(SOLUTION, str(path), "exec"), namespace)
    return namespace[name]


def raised_by(function):
    try:
        function(None)
    except Exception as exc:
        return exc
    raise AssertionError("it did not raise")


def test_a_crash_names_the_innermost_line_of_the_solution_file(tmp_path):
    handler = solution_function(tmp_path)
    assert crash_text(raised_by(handler), handler) == \
        "AttributeError: 'NoneType' object has no attribute 'upper' (at ejercicio3b.py:2)"


def test_a_crash_is_found_through_functools_wraps(tmp_path):
    handler = solution_function(tmp_path)

    @functools.wraps(handler)
    def wrapper(*args):
        return handler(*args)
    assert crash_text(raised_by(wrapper), wrapper).endswith("(at ejercicio3b.py:2)")


def test_a_crash_that_never_passed_through_the_solution_file_has_no_line(tmp_path):
    handler = solution_function(tmp_path)
    assert crash_text(raised_by(lambda page: {}["x"]), handler) == "KeyError: 'x'"


def test_an_exception_whose_text_fails_is_still_named():
    class Odd(Exception):
        def __str__(self):
            raise RuntimeError("no")
    assert crash_text(Odd()) == "Odd: (sin texto)"


def test_a_crash_with_a_huge_message_is_cut_but_keeps_its_line(tmp_path):
    handler = solution_function(tmp_path)
    try:
        handler("x" * 100_000)
    except Exception as exc:
        said = crash_text(RuntimeError("y" * 100_000).with_traceback(exc.__traceback__), handler)
    assert len(said) < 400 and said.endswith("… (at ejercicio3b.py:2)")


def test_the_line_of_a_crash_is_said_in_spanish():
    assert where_in_spanish("TypeError: x (at ejercicio3b.py:88)") == \
        "TypeError: x (línea 88 de ejercicio3b.py)"
    assert where_in_spanish("TypeError: x") == "TypeError: x"


URL = {"mode": "url", "message": "m", "url": "https://x.example/c", "elicitationId": "e"}


@pytest.mark.parametrize("elicitations, says", [
    (["https://x.example/copias/conectar"], "su primer elemento es un texto («https://x.example"),
    ([{"mode": "form", "url": "https://x.example"}], 'su primer elemento no lleva mode "url"'),
    ([{"mode": "url"}], "su primer elemento no lleva url (un texto)"),
    (URL, "data.elicitations es un objeto, no una lista"),
    ([], "data.elicitations es una lista vacía"),
])
def test_a_32042_without_a_url_elicitation_says_what_it_holds_and_how_to_build_one(
        elicitations, says):
    problem = url_entry_problem(elicitations)
    assert says in problem and "ctx.url_params(MESSAGE, url, flow_id)" in problem


def test_a_32042_with_a_url_elicitation_among_others_has_no_problem():
    assert url_entry_problem(["otra cosa", URL]) is None
