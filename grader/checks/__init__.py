"""The hidden grading tests (pytest), run by grader.runner against one submission."""
