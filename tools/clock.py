"""How long each notebook takes a learner, computed by rule: a core reading path and a lab.

    python3 tools/clock.py [lessons/NN_name.ipynb ...]

prints, per notebook, the reading minutes, the lab minutes of each exercise with the number of
lines the learner writes (the optional challenge marked as such), the core totals and the
set-up before notebook 1. A maintainer runs it after editing a notebook or a reference
solution and copies the rounded minutes into the notebook's first cell, notebook 01's «Mapa
del curso» and README.md's course map; tests/notebooks/test_lesson_structure.py imports these
functions and fails when a stated time is more than 15 % (or 2 minutes) away from what they
compute.

The rules (estimates by rule, not stopwatch measurements):

* Reading (every section but the lab): markdown prose at 130 words a minute (a realistic
  pace for technical Spanish; hints, «Para saber más», «Una reflexión posible» and model
  answers left out, as optional); each code cell run and looked at, 0.5 min; each line of
  code or JSON shown (code cells and fenced blocks in markdown, diagrams included), 0.05 min
  (about 20 lines a minute, slower than prose); each dialog the learner answers (a call with
  `scripted=` and no `simulate=True`: without LESSON_USER=scripted the learner clicks), 1 min;
  each «Predice antes de ejecutar» prompt, 1 min to think the answer; each «Tu respuesta»
  written reflection, 2 min; each question of a closing quiz, 0.75 min. The JupyterLite cell
  (first code cell, a no-op outside the browser) counts in the set-up.
* Lab: the sections whose `## ` heading is a graded exercise to write («Ejercicio N
  (calificado)»), an open exercise (OPEN_EXERCISES: exercise 5's written answer) or the
  optional challenge of notebook 06 («Reto (opcional…», exercise id CHALLENGE). Exercise
  1 (answering a form with clicks) is not one: it stays in the reading. A section runs from
  its `## ` heading to the next cell with one (`### ` subsections stay in it). Lab minutes = the
  section's prose at 130 words a minute and its code at 0.05 min a line (the learner reads the
  statement and the starter) + 1.5 min per line the learner writes (a novice's pace: the line
  is thought out, typed and fixed once) + SELF_CHECK_ROUNDS rounds
  of 2 min (save, run the try-it cells and `ui.revisar`, read the feedback). The lines the
  learner writes are the non-blank lines of the reference solution
  (grader/reference/soluciones/ejercicioN*.py, or reto.py for the challenge) that are not
  comments or docstrings and are not already in the notebook's starter cell for that file
  (`%%writefile soluciones/<file>`, wherever it is in the notebook), compared after
  stripping, each starter line covering one reference line. An open exercise (written prose)
  has no lines: its section's prose (the excerpts it asks about are quoted there) plus a fixed
  writing time (OPEN_EXERCISES says why). The challenge is timed by the same rule but is
  optional: its notebook states it as optional and its minutes never enter the core totals.
* The demo (`python3 code/main.py`, the lesson's three scenarios on the wire, first in the
  README) is part of the core reading: its narration at 130 words a minute, its frames and
  listings (the indented lines) at 0.05 min a line, plus one run.
* Set-up («Antes de empezar»), counted once: SETUP_INSTALL minutes to install and open the
  lab (reasoned in SETUP_INSTALL's comment) + the pre-check quizzes (`kind: precheck`) at the
  quiz rate. Notebook 01's «## Antes de empezar» section (where to run the notebooks, the
  diagnosis and the pre-check) is that set-up, so it is not counted again in 01's reading.

Deliberate simplifications: words are whitespace-separated tokens with a letter or a digit;
one and a half minutes per written line is a flat rate for lines that range from `return
False` to a three-line call; outputs are not read from the notebooks (they are stored without
them), so a long output costs what any run costs. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import functools
import io
import json
import re
import subprocess
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LESSONS = REPO / "lessons"
QUIZZES = LESSONS / "mcp_ui" / "quizzes"
REFERENCE = REPO / "grader" / "reference" / "soluciones"
CORE = ("01", "02", "03")

WORDS_PER_MINUTE = 130
CELL_RUN = 0.5          # run a code cell and look at what it shows
CODE_LINE = 0.05        # one line of code or JSON shown (about 20 lines a minute)
DIALOG = 1.0            # a form or consent the learner answers
PREDICTION = 1.0        # think the answer to a «Predice antes de ejecutar» prompt
WRITTEN_ANSWER = 2.0    # a «Tu respuesta» reflection of two or three sentences
QUIZ_QUESTION = 0.75    # read a question and its options, answer, read the explanation
LEARNER_LINE = 1.5      # write one line of the solution from the statement, at a novice's pace
SELF_CHECK_ROUNDS = 2   # a first try and one fix
SELF_CHECK_ROUND = 2.0  # save, run the try-it cells and ui.revisar, read the feedback
# Exercise 5 is written prose, not code: the section quotes (in the course's words) the parts of
# the discussion it asks about, so reading them is the section's prose; on top, writing one
# short answer per point of its three-point rubric, about 70 words in all (4 minutes at a
# composing pace of about 17 words a minute).
OPEN_EXERCISES = {"5": 4.0}
# Installing and opening the lab once: `python3 tools/lab.py` (or `make lab`) creates a venv
# and installs the pinned packages (4.6 s and 31 s on the test machine, which has a local
# package mirror: /work/shared/notes/ENVIRONMENT.md; from PyPI on a home connection, a few
# minutes for some 100 MB of wheels), then JupyterLab opens and the learner opens notebook 01
# and picks the kernel; or the JupyterLite site loads (9-11 s to a ready kernel, measured by
# `make bench`) and its first cell installs the packages. About 8 minutes, with time for a retry.
SETUP_INSTALL = 8.0

PREDICT = "🔮 **Predice antes de ejecutar.**"
WRITTEN = "*Tu respuesta:*"
LITE_CELL = "import sys\n\nif sys.platform"
OPTIONAL = re.compile(r"<details><summary>(Pista|Para saber más|Una reflexión posible|"
                      r"Respuesta modelo)[^<]*</summary>.*?</details>", re.S)
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
TAG = re.compile(r"<[^>]+>")
HEADING = re.compile(r"^## (.+)$", re.M)
SETUP_HEADING = "Antes de empezar"
LAB_HEADING = re.compile(r"Ejercicio (?P<number>\d+)(?P<graded> \(calificado\))?"
                         r"|(?P<challenge>Reto) \(opcional")
CHALLENGE = "reto"      # the optional challenge's exercise id (soluciones/reto.py)
STARTER = re.compile(r"^%%writefile soluciones/(\S+\.py)\s*$")


class MissingReference(FileNotFoundError):
    """No reference solution to count the learner's lines from (the student edition has none:
    its lab times are the ones the notebooks state)."""


@dataclass(frozen=True)
class Exercise:
    number: str                 # "2", "5"... or CHALLENGE
    minutes: float
    learner_lines: int | None   # None for an open exercise (written prose)

    @property
    def optional(self) -> bool:
        """The challenge: stated as optional, never in the core totals."""
        return self.number == CHALLENGE


@dataclass(frozen=True)
class Clock:
    name: str
    reading: float
    lab: tuple[Exercise, ...]

    @property
    def lab_minutes(self) -> float:
        return sum(exercise.minutes for exercise in self.lab)


def notebooks() -> list[Path]:
    return sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))


def cells(path: Path) -> list[dict]:
    """The notebook's cells as {"cell_type", "source"} with the source as one string."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [{"cell_type": c["cell_type"], "source": "".join(c["source"])
             if isinstance(c["source"], list) else c["source"]} for c in data["cells"]]


