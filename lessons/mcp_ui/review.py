"""Check my work: `revisar("ejercicioN")` runs the grader's public tests on soluciones/.

A self-check, never the grade: it runs the public tests of one exercise through the same checks,
client and feedback as official grading, on the strongest host this machine has (see
grader/README.md, "Self-check hosts"):

- CPython (JupyterLab on Linux, macOS or Windows): a grader process,
  `python -m grader soluciones/ --only ejercicioN --tests public --host auto --format json`.
  `--host auto` is the sandbox on Linux and the portable host elsewhere (plain subprocesses,
  no isolation; GRADER_HOST=portable forces it). If the sandbox cannot start here (exit 3),
  `revisar` grades again on the portable host and says why;
- JupyterLite (Pyodide: no processes, no threads): the in-process host, in this very
  interpreter, through `grader.selfcheck.run` (no isolation and no limits at all).

`Review` turns the grader's JSON line into a score, one row per test with its Spanish feedback,
and the grader's own notice: on a self-check host it says plainly that this is practice and
which protections are off. Who runs the checks is `runner`, a function
`(exercise, folder, timeout) -> (stdout, stderr)`; `runner = None` means none can run here.

Deliberate simplifications: the output is read line by line, and a line that is not a JSON
object is ignored (a warning printed by the grader, say), except `revisar:` notes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

from IPython.display import display

from .env import REPO, SOLUTIONS, import_grader, solution_path
from .text import esc

NOTE = "revisar: "  # a line of the runner's stdout that revisar shows as it is
MODES = {
    "root": "corrector aislado (sandbox completo)",
    "userns": "corrector aislado (sandbox sin root)",
    "plain": "corrector aislado (sandbox reducido)",
    "portable": "modo portátil: autoevaluación sin aislamiento",
    "inprocess": "en el navegador: autoevaluación sin aislamiento ni límites",
}
# What each protection means to a learner (grader/sandbox.py's plan keys).
PROTECTIONS = {
    "unprivileged_uid": "otro usuario para tu código",
    "private_filesystem": "sistema de archivos privado",
    "network_namespace": "red aislada",
    "pid_namespace": "procesos aislados",
    "rlimits": "límites de memoria, CPU y archivos",
    "cgroups": "límite de procesos y memoria del grupo",
    "seccomp_denied": "llamadas al sistema peligrosas bloqueadas",
    "no_capabilities": "sin privilegios",
    "no_new_privs": "sin escalar privilegios",
    "timeouts": "tiempo máximo por llamada",
    "budget_watchdog": "tiempo máximo por entrega",
    "isolated_python": "Python aislado de tu configuración",
    "grader_touches_data_only_through_descriptors": "acceso del corrector solo por descriptores",
}


@dataclass
class Review:
    """The grader's verdict on one exercise, ready to show."""

    exercise: str
    score: float | None = None
    max_score: float | None = None
    tests: list = field(default_factory=list)
    problem: str | None = None  # why there is no verdict
    mode: str = ""       # where the checks ran: sandbox modes, "portable", "inprocess"
    notice: str = ""     # the grader's own words when this is not official grading
    off: list = field(default_factory=list)  # protections not in force (Spanish)
    notes: list = field(default_factory=list)  # what revisar itself has to say

    @classmethod
    def from_output(cls, exercise: str, stdout: str) -> Review:
        objects, notes = [], []
        for line in stdout.splitlines():
            line = line.strip()
            if line.startswith(NOTE):
                notes.append(line[len(NOTE):])
            elif line.startswith("{"):
                try:
                    objects.append(json.loads(line))
                except ValueError:
                    continue
        if not objects:
            return cls(exercise, problem="el corrector no devolvió ningún resultado",
                       notes=notes)
        tests = [t for o in objects for t in o.get("tests", [])]
        protections = next((o["protections"] for o in objects
                            if isinstance(o.get("protections"), dict)), {})
        return cls(exercise, sum(o.get("score", 0) for o in objects),
                   sum(o.get("max_score", 0) for o in objects), tests,
                   mode=str(protections.get("mode", "")),
                   notice=" ".join(str(o["notice"]) for o in objects if o.get("notice")),
                   off=protections_off(protections), notes=notes)

    @property
    def self_check(self) -> bool:
        """True when this ran on a host without the official sandbox."""
        return self.mode in ("portable", "inprocess")

    def summary(self) -> str:
        if self.problem:
            return f"{self.exercise}: sin revisión ({self.problem})"
        return f"{self.exercise}: {_num(self.score)} de {_num(self.max_score)} puntos"

    def where(self) -> str:
        """One Spanish line: where the checks ran and what was off."""
        if not self.mode:
            return ""
        line = f"Dónde: {MODES.get(self.mode, self.mode)}."
        if self.off:
            line += " Sin activar aquí: " + ", ".join(self.off) + "."
        return line

    def to_html(self) -> str:
        notes = "".join(f"<div style='color:#8a6d00'>ℹ {esc(n)}</div>" for n in self.notes)
        if self.problem:
            return (notes + f"<div style='color:#8a6d00'>⚠ No pude revisar "
                    f"{esc(self.exercise)}: {esc(self.problem)}</div>")
        full = self.max_score and self.score == self.max_score
        color = "#1e6b30" if full else ("#8a6d00" if self.score else "#c0392b")
        rows = []
        for t in self.tests:
            icon = {"passed": "✅", "failed": "❌", "error": "💥"}.get(t.get("status"), "•")
            rows.append(f"<tr><td>{icon}</td><td><code>{esc(t.get('name', ''))}</code></td>"
                        f"<td>{_num(t.get('score'))}/{_num(t.get('max_score'))}</td>"
                        f"<td style='text-align:left'>{esc(t.get('output', ''))}</td></tr>")
        box = ""
        if self.notice or self.where():
            border = "#8a6d00" if self.self_check else "#1e6b30"
            box = (f"<div class='mcp-review-notice' style='border-left:4px solid {border};"
                   f"padding:4px 8px;margin:4px 0;font-size:90%'>"
                   f"{esc(self.notice)}<br><i>{esc(self.where())}</i></div>")
        return (notes + f"<div><b style='color:{color}'>{esc(self.summary())}</b></div>" + box
                + "<table style='font-size:90%'>" + "".join(rows) + "</table>")

    def to_text(self) -> str:
        lines = [*(f"ℹ {n}" for n in self.notes), self.summary()]
        lines += [text for text in (self.notice, self.where()) if text]
        return "\n".join(lines)

    def _ipython_display_(self):
        display({"text/plain": self.to_text(), "text/html": self.to_html()}, raw=True)


