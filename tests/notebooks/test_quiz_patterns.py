"""A quiz cannot be passed by pattern: over all the quiz files (lessons/mcp_ui/quizzes/), where
the right option sits, how long it is and how it is worded tell nothing, and most questions ask
to apply what the lesson teaches.

The rules, over all the questions of all the quiz files together (N of them):
- position: for each of the first three positions (A, B, C), the right option sits there in
  between a quarter and 42 % of the questions (a third each, give or take); and within one
  quiz file, no position holds it in more than half of the questions (rounded up);
- length: the right option is the strictly longest option in between a quarter and 42 % of the
  questions, the strictly shortest in as many, and neither (in the middle, or tied) in as many;
- wording: no option's text carries a spec keyword (MUST, SHOULD, MAY, with or without NOT) or
  a hedge («si acaso», «opcional», «quizá», «tal vez»): they go in the option's explanation;
- kind: every question declares `"kind": "aplicar"` or `"recordar"` (recap.py says which is
  which), and at least 30 of them are "aplicar";
- pointers: every section a reading pointer («📖 Lee: …», an option's or a question's `read`)
  names between «» is a heading of the notebook that draws the quiz.

tests/notebooks/test_quiz_answers.py holds the key (which option is right, and why).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import pytest
from notebook_helpers import LESSONS, NOTEBOOKS, import_mcp_ui, read
from test_lesson_structure import quiz_ids

ui = import_mcp_ui()
QUIZZES = LESSONS / "mcp_ui" / "quizzes"
QUIZ_IDS = sorted(path.stem for path in QUIZZES.glob("*.json"))
SHARE = (0.25, 0.42)        # the bounds of each position's and each length rank's share
MIN_APPLY = 30
KEYWORD = re.compile(r"\b(MUST|SHOULD|MAY|REQUIRED|RECOMMENDED|OPTIONAL)\b")
HEDGES = ("si acaso", "opcional", "quizá", "tal vez")


def questions():
    return [(quiz_id, q) for quiz_id in QUIZ_IDS for q in ui.recap.load_quiz(quiz_id).questions]


def length_rank(question) -> str:
    """"longest" or "shortest" when the right option is strictly so, else "middle"."""
    lengths = [len(option.text) for option in question.options]
    mine = lengths[question.right]
    others = [n for i, n in enumerate(lengths) if i != question.right]
    if all(mine > n for n in others):
        return "longest"
    if all(mine < n for n in others):
        return "shortest"
    return "middle"


def within_share(count, total) -> bool:
    return SHARE[0] * total <= count <= SHARE[1] * total


def test_a_length_rank_is_strict_and_a_tie_is_the_middle():
    def asked(*texts):
        return ui.recap.Question("¿?", tuple(ui.recap.Option(t, i == 0, "")
                                             for i, t in enumerate(texts)))
    assert length_rank(asked("la más larga de todas", "corta", "otra")) == "longest"
    assert length_rank(asked("x", "corta", "otra")) == "shortest"
    assert length_rank(asked("mediana", "corta", "la más larga")) == "middle"
    assert length_rank(asked("igual", "igual", "la más larga")) == "middle"


def test_the_bounds_refuse_the_patterns_the_review_found():
    # REVIEW-PEDAGOGY §5, before: right in position A in 5 of 38, the middle length in 25
    assert not within_share(5, 38) and not within_share(25, 38)
    assert within_share(12, 38) and within_share(14, 38)


def test_the_right_options_position_is_spread_over_all_quizzes():
    asked = questions()
    where = Counter(q.right for _, q in asked)
    shares = {"ABCD"[p]: n for p, n in sorted(where.items())}
    assert all(within_share(where[p], len(asked)) for p in range(3)), (shares, len(asked))


@pytest.mark.parametrize("quiz_id", QUIZ_IDS)
def test_no_quiz_keeps_the_right_option_in_one_position(quiz_id):
    asked = ui.recap.load_quiz(quiz_id).questions
    most = Counter(q.right for q in asked).most_common(1)[0][1]
    assert most <= math.ceil(len(asked) / 2), [q.right for q in asked]


def test_the_right_options_length_tells_nothing():
    asked = questions()
    ranks = Counter(length_rank(q) for _, q in asked)
    assert all(within_share(ranks[rank], len(asked))
               for rank in ("longest", "shortest", "middle")), (dict(ranks), len(asked))


@pytest.mark.parametrize("quiz_id", QUIZ_IDS)
def test_no_option_text_carries_a_spec_keyword_or_a_hedge(quiz_id):
    said = [o.text for q in ui.recap.load_quiz(quiz_id).questions for o in q.options
            if KEYWORD.search(o.text) or any(h in o.text.lower() for h in HEDGES)]
    assert not said, said


@pytest.mark.parametrize("quiz_id", QUIZ_IDS)
def test_every_question_declares_whether_it_asks_to_apply_or_to_recall(quiz_id):
    data = json.loads((QUIZZES / f"{quiz_id}.json").read_text(encoding="utf-8"))
    assert all(q.get("kind") in ui.recap.QUESTION_KINDS for q in data["questions"])


def test_a_question_without_its_kind_does_not_load(tmp_path, monkeypatch):
    (tmp_path / "sin.json").write_text(json.dumps({"questions": [{
        "question": "¿?", "options": [{"text": "a", "correct": True, "why": "b"}]}]}),
        encoding="utf-8")
    monkeypatch.setattr(ui.recap, "QUIZZES", tmp_path)
    with pytest.raises(ValueError, match="kind"):
        ui.recap.load_quiz("sin")


def test_at_least_30_questions_ask_to_apply():
    kinds = Counter(q.kind for _, q in questions())
    assert kinds["aplicar"] >= MIN_APPLY, dict(kinds)


def drawn_by() -> dict[str, str]:
    """{quiz id: the notebook whose cells draw it}."""
    return {quiz_id: name for name in NOTEBOOKS for cell in read(name).cells
            if cell.cell_type == "code" and "ui.quiz(" in cell.source
            for quiz_id in quiz_ids(cell.source)}


def headings(name) -> list[str]:
    return [line.lstrip("#").strip() for cell in read(name).cells
            if cell.cell_type == "markdown" for line in cell.source.splitlines()
            if line.startswith("#")]


@pytest.mark.parametrize("quiz_id", QUIZ_IDS)
def test_every_section_a_reading_pointer_names_is_a_heading_of_its_notebook(quiz_id):
    quiz, name = ui.recap.load_quiz(quiz_id), drawn_by()[quiz_id]
    pointers = [q.read for q in quiz.questions] + [o.read for q in quiz.questions
                                                   for o in q.options]
    titles = {title for pointer in pointers for title in re.findall(r"«([^»]+)»", pointer)}
    missing = [t for t in sorted(titles) if not any(t in heading for heading in headings(name))]
    assert not missing, f"{name} has no heading with {missing}"
