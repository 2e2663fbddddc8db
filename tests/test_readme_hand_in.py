"""The README's «Cómo entregar» command makes what the official grader reads: run as a learner
runs it, in a course folder whose soluciones/ the notebooks' starter cells wrote, its .zip
gives the grader every exercise file (grader.intake.submission reads it as Gradescope's run
does)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from course_notebooks import starter_files

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from grader.intake import submission  # noqa: E402


def hand_in_command() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Cómo entregar", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    (line,) = [line.strip() for line in block.splitlines() if line.strip()]
    return shlex.split(line)


def starters(lessons: Path) -> list[str]:
    """soluciones/ as a learner who ran every starter cell has it; the file names."""
    (lessons / "soluciones").mkdir(parents=True)
    for name, text in starter_files().items():
        (lessons / "soluciones" / name).write_text(text, encoding="utf-8")
    return sorted(starter_files())


def test_the_readmes_zip_holds_every_solution_the_grader_reads(tmp_path):
    course = tmp_path / "curso"
    expected = starters(course / "lessons")
    command = hand_in_command()
    assert command[:4] == ["python3", "-m", "zipfile", "-c"]
    subprocess.run([sys.executable, *command[1:]], cwd=course, check=True)
    prepared = submission.prepare(str(course / command[4]))
    assert prepared.problems == []
    assert expected and sorted(prepared.files) == expected
