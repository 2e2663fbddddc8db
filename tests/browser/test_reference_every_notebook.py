"""With the reference solutions typed into the exercise cells, every graded notebook runs with
real clicks: the exercises' own forms and consents take clicks too, and `revisar` gives full
marks. Instructors' source only (it types grader/reference/ in): the student edition ships
test_every_notebook.py, the starters' journeys.
"""

from __future__ import annotations

import json

import pytest

from journeys import (
    Journey,
    authorize_backup,
    choose_note_and_accept,
    first_line,
    full_marks,
    learner_02,
    learner_03,
    learner_06,
    name_of,
    run_with_clicks,
    serve_course,
    source_of,
)
from lab import REPO, WRITEFILE
from waits import TEST_TIMEOUT


@pytest.fixture(scope="module")
def course(module_jupyter_lab, tmp_path_factory):
    return serve_course(module_jupyter_lab, tmp_path_factory, "resuelto",
                        REPO / "grader" / "reference" / "soluciones")


@pytest.fixture
def lab(course):
    lab, _ = course
    yield lab
    lab.shutdown_kernels()  # the next notebook starts from a fresh kernel


# With a working solution the exercise cells ask too («Pruébalo con clics»).
def learner_02_solved(page) -> None:
    learner_02(page)
    choose_note_and_accept(page, "note-3", confirm="Sí, archívala")


def learner_03_solved(page) -> None:
    learner_03(page)
    authorize_backup(page)  # exercise 3B with your clicks: −32042 followed to the copy


def learner_06_solved(page) -> None:
    learner_06(page)
    choose_note_and_accept(page, "note-3", confirm="Sí, archívala")
    authorize_backup(page, then_done=True)  # 3B's optional part, at 2026-07-28


SOLVED = (
    Journey("01_roots.ipynb",
            prints=("h-1 (note-3, en Notas/): ✓ se puede leer",
                    "h-2 (note-99, en Notas-privadas/): ✗ el handle h-2 ya no es válido",
                    "h-3 (note-21, en Trabajo/): ✗ el handle h-3 ya no es válido",
                    full_marks("ejercicio4")),
            focus="ya no es válido"),
    Journey("02_formularios.ipynb", learner_02_solved,
            prints=("✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md",
                    "« ✓ Archivada la nota note-3", full_marks("ejercicio2")),
            focus='"note_id":"note-3","confirm":true'),
    Journey("03_modo_url.ipynb", learner_03_solved,
            prints=("✓ Consentimiento → página → notifications/elicitation/complete",
                    ("try_backup", "« ✓ Copia hecha"),
                    full_marks("ejercicio3a"), full_marks("ejercicio3b")),
            focus="la página completó el flujo"),
    Journey("06_revision_2026.ipynb", learner_06_solved,
            prints=("« ✓ Sincronización configurada", "« ✓ Archivada la nota note-3",
                    ("try_backup", "« ✓ Copia hecha"), full_marks("ejercicio2"),
                    full_marks("ejercicio3a"), full_marks("ejercicio3b_2026"),
                    full_marks("reto")),
            focus='"note_id":"note-3","confirm":true'),
)



# -- tests ---------------------------------------------------------------------------------
def test_every_notebook_with_an_exercise_cell_has_a_solved_journey():
    # (a hidden file there is another test's scratch copy: tests/notebooks/test_lesson_notebooks)
    notebooks = [p for p in sorted((REPO / "lessons").glob("*.ipynb"))
                 if not p.name.startswith(".")]
    graded = [path.name for path in notebooks
              if any(c["cell_type"] == "code" and (WRITEFILE.match(first_line(c))
                                                    or "ui.revisar(" in source_of(c))
                     for c in json.loads(path.read_text(encoding="utf-8"))["cells"])]
    assert sorted(j.notebook for j in SOLVED) == graded


@pytest.mark.timeout(TEST_TIMEOUT)
@pytest.mark.parametrize("journey", SOLVED, ids=name_of)
def test_with_solved_exercises_their_dialogs_take_clicks_and_revisar_gives_full_marks(
        journey, lab, course, page):
    run_with_clicks(page, lab, course, f"resuelto/lessons/{journey.notebook}", journey,
                    name_of(journey) + "-resuelto")