def lab_exercise(heading: str) -> str | None:
    """The exercise a `## ` heading opens as lab (a number or CHALLENGE), or None (exercise 1
    is clicked, not written)."""
    match = LAB_HEADING.search(heading)
    if match is None:
        return None
    if match["challenge"]:
        return CHALLENGE
    if match["graded"] or match["number"] in OPEN_EXERCISES:
        return match["number"]
    return None


def sections(path: Path) -> list[tuple[str | None, list[dict]]]:
    """The cells grouped by section: (lab exercise or None, cells). A section starts at a cell
    with a `## ` heading (its last heading names it) and runs to the next such cell."""
    grouped: list[tuple[str | None, list[dict]]] = [(None, [])]
    for cell in cells(path):
        headings = HEADING.findall(cell["source"]) if cell["cell_type"] == "markdown" else []
        if headings:
            grouped.append((lab_exercise(headings[-1]), []))
        grouped[-1][1].append(cell)
    return [(exercise, group) for exercise, group in grouped if group]


def words(markdown: str) -> int:
    text = FENCE.sub("", OPTIONAL.sub("", markdown))
    return sum(1 for token in TAG.sub(" ", text).split() if any(ch.isalnum() for ch in token))


def shown_lines(markdown: str) -> int:
    return sum(len(block.splitlines()) for block in FENCE.findall(OPTIONAL.sub("", markdown)))


