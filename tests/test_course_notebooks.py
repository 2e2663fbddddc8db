"""A learner's own edits to the lesson notebooks never make `make test` fail: in a clone of the
student edition the tests read (tests/course_notebooks.py) and the lint checks
(tools/lint_course.py) each lesson notebook as the last commit has it; in the instructors'
source, as it is (the authors' working copy)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
import pytest

import course_notebooks
from learner_clone import commit_all, git, notebook, write

REPO = Path(__file__).resolve().parent.parent
lint_course = course_notebooks.lint_course  # tools/lint_course.py, loaded once


@pytest.fixture
def clone(tmp_path):
    """A learner's clone of the student edition after a session in JupyterLab."""
    folder = tmp_path / "curso"
    write(folder / "ruff.toml", (REPO / "ruff.toml").read_text())
    write(folder / "lessons" / "01_roots.ipynb", notebook("import os\n\nprint(os.sep)"))
    commit_all(folder)
    # the learner's scratch cell (unsorted imports, as in the newcomer report) and notebook
    (folder / "lessons" / "01_roots.ipynb").write_text(
        notebook("import os\n\nprint(os.sep)", "import sys\nimport asyncio\nprint(sys, asyncio)"))
    (folder / "lessons" / "Untitled.ipynb").write_text(notebook("import sys\nimport os"))
    return folder


def test_in_a_learners_clone_the_tests_read_the_committed_lessons(clone):
    assert course_notebooks.lesson_names(clone) == ["01_roots.ipynb"]
    cells = nbformat.reads(course_notebooks.notebook_text("01_roots.ipynb", clone), 4).cells
    assert [c.source for c in cells] == ["import os\n\nprint(os.sep)"]


def test_in_a_learners_clone_the_lint_checks_the_committed_lessons(clone):
    plain = subprocess.run([lint_course.ruff(), "check", "--no-cache", "."], cwd=clone,
                           capture_output=True, text=True)
    assert plain.returncode == 1 and "I001" in plain.stdout  # what failed make test before
    assert lint_course.lint(clone) == 0


def test_a_committed_lesson_that_breaks_the_lint_still_fails_it(clone):
    (clone / "lessons" / "01_roots.ipynb").write_text(notebook("import sys\nimport os"))
    git(clone, "commit", "-q", "-am", "roto")
    assert lint_course.lint(clone) == 1


def test_in_the_instructors_source_the_working_notebooks_are_read_and_linted(clone):
    (clone / "editions" / "release").mkdir(parents=True)
    (clone / "editions" / "release" / "build.py").write_text("")
    assert course_notebooks.lesson_names(clone) == ["01_roots.ipynb", "Untitled.ipynb"]
    assert "asyncio" in course_notebooks.notebook_text("01_roots.ipynb", clone)
    assert lint_course.lint(clone) == 1


def test_make_test_lints_with_the_course_rule():
    makefile = (REPO / "Makefile").read_text()
    test_line = next(line for line in makefile.splitlines() if line.startswith("test:"))
    assert "lint-course" in test_line.split()
    assert "tools/lint_course.py" in makefile
