"""Every lesson notebook runs top to bottom in a real JupyterLab, answered with real clicks.

One test per notebook. No LESSON_USER: each form or URL consent the notebook raises waits for
a click, and the test gives the one the notebook's markdown asks the learner for (pick the
2024 note, tick «Sí, bórrala», Aceptar; consent, open the setup page, Autorizar; at
2026-07-28 also «Ya terminé en la página»...). Cells that use the scripted user on purpose
(`simulate=True`) need no clicks. The quiz that ends every notebook is answered with clicks
too: a wrong option first (its explanation says «✗ No.»), then the right one of every question
(«✓ Correcto.»). The exercise cells run the starter code, so «Sin implementar» and `revisar`
giving 0 points are the expected outcome there.

After the run every code cell must have run, none may show a traceback or anything on
stderr or draw the same widget twice, the notebook's own checks (`ui.check`,
`lab.check_...`) must print their ✓ line and no ✗, and the practice folder must be gone (the
last cell cleans up). How a run is driven and read: journeys.py.
"""

from __future__ import annotations

import pytest

from course_notebooks import lesson_names
from journeys import STARTERS, name_of, run_with_clicks, serve_course
from waits import TEST_TIMEOUT


@pytest.fixture(scope="module")
def course(module_jupyter_lab, tmp_path_factory):
    return serve_course(module_jupyter_lab, tmp_path_factory, "inicial")


@pytest.fixture
def lab(course):
    lab, _ = course
    yield lab
    lab.shutdown_kernels()  # the next notebook starts from a fresh kernel


# -- tests ---------------------------------------------------------------------------------
def test_every_lesson_notebook_has_a_browser_journey():
    assert sorted(j.notebook for j in STARTERS) == lesson_names()


@pytest.mark.timeout(TEST_TIMEOUT)
@pytest.mark.parametrize("journey", STARTERS, ids=name_of)
def test_notebook_runs_top_to_bottom_with_real_clicks(journey, lab, course, page):
    run_with_clicks(page, lab, course, f"inicial/lessons/{journey.notebook}", journey,
                    name_of(journey))
