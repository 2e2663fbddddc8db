"""Hostile submissions get zero, a clear report, and harm nothing.

Graded in one batch together with the reference (so that a submission able to read another
learner's files would find one), through grader.pool like `--batch`. IMPORTANT when
developing the sandbox: run this file only in a throw-away clone (see grader/README.md).
"""

import os
import secrets
import shutil

import pytest
from hostile import HOSTILE, write_all
from mutants import REFERENCE

from grader import pool
from grader.paths import REPO_DIR

TOKEN = "hostil-" + secrets.token_hex(6)
REASONS = {  # what the report must say (in the problems or in every test's output)
    "sale_con_os_exit_0": "terminó",
    "sale_con_sys_exit_0": "no se cargó: SystemExit",
    "bucle_infinito_al_importar": "no arrancó",
    "bomba_fork": "no arrancó",
    "bomba_de_memoria": "no se cargó: MemoryError",
    "salida_sin_fin": "no arrancó",
    "zip_con_rutas_peligrosas": "ruta peligrosa",
    "bomba_zip": "demasiado grande",
    "zip_con_demasiadas_entradas": "500 entradas",
    "notebook_roto": "no es un notebook válido",
    "no_utf8": "no está en UTF-8",
    "bucle_infinito_en_una_herramienta": "no respondió",
}
MARKERS = [os.path.join(REPO_DIR, f"PWNED-{TOKEN}"), f"/tmp/PWNED-{TOKEN}",
           f"/root/PWNED-{TOKEN}", f"/PWNED-{TOKEN}", f"/usr/PWNED-{TOKEN}"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    made = write_all(str(base), REPO_DIR, TOKEN)
    made["referencia"] = REFERENCE
    jobs = [{"path": path, "name": name, "only": [], "budget": 240.0}
            for name, path in made.items()]
    results = {r["submission"]: r for r in pool.grade_all(jobs, workers=2)}
    yield results, base
    shutil.rmtree(base, ignore_errors=True)


def everything(result):
    return "\n".join([result["output"], *result["problems"], *[t["output"]
                                                                for t in result["tests"]]])


HOSTILE_NAMES = sorted(set(HOSTILE) | set(REASONS)
                       | {"zip_con_rutas_peligrosas", "bomba_zip", "notebook_roto"})


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_submission_scores_zero_on_every_test(graded, name):
    result = graded[0][name]
    assert result["score"] == 0 and all(t["score"] == 0 for t in result["tests"]), \
        {t["id"]: t["output"] for t in result["tests"] if t["score"]}
    assert len(result["tests"]) == len(graded[0]["referencia"]["tests"])
    assert not result["internal_errors"]


@pytest.mark.parametrize("name", sorted(REASONS))
def test_hostile_submission_gets_a_clear_reason(graded, name):
    assert REASONS[name] in everything(graded[0][name]), everything(graded[0][name])


def test_reference_graded_next_to_them_still_gets_full_marks(graded):
    result = graded[0]["referencia"]
    assert result["score"] == result["max_score"] == 42, everything(result)


def test_nothing_was_written_outside_the_sandboxes(graded):
    assert [path for path in MARKERS if os.path.exists(path)] == []
    assert not list(graded[1].rglob(f"PWNED-{TOKEN}"))


def test_no_process_outlives_its_sandbox(graded):
    survivors = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if TOKEN.encode() in handle.read():
                    survivors.append(pid)
        except OSError:
            pass
    assert survivors == []
