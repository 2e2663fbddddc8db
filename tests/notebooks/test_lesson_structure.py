"""Every notebook is a lesson a learner can follow: objectives and time first, a prediction to
make before an instructive cell (answer revealed after it), a summary and a checked quiz at
the end, markdown cells short enough to read; a core path (01-03) and deep dives with honest
times, the same in each notebook's first cell, the course map of notebook 01 and the README.

Times: each notebook's first cell states its class part (a core notebook) or its reading (a
deep dive) and, when it has one, its lab (the graded exercises to write, or notebook 06's
optional ones), computed by rule in tools/clock.py at a novice's pace, not guessed and not
timed with a stopwatch (the rules are in its docstring and in PROFESORADO.md, «Cómo se
calculan los tiempos»). The class or reading is checked here, within 10 %; the lab, the core
totals and the README's course map in test_lesson_clock.py, which needs the reference
solutions.
"""

from __future__ import annotations

import importlib.util
import json
import re

import nbformat
import pytest
from notebook_helpers import (
    CHECK_TAG,
    CHECKED_OUTPUTS,
    CLOCK,
    CORE,
    GRADED,
    NOTEBOOKS,
    REPO,
    close_enough,
    header,
    import_mcp_ui,
    read,
)

from course_notebooks import lesson_names

VISIBLE_LIMIT = 1200   # characters of a markdown cell outside its <details> blocks
DETAILS_LIMIT = 1600   # characters of one <details> block
CELL_LIMIT = 1500      # characters of a whole markdown cell, <details> blocks included
DETAILS = re.compile(r"<details>.*?</details>", re.S)
PREDICT = "🔮 **Predice antes de ejecutar.**"
REVEAL = "<details><summary>Comprueba tu predicción</summary>"
PROBE = REPO / "tests" / "lite" / "probe" / "lite_probe.ipynb"
STRIP_TOOL = REPO / "tools" / "strip_outputs.py"

# The exercises each notebook's lab holds, as its header names them (exercise 1, answered with
# clicks, is reading; exercise 5, written prose, is in notebook 03 with exercise 3; notebook
# 06's lab is optional, graded apart: exercise 3B's 2026-07-28 part and the challenge).
LAB_EXERCISES = {"01": "ejercicio 4", "02": "ejercicio 2", "03": "ejercicios 3A, 3B y 5",
                 "06": "ejercicio 3B (parte opcional) y reto (opcional)"}
quiz_ids = CLOCK.quiz_ids   # the ids of the `ui.quiz("…")` calls in a cell's source


def quiz_questions(name: str, quiz_id: str | None = None) -> list[tuple]:
    """The notebook's closing quiz (or the quiz `quiz_id`), from the UI package:
    (question, [option texts], index of the right one, [each option's explanation])."""
    if quiz_id is None:
        cell = read(name).cells[-1]
        assert cell.cell_type == "code" and "ui.quiz(" in cell.source, f"{name}: last cell"
        (quiz_id,) = quiz_ids(cell.source)
    quiz = import_mcp_ui().recap.load_quiz(quiz_id)
    return [(q.question, [o.text for o in q.options], q.right, [o.why for o in q.options])
            for q in quiz.questions]


# -- every notebook -------------------------------------------------------------------------
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_opens_with_title_time_kind_and_numbered_objectives(name):
    match = header(name)
    assert match[1] == match[2] == name[1]
    assert match[3] == ("núcleo" if name in CORE else "para profundizar")
    said = "clase" if name in CORE else "lectura"  # a core notebook has a class part and a lab
    assert f"· {said}: unos {match[4]} minutos" in " ".join(read(name).cells[0].source.split())
    objectives = read(name).cells[0].source.split("**Al terminar este cuaderno", 1)
    assert len(objectives) == 2, f"{name}: no objectives"
    assert len(re.findall(r"^\d\. \S", objectives[1], re.M)) >= 2


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_first_code_cell_is_the_jupyterlite_cell_and_the_first_cell_explains_it(name):
    probe = json.loads(PROBE.read_text(encoding="utf-8"))
    expected = "".join(next(c for c in probe["cells"] if c["cell_type"] == "code")["source"])
    cells = read(name).cells
    first_code = next(c for c in cells if c.cell_type == "code")
    assert first_code.source == expected
    assert cells[1] is first_code, f"{name}: the JupyterLite cell comes right after the title"
    assert "JupyterLite" in cells[0].source


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_prediction_comes_before_a_cell_and_its_answer_after_it(name):
    cells = read(name).cells
    prompts = [i for i, c in enumerate(cells) if c.cell_type == "markdown"
               and PREDICT in c.source]
    assert prompts, f"{name}: no «Predice antes de ejecutar» prompt"
    for start in prompts:
        after = cells[start + 1:]
        code = next((i for i, c in enumerate(after) if c.cell_type == "code"), None)
        assert code is not None, f"{name}: prompt in cell {start} has no cell to run after it"
        reveal = next((i for i, c in enumerate(after) if c.cell_type == "markdown"
                       and REVEAL in c.source), None)
        assert reveal is not None and reveal > code, \
            f"{name}: the answer to the prompt in cell {start} must come after the run"
        assert not any(PREDICT in c.source for c in after[:reveal]), \
            f"{name}: another prompt before the answer to cell {start}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_ends_with_a_summary_then_the_quiz(name):
    cells = read(name).cells
    summary = [i for i, c in enumerate(cells) if c.cell_type == "markdown"
               and "## Resumen" in c.source]
    assert len(summary) == 1, f"{name}: one summary"
    last_code = max(i for i, c in enumerate(cells[:-1]) if c.cell_type == "code")
    assert last_code < summary[0] == len(cells) - 2, \
        f"{name}: summary after every cell but the quiz, right before it"
    bullets = re.findall(r"^\* \S", cells[summary[0]].source.split("## Resumen")[1], re.M)
    assert 3 <= len(bullets) <= 7


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_quiz_has_three_to_five_well_formed_questions_with_explanations(name):
    assert_well_formed(name, quiz_questions(name))


