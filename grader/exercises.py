"""The graded exercises as data: one place that says what each is, for the runner, the CLI, the
reports, the self-check (`ui.revisar`) and the course's clock (tools/clock.py).

An `Exercise` is what `@graded(...)` names, what `--only` and `ui.revisar(...)` take, the
solution file it grades, the notebook where its statement, starter and self-check are, the
`## ` heading that opens its section there, and whether it is optional. An optional exercise
is graded apart: its points never enter a submission's score, and each report gives its total
on its own line (`result["optional"]`). It is graded when the submission brings its file, or
when it is asked for by name.

Exercise 3 is two graded exercises, 3A (the guard) and 3B (the flow at 2025-11-25), and an
optional part of 3B (the same flow at 2026-07-28, notebook 6) that grades the same file,
ejercicio3b.py. Its lines are the ones after `OPTIONAL_MARK` in that file (the clock counts
them apart).

Deliberate simplifications: a tuple of frozen records, in report order; ids are plain text.
"""

from dataclasses import dataclass

OPTIONAL_MARK = "# -- Parte opcional"  # in a solution file: the lines of its optional part


@dataclass(frozen=True)
class Exercise:
    id: str               # "ejercicio3b": @graded, --only, ui.revisar
    file: str             # the solution file it grades: soluciones/<file>
    notebook: str         # where its statement, starter and self-check cell are
    heading: str          # what its section's `## ` heading says (after any "N. ")
    optional: bool = False  # graded apart: never part of the score
    part: str = "core"    # which lines of `file` are its own: "core" (before OPTIONAL_MARK),
    #                       "optional" (after it) or "all"
    label: str = ""       # how reports name it, when not its id
    short: str = ""       # how a notebook's header names its lab: "3A", "reto"...

    @property
    def shown(self):
        return self.label or self.id


EXERCISES = (
    Exercise("ejercicio2", "ejercicio2.py", "02_formularios.ipynb", "Ejercicio 2 (calificado)",
             part="all", short="2"),
    Exercise("ejercicio3a", "ejercicio3a.py", "03_modo_url.ipynb", "Ejercicio 3A (calificado)",
             part="all", short="3A"),
    Exercise("ejercicio3b", "ejercicio3b.py", "03_modo_url.ipynb", "Ejercicio 3B (calificado)",
             short="3B"),
    Exercise("ejercicio4", "ejercicio4.py", "01_roots.ipynb", "Ejercicio 4 (calificado)",
             part="all", short="4"),
    Exercise("ejercicio3b_2026", "ejercicio3b.py", "06_revision_2026.ipynb",
             "Ejercicio 3B, parte opcional", optional=True, part="optional",
             label="ejercicio 3B en 2026-07-28 (opcional, aparte de la nota)",
             short="3B (parte opcional)"),
    Exercise("reto", "reto.py", "06_revision_2026.ipynb", "Reto (opcional", optional=True,
             part="all", label="reto (opcional, aparte de la nota)", short="reto"),
)
BY_ID = {exercise.id: exercise for exercise in EXERCISES}
IDS = tuple(BY_ID)
OPTIONAL = frozenset(exercise.id for exercise in EXERCISES if exercise.optional)
FILES = tuple(dict.fromkeys(exercise.file for exercise in EXERCISES))  # what a submission brings


def by_id(name):
    """The Exercise called `name`; KeyError for any other name."""
    return BY_ID[name]


def optional(name):
    """Is `name` graded apart from the score (an optional exercise)?"""
    return name in OPTIONAL


def graded_for(files, asked=()):
    """The ids to grade for a submission that brings `files` (names), or only `asked` when it
    names some: every exercise whose file is there, and an optional one only then too."""
    wanted = set(asked) or set(IDS)
    return tuple(e.id for e in EXERCISES if e.id in wanted and (not e.optional or e.id in asked
                                                                or e.file in files))


def lines_of(exercise, source):
    """The part of a solution file's `source` that belongs to `exercise` (its lines after or
    before OPTIONAL_MARK, or all of them)."""
    if exercise.part == "all" or OPTIONAL_MARK not in source:
        return source if exercise.part != "optional" else ""
    before, _, after = source.partition(OPTIONAL_MARK)
    return before if exercise.part == "core" else OPTIONAL_MARK + after
