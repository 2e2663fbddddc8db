"""Feedback that points at the learner's mistake, not at a symptom (newcomer report F1, F2, F4).

- exercise 3B: a page route that raises is named by its exception and the line of the learner's
  file that raised, not only by the page's 500 text (which claims nothing it cannot know);
- exercise 3B: a −32042 whose `data.elicitations` holds no URL-mode elicitation (the bare URL)
  is said to be that, pointing at `ctx.url_params`, instead of «no pidió el modo URL»;
- exercise 4: a reaction that raises in one scenario only is named by its exception there,
  instead of a hint about paths.

Each submission is the reference with one bug (tests/grader/mutants.py writes it), graded on the
in-process host: the same checks as every host, with no process to start.
"""

import re

import pytest
from mutants import Mutant

from grader import selfcheck

pytestmark = pytest.mark.timeout(300)


def graded(tmp_path, file, find, replace):
    bug = Mutant("bug", file, find, replace, set())
    return selfcheck.run(bug.write(str(tmp_path / "entrega")), file[:-3], host="inprocess")


def output_of(result, test):
    return next(t["output"] for t in result["tests"] if t["id"] == test)


def test_a_callback_that_raises_is_named_by_its_exception_and_the_line_that_raised(tmp_path):
    result = graded(tmp_path, "ejercicio3b.py", "        flow.notify(flow_id)\n",
                    "        flow.notify()  # BUG: no elicitationId\n")
    said = output_of(result, "ej3b/test_authorizes_at_the_provider_and_then_backs_up")
    assert "HTTP 500 porque tu código lanzó una excepción: TypeError:" in said
    assert "missing 1 required positional argument" in said
    line = re.search(r"\(línea (\d+) de ejercicio3b\.py\)", said)
    source = open(tmp_path / "entrega" / "ejercicio3b.py", encoding="utf-8").read()
    assert line and "# BUG" in source.splitlines()[int(line[1]) - 1], said
    assert "no se vinculó" not in said


def test_a_32042_with_a_bare_url_says_it_is_no_url_elicitation_and_points_at_url_params(tmp_path):
    result = graded(tmp_path, "ejercicio3b.py",
                    "    raise URLElicitationRequired([ctx.url_params(MESSAGE, url, flow_id)])\n",
                    "    raise URLElicitationRequired([url])  # BUG: the bare URL\n")
    said = output_of(result, "ej3b/test_authorizes_at_the_provider_and_then_backs_up")
    assert "respondió el error −32042, pero el cliente no puede seguirlo" in said
    assert "data.elicitations no trae ninguna elicitación en modo URL" in said
    assert "un texto («http" in said and "ctx.url_params(MESSAGE, url, flow_id)" in said
    assert "no pidió el modo URL" not in said


REACTION = "        where = handle.current_path()\n"


def test_a_reaction_that_raises_in_one_scenario_is_named_there_instead_of_a_hint(tmp_path):
    # raises only for a handle whose file is no longer where it was opened (as contains(None)
    # raises for one whose file nobody can find): the main scenario still passes
    result = graded(tmp_path, "ejercicio4.py", REACTION,
                    REACTION + "        if where != handle.path:\n"
                    "            raise LookupError('movida')  # BUG\n")
    said = output_of(result, "ej4/test_a_root_folder_moved_away_and_replaced_is_judged_where_it_"
                             "is_now")
    assert "tu reacción lanzó una excepción (LookupError) en este caso" in said
    assert "pista" not in said and "realpath" not in said
    main = output_of(result, "ej4/test_handles_under_a_removed_root_die_at_once_and_the_others_"
                             "keep_working")
    assert "lanzó" not in main