SECTION_QUIZZES = [(name, quiz_id) for name in NOTEBOOKS for cell in read(name).cells[:-1]
                   if cell.cell_type == "code" and "ui.quiz(" in cell.source
                   for quiz_id in quiz_ids(cell.source)
                   if import_mcp_ui().recap.load_quiz(quiz_id).kind == "final"]


def test_notebook_six_asks_one_question_per_attack_after_the_attacks():
    assert ("06_revision_2026.ipynb", "06-ataques") in SECTION_QUIZZES


@pytest.mark.parametrize("name,quiz_id", SECTION_QUIZZES)
def test_a_quiz_inside_a_notebook_is_as_well_formed_as_its_closing_one(name, quiz_id):
    assert_well_formed(f"{name} {quiz_id}", quiz_questions(name, quiz_id))


def assert_well_formed(name, questions):
    assert 3 <= len(questions) <= 5
    for question, options, right, whys in questions:
        assert question.strip() and question.rstrip().endswith("?"), question
        assert 2 <= len(options) <= 4 and len(set(options)) == len(options), question
        assert all(o.strip() for o in options)
        assert isinstance(right, int) and 0 <= right < len(options), question
        assert len(whys[right]) >= 60, f"{question}: explain the answer"
        assert all(len(why) >= 40 for why in whys), f"{question}: every option says why"
    assert len({right for _, _, right, _ in questions}) >= 2, \
        f"{name}: the right answer is always in the same place"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_quiz_keys_are_not_in_the_notebook_but_in_the_ui_package(name):
    nb = read(name)
    assert quiz_ids(nb.cells[-1].source) == [name[:2]], f"{name}: ends with ui.quiz(\"{name[:2]}\")"
    for cell in nb.cells:
        if cell.cell_type == "code" and "ui.quiz(" in cell.source:
            assert all(isinstance(i, str) for i in quiz_ids(cell.source)), \
                f"{name}: a quiz is named by its id, its questions live in mcp_ui/quizzes/"


def test_a_pre_check_says_what_to_read_after_every_answer():
    """The pre-check of notebook 1 (its cell and its three questions come with the content
    phase of issue 20; the quiz file and the way it is drawn are here)."""
    quiz = import_mcp_ui().recap.load_quiz("01-previo")
    assert quiz.kind == "precheck" and 1 <= len(quiz.questions) <= 3 and quiz.intro
    for question in quiz.questions:
        assert question.question.rstrip().endswith("?")
        assert all(option.read or question.read for option in question.options), \
            f"{question.question}: every answer says what to read"
        assert len({option.why for option in question.options}) == len(question.options), \
            f"{question.question}: each option has its own explanation"


