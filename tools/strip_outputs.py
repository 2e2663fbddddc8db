"""Store the lessons without outputs that answer anything before the learner runs it.

    .venv/bin/python tools/strip_outputs.py [--check] [lessons/NN_name.ipynb ...]

The rule, per cell: a code cell is stored with no outputs and no execution count, unless it
carries the tag `keep_output`; no cell keeps its timing metadata (`execution`), and the
notebook keeps no widget state. A `keep_output` cell must not answer anything
(`answers_something` says why it would): not a check (`ui.check`, the lab's `check_*`,
`revisar`, `guard_table`, `read_handles`), not a quiz (`ui.quiz`), and not a cell between a
«Predice antes de ejecutar» prompt and the markdown that reveals its answer.
tests/notebooks/test_lesson_structure.py enforces both. The outputs nbval compares are not in
the notebooks: they live in tests/notebooks/checked_outputs.json
(tests/notebooks/record_checked_outputs.py records them). The rendered edition executes the
notebooks, so it still shows every output.

With no paths it strips every lessons/*.ipynb; `--check` changes nothing and exits 1 naming
the notebooks that are not stored this way.

Deliberate simplifications: checks and quizzes are recognised by the calls in a cell's
source, not by what the cell prints.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
LESSONS = REPO / "lessons"
KEEP_TAG = "keep_output"
PREDICT = "🔮 **Predice antes de ejecutar.**"
REVEAL = "<details><summary>Comprueba tu predicción</summary>"
ANSWERING = re.compile(r"\bui\.check\(|\.check_\w+\(|\brevisar\(|\bguard_table\(|"
                       r"\bread_handles\(|\bui\.quiz\(")


def strip(nb) -> bool:
    """Apply the rule to a notebook (nbformat node) in place; True if anything changed."""
    before = nbformat.writes(nb)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code" and KEEP_TAG not in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    return nbformat.writes(nb) != before


def answers_something(nb, index: int) -> str | None:
    """Why cell `index` must not keep its outputs, or None."""
    cell = nb.cells[index]
    if cell.cell_type == "code" and ANSWERING.search(cell.source):
        return "it checks or quizzes: its output is the answer"
    prompts = [i for i, c in enumerate(nb.cells[:index]) if c.cell_type == "markdown"
               and PREDICT in c.source]
    if prompts and not any(c.cell_type == "markdown" and REVEAL in c.source
                           for c in nb.cells[prompts[-1] + 1:index]):
        return "it runs between a prediction prompt and its answer"
    return None


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or sorted(LESSONS.glob("*.ipynb"))
    unstripped, refused = [], False
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        bad = [i for i, c in enumerate(nb.cells) if KEEP_TAG in c.metadata.get("tags", [])
               and answers_something(nb, i)]
        refused = refused or bool(bad)
        for index in bad:
            print(f"{path.name}: cell {index} is tagged {KEEP_TAG}, but "
                  f"{answers_something(nb, index)}", file=sys.stderr)
        if strip(nb) or bad:
            unstripped.append(path.name)
            if not check and not bad:
                nbformat.write(nb, path)
                print(f"stripped {path.name}")
    if check and unstripped:
        print("not stored as tools/strip_outputs.py leaves them: " + ", ".join(unstripped),
              file=sys.stderr)
        return 1
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
