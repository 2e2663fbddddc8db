"""The exercise contract as the notebooks present it: starter cells, "check my work" cells.

A graded exercise (and the optional challenge, reto.py in notebook 6) is a
`%%writefile soluciones/ejercicioN.py` cell (the starter, run inside
the server, never in the kernel) and a later `ui.revisar("ejercicioN")` cell that runs the
grader (`python -m grader soluciones/ --only ejercicioN --format json`) and shows its verdict.
An optional part of an exercise (3B at 2026-07-28, notebook 6) is written on that exercise's
starter, after its `OPTIONAL_MARK`, and has a `ui.revisar` cell of its own.
"""

from __future__ import annotations

import re

import pytest
from notebook_helpers import (
    CHALLENGE,
    GRADED,
    NOTEBOOKS,
    OPTIONAL_PARTS,
    WRITEFILE,
    code_cells,
    import_mcp_ui,
    read,
)

from grader.exercises import OPTIONAL_MARK

ui = import_mcp_ui()
EVERY = {**GRADED, **CHALLENGE}


@pytest.fixture(scope="module")
def starters(tmp_path_factory):
    """The starter cells of the notebooks, written as a learner's soluciones/ folder."""
    folder = tmp_path_factory.mktemp("alumno") / "soluciones"
    folder.mkdir()
    for name in NOTEBOOKS:
        for cell in code_cells(name):
            first, _, body = cell.source.partition("\n")
            match = WRITEFILE.match(first)
            if match:
                (folder / f"{match[1]}.py").write_text(body + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("exercise", sorted(EVERY))
def test_graded_exercise_has_one_starter_cell_and_a_later_check_cell(exercise):
    cells = code_cells(EVERY[exercise])
    starts = [i for i, c in enumerate(cells)
              if WRITEFILE.match(c.source.partition("\n")[0] or "")
              and exercise in c.source.partition("\n")[0]]
    checks = [i for i, c in enumerate(cells) if f'ui.revisar("{exercise}")' in c.source]
    assert len(starts) == 1, f"{exercise}: starter cells at {starts}"
    assert checks and min(checks) > starts[0], f"{exercise}: no revisar cell after the starter"
    others = [n for n in NOTEBOOKS if n != EVERY[exercise]
              for c in code_cells(n) if f"soluciones/{exercise}.py" in c.source
              and c.source.startswith("%%writefile")]
    assert others == [], f"{exercise} has starter cells in other notebooks too: {others}"


@pytest.mark.parametrize("exercise", sorted(EVERY))
def test_starter_cell_uses_the_extension_api_and_todo_comments_in_spanish(exercise, starters):
    text = (starters / f"{exercise}.py").read_text(encoding="utf-8")
    assert "from extension import Extension" in text
    assert "extension = Extension()" in text
    assert re.search(r"# TODO( \d)?: [a-záéíóúñ]", text, re.IGNORECASE), text
    hook = {"ejercicio2": "@extension.tool(", "ejercicio3a": "@extension.url_mode_guard",
            "ejercicio3b": "@extension.page_route(", "ejercicio4": "@extension.on_roots_changed",
            "reto": "@extension.request_state"}[exercise]
    assert hook in text


@pytest.mark.parametrize("part", sorted(OPTIONAL_PARTS))
def test_an_optional_part_is_written_on_its_exercises_starter_and_checked_apart(part, starters):
    notebook, exercise = OPTIONAL_PARTS[part]
    text = (starters / f"{exercise}.py").read_text(encoding="utf-8")
    assert text.count(OPTIONAL_MARK) == 1, "the starter says where the optional part begins"
    checks = [c.source for c in code_cells(notebook) if f'ui.revisar("{part}")' in c.source]
    assert len(checks) == 1, f"{part}: one revisar cell in {notebook}"
    assert GRADED[exercise] != notebook, "written on the core starter, checked in a later notebook"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("exercise", sorted({**EVERY, **OPTIONAL_PARTS}))
def test_starter_scores_zero_through_revisar(exercise, starters):
    review = ui.revisar(exercise, folder=starters)
    assert review.problem is None, review.problem
    assert review.max_score and review.max_score > 0
    assert review.score == 0, review.summary()
    graded = [t for t in review.tests if t["max_score"]]  # not the zero-point «lo imprescindible»
    assert graded and all(t["status"] != "passed" for t in graded)


def test_revisar_without_a_solution_file_says_which_cell_to_run(tmp_path):
    review = ui.revisar("ejercicio3b", folder=tmp_path)
    assert review.score is None
    assert "%%writefile" in review.problem and "ejercicio3b.py" in review.problem
    part = ui.revisar("ejercicio3b_2026", folder=tmp_path)  # an optional part: its file's name
    assert "soluciones/ejercicio3b.py" in part.problem


def test_revisar_renders_every_test_with_its_spanish_feedback_escaped():
    line = ('{"submission": "soluciones", "score": 1, "max_score": 3, "problems": [], "tests": ['
            '{"name": "pide confirmación", "score": 1, "max_score": 1, "status": "passed",'
            ' "output": "ok"}, {"name": "archiva la elegida", "score": 0, "max_score": 2,'
            ' "status": "failed", "output": "✘ archivó <note-3> en vez de note-7"}]}')
    review = ui.Review.from_output("ejercicio2", "ruido previo\n" + line + "\n")
    assert (review.score, review.max_score) == (1, 3)
    page = review.to_html()
    assert "1 de 3 puntos" in page
    assert "pide confirmación" in page and "archiva la elegida" in page
    assert "&lt;note-3&gt;" in page and "<note-3>" not in page


def test_no_notebook_contains_a_solution_file_other_than_the_starters():
    writes = [(n, c.source.partition("\n")[0]) for n in NOTEBOOKS for c in read(n).cells
              if c.cell_type == "code" and c.source.startswith("%%writefile")]
    targets = sorted(first.split(None, 1)[1] for _, first in writes
                     if "soluciones/" in first)
    assert targets == ["soluciones/ejercicio2.py", "soluciones/ejercicio3a.py",
                       "soluciones/ejercicio3b.py", "soluciones/ejercicio4.py",
                       "soluciones/ejercicio5.md", "soluciones/reto.py"]


def test_exercise_five_is_handed_in_as_a_three_part_template_its_section_asks_for():
    """Exercise 5 (notebook 3) is read, not run: its answer is soluciones/ejercicio5.md, written
    by a `%%writefile` cell with one part per point of its statement, and a person grades it."""
    cells = read("03_modo_url.ipynb").cells
    (index,) = [i for i, c in enumerate(cells) if c.cell_type == "code"
                and c.source.startswith("%%writefile soluciones/ejercicio5.md")]
    template = cells[index].source.split("\n", 1)[1]
    assert re.findall(r"^(\d)\. ", template, re.M) == ["1", "2", "3"]
    assert "fecha" in template and "«" in template  # a quoted sentence, with its date
    statement = "\n".join(c.source for c in cells[:index] if c.cell_type == "markdown")
    section = statement.rsplit("## ", 1)[1]
    assert section.startswith("7. Ejercicio 5")
    links = re.findall(r"\(https://github\.com/modelcontextprotocol/modelcontextprotocol/"
                       r"(?:issues|pull)/(\d+)\)", section)
    assert {"1819", "2891"} <= set(links) and len(links) >= 4
    assert "soluciones/ejercicio5.md" in section and "ui.revisar" in section