def strip_tool():
    spec = importlib.util.spec_from_file_location("strip_outputs", STRIP_TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_saved_outputs_answer_no_prediction_check_or_quiz(name):
    tool, nb = strip_tool(), read(name)
    kept = [i for i, c in enumerate(nb.cells) if tool.KEEP_TAG in c.metadata.get("tags", [])]
    assert [(i, tool.answers_something(nb, i)) for i in kept
            if tool.answers_something(nb, i)] == []
    assert not tool.strip(nb), f"{name}: store it as `tools/strip_outputs.py` leaves it"


def test_a_kept_output_may_not_be_a_check_a_quiz_or_a_predicted_run():
    tool = strip_tool()
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("lab.show()"),
        nbformat.v4.new_markdown_cell(PREDICT + " ¿Qué pasará?"),
        nbformat.v4.new_code_cell("await conn.call('notes_list')"),
        nbformat.v4.new_markdown_cell(REVEAL + " Nada.</details>"),
        nbformat.v4.new_code_cell('ui.check(True, "bien", "mal")'),
        nbformat.v4.new_code_cell('ui.quiz("02")'),
        nbformat.v4.new_code_cell("lab.check_url_flow(conn)"),
    ])
    assert tool.answers_something(nb, 0) is None
    assert "prediction" in tool.answers_something(nb, 2)
    assert all("checks or quizzes" in tool.answers_something(nb, i) for i in (4, 5, 6))
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", text="x\n")]
    nb.cells[0].metadata["tags"] = [tool.KEEP_TAG]
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="y\n")]
    assert tool.strip(nb) and nb.cells[0].outputs and not nb.cells[2].outputs


def test_every_checked_cell_has_its_expected_output_recorded_outside_the_notebook():
    recorded = json.loads(CHECKED_OUTPUTS.read_text(encoding="utf-8"))
    for name in NOTEBOOKS:
        tagged = {c.id for c in read(name).cells if CHECK_TAG in c.metadata.get("tags", [])}
        assert set(recorded.get(name, {})) == tagged, name
        assert all(entry["outputs"] for entry in recorded.get(name, {}).values()), name


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_markdown_cells_are_short_enough_to_read(name):
    for index, cell in enumerate(read(name).cells):
        if cell.cell_type != "markdown":
            continue
        visible = DETAILS.sub("", cell.source)
        assert len(visible) <= VISIBLE_LIMIT, f"{name} cell {index}: {len(visible)} characters"
        for block in DETAILS.findall(cell.source):
            assert len(block) <= DETAILS_LIMIT, f"{name} cell {index}: a long <details>"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_markdown_cell_is_over_1500_characters(name):
    long = {index: len(cell.source) for index, cell in enumerate(read(name).cells)
            if cell.cell_type == "markdown" and len(cell.source) > CELL_LIMIT}
    assert long == {}, f"{name}: cells over {CELL_LIMIT} characters (index: length)"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stated_reading_time_is_what_the_rule_computes(name, tmp_path):
    course = tmp_path / name  # the course's notebook (not a learner's edits: read())
    course.write_text(nbformat.writes(read(name)), encoding="utf-8")
    stated, estimate = int(header(name)[4]), CLOCK.reading_minutes(course)
    assert close_enough(stated, estimate), (stated, round(estimate, 1))


# -- the course -----------------------------------------------------------------------------
def test_the_five_exercises_are_in_the_core_and_the_challenge_is_a_deep_dive():
    said = {n[:2]: (header(n)[5] or "") for n in NOTEBOOKS}
    assert {k: v for k, v in said.items() if v} == LAB_EXERCISES
    assert set(GRADED.values()) <= set(CORE)
    assert "**ejercicio 1**" in read("02_formularios.ipynb").cells[0].source, \
        "exercise 1, answered with clicks, is part of notebook 02's reading"


def test_notebook_five_says_how_it_runs_in_jupyterlite_and_why_it_differs():
    first = read("05_sdk_oficial.ipynb").cells[0].source
    assert "En JupyterLite" in first and "en memoria" in first
    assert "procesos" in first and "stdio" in first
    code = [c.source for c in read("05_sdk_oficial.ipynb").cells if c.cell_type == "code"]
    assert any("await ui.install_sdk()" in c for c in code)
    assert not any("stdio_server()" in c for c in code), "lab.sdk_target() runs in both"


def test_the_first_notebook_opens_with_where_roots_stand_in_each_revision():
    cells = [c.source for c in read("01_roots.ipynb").cells if c.cell_type == "markdown"]
    status = next(i for i, s in enumerate(cells) if "## Las roots hoy" in s)
    lesson = next(i for i, s in enumerate(cells) if "## El problema" in s)
    assert status == lesson - 1, "the status of roots comes right before the lesson starts"
    assert status <= 4, "after the header, the course map and «Antes de empezar» only"
    text = cells[status]
    for fact in ("SEP-2577", "2027-07-28", "SHOULD NOT", "parámetros de herramienta",
                 "URIs de recursos", "configuración del servidor", "orientación"):
        assert fact in text, fact


def test_lessons_folder_holds_only_the_notebooks_we_check():
    assert lesson_names() == list(NOTEBOOKS)
