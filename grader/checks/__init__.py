"""The grading checks, run by grader.runner against one submission (see grader/README.md)."""
