"""`ui.revisar` on the reference solution: full public marks (the student edition has no
reference, so this lives here)."""

import sys

import pytest

from conftest import REFERENCE, REPO

sys.path.insert(0, str(REPO / "tests" / "notebooks"))
from notebook_helpers import import_mcp_ui  # noqa: E402

ui = import_mcp_ui()


@pytest.mark.timeout(300)
def test_revisar_reports_full_marks_for_the_reference_solution():
    review = ui.revisar("ejercicio2", folder=REFERENCE)
    assert review.problem is None, review.problem
    assert review.score == review.max_score > 0
    assert "de" in review.summary() and "puntos" in review.summary()
