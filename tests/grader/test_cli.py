"""`python -m grader` as instructors and the notebooks call it: formats and exit codes."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from mutants import MUTANTS, REFERENCE

from grader.paths import REPO_DIR
from grading_points import FULL, PUBLIC

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
    assert result["score"] == result["max_score"] == FULL["ejercicio2"]
    assert set(result) >= {"submission", "score", "max_score", "tests", "protections", "suite"}
    assert all(set(t) >= {"name", "score", "max_score", "status", "output", "hidden"}
               for t in result["tests"])
    assert {t["status"] for t in result["tests"]} == {"passed"}
    assert result["suite"] == "all" and any(t["hidden"] for t in result["tests"])


def test_tests_public_runs_only_the_public_tests_and_says_so():
    run = grader(REFERENCE, "--only", "ejercicio2", "--tests", "public", "--format", "json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["score"] == result["max_score"] == PUBLIC["ejercicio2"]
    assert result["suite"] == "public" and not any(t["hidden"] for t in result["tests"])
    assert "Solo pruebas públicas" in result["notice"]


def test_full_marks_in_the_exercises_exit_0_whatever_the_optional_reto_scored(tmp_path):
    bug = next(m for m in MUTANTS if m.name == "compara_con_igual")  # the reto loses a point
    run = grader(bug.write(str(tmp_path / "entrega")), "--only", "ejercicio3a,reto",
                 "--tests", "public", "--format", "json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["score"] == result["max_score"] == PUBLIC["ejercicio3a"]
    reto, = result["optional"]
    assert reto["exercise"] == "reto" and reto["score"] < reto["max_score"], reto


def test_an_optional_exercise_graded_alone_decides_the_exit_code(tmp_path):
    bug = next(m for m in MUTANTS if m.name == "compara_con_igual")
    run = grader(bug.write(str(tmp_path / "entrega")), "--only", "reto", "--tests", "public",
                 "--format", "json")
    assert run.returncode == 1, run.stderr


def test_partial_marks_exit_1_and_text_feedback_is_spanish():
    run = grader(STARTER, "--only", "ej4")
    assert run.returncode == 1
    assert f"Puntuación: 0 / {FULL['ejercicio4']}" in run.stdout
    assert "no revocó ninguno" in run.stdout


def test_usage_errors_exit_2():
    assert grader("--only", "ejercicio9", REFERENCE).returncode == 2
    assert grader().returncode == 2


ARGPARSE_ENGLISH = ("usage:", "options:", "positional arguments", "show this help",
                    "invalid choice", "unrecognized arguments", "expected one argument")


def test_help_is_all_spanish():
    run = grader("--help")
    assert run.returncode == 0
    assert run.stdout.startswith("uso: python -m grader")
    assert "opciones:" in run.stdout and "muestra esta ayuda y termina" in run.stdout
    assert not [word for word in ARGPARSE_ENGLISH if word in run.stdout]


@pytest.mark.parametrize("args, says", [
    (("--format", "xml", "a"), "--format: 'xml' no es una de las opciones"),
    (("--jobs",), "--jobs: falta su valor"),
    (("--jobs", "dos", "a"), "--jobs: valor no válido: 'dos'"),
    (("--nada", "a"), "argumentos desconocidos: --nada"),
])
def test_a_usage_error_is_said_in_spanish(args, says):
    run = grader(*args)
    assert run.returncode == 2 and run.stderr.startswith("uso: ")
    assert f"python -m grader: error: {says}" in run.stderr
    assert not [word for word in ARGPARSE_ENGLISH if word in run.stderr]


@pytest.fixture
def classroom(tmp_path):
    batch = tmp_path / "clase"
    batch.mkdir()
    os.symlink(REFERENCE, batch / "ana")
    prefix_bug = next(m for m in MUTANTS if m.name == "compara_rutas_con_startswith")
    prefix_bug.write(str(batch / "luis"))  # a handle alive outside: half of exercise 4
    (batch / "rota.ipynb").write_text("{", encoding="utf-8")
    return batch


def test_batch_writes_a_gradebook_and_one_report_per_learner(classroom, tmp_path):
    out = tmp_path / "notas"
    run = grader("--batch", str(classroom), "--only", "ejercicio4", "--out", str(out),
                 "--jobs", "2", "--format", "gradescope")
    assert run.returncode == 1, run.stderr
    assert "3/3" in run.stderr  # the progress bar
    rows = list(csv.DictReader(io.StringIO((out / "notas.csv").read_text())))
    assert [(r["submission"], r["score"]) for r in rows] == [
        ("ana", "0"), ("luis", f"{FULL['ejercicio4'] / 2:g}"), ("rota", "0")]
    assert "enlace simbólico" in rows[0]["problems"]  # a link is not followed, even here
    for name in ("ana", "luis", "rota"):
        assert (out / "informes" / f"{name}.txt").exists()
        results = json.loads((out / name / "results.json").read_text())
        assert {"score", "tests", "output"} <= set(results)
        assert {t["visibility"] for t in results["tests"]} <= {"visible", "after_due_date"}


# -- names and the results folder ----------------------------------------------------------------
def test_submission_names_are_unique_ignoring_case_short_and_apart_from_the_graders_files():
    from grader.cli import GRADEBOOK, REPORTS, unique_name
    seen = {GRADEBOOK, REPORTS}
    names = [unique_name(name, seen) for name in ("notas.csv", "Informes", "Ana", "ana",
                                                  "x" * 90 + "a", "x" * 90 + "b", "𝔸" * 80)]
    assert names[:4] == ["notas.csv-2", "Informes-2", "Ana", "ana-2"]
    assert names[4] == "x" * 80 and names[5] == "x" * 78 + "-2"
    assert len(names[6].encode()) <= 200
    assert len({name.casefold() for name in names}) == len(names)


def test_a_link_planted_in_the_results_folder_is_replaced_never_followed(tmp_path):
    from grader.outfiles import OutputFolder
    victim = tmp_path / "victima"
    victim.mkdir()
    (victim / "archivo").write_text("intacto\n")
    out = tmp_path / "notas"
    out.mkdir()
    os.symlink(victim, out / "informes")
    os.symlink(victim / "archivo", out / "notas.csv")
    (out / "ana").mkdir()
    (out / "ana" / "results.json").mkdir()  # a folder where a report goes
    folder = OutputFolder.open(str(out))
    folder.write("notas.csv", "a,b\n")
    reports = folder.folder("informes")
    reports.write("ana.txt", "informe\n")
    own = folder.folder("ana")
    own.write("results.json", "{}\n")
    for handle in (own, reports, folder):
        handle.close()
    assert (victim / "archivo").read_text() == "intacto\n" and os.listdir(victim) == ["archivo"]
    assert not os.path.islink(out / "notas.csv") and (out / "notas.csv").read_text() == "a,b\n"
    assert not os.path.islink(out / "informes") and (out / "informes" / "ana.txt").exists()
    assert (out / "ana" / "results.json").read_text() == "{}\n"


def test_a_results_folder_that_is_a_link_is_refused_before_grading(tmp_path):
    os.symlink(tmp_path, tmp_path / "enlace")
    run = grader(REFERENCE, "--only", "ejercicio4", "--out", str(tmp_path / "enlace"))
    assert run.returncode == 2 and "enlace simbólico" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_colliding_names_each_get_their_report_next_to_the_reference(tmp_path):
    batch = tmp_path / "clase"
    batch.mkdir()
    shutil.copytree(REFERENCE, batch / "referencia")
    names = ["notas.csv", "informes", "Ana", "ana", "x" * 90 + "a", "x" * 90 + "b"]
    for name in names:
        (batch / name).mkdir()
        (batch / name / "ejercicio4.py").write_text(f"# {name}\nx = 1\n")
    out = tmp_path / "notas"
    run = grader("--batch", str(batch), "--only", "ejercicio4", "--format", "gradescope",
                 "--out", str(out), "--jobs", "2")
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    rows = list(csv.DictReader(io.StringIO((out / "notas.csv").read_text())))
    assert len(rows) == len(names) + 1 and len({r["submission"] for r in rows}) == len(rows)
    scores = {r["submission"]: r["score"] for r in rows}
    assert scores.pop("referencia") == str(FULL["ejercicio4"]) and set(scores.values()) == {"0"}
    for name in scores:
        text = (out / "informes" / f"{name}.txt").read_text()
        assert f"Entrega: {name}\n" in text  # its own report, not another's
        assert json.loads((out / name / "results.json").read_text())["score"] == 0


def test_a_report_the_results_folder_refuses_is_said_and_the_others_are_written(capsys):
    from grader import cli

    class Full:  # a results folder whose disk fills at the second report
        files = {}

        def write(self, name, text):
            if name == "b.txt":
                raise OSError(28, "No space left on device")
            self.files[name] = text

        def folder(self, name):
            return self

        def close(self):
            pass

    results = [{"submission": name, "score": 0, "max_score": 1, "tests": [], "output": name,
                "problems": []} for name in ("a", "b")]
    written = cli.emit(cli.parse(["x", "--format", "json"]), results, Full(), ["a", "b"])
    assert written is False
    assert "no se pudo escribir informes/b.txt" in capsys.readouterr().err
    assert {"notas.csv", "a.txt", "a.json", "b.json"} <= set(Full.files)
