"""A learner's clone in miniature, for the tests of what must ignore a learner's workspace
(tests/test_course_notebooks.py, tests/lite/test_lite_stages_the_committed_course.py): a few
files committed with git, then edited the way a session in JupyterLab leaves them.

Deliberate simplifications: notebooks hold code cells only; git runs with a throw-away
identity and no signing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat


def notebook(*sources: str, outputs: bool = False) -> str:
    """A notebook's text with these code cells (with `outputs`, each ran and printed)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    if outputs:
        for number, cell in enumerate(nb.cells, 1):
            cell.execution_count = number
            cell.outputs = [nbformat.v4.new_output("stream", text="la respuesta\n")]
    return nbformat.writes(nb)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c",
                    "commit.gpgsign=false", *args], cwd=folder, check=True,
                   capture_output=True)


def commit_all(folder: Path, message: str = "curso") -> None:
    """`git init` (if needed), add everything and commit."""
    if not (folder / ".git").exists():
        git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", message)
