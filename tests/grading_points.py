"""The points of each graded exercise, public and hidden, as the tests read them: derived from
the `@graded` declarations of the checks (grader/points.py), never typed here.

tests/grader/test_points.py holds grader/README.md's Points table, PROFESORADO.md's table and
the notebooks' figures against the same call. PUBLIC reads only the public checks; the figures
that count hidden tests are computed on first use (module `__getattr__`), so a shipped test
that imports PUBLIC reads no hidden test (tests/reference_audit.py holds that). In the student
edition, which has no hidden tests, the hidden points are 0.
"""

import functools
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from grader import points  # noqa: E402  (the repository root is on sys.path only now)

# What the public checks declare: all a shipped test may read (importing them reads no hidden
# test, so the student edition's tests and the instructors' give the same figures).
PUBLIC = {name: p.public for name, p in points.declared("public").items() if not p.optional}
CHALLENGE = "reto"  # the optional challenge: graded apart, never part of TOTAL


@functools.cache
def _all():
    """Every figure that counts the hidden tests (they are read on first use only)."""
    declared = points.declared()
    required = {name: p for name, p in declared.items() if not p.optional}
    optional = {name: p for name, p in declared.items() if p.optional}
    return {
        "DECLARED": declared,
        "REQUIRED": required,
        "OPTIONAL": optional,
        "FULL": {name: p.total for name, p in required.items()},
        "TOTAL": points.totals(declared).total,
        "PUBLIC_TOTAL": points.totals(declared).public,
        # every optional exercise (graded apart, never part of TOTAL): 3B's 2026-07-28 part too
        "OPTIONAL_FULL": {name: p.total for name, p in optional.items()},
        "OPTIONAL_PUBLIC": {name: p.public for name, p in optional.items()},
    }


def __getattr__(name):
    """DECLARED, FULL, TOTAL, ...: computed with the hidden tests when a test first asks for
    one (a probe for a dunder name, e.g. `__path__`, reads nothing)."""
    if not name.startswith("__") and name in _all():
        return _all()[name]
    raise AttributeError(f"module 'grading_points' has no attribute {name!r}")
