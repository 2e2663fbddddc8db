"""How long each notebook takes a novice, computed by rule: a class part and a lab.

    python3 tools/clock.py [lessons/NN_name.ipynb ...]

prints, per notebook, the class (or, in the deep dives, reading) minutes, the lab minutes of
each exercise with the number of lines the learner writes (the optional ones marked as such),
the core's class part and lab, and the set-up before notebook 1. A maintainer runs it after
editing a notebook, the demo or a reference solution and copies the minutes into the
notebook's first cell and README.md's course map (PROFESORADO.md explains the rule in Spanish);
tests/notebooks/test_lesson_structure.py and test_lesson_clock.py import these functions and
fail when a stated time is more than 10 % away from what they compute.

The rates are a novice's (issue 42; estimates by rule, not stopwatch measurements):

* Prose at 130 words a minute. Text folded under a <details> counts in full unless it is
  optional to act: a hint («Pista»), a «Para saber más», a possible reflection or a model
  answer (opened after writing one's own). A prediction's reveal («Comprueba tu predicción»)
  is read.
* Code and JSON shown, at 50 words a minute: code cells, fenced blocks in markdown
  (diagrams included) and the frames and listings the demo prints.
* Half a minute per cell run; a minute per form or consent the learner answers (a call with
  `scripted=` and no `simulate=True`: without LESSON_USER=scripted the learner clicks) and
  per «Predice antes de ejecutar» prompt; two per «Tu respuesta» written reflection; three
  quarters per question of a closing quiz. The JupyterLite cell (a no-op outside the browser)
  counts in the set-up.
* Exercise 1 (answering a form with clicks, in the class part): its section at those rates,
  and EXERCISE_ONE minutes of clicks instead of a minute per form.
* The class part of a core notebook is every section but its lab; in a deep dive (04-08) it
  is the reading.
* The lab: a graded exercise's section (the `## ` heading that holds the `heading` of an
  exercise in grader/exercises.py: «Ejercicio 3A (calificado)», the optional «Ejercicio 3B,
  parte opcional», the optional «Reto (opcional…»), any `## Antes del ejercicio X` section
  (the material it rests on: counted in exercise X's lab, not in the class) and the open
  exercise (OPEN_EXERCISES: exercise 5's written answer). A section runs from its `## `
  heading to the next cell with one (`### ` subsections stay in it). Each at the rates above,
  plus, for a graded exercise, CHECKING minutes (run the try-it cells and `ui.revisar`, read
  the feedback, fix) and LEARNER_LINE minutes per line the learner writes; for the open
  exercise, its fixed time beyond its text. The lines the learner writes are the non-blank
  lines of the exercise's part of its reference solution (grader/reference/soluciones/<its
  file>: all of it, or the lines before or after `exercises.OPTIONAL_MARK` for exercise 3B and
  its optional part) that are not comments or docstrings and are not already in the starter
  cell for that file (`%%writefile soluciones/<file>`, in whichever notebook it is), compared
  after stripping, each starter line covering one reference line. An optional exercise is
  timed by the same rule: its notebook states it as optional and its minutes never enter the
  core totals.
* The demo (`python3 code/main.py`, first in the README) is part of the class: what it prints
  by default, its narration as prose, its frames and listings (the indented lines) as code,
  plus one run.
* Set-up («Antes de empezar»), counted once: SETUP_INSTALL minutes to install and open the
  lab (reasoned in SETUP_INSTALL's comment) + the pre-check quizzes (`kind: precheck`) at the
  quiz rate. Notebook 01's «## Antes de empezar» section is that set-up, so it is not counted
  again in 01's class.

How a time is stated: whole minutes under 30, the nearest 5 from there (`stated`: never more
than 10 % off).

Deliberate simplifications: words are whitespace-separated tokens with a letter or a digit,
in prose and in code alike; one and a half minutes per written line is a flat rate for lines
that range from `return False` to a three-line call; the outputs of the notebooks' cells are
not read (the notebooks are stored without them): the five minutes of checking are where the
try-it and `ui.revisar` outputs are read. Standard library only.
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
if str(REPO) not in sys.path:  # grader/exercises.py: which exercises there are (data only)
    sys.path.insert(0, str(REPO))
from grader import exercises as graded  # noqa: E402

LESSONS = REPO / "lessons"
QUIZZES = LESSONS / "mcp_ui" / "quizzes"
REFERENCE = REPO / "grader" / "reference" / "soluciones"
CORE = ("01", "02", "03")

WORDS_PER_MINUTE = 130      # prose
CODE_WORDS_PER_MINUTE = 50  # code and JSON shown (a notebook's code, the demo's frames)
CELL_RUN = 0.5          # run a code cell and look at what it shows
DIALOG = 1.0            # a form or consent the learner answers
PREDICTION = 1.0        # think the answer to a «Predice antes de ejecutar» prompt
WRITTEN_ANSWER = 2.0    # a «Tu respuesta» reflection of two or three sentences
QUIZ_QUESTION = 0.75    # read a question and its options, answer, read the explanation
EXERCISE_ONE = 5.0      # exercise 1's clicks: run the call, read the form, choose, answer, check
LEARNER_LINE = 1.5      # write one line of the solution from the statement, at a novice's pace
CHECKING = 5.0          # a graded exercise: try it, ui.revisar, read the feedback, fix
# Exercise 5 is written prose, not code: beyond reading its section, opening one of the
# linked threads, finding a sentence to quote with its date and writing the three-part answer.
OPEN_EXERCISES = {"5": 10.0}
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
BEFORE_HEADING = re.compile(r"^Antes del ejercicio (?P<short>\w+)\b")
OPEN_HEADING = re.compile(r"Ejercicio (?P<number>\d+)\b")
EXERCISE_ONE_HEADING = re.compile(r"\bEjercicio 1\b")
BEFORE = "antes:"       # sections() key of a `## Antes del ejercicio X` section: BEFORE + id
CHALLENGE = "reto"      # the optional challenge's exercise id (soluciones/reto.py)
STARTER = re.compile(r"^%%writefile soluciones/(\S+\.py)\s*$")


class MissingReference(FileNotFoundError):
    """No reference solution to count the learner's lines from (the student edition has none:
    its lab times are the ones the notebooks state)."""


@dataclass(frozen=True)
class Exercise:
    number: str                 # an exercise id of grader/exercises.py ("ejercicio3a",
    #                             CHALLENGE...), or an open exercise's number ("5")
    minutes: float
    learner_lines: int | None   # None for an open exercise (written prose)

    @property
    def optional(self) -> bool:
        """Stated as optional, never in the core totals (the challenge, 3B's optional part)."""
        return graded.optional(self.number)

    @property
    def short(self) -> str:
        """How a notebook's header names it: "3A", "5", "reto"..."""
        known = graded.BY_ID.get(self.number)
        return known.short if known is not None else self.number


@dataclass(frozen=True)
class Clock:
    name: str
    reading: float              # the class part (core) or the reading (deep dives)
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


def by_short(short: str) -> str | None:
    """The id of the required exercise a header or heading names by its short name ("3B"),
    or an open exercise's number."""
    known = [e.id for e in graded.EXERCISES if e.short == short and not e.optional]
    return known[0] if known else (short if short in OPEN_EXERCISES else None)


def lab_exercise(heading: str) -> str | None:
    """The lab section a `## ` heading opens: the id of the exercise whose heading it holds
    (the longest match), an open exercise's number, BEFORE + an id for the material an
    exercise rests on («Antes del ejercicio 3B: …»), or None (class or reading; exercise 1 is
    clicked, not written)."""
    before = BEFORE_HEADING.match(re.sub(r"^\d+\.\s*", "", heading))
    if before:
        named = by_short(before["short"])
        if named is None:
            raise ValueError(f"«{heading}» names no exercise of the lab")
        return BEFORE + named
    known = [e for e in graded.EXERCISES if e.heading in heading]
    if known:
        return max(known, key=lambda e: len(e.heading)).id
    match = OPEN_HEADING.search(heading)
    return match["number"] if match and match["number"] in OPEN_EXERCISES else None


def lab_names(lab: tuple[Exercise, ...]) -> str:
    """How a notebook's header names its lab: «ejercicio 4», «ejercicios 3A, 3B y 5», the
    optional ones marked («ejercicio 3B (parte opcional) y reto (opcional)»)."""
    required = sorted((e.short for e in lab if not e.optional), key=lambda s: (int(s[:1]), s))
    names = [("ejercicio " if len(required) == 1 else "ejercicios ") + listed(required)] \
        if required else []
    names += [("reto (opcional)" if e.number == CHALLENGE else f"ejercicio {e.short}")
              for e in lab if e.optional]
    return " y ".join(names)


def listed(items: list[str]) -> str:
    """«3A», «3A y 3B», «3A, 3B y 5»."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " y " + items[-1]


def sections(path: Path) -> list[tuple[str | None, list[dict]]]:
    """The cells grouped by section: (lab key or None, cells), the key as `lab_exercise`
    gives it. A section starts at a cell with a `## ` heading (its last heading names it) and
    runs to the next such cell."""
    grouped: list[tuple[str | None, list[dict]]] = [(None, [])]
    for cell in cells(path):
        headings = HEADING.findall(cell["source"]) if cell["cell_type"] == "markdown" else []
        if headings:
            grouped.append((lab_exercise(headings[-1]), []))
        grouped[-1][1].append(cell)
    return [(exercise, group) for exercise, group in grouped if group]


def words(text: str) -> int:
    """Whitespace-separated tokens with a letter or a digit."""
    return sum(1 for token in text.split() if any(ch.isalnum() for ch in token))


def prose_words(markdown: str) -> int:
    """The words of a markdown cell's prose: no fenced block, no optional <details>, no tags."""
    return words(TAG.sub(" ", FENCE.sub("", OPTIONAL.sub("", markdown))))


def shown_code_words(markdown: str) -> int:
    """The words of the code and JSON a markdown cell shows (its fenced blocks)."""
    return sum(words(block) for block in FENCE.findall(OPTIONAL.sub("", markdown)))


def code_minutes(text: str) -> float:
    return words(text) / CODE_WORDS_PER_MINUTE


def markdown_minutes(source: str, written: bool = True) -> float:
    """Reading a markdown cell: prose, code or JSON shown, predictions and (unless an open
    exercise's fixed time already counts the writing) written answers."""
    return (prose_words(source) / WORDS_PER_MINUTE
            + shown_code_words(source) / CODE_WORDS_PER_MINUTE
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


def is_exercise_one(group: list[dict]) -> bool:
    """Exercise 1's section (answered with clicks): its dialogs are EXERCISE_ONE minutes."""
    first = group[0]
    headings = HEADING.findall(first["source"]) if first["cell_type"] == "markdown" else []
    return bool(headings) and bool(EXERCISE_ONE_HEADING.search(headings[-1]))


def cell_minutes(cell: dict, written: bool = True, clicks: bool = True) -> float:
    """One cell at the rates: a markdown cell read; a code cell read, run and its dialogs
    answered (`clicks`); a quiz cell, its final quiz's questions."""
    source = cell["source"]
    if cell["cell_type"] == "markdown":
        return markdown_minutes(source, written)
    if source.startswith(LITE_CELL):
        return 0.0
    if "ui.quiz(" in source:
        return sum(QUIZ_QUESTION * n for kind, n in map(quiz, quiz_ids(source))
                   if kind == "final")
    written_file = source.startswith("%%writefile")  # a file, not code the kernel runs
    return (CELL_RUN + code_minutes(code_source(source))
            + (DIALOG * dialogs(code_source(source)) if clicks and not written_file else 0.0))


def group_minutes(group: list[dict], written: bool = True) -> float:
    if is_exercise_one(group):
        return EXERCISE_ONE + sum(cell_minutes(c, written, clicks=False) for c in group)
    return sum(cell_minutes(c, written) for c in group)


def reading_minutes(path: Path) -> float:
    """The class part (a core notebook) or the reading (a deep dive): every section but the
    lab and notebook 01's set-up."""
    return sum(group_minutes(group) for exercise, group in sections(path)
               if exercise is None and not is_setup(group))


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
    """The reference solution of exercise `number` (an id of grader/exercises.py): its file,
    if this edition has it."""
    return [path for path in [REFERENCE / graded.by_id(number).file] if path.is_file()]


def starters(notebook: list[dict] | None = None) -> dict[str, str]:
    """{file: its starter's code} of the `%%writefile soluciones/<file>` cells of `notebook`
    (cells) and of every notebook: a file's starter may be in another notebook (exercise 3B's
    optional part is written in notebook 06 on the starter of notebook 03)."""
    found = {}
    for cells_of in [cells(path) for path in notebooks()] + [notebook or []]:
        for cell in cells_of:
            first = cell["source"].split("\n", 1)[0]
            match = STARTER.match(first) if cell["cell_type"] == "code" else None
            if match:
                found[match[1]] = code_source(cell["source"])
    return found


def learner_lines(number: str, notebook: list[dict]) -> int:
    """Lines of the exercise's part of its reference that the learner writes: not already in
    its part of the starter cell for the same file, compared after stripping (each starter
    line covers one)."""
    references = reference_files(number)
    if not references:
        raise MissingReference(f"no reference solution for exercise {number} in {REFERENCE}")
    exercise = graded.by_id(number)
    starter = starters(notebook).get(exercise.file, "")
    given = Counter(solution_lines(graded.lines_of(exercise, starter)))
    total = 0
    for line in solution_lines(graded.lines_of(exercise, references[0].read_text("utf-8"))):
        if given[line]:
            given[line] -= 1
        else:
            total += 1
    return total


def is_starter(cell: dict) -> bool:
    first = cell["source"].split("\n", 1)[0]
    return cell["cell_type"] == "code" and bool(STARTER.match(first))


def statement_minutes(group: list[dict]) -> float:
    """A graded exercise's own section at the rates: its statement (the markdown) and its
    starter (read, not run). Its other code cells, the try-it and `ui.revisar` cells, are the
    checking (CHECKING)."""
    return sum(markdown_minutes(c["source"]) if c["cell_type"] == "markdown"
               else code_minutes(code_source(c["source"])) if is_starter(c) else 0.0
               for c in group)


def lab(path: Path) -> tuple[Exercise, ...]:
    """The notebook's lab exercises, in the order their own sections come: each one's
    sections (the material it rests on included) at the rates, plus its checking and written
    lines (a graded exercise) or its fixed time (the open one)."""
    read: dict[str, float] = {}
    own: list[str] = []
    for key, group in sections(path):
        if key is None:
            continue
        number = key.removeprefix(BEFORE)
        graded_own = not key.startswith(BEFORE) and number not in OPEN_EXERCISES
        read[number] = read.get(number, 0.0) + (
            statement_minutes(group) if graded_own
            else group_minutes(group, written=number not in OPEN_EXERCISES))
        if not key.startswith(BEFORE):
            own.append(number)
    missing = set(read) - set(own)
    if missing:
        raise ValueError(f"{path.name}: material before exercise {sorted(missing)}, which "
                         "has no section here")
    exercises = []
    for number in own:
        if number in OPEN_EXERCISES:
            exercises.append(Exercise(number, read[number] + OPEN_EXERCISES[number], None))
            continue
        lines = learner_lines(number, cells(path))
        exercises.append(Exercise(number, read[number] + LEARNER_LINE * lines + CHECKING,
                                  lines))
    return tuple(exercises)


def clock(path: Path) -> Clock:
    return Clock(path.name, reading_minutes(path), lab(path))


def stated(minutes: float) -> int:
    """How a computed time is stated: whole minutes under 30, the nearest 5 from there
    (never more than 2.5 minutes off: within the tests' 10 %)."""
    return round(minutes) if minutes < 30 else 5 * round(minutes / 5)


def close_enough(said: int | float, estimate: float) -> bool:
    """A stated time is honest within 10 % of what the rule computes (half a minute, the
    rounding to whole minutes, for the shortest)."""
    return abs(said - estimate) <= max(0.5, 0.10 * estimate)


def demo_output(*args: str) -> list[str]:
    """The lines `python3 code/main.py` prints (with `args`)."""
    return subprocess.run([sys.executable, str(REPO / "code" / "main.py"), *args], check=True,
                          capture_output=True, text=True, timeout=120).stdout.splitlines()


def transcript_minutes(output: list[str]) -> float:
    """Reading a demo transcript once: narration as prose, indented frames and listings as
    code, plus one run."""
    shown = "\n".join(line for line in output if line.startswith(" "))
    narration = "\n".join(line for line in output if not line.startswith(" "))
    return CELL_RUN + code_minutes(shown) + words(narration) / WORDS_PER_MINUTE


@functools.cache
def demo_minutes() -> float:
    """Reading what the demo prints by default (python3 code/main.py)."""
    return transcript_minutes(demo_output())


def core_minutes(clocks: list[Clock]) -> tuple[float, float]:
    """(class part, lab) of the core: the demo and notebooks 01-03, summed before rounding
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
    return f"{exercise.short}{optional}: {exercise.minutes:.1f} min, {lines}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    paths = parser.parse_args(argv).paths or notebooks()
    try:
        clocks = [clock(path) for path in paths]
    except MissingReference as error:
        print(f"{error}: the lab's minutes count the lines of the reference solutions, which "
              "only the instructors' edition has. Class and reading minutes:")
        for path in paths:
            minutes = reading_minutes(path)
            print(f"  {path.name:26} {minutes:5.1f} ({stated(minutes)})")
        return 1
    print("computed minutes (stated as) · lab exercises with the lines the learner writes")
    print(f"{'notebook':26} {'class/read':>12} {'lab':>12}  exercises")
    for c in clocks:
        said = ", ".join(map(exercise_summary, c.lab)) or "—"
        lab_time = f"{c.lab_minutes:5.1f} ({stated(c.lab_minutes):3})" if c.lab else "—"
        print(f"{c.name:26} {c.reading:5.1f} ({stated(c.reading):3}) {lab_time:>12}  {said}")
    print(f"{'demo (code/main.py)':26} {demo_minutes():5.1f} ({stated(demo_minutes()):3})")
    core = [c for c in clocks if c.name[:2] in CORE]
    if core:
        reading, lab_time = core_minutes(core)
        print(f"{'core: class, lab':26} {reading:5.1f} ({stated(reading):3}) "
              f"{lab_time:5.1f} ({stated(lab_time):3})")
    print(f"{'set-up (antes de empezar)':26} {setup_minutes():5.1f} ({stated(setup_minutes()):3})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
