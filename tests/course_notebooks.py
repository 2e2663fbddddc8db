"""The lesson notebooks the tests read: the course's, never a learner's workspace.

In the student edition lessons/*.ipynb are also where a learner works: JupyterLab autosaves
their outputs, the solutions they type into starter cells and their scratch cells and
notebooks there. The tests check the course, so in the student edition they read each lesson
notebook as the last commit has it (`git show HEAD:lessons/…`), and `make test` never fails on a
learner's own edits (its lint does the same: the Makefile's `lint-course`). In the instructors'
source (editions/release/build.py is there) the notebooks are the authors' working copy and are
read as they are, so an author's change is tested before it is committed.

    lesson_names()            # the lesson notebooks' file names, sorted
    notebook_text(name)       # one of them, as text
    write_lessons(folder)     # all of them into `folder` (a private copy of the course)

Each takes `repo=` (default: this repository). Deliberate simplifications: outside a git
checkout (a downloaded archive) the files are read as they are; a lesson notebook a learner
deleted is still read from the commit.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _git(repo: Path, *args: str) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def committed(repo: Path = REPO) -> bool:
    """Are the lessons read from the last commit (a clone of the student edition)?"""
    instructors_source = (repo / "editions" / "release" / "build.py").exists()
    return not instructors_source and _git(repo, "rev-parse", "--verify", "-q", "HEAD") \
        is not None


def lesson_names(repo: Path = REPO) -> list[str]:
    """The lesson notebooks: what git tracks in lessons/ (a learner's new notebook is not
    one), or the files there when they are read as they are."""
    if committed(repo):
        listed = _git(repo, "ls-tree", "--name-only", "HEAD", "lessons/") or ""
        return sorted(Path(p).name for p in listed.split() if p.endswith(".ipynb"))
    return sorted(p.name for p in (repo / "lessons").glob("*.ipynb"))


def notebook_text(name: str, repo: Path = REPO) -> str:
    """The lesson notebook `name` (e.g. "01_roots.ipynb") as the tests must see it."""
    if committed(repo):
        text = _git(repo, "show", f"HEAD:lessons/{name}")
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
