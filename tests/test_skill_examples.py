"""The worked examples of outputs/skill-elicitation-form-designer.md are real.

Every `json elicitation-example` block is the params of a form-mode `elicitation/create` and
names, after the tag, the protocol revisions it is written for (`2025-11-25 2026-07-28`, or
`2025-06-18` for the legacy shape): the server's own checker (code/core/elicitation.py
`check_schema`) accepts it for each of them, and so does the official JSON schema of each
(`ElicitRequestFormParams`; at 2025-06-18, where that definition does not exist yet, the
params of an `elicitation/create` request). Every `json elicitation-answer` block is an answer
to the example before it that the server would accept (`check_answer`) and that validates as
an official `ElicitResult` of those revisions. Every `json hard-reject` block is refused by
`check_schema`. (Whole JSON-RPC frames, marked `mcp-<revision>`, are checked by
tests/notebooks/test_wire_examples.py.)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from mcp_schema import SCHEMA_REVISIONS, validate_def, validate_frame

REPO = Path(__file__).resolve().parent.parent
SKILL = REPO / "outputs" / "skill-elicitation-form-designer.md"
sys.path.insert(0, str(REPO / "code"))

import elicitation  # noqa: E402  (code/core/elicitation.py)

BLOCK = re.compile(r"^```json (elicitation-example|elicitation-answer|hard-reject)([^\n]*)\n"
                   r"(.*?)^```$", re.MULTILINE | re.DOTALL)
LEGACY = "2025-06-18"


def found_blocks() -> list[tuple[str, tuple[str, ...], dict]]:
    """(kind, revisions named after the tag, value) of every tagged block, in order."""
    return [(kind, tuple(info.split()), json.loads(body))
            for kind, info, body in BLOCK.findall(SKILL.read_text("utf-8"))]


def blocks(kind: str) -> list[dict]:
    return [value for found, _, value in found_blocks() if found == kind]


def examples() -> list[tuple[dict, str]]:
    """(example, revision) for every revision each example names."""
    return [(value, revision) for kind, revisions, value in found_blocks()
            if kind == "elicitation-example" for revision in revisions]


def answered_examples() -> list[tuple[dict, dict, str]]:
    pairs, example, revisions = [], None, ()
    for kind, named, value in found_blocks():
        if kind == "elicitation-example":
            example, revisions = value, named
        elif kind == "elicitation-answer":
            assert example is not None, "an answer block comes before any example"
            pairs += [(example, value, revision) for revision in revisions]
    return pairs


def label(value) -> str:
    if isinstance(value, dict):
        return value.get("message", value.get("action", ""))[:40]
    return str(value)


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


def test_every_example_names_known_revisions_and_both_current_ones_appear():
    named = [revisions for kind, revisions, _ in found_blocks() if kind == "elicitation-example"]
    assert all(revisions and set(revisions) <= set(SCHEMA_REVISIONS) for revisions in named), named
    assert {"2025-11-25", "2026-07-28", LEGACY} <= {r for rs in named for r in rs}


def test_examples_without_mode_are_the_legacy_ones():
    for example, revision in examples():
        assert ("mode" not in example) == (revision == LEGACY), label(example)


def validate_params(example: dict, revision: str) -> None:
    if revision == LEGACY:  # no ElicitRequestFormParams yet: check them inside a request
        frame = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": example}
        validate_frame(frame, revision, "server")
    else:
        validate_def(example, revision, "ElicitRequestFormParams")


@pytest.mark.parametrize("example,revision", examples(), ids=label)
def test_example_schema_passes_the_servers_checker(example, revision):
    elicitation.check_schema(example["message"], example["requestedSchema"], revision)


@pytest.mark.parametrize("example,revision", examples(), ids=label)
def test_example_is_valid_under_the_official_schema_of_each_revision_it_names(example,
                                                                              revision):
    validate_params(example, revision)


def test_a_current_example_claimed_for_2025_06_18_would_be_caught():
    current = next(e for e, r in examples() if r == "2025-11-25" and "oneOf" in json.dumps(e))
    with pytest.raises(elicitation.SchemaError):  # titled oneOf options arrived in 2025-11-25
        elicitation.check_schema(current["message"], current["requestedSchema"], LEGACY)


@pytest.mark.parametrize("example,answer,revision", answered_examples(), ids=label)
def test_example_answer_is_accepted_by_the_server_and_the_official_schema(example, answer,
                                                                          revision):
    checked = elicitation.check_answer(example["requestedSchema"], answer)
    assert checked.action == answer["action"]
    validate_def(answer, revision, "ElicitResult")


@pytest.mark.parametrize("form", blocks("hard-reject"), ids=label)
def test_hard_reject_example_is_refused_by_the_servers_checker(form):
    with pytest.raises(elicitation.SchemaError):
        elicitation.check_schema(form["message"], form["requestedSchema"])
