"""Check my work: `revisar("ejercicioN")` runs the grader's public tests on soluciones/.

A self-check, never the grade: it runs the public tests of one exercise through the same checks,
client and feedback as official grading, on the strongest host this machine has (see
grader/README.md, "Self-check hosts"):

- CPython (JupyterLab on Linux, macOS or Windows): a grader process,
  `python -m grader soluciones/ --only ejercicioN --tests public --host auto --format json`.
  `--host auto` is the sandbox on Linux and the portable host elsewhere (plain subprocesses,
  no isolation; GRADER_HOST=portable forces it). If the sandbox cannot start here (exit 3),
  `revisar` grades again on the portable host and says why. The first check starts that
  process cold; once a check is over, warm.py starts the next one ahead (it imports the grader
  and pytest while the learner edits), which runs that one next check and exits;
- JupyterLite (Pyodide: no processes, no threads): the in-process host, in this very
  interpreter, through `grader.selfcheck.run` (no isolation and no limits at all).

`Review` turns the grader's JSON line into a score, one row per test with its Spanish feedback
and a status in words (not an emoji alone), and the grader's own notice: on a self-check host
it says plainly that this is practice; which of the official grader's protections are off here
is folded under it, in plain words. A test that only waits for another one to work first
(«esta prueba necesita que antes funcione «…»») is folded under one line per such test, so the
first cause is what a learner reads. Who runs the checks is `runner`, a function
`(exercise, folder, timeout) -> (stdout, stderr)`; `runner = None` means none can run here.

Deliberate simplifications: the output is read line by line, and a line that is not a JSON
object is ignored (a warning printed by the grader, say), except `revisar:` notes; a test is
recognised as waiting for another by the grader's wording (a test keeps the two in step).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field

from IPython.display import display

from . import warm
from .env import REPO, SOLUTIONS, import_grader, solution_path
from .text import esc

NOTE = "revisar: "  # a line of the runner's stdout that revisar shows as it is
# Where the checks ran, in a learner's words (grader/hosts/protections.py's modes).
PLACES = {
    "root": "en el corrector aislado, como en la corrección oficial",
    "userns": "en el corrector aislado, sin permisos de administrador",
    "plain": "en el corrector aislado, con las protecciones que este sistema permite",
    "portable": "en tu ordenador, en modo local (sin aislamiento)",
    "inprocess": "en esta misma página del navegador, junto a tu código",
}
# What each protection of the official grader does, in a learner's words (grader/hosts/sandbox.py's
# plan keys): the ones off here are listed as what the official grader does and this does not.
PROTECTIONS = {
    "unprivileged_uid": "ejecuta tu código con otro usuario, sin acceso a tus archivos",
    "private_filesystem": "le da un disco aparte, donde solo ve sus carpetas de prueba",
    "network_namespace": "le corta la red",
    "pid_namespace": "no le deja ver ni tocar otros programas",
    "rlimits": "limita su memoria, su tiempo de CPU y los archivos que abre",
    "cgroups": "limita cuántos procesos crea y cuánta memoria usan entre todos",
    "seccomp_denied": "le bloquea las operaciones peligrosas del sistema",
    "no_capabilities": "le quita cualquier privilegio de administrador",
    "no_new_privs": "le impide ganar privilegios después",
    "timeouts": "corta una llamada que tarda demasiado",
    "budget_watchdog": "corta una entrega que tarda demasiado en total",
    "isolated_python": "arranca Python sin tu configuración ni tus paquetes",
    "grader_touches_data_only_through_descriptors": "abre los archivos de las pruebas sin dejarse "
                                                    "engañar por enlaces que ponga tu código",
}
STATUS = {"passed": "✅ bien", "failed": "❌ falla", "error": "💥 se rompió"}
# The grader's wording for a test that needs another one to work first (grader/checks/).
WAITS_FOR = re.compile(r"necesita que antes funcione «([^»]+)»")


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
            return f"{self.exercise}: sin autoevaluación ({self.problem})"
        return f"{self.exercise}: {_num(self.score)} de {_num(self.max_score)} puntos"

    def where(self) -> str:
        """One Spanish line: where the checks ran."""
        return f"Dónde: {PLACES.get(self.mode, self.mode)}." if self.mode else ""

    def missing(self) -> str:
        """What the official grader does and this run did not, as one sentence ("" if
        nothing is off)."""
        if not self.off:
            return ""
        return (f"Lo que el corrector oficial hace y aquí no ({len(self.off)}): "
                + "; ".join(self.off) + ".")

    def waiting(self) -> dict[str, list[dict]]:
        """{the test they wait for: tests that failed only because it did not work yet}."""
        found: dict[str, list[dict]] = {}
        for test in self.tests:
            lines = str(test.get("output", "")).strip().splitlines()
            gate = WAITS_FOR.search(lines[-1]) if lines and test.get("status") != "passed" \
                else None
            if gate:
                found.setdefault(gate.group(1), []).append(test)
        return found

    def to_html(self) -> str:
        notes = "".join(f"<div style='color:#8a6d00'>ℹ nota: {esc(n)}</div>"
                        for n in self.notes)
        if self.problem:
            return (notes + f"<div style='color:#8a6d00'>⚠ No pude comprobar "
                    f"{esc(self.exercise)}: {esc(self.problem)}</div>")
        full = self.max_score and self.score == self.max_score
        color = "#1e6b30" if full else ("#8a6d00" if self.score else "#c0392b")
        waiting = self.waiting()
        folded = {id(t) for tests in waiting.values() for t in tests}
        rows = [self._row(t) for t in self.tests if id(t) not in folded]
        box = ""
        lines = [self.notice] if self.notice else []
        if self.where() and not self.self_check:  # a self-check's notice already says where
            lines.append(self.where())
        if lines or self.off:
            border = "#8a6d00" if self.self_check else "#1e6b30"
            more = (f"<details><summary>Lo que el corrector oficial hace y aquí no "
                    f"({len(self.off)})</summary><ul style='margin:2px 0'>"
                    + "".join(f"<li>{esc(item)}</li>" for item in self.off)
                    + "</ul></details>") if self.off else ""
            box = (f"<div class='mcp-review-notice' style='border-left:4px solid {border};"
                   f"padding:4px 8px;margin:4px 0;font-size:90%'>"
                   + "<br>".join(esc(line) for line in lines) + more + "</div>")
        folds = "".join(
            f"<details class='mcp-review-waiting' style='font-size:90%;margin:4px 0'><summary>"
            f"⏸ espera: {len(tests)} prueba{'s' if len(tests) > 1 else ''} más "
            f"necesita{'n' if len(tests) > 1 else ''} que antes funcione «{esc(gate)}»; "
            "arréglala primero</summary><ul style='margin:2px 0'>"
            + "".join(f"<li>{esc(self._name(t))}</li>" for t in tests) + "</ul></details>"
            for gate, tests in waiting.items())
        return (notes + f"<div><b style='color:{color}'>{esc(self.summary())}</b></div>" + box
                + "<table style='font-size:90%'>" + "".join(rows) + "</table>" + folds)

    def _name(self, test: dict) -> str:
        """A test's title without the exercise's name in front (the summary says it)."""
        name = str(test.get("name", ""))
        return name[len(self.exercise):].strip() if name.startswith(self.exercise) else name

    def _row(self, test: dict) -> str:
        status = STATUS.get(test.get("status"), "• sin estado")
        score, top = test.get("score"), test.get("max_score")
        if top:
            points = f"{_num(score)}/{_num(top)}"
        elif score:  # a zero-point row that takes points away: «lo imprescindible»
            points = f"−{_num(abs(score))} puntos"
        else:
            points = "—"
        return (f"<tr><td style='white-space:nowrap'>{status}</td>"
                f"<td style='text-align:left'>{esc(self._name(test))}</td>"
                f"<td style='white-space:nowrap'>{points}</td>"
                f"<td style='text-align:left;white-space:pre-line'>"
                f"{esc(test.get('output', ''))}</td></tr>")

    def to_text(self) -> str:
        lines = [*(f"ℹ nota: {n}" for n in self.notes), self.summary()]
        lines += [self.notice] if self.notice else []
        lines += [self.where()] if self.where() and not self.self_check else []
        lines += [self.missing()] if self.missing() else []
        return "\n".join(lines)

    def _ipython_display_(self):
        display({"text/plain": self.to_text(), "text/html": self.to_html()}, raw=True)


def protections_off(protections: dict) -> list[str]:
    """The protections of a grader result that were not in force, in Spanish."""
    return [label for key, label in PROTECTIONS.items()
            if key in protections and protections[key] in (False, None)]


def _num(value) -> str:
    """A score as a Spanish text writes it: a decimal comma ("9,5"), "?" when unknown."""
    if value is None:
        return "?"
    return f"{float(value):g}".replace(".", ",")


def grader_argv(exercise: str, folder, host: str) -> list[str]:
    return [sys.executable, "-m", "grader", str(folder), "--only", exercise, "--tests",
            "public", "--host", host, "--format", "json"]


SANDBOX_FAILED = ("el corrector aislado no pudo arrancar en esta máquina; la comprobación "
                  "corrió en modo local (sin aislamiento)")


def grader_process(exercise: str, folder, timeout: float) -> tuple[str, str]:
    """The grader as a process (CPython): the sandbox where it works, else portable. The first
    check starts it cold; each later one is run by a helper started when the check before it
    was over, already warm (warm.py), used for this one check only."""
    try:
        proc = grade(grader_argv(exercise, folder, "auto"), timeout)
        if proc.returncode == 3 and Review.from_output(exercise, proc.stdout).mode != "portable":
            again = grade(grader_argv(exercise, folder, "portable"), timeout)
            return f"{NOTE}{SANDBOX_FAILED}\n{again.stdout}", proc.stderr + again.stderr
        return proc.stdout, proc.stderr
    finally:
        warm.prepare()  # the next check's helper, started now that this one is over


def grade(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """One grader command line: in the ready helper if there is one for this setting, else in
    a new process."""
    helper = warm.take(warm.key())
    ran = warm.run(helper, argv[3:], timeout) if helper is not None else None  # after -m grader
    if ran is None:  # no helper, or it died before it was ready
        return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    stdout, stderr, status = ran
    return subprocess.CompletedProcess(argv, status, stdout, stderr)


def in_this_interpreter(exercise: str, folder, timeout: float) -> tuple[str, str]:
    """The grader's in-process host (JupyterLite): no process, no thread, no limit."""
    import_grader()
    from grader import selfcheck
    return selfcheck.json_line(selfcheck.run(folder, exercise, host="inprocess")), ""


runner = in_this_interpreter if sys.platform == "emscripten" else grader_process
NO_RUNNER = ("este entorno no puede ejecutar el corrector; comprueba tu solución en JupyterLab, "
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
