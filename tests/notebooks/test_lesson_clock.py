"""The lesson's clock: every notebook states its reading and its lab apart, and the course map
of notebook 01 and of the README say the same, with the core totals, the demo and the set-up;
each stated time within 15 % (or 2 minutes) of what tools/clock.py computes.

The lab's minutes count the lines a learner writes, read from the reference solutions in
`grader/reference/soluciones/`: the student edition has none, so this module is marked
instructor_only and its build leaves the file out (the reading time, which needs no
reference, is checked in test_lesson_structure.py).
The rules themselves are in tools/clock.py's docstring and in the README («Cómo se calculan los
tiempos»).
"""

from __future__ import annotations

import re

import pytest
from notebook_helpers import CLOCK, CORE, LESSONS, NOTEBOOKS, REPO, close_enough, header, read

pytestmark = pytest.mark.instructor_only("counts the lines of the reference solutions")


def computed(name: str):
    """What the rule computes for a notebook: .reading, .lab (exercises), .lab_minutes."""
    return CLOCK.clock(LESSONS / name)


def map_rows(text: str) -> dict[str, tuple[int, str, int | None]]:
    """The course map table: {"01": (reading minutes, lab exercises or "—", lab minutes)}."""
    rows = re.findall(r"^\| \d \| \**(0\d) · [^|]+\| (\d+) min \| ([^|]+) \| [^|]+\|$", text, re.M)
    table = {}
    for number, reading, lab in rows:
        lab_match = re.fullmatch(r"((?:ejercicios? [\dAB, y]+?(?: \(parte opcional\))?(?: y )?)?"
                                 r"(?:reto \(opcional\))?) ?✎? · (\d+) min", lab.strip())
        table[number] = (int(reading), lab_match[1] if lab_match else lab.strip(),
                         int(lab_match[2]) if lab_match else None)
    return table


def readme_learner_part() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.split("## Usar el servidor con clientes reales")[0]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stated_lab_names_its_exercises_and_the_time_the_rule_computes(name):
    match, clock = header(name), computed(name)
    if not clock.lab:
        assert match[5] is None, f"{name}: no graded exercise to write, no lab"
        return
    assert match[5] == CLOCK.lab_names(clock.lab), f"{name}: optional ones are stated as such"
    assert close_enough(int(match[6]), clock.lab_minutes), (match[6], round(clock.lab_minutes, 1))


def test_lab_names_say_which_exercises_and_which_are_optional():
    lab = [CLOCK.Exercise(number, 10.0, 3) for number in ("ejercicio3a", "ejercicio3b")]
    assert CLOCK.lab_names(tuple(lab)) == "ejercicios 3A y 3B"
    optional = [CLOCK.Exercise(n, 10.0, 3) for n in ("ejercicio3b_2026", CLOCK.CHALLENGE)]
    assert CLOCK.lab_names(tuple(optional)) == "ejercicio 3B (parte opcional) y reto (opcional)"
    assert all(e.optional for e in optional) and not any(e.optional for e in lab)
    assert CLOCK.lab_exercise("6. Ejercicio 3B (calificado): autorizar") == "ejercicio3b"
    assert CLOCK.lab_exercise("Ejercicio 3B, parte opcional (se califica aparte): x") == \
        "ejercicio3b_2026"
    assert CLOCK.lab_exercise("3. Ejercicio 1: responde con clics") is None


def test_3b_and_its_optional_part_count_their_own_lines_of_the_same_file():
    from grader.exercises import by_id, lines_of
    reference = (CLOCK.REFERENCE / "ejercicio3b.py").read_text(encoding="utf-8")
    core, optional = (lines_of(by_id(name), reference) for name in ("ejercicio3b",
                                                                     "ejercicio3b_2026"))
    assert core + optional == reference
    written = CLOCK.learner_lines("ejercicio3b", []) + CLOCK.learner_lines("ejercicio3b_2026", [])
    starter = CLOCK.starters()["ejercicio3b.py"]
    given = len(CLOCK.solution_lines(core)) + len(CLOCK.solution_lines(optional)) - written
    assert 0 < given <= len(CLOCK.solution_lines(starter))
    assert CLOCK.learner_lines("ejercicio3b_2026", []) < len(CLOCK.solution_lines(optional))


def test_an_exercise_is_timed_by_the_lines_the_learner_writes_not_the_starter():
    starter = """%%writefile soluciones/ejercicio4.py
\"\"\"Ejercicio 4.\"\"\"
from extension import Extension

extension = Extension()
# TODO: revoca
"""
    cells = [{"cell_type": "code", "source": starter}]
    reference = CLOCK.solution_lines((CLOCK.REFERENCE / "ejercicio4.py").read_text())
    given = {"from extension import Extension", "extension = Extension()"}
    assert CLOCK.learner_lines("ejercicio4", cells) == len(reference) - len(given & set(reference))
    assert CLOCK.solution_lines('"""doc"""\nx = 1  # why\n\n# note\ny = "#"\n') == \
        ["x = 1", 'y = "#"']