def markdown_minutes(source: str, written: bool = True) -> float:
    """Reading a markdown cell: prose, code or JSON shown, predictions and (unless an open
    exercise's fixed time already counts the writing) written answers."""
    return (words(source) / WORDS_PER_MINUTE + shown_lines(source) * CODE_LINE
            + PREDICTION * source.count(PREDICT)
            + (WRITTEN_ANSWER * source.count(WRITTEN) if written else 0))


def quiz_ids(source: str) -> list[str]:
    """The ids of the `ui.quiz("…")` calls in a cell's source."""
    return [ast.literal_eval(node.args[0]) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "quiz"]


def quiz(quiz_id: str) -> tuple[str, int]:
    """(kind, number of questions) of `lessons/mcp_ui/quizzes/<id>.json`."""
    data = json.loads((QUIZZES / f"{quiz_id}.json").read_text(encoding="utf-8"))
    return data.get("kind", "final"), len(data["questions"])


def dialogs(source: str) -> int:
    """Dialogs a learner answers: calls with `scripted=[…]` (one per answer listed) and no
    `simulate=True`."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        simulate = keywords.get("simulate")
        if "scripted" in keywords and not (isinstance(simulate, ast.Constant) and simulate.value):
            listed = keywords["scripted"]
            count += len(listed.elts) if isinstance(listed, ast.List) else 1
    return count


def code_source(source: str) -> str:
    """A code cell without IPython magics' first line (`%%writefile …` is not Python)."""
    return source.split("\n", 1)[1] if source.startswith("%%") else source


def is_setup(group: list[dict]) -> bool:
    """Notebook 01's «Antes de empezar» section: counted once, in set-up (setup_minutes)."""
    first = group[0]
    return first["cell_type"] == "markdown" and HEADING.findall(first["source"])[:1] == [
        SETUP_HEADING]


def reading_minutes(path: Path) -> float:
    minutes = 0.0
    for exercise, group in sections(path):
        if exercise is not None or is_setup(group):
            continue
        for cell in group:
            source = cell["source"]
            if cell["cell_type"] == "markdown":
                minutes += markdown_minutes(source)
            elif source.startswith(LITE_CELL):
                continue
            elif "ui.quiz(" in source:
                minutes += sum(QUIZ_QUESTION * n for kind, n in map(quiz, quiz_ids(source))
                               if kind == "final")
            else:
                minutes += CELL_RUN + CODE_LINE * len(source.splitlines())
                minutes += DIALOG * dialogs(code_source(source))
    return minutes


