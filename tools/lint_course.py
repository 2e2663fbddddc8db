"""What `make test` lints: the course, never a learner's own notebook edits.

    .venv/bin/python tools/lint_course.py        (make test runs it; make lint lints it all)

`ruff check` on every file as it is, with one exception: in a clone of the student edition,
lessons/*.ipynb are also where a learner works (JupyterLab autosaves the cells they type
there), so each lesson notebook is linted as the last commit has it (`git show HEAD:…` on
ruff's stdin), and a learner's scratch cell or new notebook never makes `make test` fail. In
the instructors' source (editions/release/build.py is there) the notebooks are the authors'
working copy and are linted as they are, like everything else. tests/course_notebooks.py
applies the same rule to what the tests read (it uses this module's functions). It also runs
tools/check_hints.py, as `make lint` does: the learner's API keeps its type hints.

Deliberate simplifications: outside a git checkout everything is linted as it is; ruff is the
one next to this Python (the course's .venv), else the one on PATH.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def learners_workspace(repo: Path) -> bool:
    """Is lessons/ a learner's workspace (a git clone of the student edition)?"""
    return not (repo / "editions" / "release" / "build.py").exists() \
        and git(repo, "rev-parse", "--verify", "-q", "HEAD") is not None


def committed_notebooks(repo: Path) -> list[str]:
    """The lesson notebooks the last commit has (lessons/NN_name.ipynb paths)."""
    listed = git(repo, "ls-tree", "--name-only", "HEAD", "lessons/") or ""
    return [path for path in listed.split() if path.endswith(".ipynb")]


def ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else (shutil.which("ruff") or "ruff")


def lint(repo: Path = REPO) -> int:
    """Exit status of ruff's lint: 0 when clean."""
    command = [ruff(), "check", "--no-cache"]
    if not learners_workspace(repo):
        return subprocess.run([*command, "."], cwd=repo).returncode
    status = subprocess.run([*command, "--extend-exclude", "lessons/*.ipynb", "."],
                            cwd=repo).returncode
    for notebook in committed_notebooks(repo):
        committed = git(repo, "show", f"HEAD:{notebook}") or ""
        status |= subprocess.run([*command, "--quiet", "--stdin-filename", notebook, "-"],
                                 cwd=repo, input=committed, text=True).returncode
    return status


def hints(repo: Path = REPO) -> int:
    """Exit status of tools/check_hints.py: 0 when the learner's API keeps its type hints."""
    return subprocess.run([sys.executable, str(repo / "tools" / "check_hints.py")],
                          cwd=repo).returncode


if __name__ == "__main__":
    sys.exit(lint() | hints())
