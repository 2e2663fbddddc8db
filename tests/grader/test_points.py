"""The points come from one place, the `@graded` declarations (grader/points.py), and every
figure the course writes down for an exercise is what they give:

- grader/README.md's Points table (public, hidden, total per exercise, and the total row);
- PROFESORADO.md's table of exercises (the same columns, in Spanish);
- each notebook's figures in an exercise's section: its total («qué se califica (41 puntos)»),
  its public and its hidden points, the points of each revision, and any other «N puntos»,
  which must be what one of its tests declares.
"""

import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

from grader import exercises, points
from grader.checks import direct, grading
from shared.protocol import REVISIONS

REPO = Path(__file__).resolve().parents[2]
DECLARED = points.declared()
RUNS = points.declared_runs()


def clock_tool():
    """tools/clock.py, whose `sections` says which exercise a notebook's section is about."""
    if "lesson_clock" not in sys.modules:  # the name tests/notebooks registers it under
        spec = importlib.util.spec_from_file_location("lesson_clock", REPO / "tools" / "clock.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["lesson_clock"] = module  # its dataclasses need their module registered
        spec.loader.exec_module(module)
    return sys.modules["lesson_clock"]


def table(markdown, heading):
    """The rows (lists of cells, header first) of the first table after `heading`."""
    after = markdown.split(heading, 1)[1]
    rows, started = [], False
    for line in after.splitlines():
        if line.startswith("|"):
            started = True
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(set(cell) <= set("-: ") for cell in cells):
                rows.append(cells)
        elif started:
            break
    return rows


def number(cell):
    """The figure a cell starts with: «37 (18 per revision + 1 ...)», «**86**»."""
    found = re.match(r"\**(\d+)\b", cell)
    assert found, f"no figure in the cell {cell!r}"
    return int(found[1])


def figures_by_row(rows, columns, row_name):
    """{row name: (public, hidden, total)} of a points table, by its header's column names."""
    header, *body = rows
    where = [header.index(column) for column in columns]
    return {row_name(row[0]): tuple(number(row[i]) for i in where) for row in body}


def as_triple(p):
    return p.public, p.hidden, p.total


# -- the declarations -------------------------------------------------------------------------
def spec(exercise, points_, hidden=False):
    return {"exercise": exercise, "points": points_, "hidden": hidden}


def test_a_test_declared_with_two_revisions_counts_its_points_once_per_revision():
    module = types.ModuleType("grader.checks.public.test_ejemplo")

    @grading.graded("ejercicio2", 2, "en las dos revisiones", revisions=REVISIONS)
    def test_twice(lab, grade, revision):
        raise AssertionError("declared, never run")

    @grading.graded("ejercicio2", 1, "oculta", hidden=True)
    def test_once(lab, grade):
        raise AssertionError("declared, never run")

    for function in (test_twice, test_once):
        function.__module__ = module.__name__
        setattr(module, function.__name__, function)
    runs = [run for run, _, _ in direct.graded_runs(module, "test_ejemplo.py")]
    assert points.tally(runs) == {"ejercicio2": points.Points(4, 1, optional=False)}


def test_an_optional_exercise_is_marked_optional_and_left_out_of_the_grade_total():
    tallied = points.tally([spec("ejercicio4", 3), spec("reto", 5), spec("reto", 2, hidden=True)])
    assert tallied["reto"] == points.Points(5, 2, optional=True)
    assert points.totals(tallied) == points.Points(3, 0, optional=False)
    assert points.totals(tallied, optional=True).total == 7


def test_a_graded_test_of_an_exercise_the_course_does_not_know_is_an_error():
    with pytest.raises(ValueError, match="ejercicio9"):
        points.tally([spec("ejercicio9", 1)])


def test_every_exercise_of_the_course_declares_public_and_hidden_points():
    assert list(DECLARED) == list(exercises.IDS)
    assert all(p.public > 0 and p.hidden > 0 for p in DECLARED.values()), DECLARED
    assert {name for name, p in DECLARED.items() if p.optional} == exercises.OPTIONAL


def test_the_public_suite_declares_the_same_public_points_and_no_hidden_ones():
    public = points.declared("public")
    assert {name: (p.public, p.hidden) for name, p in public.items()} == \
        {name: (p.public, 0) for name, p in DECLARED.items()}


# -- grader/README.md -------------------------------------------------------------------------
GRADER_README = (REPO / "grader" / "README.md").read_text(encoding="utf-8")
GRADER_TABLE = figures_by_row(table(GRADER_README, "### Points"),
                              ["public", "hidden", "total"], lambda cell: cell.split()[0])


def test_grader_readme_points_table_gives_each_exercise_the_points_its_tests_declare():
    rows = {name: row for name, row in GRADER_TABLE.items() if name != "total"}
    assert rows == {name: as_triple(p) for name, p in DECLARED.items()}


def test_grader_readme_points_table_total_row_sums_the_exercises_that_make_the_grade():
    assert GRADER_TABLE["total"] == as_triple(points.totals(DECLARED))


def test_grader_readme_examples_of_reports_are_out_of_the_declared_points():
    grade = points.totals(DECLARED)
    outs_of = {  # what each example's «out of» figure must be
        r'"max_score": (\d+), "suite"': grade.total,
        r"Puntuación: [\d.,]+ / (\d+)": grade.total,
        r"Puntuación de las pruebas públicas: [\d.,]+ / (\d+)": grade.public,
        r"Pruebas ocultas: (\d+) puntos más": grade.hidden,
    }
    for pattern, right in outs_of.items():
        said = {int(figure) for figure in re.findall(pattern, GRADER_README)}
        assert said == {right}, (pattern, said)
    for exercise, total, public in re.findall(
            r"(ejercicio\w+): [\d.,]+ / (\d+) \(públicas [\d.,]+ / (\d+)", GRADER_README):
        assert (int(total), int(public)) == (DECLARED[exercise].total, DECLARED[exercise].public)
    for exercise, hidden in re.findall(r"(ejercicio\w+): ocultas [\d.,]+ / (\d+)", GRADER_README):
        assert int(hidden) == DECLARED[exercise].hidden, exercise


# -- PROFESORADO.md (the instructors' guide) ---------------------------------------------------
README = (REPO / "PROFESORADO.md").read_text(encoding="utf-8")
BY_SHORT = {e.short: e.id for e in exercises.EXERCISES}


def readme_row(cell):
    if cell.strip("*").lower() == "total":
        return "total"
    return BY_SHORT[cell.split(" · ")[0]]


README_TABLE = figures_by_row(table(README, "## Ejercicios y corrección"),
                              ["Públicas", "Ocultas", "Total"], readme_row)


def test_readme_table_of_exercises_gives_each_one_the_points_its_tests_declare():
    rows = {name: row for name, row in README_TABLE.items() if name != "total"}
    assert rows == {name: as_triple(p) for name, p in DECLARED.items() if not p.optional}


def test_readme_table_of_exercises_total_row_sums_them():
    assert README_TABLE["total"] == as_triple(points.totals(DECLARED))


# -- the notebooks ----------------------------------------------------------------------------
# What a figure in an exercise's section says, by the words around it («**» taken out).
TOTAL = re.compile(r"califica[^.()]{0,40}\((\d+) puntos")
PUBLIC = re.compile(r"(\d+) puntos públicos|públicas \((\d+)(?: puntos)?\)")
HIDDEN = re.compile(r"públicos y (\d+) ocultos|[Oo]cultas: (\d+) puntos|"
                    r"ocultas \((\d+)(?: puntos)?\)")
PER_REVISION = re.compile(r"(\d+) puntos en cada una")
ANY = re.compile(r"(\d+) puntos?\b")


def sections():
    """(notebook, exercise id, the section's markdown as one line) for each exercise section."""
    clock = clock_tool()
    for path in clock.notebooks():
        for exercise, cells in clock.sections(path):
            if exercise in DECLARED:
                text = " ".join(c["source"] for c in cells if c["cell_type"] == "markdown")
                yield path.name, exercise, re.sub(r"\s+", " ", text.replace("**", ""))


SECTIONS = list(sections())


def stated(pattern, text):
    """(figure, where it starts) for each match of `pattern` (the figure is its group that
    matched)."""
    found = []
    for match in pattern.finditer(text):
        group = next(i for i, g in enumerate(match.groups(), 1) if g)
        found.append((int(match[group]), match.start(group)))
    return found


def per_revision(exercise):
    """{revision: public points} of an exercise's tests run once per revision."""
    sums = {}
    for run in RUNS:
        revision = run["id"].rpartition("[")[2].rstrip("]") if run["revisions"] else None
        if run["exercise"] == exercise and revision and not run["hidden"]:
            sums[revision] = sums.get(revision, 0) + run["points"]
    return sums


def test_every_graded_exercise_states_its_total_points_in_its_notebook():
    said = {exercise for _, exercise, text in SECTIONS if TOTAL.search(text)}
    assert said == set(DECLARED), set(DECLARED) - said


@pytest.mark.parametrize("notebook, exercise, text", SECTIONS,
                         ids=[f"{n}:{e}" for n, e, _ in SECTIONS])
def test_every_point_figure_a_notebook_states_for_an_exercise_is_what_its_tests_declare(
        notebook, exercise, text):
    declared = DECLARED[exercise]
    wrong, placed = [], set()
    for kind, pattern, right in (("total", TOTAL, {declared.total}),
                                 ("públicas", PUBLIC, {declared.public}),
                                 ("ocultas", HIDDEN, {declared.hidden}),
                                 ("en cada revisión", PER_REVISION,
                                  set(per_revision(exercise).values()))):
        for figure, start in stated(pattern, text):
            placed.add(start)
            if figure not in right:
                wrong.append(f"{kind}: dice {figure}, las pruebas declaran {sorted(right)}")
    one_test = {run["points"] for run in RUNS if run["exercise"] == exercise}
    for figure, start in stated(ANY, text):  # any other figure: the points of one test
        if start not in placed and figure not in one_test:
            wrong.append(f"«{text[start:start + 60]}»: ningún test de {exercise} vale {figure}")
    assert not wrong, f"{notebook}, {exercise}: {wrong}"
