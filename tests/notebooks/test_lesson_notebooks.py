"""Every lesson notebook runs top to bottom unattended, under nbval, and cleans up after itself.

Each notebook runs in its own `pytest --nbval-lax` process with LESSON_USER=scripted (the
scripted user answers every form and consent) and a private TMPDIR. nbval fails on any cell
that raises, and the notebooks' own checks raise in that mode (`ui.check`): exactly the chosen
note deleted, no write outside the roots, the URL flow completed with its notification,
tampered requestState refused... Cells tagged `nbval-check-output` must also print exactly
what tests/notebooks/checked_outputs.json holds for them (the notebooks themselves are stored
without outputs; re-record with tests/notebooks/record_checked_outputs.py): nbval runs a copy
of the notebook with those outputs put back.
"""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest
from notebook_helpers import CHECK_TAG, LESSONS, NOTEBOOKS, REPO, read, with_checked_outputs

from course_notebooks import lesson_names


def run_nbval(notebook, tmp_path, extra_env=None):
    """nbval on `notebook` (a path, or an nbformat node written next to the lessons for the
    run: the kernel works in lessons/)."""
    if not isinstance(notebook, os.PathLike):
        copy = LESSONS / f".tmp-nbval-{os.getpid()}-{tmp_path.name}.ipynb"
        nbformat.write(notebook, copy)
        try:
            return run_nbval(copy, tmp_path, extra_env)
        finally:
            copy.unlink(missing_ok=True)
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "LESSON_USER": "scripted", "TMPDIR": str(scratch), **(extra_env or {})}
    env.pop("LESSON_KEEP_LAB", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)  # nbval is a plugin: never run without it
    argv = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
            "--nbval-cell-timeout=300", "-p", "no:cacheprovider", "-q", "-c", os.devnull,
            "--rootdir", str(tmp_path), str(notebook)]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900), scratch


def untracked_in_lessons() -> set[str]:
    """Files under lessons/ that git would show as new (ignored ones, like soluciones/, not)."""
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--",
                          "lessons"], cwd=REPO, capture_output=True, text=True, check=True)
    return {line[3:] for line in out.stdout.splitlines() if line.startswith("??")}


def test_the_lesson_has_one_notebook_per_part_in_order():
    assert lesson_names() == list(NOTEBOOKS)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_unattended_under_nbval_and_leaves_nothing_behind(name, tmp_path):
    before = untracked_in_lessons()
    result, scratch = run_nbval(with_checked_outputs(name), tmp_path)
    report = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    cells = sum(1 for c in read(name).cells if c.cell_type == "code")
    assert f"{cells} passed" in result.stdout, report
    leftovers = sorted(p.name for p in scratch.iterdir() if p.name.startswith("notas-leccion-"))
    assert leftovers == [], f"the notebook left practice folders behind: {leftovers}"
    assert untracked_in_lessons() <= before, "the notebook left new files in the repository"


def test_a_checked_cell_whose_output_changed_fails_nbval(tmp_path):
    nb = with_checked_outputs("01_roots.ipynb")
    checked = next(c for c in nb.cells if CHECK_TAG in c.metadata.get("tags", [])
                   and c.outputs and c.outputs[0].output_type == "stream")
    checked.outputs[0].text = "salida que el cuaderno ya no imprime\n"
    result, _ = run_nbval(nb, tmp_path)
    assert result.returncode != 0
    assert "1 failed" in result.stdout, result.stdout[-3000:]
