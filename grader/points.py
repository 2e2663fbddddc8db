"""The points of each graded exercise, from the one place they are written: the
`@graded(exercise, points, ...)` of its tests.

`declared()` imports the check files the runner would run (grader/checks/public/, then hidden/
when it is there) without running any test, and sums per exercise the points of its public and
of its hidden tests. A test declared with `revisions` counts once per revision, as the runner
scores it. `totals()` adds up the exercises that make the grade, or the optional ones (each of
those is graded apart, so their sum is only a check figure).

grader/README.md's Points table, README.md's table and every figure a notebook states for an
exercise are held against `declared()` (tests/grader/test_points.py), and the
tests' own totals (tests/grading_points.py) are this call.

Deliberate simplifications: the check files are the grader's own code, imported as the
in-process self-check imports them (never a learner's file); a test file that does not import
raises here, since the points cannot be known without it.
"""

import importlib
from dataclasses import dataclass

from grader import exercises
from grader.checks import direct
from grader.runner import suite_files


@dataclass(frozen=True)
class Points:
    public: int
    hidden: int
    optional: bool  # graded apart: never part of the grade

    @property
    def total(self):
        return self.public + self.hidden


def tally(specs):
    """{exercise id: Points} from the specs of the runs of graded tests (grading.spec_for), in
    grader/exercises.py's order. ValueError for a test of an exercise that file does not know."""
    public, hidden = {}, {}
    for spec in specs:
        side = hidden if spec["hidden"] else public
        side[spec["exercise"]] = side.get(spec["exercise"], 0) + spec["points"]
    unknown = sorted((public.keys() | hidden.keys()) - set(exercises.IDS))
    if unknown:
        raise ValueError(f"graded tests of exercises grader/exercises.py does not know: {unknown}")
    return {e.id: Points(public.get(e.id, 0), hidden.get(e.id, 0), e.optional)
            for e in exercises.EXERCISES if e.id in public or e.id in hidden}


def declared(tests="all"):
    """{exercise id: Points} that the check files of the suite `tests` ("public" or "all")
    declare."""
    return tally(declared_runs(tests))


def declared_runs(tests="all"):
    """The spec of each run of a graded test in the suite `tests`, in the order they run."""
    _, files = suite_files(tests)
    specs = []
    for path in files:
        module = importlib.import_module(direct.module_name(path))
        specs += [spec for spec, _, _ in direct.graded_runs(module, path)]
    return specs


def totals(points, optional=False):
    """Points summed over the exercises that make the grade (or, with `optional`, over the
    optional ones)."""
    chosen = [p for p in points.values() if p.optional == optional]
    return Points(sum(p.public for p in chosen), sum(p.hidden for p in chosen), optional)
