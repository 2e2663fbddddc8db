"""The lesson's clock, at a novice's pace (issue 42): every core notebook states its class part
and its lab apart, every deep dive its reading, and the README's course map says the same,
with the core's class part and lab, the demo and the set-up; each stated time within 10 % of
what tools/clock.py computes, and the core within its goals (class part ≤ 60 minutes, lab ≤ 90).

The lab's minutes count the lines a learner writes, read from the reference solutions in
`grader/reference/soluciones/`: the student edition has none, so this module is marked
instructor_only and its build leaves the file out (the class and reading times, which need no
reference, are checked in test_lesson_structure.py). The rules themselves are in
tools/clock.py's docstring and in PROFESORADO.md («Cómo se calculan los tiempos»).
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from notebook_helpers import CLOCK, CORE, LESSONS, NOTEBOOKS, REPO, close_enough, header, read

pytestmark = pytest.mark.instructor_only("counts the lines of the reference solutions")
CLASS_GOAL, LAB_GOAL = 60, 90  # minutes, issue 42


def computed(name: str):
    """What the rule computes for a notebook: .reading, .lab (exercises), .lab_minutes."""
    return CLOCK.clock(LESSONS / name)


def map_rows(text: str) -> dict[str, tuple[int, str, int | None]]:
    """The course map table: {"01": (class or reading minutes, lab exercises or "—", lab
    minutes)}."""
    rows = re.findall(r"^\| \d \| \**(0\d) · [^|]+\| (\d+) min \| ([^|]+) \| [^|]+\|$", text, re.M)
    table = {}
    for number, reading, lab in rows:
        lab_match = re.fullmatch(r"((?:ejercicios? [\dAB, y]+?(?: \(parte opcional\))?(?: y )?)?"
                                 r"(?:reto \(opcional\))?) ?✎? · (\d+) min", lab.strip())
        table[number] = (int(reading), lab_match[1] if lab_match else lab.strip(),
                         int(lab_match[2]) if lab_match else None)
    return table


def readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def notebook(tmp_path, *cells) -> object:
    """A notebook file of `cells` (markdown strings, or ("code", source))."""
    path = tmp_path / "n.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(c[1]) if isinstance(c, tuple)
                                       else new_markdown_cell(c) for c in cells]), path)
    return path


# -- the rates ----------------------------------------------------------------------------------
def test_the_rates_are_a_novices():
    assert CLOCK.WORDS_PER_MINUTE == 130 and CLOCK.CODE_WORDS_PER_MINUTE == 50
    assert CLOCK.CELL_RUN == 0.5 and CLOCK.DIALOG == 1.0 and CLOCK.PREDICTION == 1.0
    assert CLOCK.CHECKING == 5.0 and CLOCK.LEARNER_LINE == 1.5
    assert CLOCK.OPEN_EXERCISES == {"5": 10.0} and CLOCK.EXERCISE_ONE == 5.0


def test_a_stated_time_more_than_ten_percent_off_is_not_honest():
    assert close_enough(54, 60) and close_enough(66, 60)
    assert not close_enough(53, 60) and not close_enough(67, 60)
    assert close_enough(9, 8.6) and not close_enough(10, 8.6)  # half a minute: rounding
    assert all(close_enough(CLOCK.stated(m), m) for m in (3.4, 14.6, 29.4, 30.1, 47.4, 88.6))


def test_prose_and_code_are_read_at_their_own_rates(tmp_path):
    prose = "## Las roots\n\n" + "palabra " * 130
    code = ("code", "x = 1\n" * 25)  # 50 words of code: "x", "1" on each line
    plain = CLOCK.reading_minutes(notebook(tmp_path, prose))
    assert plain == pytest.approx(CLOCK.words("Las roots") / 130 + 1)
    with_code = CLOCK.reading_minutes(notebook(tmp_path, prose, code))
    assert with_code - plain == pytest.approx(CLOCK.CELL_RUN + 1.0)


def test_folded_text_counts_unless_it_is_optional_to_act(tmp_path):
    reveal = ("## 1. Algo\n\n<details><summary>Comprueba tu predicción</summary>\n\n"
              + "palabra " * 130 + "\n</details>")
    hint = ("## 1. Algo\n\n<details><summary>Pista</summary>\n\n" + "palabra " * 130
            + "\n</details>")
    read_reveal = CLOCK.reading_minutes(notebook(tmp_path, reveal))
    read_hint = CLOCK.reading_minutes(notebook(tmp_path, hint))
    summary = CLOCK.words("Comprueba tu predicción")
    assert read_reveal - read_hint == pytest.approx((130 + summary) / 130)


def test_exercise_one_is_five_minutes_of_clicks_not_a_minute_a_form(tmp_path):
    call = ("code", 'await conn.call("notes_delete", scripted=[a, b])')
    elsewhere = CLOCK.reading_minutes(notebook(tmp_path, "## 2. Ejercicio 9: con tu clic", call))
    exercise = CLOCK.reading_minutes(notebook(tmp_path, "## 2. Ejercicio 1: con tu clic", call))
    assert exercise - elsewhere == pytest.approx(CLOCK.EXERCISE_ONE - 2 * CLOCK.DIALOG)


def test_what_an_exercise_rests_on_counts_in_its_lab_not_in_the_class(tmp_path):
    before = "## Antes del ejercicio 4: lo que hace falta\n\n" + "palabra " * 130
    statement = "## 4. Ejercicio 4 (calificado): los handles\n\n" + "palabra " * 130
    path = notebook(tmp_path, before, statement)
    assert CLOCK.reading_minutes(path) == 0
    (four,) = CLOCK.lab(path)
    lines = CLOCK.learner_lines("ejercicio4", [])
    assert four.minutes == pytest.approx(CLOCK.markdown_minutes(before)
                                         + CLOCK.markdown_minutes(statement)
                                         + CLOCK.CHECKING + CLOCK.LEARNER_LINE * lines)
    with pytest.raises(ValueError):
        CLOCK.lab_exercise("Antes del ejercicio 9: nada")


def test_an_exercises_try_it_and_self_check_cells_are_its_checking_time(tmp_path):
    statement = "## 4. Ejercicio 4 (calificado): los handles"
    starter = ("code", "%%writefile soluciones/ejercicio4.py\n" + "x = 1\n" * 25)
    path = notebook(tmp_path, statement, starter)
    bare = CLOCK.lab(path)[0].minutes
    lines = CLOCK.learner_lines("ejercicio4", CLOCK.cells(path))
    assert bare == pytest.approx(CLOCK.markdown_minutes(statement) + 1.0  # the starter's 50 words
                                 + CLOCK.CHECKING + CLOCK.LEARNER_LINE * lines)
    tried = CLOCK.lab(notebook(tmp_path, statement, starter, ("code", "await prueba()"),
                               ("code", 'ui.revisar("ejercicio4")')))[0].minutes
    assert tried == bare  # both are in CHECKING


# -- the notebooks ---------------------------------------------------------------------------
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
    assert CLOCK.lab_exercise("5. Antes del ejercicio 3B: OAuth") == CLOCK.BEFORE + "ejercicio3b"


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


def test_exercise_five_is_ten_minutes_of_reading_a_thread_beyond_its_section():
    (five,) = [e for e in computed("03_modo_url.ipynb").lab if e.number == "5"]
    assert five.learner_lines is None and not five.optional
    section = next(cells for number, cells in CLOCK.sections(LESSONS / "03_modo_url.ipynb")
                   if number == "5")
    assert five.minutes == pytest.approx(CLOCK.group_minutes(section, written=False) + 10.0)
    assert "03_modo_url.ipynb" in CORE, "so its minutes are part of the core's lab"


def test_the_demo_is_timed_as_a_learner_sees_it_by_default():
    brief, full = CLOCK.demo_output(), CLOCK.demo_output("--full")
    assert CLOCK.demo_minutes() == pytest.approx(CLOCK.transcript_minutes(brief))
    assert CLOCK.transcript_minutes(full) > 1.5 * CLOCK.demo_minutes()  # every byte: slower


def test_the_core_meets_its_goals_a_class_part_and_a_lab():
    reading, lab = CLOCK.core_minutes([computed(n) for n in CORE])
    assert reading <= CLASS_GOAL, round(reading, 1)
    assert lab <= LAB_GOAL, round(lab, 1)


def test_the_core_path_states_its_class_part_and_its_lab_apart():
    clocks = [computed(n) for n in CORE]
    reading, lab = CLOCK.core_minutes(clocks)
    assert reading == pytest.approx(CLOCK.demo_minutes() + sum(c.reading for c in clocks))
    assert close_enough(sum(int(header(n)[4]) for n in CORE), reading - CLOCK.demo_minutes())
    assert all(header(n)[6] for n in CORE), "every core notebook has a lab"
    assert close_enough(sum(int(header(n)[6]) for n in CORE), lab)


def test_the_readme_map_lists_every_notebook_with_its_class_or_reading_and_its_lab():
    rows = map_rows(readme())
    assert sorted(rows) == [n[:2] for n in NOTEBOOKS], rows
    for name in NOTEBOOKS:
        match = header(name)
        assert rows[name[:2]] == (int(match[4]), match[5] or "—",
                                  int(match[6]) if match[6] else None), name
    core = re.search(r"^\| \| \*\*Núcleo\*\* \| \*\*unos (\d+) min\*\* \| "
                     r"\*\*unos (\d+) min\*\* \|", readme(), re.M)
    assert core, "a «Núcleo» line with its class part and its lab"
    reading, lab = CLOCK.core_minutes([computed(n) for n in CORE])
    assert close_enough(int(core[1]), reading) and close_enough(int(core[2]), lab), \
        (core.groups(), round(reading, 1), round(lab, 1))
    setup = re.search(r"^\| \| Antes de empezar \| (\d+) min \|", readme(), re.M)
    assert setup, "a line for «Antes de empezar»"
    assert close_enough(int(setup[1]), CLOCK.setup_minutes())
    demo = re.search(r"^\| \| La demo \| (\d+) min \|", readme(), re.M)
    assert demo, "a line for the demo, part of the class"
    assert close_enough(int(demo[1]), CLOCK.demo_minutes())


def test_notebook_one_points_to_the_readmes_map():
    assert "README.md" in read("01_roots.ipynb").cells[0].source


def test_the_instructors_guide_says_how_the_times_are_computed():
    text = " ".join((REPO / "PROFESORADO.md").read_text(encoding="utf-8").lower().split())
    for rule in (f"{CLOCK.WORDS_PER_MINUTE} palabras por minuto",
                 f"{CLOCK.CODE_WORDS_PER_MINUTE} palabras por minuto",
                 "medio minuto por celda", f"{CLOCK.CHECKING:g} minutos de comprobación",
                 "un minuto y medio por línea", f"{CLOCK.OPEN_EXERCISES['5']:g} minutos",
                 f"{CLOCK.EXERCISE_ONE:g} minutos de clics", "10 %",
                 f"unos {CLOCK.SETUP_INSTALL:g} minutos para instalar",
                 "solución de referencia", "no con cronómetro", "tools/clock.py"):
        assert rule.lower() in text, rule


def test_notebook_ones_set_up_section_is_counted_once_in_the_set_up_not_in_its_reading(tmp_path):
    body = [new_markdown_cell("## Las roots\n\n" + "palabra " * 130)]
    setup = [new_markdown_cell("## Antes de empezar\n\n" + "palabra " * 260),
             new_code_cell("import mcp_ui as ui\n\nui.diagnostico();"),
             new_code_cell('ui.quiz("01-previo")')]
    plain, with_setup = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    nbformat.write(new_notebook(cells=body), plain)
    nbformat.write(new_notebook(cells=setup + body), with_setup)
    assert CLOCK.reading_minutes(with_setup) == CLOCK.reading_minutes(plain) > 0
    assert any(CLOCK.is_setup(group) for _, group in CLOCK.sections(LESSONS / "01_roots.ipynb"))
