"""The points of each graded exercise, public and hidden, as the tests read them: derived from
the `@graded` declarations of the checks (grader/points.py), never typed here.

tests/grader/test_points.py holds grader/README.md's Points table, PROFESORADO.md's table and the
notebooks' figures against the same call. In the student edition, which has no hidden tests,
the hidden points are 0 (its own tests read only PUBLIC).
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from grader import points  # noqa: E402  (the repository root is on sys.path only now)

DECLARED = points.declared()
REQUIRED = {name: p for name, p in DECLARED.items() if not p.optional}
OPTIONAL = {name: p for name, p in DECLARED.items() if p.optional}

FULL = {name: p.total for name, p in REQUIRED.items()}
PUBLIC = {name: p.public for name, p in REQUIRED.items()}
TOTAL = points.totals(DECLARED).total
PUBLIC_TOTAL = points.totals(DECLARED).public
CHALLENGE = "reto"  # the optional challenge: graded apart, never part of TOTAL
# every optional exercise (graded apart, never part of TOTAL): exercise 3B's 2026-07-28 part too
OPTIONAL_FULL = {name: p.total for name, p in OPTIONAL.items()}
OPTIONAL_PUBLIC = {name: p.public for name, p in OPTIONAL.items()}