def solution_lines(source: str) -> list[str]:
    """The stripped non-blank lines of Python source that are not comments or docstrings."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            docstrings.update(range(first.lineno, first.end_lineno + 1))
    comments = {token.start[0] for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT}
    lines = []
    for number, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        if not text or number in docstrings or (number in comments and text.startswith("#")):
            continue
        lines.append(re.sub(r"\s+#.*$", "", text) if number in comments else text)
    return lines


def reference_files(number: str) -> list[Path]:
    """The reference solution of exercise `number`: ejercicioN.py and any ejercicioN_*.py;
    reto.py for the challenge."""
    if number == CHALLENGE:
        return [path for path in [REFERENCE / f"{CHALLENGE}.py"] if path.is_file()]
    return sorted(p for p in REFERENCE.glob(f"ejercicio{number}*.py")
                  if re.fullmatch(rf"ejercicio{number}(_\w+)?\.py", p.name))


def learner_lines(number: str, notebook: list[dict]) -> int:
    """Lines of the reference the learner writes: not already in the notebook's starter cell
    for the same file, compared after stripping (each starter line covers one)."""
    references = reference_files(number)
    if not references:
        raise MissingReference(f"no reference solution for exercise {number} in {REFERENCE}")
    starters = {}
    for cell in notebook:
        first = cell["source"].split("\n", 1)[0]
        match = STARTER.match(first) if cell["cell_type"] == "code" else None
        if match:
            starters[match[1]] = Counter(solution_lines(code_source(cell["source"])))
    total = 0
    for reference in references:
        given = starters.get(reference.name, Counter())
        for line in solution_lines(reference.read_text(encoding="utf-8")):
            if given[line]:
                given[line] -= 1
            else:
                total += 1
    return total


def lab(path: Path) -> tuple[Exercise, ...]:
    exercises = []
    for number, group in sections(path):
        if number is None:
            continue
        open_exercise = number in OPEN_EXERCISES
        read = sum(markdown_minutes(c["source"], written=not open_exercise)
                   if c["cell_type"] == "markdown"
                   else CODE_LINE * len(c["source"].splitlines()) for c in group)
        if open_exercise:
            exercises.append(Exercise(number, read + OPEN_EXERCISES[number], None))
            continue
        lines = learner_lines(number, cells(path))
        minutes = read + LEARNER_LINE * lines + SELF_CHECK_ROUNDS * SELF_CHECK_ROUND
        exercises.append(Exercise(number, minutes, lines))
    return tuple(exercises)


def clock(path: Path) -> Clock:
    return Clock(path.name, reading_minutes(path), lab(path))


def stated(minutes: float) -> int:
    """How a computed time is stated: whole minutes under 15, the nearest 5 from there
    (never more than 2.5 minutes off, within the tests' 15 % or 2 minutes)."""
    return round(minutes) if minutes < 15 else 5 * round(minutes / 5)


@functools.cache
def demo_minutes() -> float:
    """Reading the demo's output once: narration as prose, indented frames as code."""
    output = subprocess.run([sys.executable, str(REPO / "code" / "main.py")], check=True,
                            capture_output=True, text=True, timeout=120).stdout.splitlines()
    frames = sum(1 for line in output if line.startswith(" "))
    narration = sum(len(line.split()) for line in output if not line.startswith(" "))
    return CELL_RUN + frames * CODE_LINE + narration / WORDS_PER_MINUTE


def core_minutes(clocks: list[Clock]) -> tuple[float, float]:
    """(reading, lab) of the core path: the demo and notebooks 01-03, summed before rounding
    (the total is stated as `stated(sum)`, so rounding each part down does not shrink it).
    An optional exercise (the challenge) is never part of it."""
    core = [c for c in clocks if c.name[:2] in CORE]
    lab_minutes = sum(e.minutes for c in core for e in c.lab if not e.optional)
    return demo_minutes() + sum(c.reading for c in core), lab_minutes


def setup_minutes() -> float:
    """«Antes de empezar»: installing and opening the lab, and the pre-check quizzes."""
    prechecks = [quiz(p.stem) for p in sorted(QUIZZES.glob("*.json"))]
    return SETUP_INSTALL + sum(QUIZ_QUESTION * n for kind, n in prechecks if kind == "precheck")


def exercise_summary(exercise: Exercise) -> str:
    """One lab exercise in the tool's output: its minutes and the lines the learner writes."""
    lines = ("open, fixed time" if exercise.learner_lines is None
             else f"{exercise.learner_lines} lines")
    optional = " (optional, not in the core)" if exercise.optional else ""
    return f"{exercise.number}{optional}: {exercise.minutes:.1f} min, {lines}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    paths = parser.parse_args(argv).paths or notebooks()
    try:
        clocks = [clock(path) for path in paths]
    except MissingReference as error:
        print(f"{error}: the lab's minutes count the lines of the reference solutions, which "
              "only the instructors' edition has. Reading minutes:")
        for path in paths:
            minutes = reading_minutes(path)
            print(f"  {path.name:26} {minutes:5.1f} ({stated(minutes)})")
        return 1
    print("computed minutes (stated as) · lab exercises with the lines the learner writes")
    print(f"{'notebook':26} {'reading':>12} {'lab':>12}  exercises")
    for c in clocks:
        said = ", ".join(map(exercise_summary, c.lab)) or "—"
        lab_time = f"{c.lab_minutes:5.1f} ({stated(c.lab_minutes):3})" if c.lab else "—"
        print(f"{c.name:26} {c.reading:5.1f} ({stated(c.reading):3}) {lab_time:>12}  {said}")
    print(f"{'demo (code/main.py)':26} {demo_minutes():5.1f} ({stated(demo_minutes()):3})")
    core = [c for c in clocks if c.name[:2] in CORE]
    if core:
        reading, lab_time = core_minutes(core)
        print(f"{'core (demo + 01-03)':26} {reading:5.1f} ({stated(reading):3}) "
              f"{lab_time:5.1f} ({stated(lab_time):3})")
    print(f"{'set-up (antes de empezar)':26} {setup_minutes():5.1f} ({stated(setup_minutes()):3})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
