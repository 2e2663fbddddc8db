"""A correct solution gets full public marks through `ui.revisar` on the portable host (forced
on Linux). Uses the instructors' reference solutions, so it stays in their repository."""

from __future__ import annotations

import pytest
from laptop_helpers import EXERCISES, REPO, import_mcp_ui

ui = import_mcp_ui()
CORRECT = REPO / "grader" / "reference" / "soluciones"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_forced_portable_revisar_gives_a_correct_solution_full_public_marks(exercise,
                                                                            monkeypatch):
    monkeypatch.setenv("GRADER_HOST", "portable")
    monkeypatch.setattr(ui.review, "runner", ui.review.grader_process)
    review = ui.revisar(exercise, folder=CORRECT)
    assert review.problem is None, review.problem
    assert review.mode == "portable"
    assert review.score == review.max_score > 0, review.summary()
    assert all(not t["hidden"] for t in review.tests)