def protections_off(protections: dict) -> list[str]:
    """The protections of a grader result that were not in force, in Spanish."""
    return [label for key, label in PROTECTIONS.items()
            if key in protections and protections[key] in (False, None)]


def _num(value) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def grader_argv(exercise: str, folder, host: str) -> list[str]:
    return [sys.executable, "-m", "grader", str(folder), "--only", exercise, "--tests",
            "public", "--host", host, "--format", "json"]


SANDBOX_FAILED = ("el corrector aislado no pudo arrancar en esta máquina; revisé en modo "
                  "portátil (sin aislamiento)")


def grader_process(exercise: str, folder, timeout: float) -> tuple[str, str]:
    """The grader as a process (CPython): the sandbox where it works, else portable."""
    proc = subprocess.run(grader_argv(exercise, folder, "auto"), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode == 3 and Review.from_output(exercise, proc.stdout).mode != "portable":
        again = subprocess.run(grader_argv(exercise, folder, "portable"), cwd=REPO,
                               capture_output=True, text=True, timeout=timeout)
        return f"{NOTE}{SANDBOX_FAILED}\n{again.stdout}", proc.stderr + again.stderr
    return proc.stdout, proc.stderr


def in_this_interpreter(exercise: str, folder, timeout: float) -> tuple[str, str]:
    """The grader's in-process host (JupyterLite): no process, no thread, no limit."""
    import_grader()
    from grader import selfcheck
    return selfcheck.json_line(selfcheck.run(folder, exercise, host="inprocess")), ""


runner = in_this_interpreter if sys.platform == "emscripten" else grader_process
NO_RUNNER = ("este entorno no puede ejecutar el corrector; revisa tu solución en JupyterLab, "
             "o entrégala para que la califique el corrector")


def solution_file(exercise: str) -> str:
    """The file `exercise` grades (grader/exercises.py), e.g. "ejercicio3b.py"; for a name the
    grader does not know, `<exercise>.py` (the grader then says it does not know it)."""
    import_grader()
    try:
        from grader.exercises import BY_ID
    except ImportError:  # no grader/ here: revisar says so further on
        return f"{exercise}.py"
    known = BY_ID.get(exercise)
    return known.file if known is not None else f"{exercise}.py"


def revisar(exercise: str, folder=SOLUTIONS, timeout: float = 600.0) -> Review:
    """Self-check your solution with the grader's public tests (see this module's doc)."""
    folder = solution_path(folder)
    file = solution_file(exercise)
    if not (folder / file).exists():
        return Review(exercise, problem=f"no existe soluciones/{file}; ejecuta antes "
                      "la celda que empieza por %%writefile")
    if runner is None:
        return Review(exercise, problem=NO_RUNNER)
    if runner in (grader_process, in_this_interpreter) and not (REPO / "grader").is_dir():
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
