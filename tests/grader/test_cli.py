"""`python -m grader` as instructors and the notebooks call it: formats and exit codes."""

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from mutants import MUTANTS, REFERENCE

from grader.paths import REPO_DIR

STARTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "starter.ipynb")


def grader(*args):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=REPO_DIR,
                          capture_output=True, text=True, timeout=600)


def test_json_format_prints_one_result_per_line_and_exit_0_for_full_marks():
    run = grader(REFERENCE, "--only", "ejercicio2", "--format", "json")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["score"] == result["max_score"] == 28
    assert set(result) >= {"submission", "score", "max_score", "tests", "protections", "suite"}
    assert all(set(t) >= {"name", "score", "max_score", "status", "output", "hidden"}
               for t in result["tests"])
    assert {t["status"] for t in result["tests"]} == {"passed"}
    assert result["suite"] == "all" and any(t["hidden"] for t in result["tests"])


def test_tests_public_runs_only_the_public_tests_and_says_so():
    run = grader(REFERENCE, "--only", "ejercicio2", "--tests", "public", "--format", "json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["score"] == result["max_score"] == 24
    assert result["suite"] == "public" and not any(t["hidden"] for t in result["tests"])
    assert "Solo pruebas públicas" in result["notice"]


def test_partial_marks_exit_1_and_text_feedback_is_spanish():
    run = grader(STARTER, "--only", "ej4")
    assert run.returncode == 1
    assert "Puntuación: 0 / 9" in run.stdout and "no revocó ninguno" in run.stdout


def test_usage_errors_exit_2():
    assert grader("--only", "ejercicio9", REFERENCE).returncode == 2
    assert grader().returncode == 2


@pytest.fixture
def classroom(tmp_path):
    batch = tmp_path / "clase"
    batch.mkdir()
    os.symlink(REFERENCE, batch / "ana")
    prefix_bug = next(m for m in MUTANTS if m.name == "compara_rutas_con_startswith")
    prefix_bug.write(str(batch / "luis"))  # half of the prefix test of exercise 4
    (batch / "rota.ipynb").write_text("{", encoding="utf-8")
    return batch


def test_batch_writes_a_gradebook_and_one_report_per_learner(classroom, tmp_path):
    out = tmp_path / "notas"
    run = grader("--batch", str(classroom), "--only", "ejercicio4", "--out", str(out),
                 "--jobs", "2", "--format", "gradescope")
    assert run.returncode == 1, run.stderr
    assert "3/3" in run.stderr  # the progress bar
    rows = list(csv.DictReader(io.StringIO((out / "notas.csv").read_text())))
    assert [(r["submission"], r["score"]) for r in rows] == [("ana", "0"), ("luis", "8.5"),
                                                            ("rota", "0")]
    assert "enlace simbólico" in rows[0]["problems"]  # a link is not followed, even here
    for name in ("ana", "luis", "rota"):
        assert (out / "informes" / f"{name}.txt").exists()
        results = json.loads((out / name / "results.json").read_text())
        assert {"score", "tests", "output"} <= set(results)
        assert {t["visibility"] for t in results["tests"]} <= {"visible", "after_due_date"}
