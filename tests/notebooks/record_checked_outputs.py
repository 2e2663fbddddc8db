"""Re-record the outputs nbval compares, after a deliberate change to a notebook.

    .venv/bin/python tests/notebooks/record_checked_outputs.py [lessons/NN_name.ipynb ...]

Each notebook runs unattended (LESSON_USER=scripted) in a kernel whose working folder is
lessons/. The outputs of the cells tagged `nbval-check-output` (the ones `make test` compares
with `--nbval-lax`) are written to tests/notebooks/checked_outputs.json, by cell id; the
notebook itself is left as tools/strip_outputs.py stores it, so learners never open one whose
outputs answer the predictions and checks before they run them. Not a test: pytest does not
collect it.
"""

import json
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from notebook_helpers import CHECK_TAG, CHECKED_OUTPUTS, LESSONS


def record(path: Path, stored: dict) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(LESSONS)}}).execute()
    stored[path.name] = {cell.id: {"execution_count": cell.execution_count,
                                   "outputs": cell.outputs}
                         for cell in nb.cells if CHECK_TAG in cell.metadata.get("tags", [])}
    print(f"recorded {len(stored[path.name])} checked cells of {path.name}")


def main(argv: list[str]) -> int:
    os.environ["LESSON_USER"] = "scripted"
    paths = [Path(a).resolve() for a in argv] or sorted(LESSONS.glob("*.ipynb"))
    stored = json.loads(CHECKED_OUTPUTS.read_text(encoding="utf-8"))
    for path in paths:
        record(path, stored)
    CHECKED_OUTPUTS.write_text(json.dumps(stored, ensure_ascii=False, indent=1, sort_keys=True)
                               + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