def test_the_optional_challenge_is_lab_timed_by_the_same_rule_and_never_in_the_core():
    heading = "7. Reto (opcional, se califica aparte): sella tú el `requestState`"
    assert CLOCK.lab_exercise(heading) == CLOCK.CHALLENGE
    assert CLOCK.reference_files(CLOCK.CHALLENGE) == [CLOCK.REFERENCE / "reto.py"]
    starter = '%%writefile soluciones/reto.py\nfrom extension import Extension\n'
    reference = CLOCK.solution_lines((CLOCK.REFERENCE / "reto.py").read_text())
    cells = [{"cell_type": "code", "source": starter}]
    assert CLOCK.learner_lines(CLOCK.CHALLENGE, cells) == len(reference) - 1
    challenge = CLOCK.Exercise(CLOCK.CHALLENGE, 60.0, 50)
    graded = CLOCK.Exercise("ejercicio4", 15.0, 4)
    with_challenge = CLOCK.Clock("01_roots.ipynb", 20.0, (graded, challenge))
    assert CLOCK.core_minutes([with_challenge])[1] == graded.minutes


def test_exercise_five_is_an_open_exercise_of_the_core_timed_by_its_prose_and_a_fixed_writing():
    (five,) = [e for e in computed("03_modo_url.ipynb").lab if e.number == "5"]
    assert five.learner_lines is None and not five.optional
    section = next(cells for number, cells in CLOCK.sections(LESSONS / "03_modo_url.ipynb")
                   if number == "5")
    prose = sum(CLOCK.markdown_minutes(c["source"], written=False) for c in section
                if c["cell_type"] == "markdown")
    assert five.minutes == pytest.approx(prose + CLOCK.OPEN_EXERCISES["5"])
    assert "03_modo_url.ipynb" in CORE, "so its minutes are part of the core's lab"


def test_the_core_path_states_its_reading_and_its_lab_apart():
    clocks = [computed(n) for n in CORE]
    reading, lab = CLOCK.core_minutes(clocks)
    assert reading == pytest.approx(CLOCK.demo_minutes() + sum(c.reading for c in clocks))
    assert close_enough(sum(int(header(n)[4]) for n in CORE), reading - CLOCK.demo_minutes())
    assert all(header(n)[6] for n in CORE), "every core notebook has a lab"
    assert close_enough(sum(int(header(n)[6]) for n in CORE), lab)


@pytest.mark.parametrize("where", ["01_roots.ipynb", "README.md"])
def test_the_course_map_lists_every_notebook_with_its_reading_and_its_lab(where):
    text = readme_learner_part() if where == "README.md" else "\n".join(
        c.source for c in read(where).cells if c.cell_type == "markdown")
    rows = map_rows(text)
    assert sorted(rows) == [n[:2] for n in NOTEBOOKS], rows
    for name in NOTEBOOKS:
        match = header(name)
        assert rows[name[:2]] == (int(match[4]), match[5] or "—",
                                  int(match[6]) if match[6] else None), name
    core = re.search(r"^\| \| \*\*Núcleo\*\* \| \*\*unos (\d+) min\*\* \| "
                     r"\*\*unos (\d+) min\*\* \|", text, re.M)
    assert core, f"{where}: a «Núcleo» line with its reading and its lab"
    reading, lab = CLOCK.core_minutes([computed(n) for n in CORE])
    assert close_enough(int(core[1]), reading) and close_enough(int(core[2]), lab), \
        (core.groups(), round(reading, 1), round(lab, 1))
    setup = re.search(r"^\| \| Antes de empezar \| (\d+) min \|", text, re.M)
    assert setup, f"{where}: a line for «Antes de empezar»"
    assert close_enough(int(setup[1]), CLOCK.setup_minutes())
    demo = re.search(r"^\| \| La demo \| (\d+) min \|", text, re.M)
    assert demo, f"{where}: a line for the demo, part of the core reading"
    assert close_enough(int(demo[1]), CLOCK.demo_minutes())


def test_the_readme_says_how_the_times_are_computed():
    text = " ".join(readme_learner_part().split())
    for rule in (f"{CLOCK.WORDS_PER_MINUTE} palabras por minuto",
                 f"{round(1 / CLOCK.CODE_LINE)} líneas por minuto",
                 f"unos {CLOCK.SETUP_INSTALL:g} minutos para instalar",
                 "solución de referencia", "no con cronómetro", "tools/clock.py"):
        assert rule in text, rule


def test_notebook_ones_set_up_section_is_counted_once_in_the_set_up_not_in_its_reading(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    body = [new_markdown_cell("## Las roots\n\n" + "palabra " * 130)]
    setup = [new_markdown_cell("## Antes de empezar\n\n" + "palabra " * 260),
             new_code_cell("import mcp_ui as ui\n\nui.diagnostico();"),
             new_code_cell('ui.quiz("01-previo")')]
    plain, with_setup = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    nbformat.write(new_notebook(cells=body), plain)
    nbformat.write(new_notebook(cells=setup + body), with_setup)
    assert CLOCK.reading_minutes(with_setup) == CLOCK.reading_minutes(plain) > 0
    assert any(CLOCK.is_setup(group) for _, group in CLOCK.sections(LESSONS / "01_roots.ipynb"))
