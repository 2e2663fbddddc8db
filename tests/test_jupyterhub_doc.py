"""docs/jupyterhub.md's commands, run as written (every ```bash block, in order), in a clone of
the course, with test folders instead of /home (the blocks read HOMES, ALUMNOS, CURSO and
CURSO_NBGRADER from the environment, as the page says): the environment installs, the course
is handed out to a learner who is a real system user, and both ways of collecting give that
learner a row in the gradebook."""

from __future__ import annotations

import csv
import io
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_notebooks import starter_files

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "jupyterhub.md"
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_the_four_commands_it_promises():
    assert [b.split()[0] for b in blocks()] == ["pip", "CURSO=${CURSO:-https://example.org/"
                                                "roots-y-elicitacion.git}", "python", "python"]


@pytest.fixture
def learner():
    """A system user standing for one learner of the hub (removed afterwards)."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        reason = "handing the course out chowns it to a learner: needs root and useradd"
        if IN_CI:
            pytest.fail(f"CI=true, so this is a failure, not a skip: {reason}")
        pytest.skip(reason)
    name = "hubdoc-" + secrets.token_hex(3)
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    name], check=True, capture_output=True)
    yield name
    subprocess.run(["userdel", name], capture_output=True)


def run(block: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=cwd,
                          env={**os.environ, "PATH": path, **env}, capture_output=True,
                          text=True, timeout=600)
    return done


def gradebook(folder: Path) -> dict:
    text = (folder / "notas.csv").read_text(encoding="utf-8")
    return {row["submission"]: row for row in csv.DictReader(io.StringIO(text))}


def test_the_hub_guides_commands_install_hand_out_and_collect_as_written(tmp_path, learner):
    install, hand_out, collect, nbgrader = blocks()
    course = tmp_path / "curso-profe"
    subprocess.run(["git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(course)],
                   check=True)
    assert run(install, course).returncode == 0

    homes = tmp_path / "home"
    (homes / learner).mkdir(parents=True)
    shutil.chown(homes / learner, learner, learner)
    done = run(hand_out, course, CURSO=str(course), HOMES=str(homes), ALUMNOS=learner)
    assert done.returncode == 0, done.stderr
    lessons = homes / learner / "curso" / "lessons"
    assert (lessons / "01_roots.ipynb").is_file()
    assert (homes / learner / "curso").stat().st_uid == (homes / learner).stat().st_uid
    (lessons / "soluciones").mkdir()  # what the learner's starter cells write
    for name, text in starter_files().items():
        (lessons / "soluciones" / name).write_text(text, encoding="utf-8")
    for path in [lessons / "soluciones", *(lessons / "soluciones").iterdir()]:
        shutil.chown(path, learner, learner)

    done = run(collect, course, HOMES=str(homes))
    assert done.returncode == 1, done.stderr  # graded: starters do not get full marks
    rows = gradebook(course / "notas-clase")
    assert list(rows) == [learner] and rows[learner]["problems"] == ""

    submitted = tmp_path / "curso-nbgrader" / "submitted" / learner / "leccion12"
    shutil.copytree(lessons, submitted)
    done = run(nbgrader, course, CURSO_NBGRADER=str(tmp_path / "curso-nbgrader"))
    assert done.returncode == 1, done.stderr
    assert list(gradebook(course / "notas-nbgrader")) == [learner]
