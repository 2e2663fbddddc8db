"""The worked examples of outputs/skill-elicitation-form-designer.md are real.

Every `json elicitation-example` block is the params of a form-mode `elicitation/create`: the
server's own checker (code/elicitation.py `check_schema`) accepts it and so does the official
2025-11-25 JSON schema (`ElicitRequestFormParams`). Every `json elicitation-answer` block is an
answer to the example before it that the server would accept (`check_answer`) and that
validates as an official `ElicitResult`. Every `json hard-reject` block is refused by
`check_schema`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from mcp_schema import validate_def

REPO = Path(__file__).resolve().parent.parent
SKILL = REPO / "outputs" / "skill-elicitation-form-designer.md"
sys.path.insert(0, str(REPO / "code"))

import elicitation  # noqa: E402  (code/elicitation.py)

BLOCK = re.compile(r"^```json (elicitation-example|elicitation-answer|hard-reject)\n(.*?)^```$",
                   re.MULTILINE | re.DOTALL)
LEGACY = "2025-06-18"


def blocks(kind: str) -> list[dict]:
    return [json.loads(body) for found, body in BLOCK.findall(SKILL.read_text("utf-8"))
            if found == kind]


def answered_examples() -> list[tuple[dict, dict]]:
    pairs, example = [], None
    for kind, body in BLOCK.findall(SKILL.read_text("utf-8")):
        if kind == "elicitation-example":
            example = json.loads(body)
        elif kind == "elicitation-answer":
            assert example is not None, "an answer block comes before any example"
            pairs.append((example, json.loads(body)))
    return pairs


def protocol_of(example: dict) -> str:
    """Examples without `mode` are written for 2025-06-18 clients."""
    return "2025-11-25" if "mode" in example else LEGACY


def label(example: dict) -> str:
    return example["message"][:40]


def test_skill_front_matter_names_the_lesson():
    text = SKILL.read_text("utf-8")
    front = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert front, "no front matter"
    for key, value in [("name", "elicitation-form-designer"), ("phase", "13"),
                       ("lesson", "12")]:
        assert re.search(rf"^{key}: {value}$", front[1], re.MULTILINE), key
    for key in ("description", "version", "tags"):
        assert re.search(rf"^{key}:", front[1], re.MULTILINE), key
    for section in ("## Qué produce", "## Rechazos duros", "## Reglas de negativa",
                    "## Formato de salida", "## Ejemplos trabajados"):
        assert section in text, section


def test_skill_has_examples_answers_and_hard_rejects():
    assert len(blocks("elicitation-example")) >= 4
    assert len(blocks("elicitation-answer")) == len(blocks("elicitation-example"))
    assert len(blocks("hard-reject")) >= 6


@pytest.mark.parametrize("example", blocks("elicitation-example"), ids=label)
def test_example_schema_passes_the_servers_checker(example):
    elicitation.check_schema(example["message"], example["requestedSchema"],
                             protocol_of(example))


@pytest.mark.parametrize("example", blocks("elicitation-example"), ids=label)
def test_example_is_valid_under_the_official_2025_11_25_schema(example):
    validate_def(example, "2025-11-25", "ElicitRequestFormParams")


@pytest.mark.parametrize("example,answer", answered_examples(),
                         ids=lambda v: label(v) if "message" in v else v["action"])
def test_example_answer_is_accepted_by_the_server_and_the_official_schema(example, answer):
    checked = elicitation.check_answer(example["requestedSchema"], answer)
    assert checked.action == answer["action"]
    validate_def(answer, "2025-11-25", "ElicitResult")


@pytest.mark.parametrize("form", blocks("hard-reject"), ids=label)
def test_hard_reject_example_is_refused_by_the_servers_checker(form):
    with pytest.raises(elicitation.SchemaError):
        elicitation.check_schema(form["message"], form["requestedSchema"])
