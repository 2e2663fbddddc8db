"""Multi-select answers are checked on the server against the options that were offered, for
both shapes (untitled `items.enum`, titled `items.anyOf`), in both revisions.

The form comes from a test-only solution tool loaded with `serve --solution`: the lesson's own
tools have no multi-select field."""

import pytest

from elicitation import AnswerError, check_answer
from sdk_driver import Answers, Roots, sdk_client
from server_support import write_solution
from shared.protocol import REVISIONS

TAGS = {"type": "array", "title": "Etiquetas",
        "items": {"type": "string", "enum": ["casa", "trabajo", "ideas"]}}
COLORS = {"type": "array", "title": "Colores",
          "items": {"anyOf": [{"const": "rojo", "title": "Rojo"},
                              {"const": "verde", "title": "Verde"}]}}

SOLUTION = f"""
    from extension import Extension
    from server import ok

    extension = Extension()
    FIELDS = {dict(tags=TAGS, colors=COLORS)!r}


    @extension.tool("tags_pick", description="Elige etiquetas y colores (selección múltiple).")
    def tags_pick(ctx):
        answer = ctx.elicit_form("Elige etiquetas y colores.", FIELDS, required=["tags"])
        if answer.action != "accept":
            return ok("No elegiste nada.", dict(picked=None))
        return ok("Elegido.", dict(picked=answer.content))
"""


@pytest.fixture
def solution(tmp_path):
    return write_solution(tmp_path, SOLUTION)


MODES = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=REVISIONS)


@pytest.mark.anyio
@MODES
async def test_offered_options_are_accepted(tree, trace, solution, mode):
    content = {"tags": ["casa", "ideas"], "colors": ["verde"]}
    answers = Answers({"action": "accept", "content": content})
    async with sdk_client("--solution", solution, trace=trace, mode=mode,
                          roots=Roots(tree.notes), answers=answers) as client:
        result = await client.call_tool("tags_pick", {})
    assert answers.seen[0].requested_schema["properties"]["tags"]["items"] == TAGS["items"]
    assert not result.is_error and result.structured_content == {"picked": content}


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("content", [
    {"tags": ["casa", "spam"]},                      # not among items.enum
    {"tags": ["casa"], "colors": ["rojo", "azul"]},  # not among items.anyOf
    {"tags": ["Casa"]},                              # options are exact
], ids=["enum", "anyOf", "case"])
async def test_an_option_that_was_not_offered_is_refused(tree, trace, solution, mode, content):
    answers = Answers({"action": "accept", "content": content})
    async with sdk_client("--solution", solution, trace=trace, mode=mode,
                          roots=Roots(tree.notes), answers=answers) as client:
        result = await client.call_tool("tags_pick", {})
    assert len(answers.seen) == 1
    assert result.is_error and "picked" not in (result.structured_content or {})


@pytest.mark.parametrize("field, good, bad", [
    (TAGS, ["trabajo"], ["trabajo", "otra"]),
    (COLORS, ["rojo", "verde"], ["Rojo"]),
])
def test_check_answer_refuses_values_outside_the_offered_options(field, good, bad):
    schema = {"type": "object", "properties": {"m": field}}
    assert check_answer(schema, {"action": "accept", "content": {"m": good}}).content == {
        "m": good}
    with pytest.raises(AnswerError, match="opciones ofrecidas"):
        check_answer(schema, {"action": "accept", "content": {"m": bad}})
