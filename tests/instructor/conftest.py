"""Instructor-only tests: they need grader/reference/, which the student edition never ships."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CODE = REPO / "code"
REFERENCE = REPO / "grader" / "reference" / "soluciones"
if str(CODE) not in sys.path:
    sys.path.insert(0, str(CODE))
NOTES_SERVER_TESTS = REPO / "tests" / "notes_server"
if str(NOTES_SERVER_TESTS) not in sys.path:
    sys.path.insert(0, str(NOTES_SERVER_TESTS))
