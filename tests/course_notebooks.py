"""The lesson notebooks the tests read: the course's, never a learner's workspace.

In the student edition lessons/*.ipynb are also where a learner works: JupyterLab autosaves
their outputs, the solutions they type into starter cells and their scratch cells and
notebooks there. The tests check the course, so in the student edition they read each lesson
notebook as the last commit has it (`git show HEAD:lessons/…`), and `make test` never fails on a
learner's own edits. The rule, and when it applies, is tools/lint_course.py's (the lint that
`make test` runs): one home for both. In the instructors' source the notebooks are the authors'
working copy and are read as they are, so an author's change is tested before it is committed.

    lesson_names()            # the lesson notebooks' file names, sorted
    notebook_text(name)       # one of them, as text
    write_lessons(folder)     # all of them into `folder` (a private copy of the course)
    starter_files()           # {"ejercicio2.py": body, ...}: what their starter cells write

Each takes `repo=` (default: this repository). Deliberate simplifications: outside a git
checkout (a downloaded archive) the files are read as they are; a lesson notebook a learner
deleted is still read from the commit.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("lint_course", REPO / "tools" / "lint_course.py")
lint_course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lint_course)
WRITEFILE = re.compile(r"^%%writefile soluciones/(\S+\.py)\s*$")


def lesson_names(repo: Path = REPO) -> list[str]:
    """The lesson notebooks: what git tracks in lessons/ (a learner's new notebook is not
    one), or the files there when they are read as they are."""
    if lint_course.learners_workspace(repo):
        return sorted(Path(p).name for p in lint_course.committed_notebooks(repo))
    # (not a hidden file: another test's scratch copy, tests/notebooks/test_lesson_notebooks)
    return sorted(p.name for p in (repo / "lessons").glob("*.ipynb")
                  if not p.name.startswith("."))


def notebook_text(name: str, repo: Path = REPO) -> str:
    """The lesson notebook `name` (e.g. "01_roots.ipynb") as the tests must see it."""
    if lint_course.learners_workspace(repo):
        text = lint_course.git(repo, "show", f"HEAD:lessons/{name}")
        if text is not None:
            return text
    return (repo / "lessons" / name).read_text(encoding="utf-8")


def write_lessons(folder: Path, repo: Path = REPO) -> None:
    """Put every lesson notebook, as the tests see it, into `folder` (replacing the copies a
    plain file copy of lessons/ brought along, and dropping a learner's extra notebooks)."""
    names = lesson_names(repo)
    for extra in Path(folder).glob("*.ipynb"):
        if extra.name not in names:
            extra.unlink()
    for name in names:
        (Path(folder) / name).write_text(notebook_text(name, repo), encoding="utf-8")


def starter_files(repo: Path = REPO) -> dict[str, str]:
    """{file name: text} that the lessons' `%%writefile soluciones/…` cells write, as a learner
    who ran them without changing them has it."""
    found = {}
    for name in lesson_names(repo):
        for cell in json.loads(notebook_text(name, repo))["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            first, _, body = source.partition("\n")
            match = WRITEFILE.match(first) if cell["cell_type"] == "code" else None
            if match:
                found[match[1]] = body + "\n"
    return found
