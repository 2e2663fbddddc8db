"""Check my work: `revisar("ejercicioN")` runs the grader on soluciones/ and shows its verdict.

The verdict comes from `python -m grader <folder> --only ejercicioN --format json` (JSON lines
on stdout), the same sandboxed grader that gives the grades. `Review` turns those lines into a
score, one row per test with its Spanish feedback, and draws itself in the notebook.

Who runs the checks is `runner` (a function `(exercise, folder, timeout) -> (stdout, stderr)`):
the grader process on CPython; a kernel without processes (JupyterLite) has none until a
browser self-check is plugged in there (`review.runner = ...`), and `revisar` says so.

Deliberate simplifications: the output is read line by line, and a line that is not a JSON
object is ignored (a warning printed by the grader, say).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

from IPython.display import display

from .env import REPO, SOLUTIONS, solution_path
from .text import esc


@dataclass
class Review:
    """The grader's verdict on one exercise, ready to show."""

    exercise: str
    score: float | None = None
    max_score: float | None = None
    tests: list = field(default_factory=list)
    problem: str | None = None  # why there is no verdict

    @classmethod
    def from_output(cls, exercise: str, stdout: str) -> Review:
        objects = []
        for line in stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    objects.append(json.loads(line))
                except ValueError:
                    continue
        if not objects:
            return cls(exercise, problem="el corrector no devolvió ningún resultado")
        tests = [t for o in objects for t in o.get("tests", [])]
        return cls(exercise, sum(o.get("score", 0) for o in objects),
                   sum(o.get("max_score", 0) for o in objects), tests)

    def summary(self) -> str:
        if self.problem:
            return f"{self.exercise}: sin revisión ({self.problem})"
        return f"{self.exercise}: {_num(self.score)} de {_num(self.max_score)} puntos"

    def to_html(self) -> str:
        if self.problem:
            return (f"<div style='color:#8a6d00'>⚠ No pude revisar {esc(self.exercise)}: "
                    f"{esc(self.problem)}</div>")
        full = self.max_score and self.score == self.max_score
        color = "#1e6b30" if full else ("#8a6d00" if self.score else "#c0392b")
        rows = []
        for t in self.tests:
            icon = {"passed": "✅", "failed": "❌", "error": "💥"}.get(t.get("status"), "•")
            rows.append(f"<tr><td>{icon}</td><td><code>{esc(t.get('name', ''))}</code></td>"
                        f"<td>{_num(t.get('score'))}/{_num(t.get('max_score'))}</td>"
                        f"<td style='text-align:left'>{esc(t.get('output', ''))}</td></tr>")
        return (f"<div><b style='color:{color}'>{esc(self.summary())}</b></div>"
                "<table style='font-size:90%'>" + "".join(rows) + "</table>")

    def _ipython_display_(self):
        display({"text/plain": self.summary(), "text/html": self.to_html()}, raw=True)


def _num(value) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def grader_process(exercise: str, folder, timeout: float) -> tuple[str, str]:
    """Run the sandboxed grader as a process: (stdout, stderr)."""
    argv = [sys.executable, "-m", "grader", str(folder), "--only", exercise, "--format", "json"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    return proc.stdout, proc.stderr


runner = None if sys.platform == "emscripten" else grader_process
NO_RUNNER = ("este navegador no puede ejecutar el corrector (no hay procesos); revisa tu "
             "solución en JupyterLab, o entrégala para que la califique el corrector")


def revisar(exercise: str, folder=SOLUTIONS, timeout: float = 600.0) -> Review:
    """Run the grader on your solution (`python -m grader soluciones/ --only ejercicioN`)."""
    folder = solution_path(folder)
    if not (folder / f"{exercise}.py").exists():
        return Review(exercise, problem=f"no existe soluciones/{exercise}.py; ejecuta antes "
                      "la celda que empieza por %%writefile")
    if runner is None:
        return Review(exercise, problem=NO_RUNNER)
    if runner is grader_process and not (REPO / "grader").is_dir():
        return Review(exercise, problem="el corrector (carpeta grader/) no está en este "
                      "repositorio")
    try:
        stdout, stderr = runner(exercise, folder, timeout)
    except subprocess.TimeoutExpired:
        return Review(exercise, problem=f"el corrector tardó más de {timeout:.0f} s")
    review = Review.from_output(exercise, stdout)
    if review.problem and stderr.strip():
        review.problem += ": " + stderr.strip().splitlines()[-1][:300]
    return review
