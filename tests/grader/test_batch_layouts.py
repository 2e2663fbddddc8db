"""`python -m grader --batch DIR` on the folders a class on a hub leaves (grader/batch.py): one
home per learner with the course somewhere inside, and nbgrader's submitted/<learner>/<assignment>/.
What is in a home is the learner's, so it is hostile: a link out of it, a FIFO, a huge folder or
an odd name never makes the grader read anything else, hang, or give anyone else's marks."""

import csv
import io
import os
import shutil
import subprocess
import sys

import pytest
from mutants import REFERENCE

from grader import batch
from grader.paths import REPO_DIR
from grading_points import FULL

SOLUTIONS = os.path.join(REFERENCE, "soluciones") if os.path.isdir(
    os.path.join(REFERENCE, "soluciones")) else REFERENCE


def grader(*args):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=REPO_DIR,
                          capture_output=True, text=True, timeout=600)


def course_in(home, solutions=SOLUTIONS, where="curso/lessons"):
    lessons = home / where
    lessons.mkdir(parents=True)
    shutil.copytree(solutions, lessons / "soluciones")
    return lessons


def gradebook(out):
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "notas.csv")
                                                                   .read_text()))}


@pytest.fixture
def homes(tmp_path):
    """A hub's /home: ana has the course in ~/curso/lessons; beto's ~/curso is a link to
    ana's; carla has a FIFO where her course would be and her real work two folders down in
    a folder with an odd name; dani has nothing."""
    root = tmp_path / "home"
    course_in(root / "ana")
    (root / "beto").mkdir(parents=True)
    os.symlink(root / "ana" / "curso", root / "beto" / "curso")
    (root / "carla").mkdir()
    os.mkfifo(root / "carla" / "curso")
    course_in(root / "carla", where="mi curso ñ\u202e/lessons")
    (root / "dani" / ".cache").mkdir(parents=True)
    return root


def test_a_hubs_homes_are_graded_one_learner_each_with_the_course_found_inside(homes, tmp_path):
    out = tmp_path / "notas"
    run = grader("--batch", str(homes), "--only", "ejercicio4", "--out", str(out))
    assert run.returncode == 1, run.stderr
    rows = gradebook(out)
    assert sorted(rows) == ["ana", "beto", "carla", "dani"]
    full = f"{FULL['ejercicio4']:g}"
    assert rows["ana"]["score"] == full and rows["carla"]["score"] == full
    assert rows["beto"]["score"] == "0"  # a link to ana's work is not beto's work
    assert rows["dani"]["score"] == "0"


def test_the_search_never_follows_a_link_nor_opens_a_fifo(homes):
    found = batch.discover(str(homes))
    try:
        by_name = dict((name, path) for path, name in found.entries)
        assert by_name["beto"] == str(homes / "beto")  # nothing found: the intake says so
        assert os.listdir(by_name["carla"]) and by_name["carla"] != str(homes / "carla")
        assert os.stat(by_name["ana"]).st_mode & 0o777 == 0o755
        assert oct(os.stat(os.path.dirname(by_name["ana"])).st_mode & 0o777) == "0o700"
    finally:
        found.close()
    assert not os.path.exists(by_name["ana"])


def test_a_link_inside_the_found_course_is_reported_not_followed(tmp_path):
    root = tmp_path / "home"
    lessons = course_in(root / "eva")
    os.remove(lessons / "soluciones" / "ejercicio4.py")
    os.symlink(os.path.join(SOLUTIONS, "ejercicio4.py"), lessons / "soluciones" / "ejercicio4.py")
    found = batch.discover(str(root))
    try:
        assert any("enlace simbólico" in text for name, text in found.notes if name == "eva")
        assert "ejercicio4.py" not in os.listdir(found.entries[0][0])
    finally:
        found.close()


def test_nbgraders_submitted_folder_gives_one_submission_per_learner(tmp_path):
    course = tmp_path / "curso-nbgrader"
    course_in(course / "submitted" / "ana", where="leccion12")
    course_in(course / "submitted" / "luis", where="leccion12")
    os.remove(course / "submitted" / "luis" / "leccion12" / "soluciones" / "ejercicio4.py")
    course_in(course / "submitted" / "mar", where="leccion11")
    course_in(course / "submitted" / "mar", where="leccion12")
    (course / "source").mkdir()  # nbgrader's other folders are not submissions
    out = tmp_path / "notas"
    run = grader("--batch", str(course), "--only", "ejercicio4", "--out", str(out))
    assert run.returncode == 1, run.stderr
    rows = gradebook(out)
    assert sorted(rows) == ["ana", "luis", "mar-leccion11", "mar-leccion12"]
    assert rows["ana"]["score"] == f"{FULL['ejercicio4']:g}" and rows["luis"]["score"] == "0"


def test_a_flat_class_folder_is_graded_as_before(tmp_path):
    root = tmp_path / "clase"
    shutil.copytree(SOLUTIONS, root / "ana" / "soluciones")
    found = batch.discover(str(root))
    try:
        assert found.entries == [(str(root / "ana"), "ana")] and found.notes == []
    finally:
        found.close()
