"""Re-record the outputs nbval compares, after a deliberate change to a notebook.

    .venv/bin/python tests/notebooks/record_checked_outputs.py [lessons/NN_name.ipynb ...]

Each notebook runs unattended (LESSON_USER=scripted) in a kernel whose working folder is
lessons/. Only the cells tagged `nbval-check-output` keep their outputs and execution count:
those are the ones `make test` compares with `--nbval-lax`. Every other cell is saved clean,
so learners open notebooks without stale outputs. Not a test: pytest does not collect it.
"""

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
CHECK_TAG = "nbval-check-output"


def record(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(LESSONS)}}).execute()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if CHECK_TAG not in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)  # widget state of this run means nothing later
    nbformat.write(nb, path)
    print(f"recorded {path.relative_to(LESSONS.parent)}")


def main(argv: list[str]) -> int:
    os.environ["LESSON_USER"] = "scripted"
    paths = [Path(a).resolve() for a in argv] or sorted(LESSONS.glob("*.ipynb"))
    for path in paths:
        record(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
