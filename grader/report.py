"""Output formats for graded submissions: text, JSON Lines, CSV and Gradescope results.json.

Every format is built from the result dicts of grader.runner.grade; nothing here grades.
Feedback is the Spanish `output` of each test; instructors' details (internal errors,
warnings) go to stderr, never into what a learner sees.

Scores in every text a learner reads (the text report, Gradescope's texts) carry a decimal
comma (grader/spoken.py); JSON keeps numbers and the CSV gradebook a decimal point.

Everything in a result may carry learner data (tool texts, file names, a server's stderr), so
every string goes through grader.escape on its way out: the text report has no control
character but its own line breaks, JSON is always valid, a CSV cell never starts a formula.
No function here raises for any string.
"""

import csv
import io

from grader import exercises
from grader.escape import clean, csv_cell, json_text, one_line
from grader.hosts.protections import OPEN
from grader.spoken import spoken

STATUS = {"passed": "✔", "failed": "✘", "error": "⚠"}
PUBLIC_LEAVES_OUT = ("internal_errors", "warnings")
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
# Hidden tests are shown after the due date: before it, resubmitting cannot be used to probe
# them one case at a time; after it, the learner sees their (redacted) feedback and points.
HIDDEN_VISIBILITY = "after_due_date"
# When Gradescope shows what is withheld (the hidden tests, the summary test, the total).
WHEN = {"after_due_date": "después de la fecha de entrega",
        "after_published": "cuando el profesorado publique las notas",
        "hidden": "después de la fecha de entrega"}


def _number(value):
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return "?"


def _lines(value):
    return clean(value).split("\n")


def text(result):
    lines = _lines(result.get("output", ""))
    lines.append("")
    for test in result.get("tests") or []:
        lines.append(f"{STATUS.get(test.get('status'), '?')} {spoken(test.get('score'))}/"
                     f"{spoken(test.get('max_score'))}  {one_line(test.get('name', ''))}")
        if test.get("status") != "passed":
            lines += ["      " + line for line in _lines(test.get("output", ""))]
    lines += ["", protections_line(result)]
    # the score again at the end, where a long report leaves the reader (the first block of
    # `output`: the submission, its total and each exercise's line, optional ones apart)
    summary = _lines(result.get("output", ""))
    if "" in summary:
        summary = summary[:summary.index("")]
    if len(summary) > 1:  # «Resumen · Puntuación: …»: only the header's line starts with it
        lines += ["", f"Resumen · {summary[1]}", *summary[2:]]
    return "\n".join(lines) + "\n"


def protections_line(result):
    """One line: the isolation mode and which protections were in force, which were not."""
    protections = result.get("protections") or {}
    active, missing = [], []
    for key, value in protections.items():
        if key in ("mode", "self_check"):
            continue
        if value is True:
            active.append(one_line(key))
        elif value is False:
            missing.append(one_line(key))
        elif isinstance(value, list) and value:
            shown = ", ".join(one_line(v) for v in value) if len(value) <= 4 \
                else f"{len(value)} llamadas"
            # a list of what is not closed (counters_visible) is shown with what is missing
            (missing if key in OPEN else active).append(f"{one_line(key)} ({shown})")
    return (f"Aislamiento ({one_line(protections.get('mode', '?'))}): " + ", ".join(active)
            + (f"; NO disponibles: {', '.join(missing)}" if missing else ""))


def json_line(result):
    public = {k: v for k, v in result.items() if k not in PUBLIC_LEAVES_OUT}
    return json_text(public) + "\n"


def gradescope(result, hidden_visibility=HIDDEN_VISIBILITY):
    """Gradescope's results.json, with only the fields its specification documents: top level
    score, output, output_format, visibility, stdout_visibility, extra_data, tests; per test
    score, max_score, status ("passed"/"failed"), name, number, output, output_format, tags,
    visibility, extra_data.

    Hidden means hidden (grader/README.md, *Gradescope*): unless `hidden_visibility` is
    "visible", nothing a learner sees before the due date depends on a hidden test. The top-level
    `output` (always shown) is the report of the public tests only (`public_output`); hidden
    tests carry their redacted output and `hidden_visibility`; a zero-point summary test with the
    hidden subtotals is shown when they are (after the due date when they are `hidden`, so that
    Gradescope withholds the total, which includes their points, until then); the run's
    duration, which hidden tests lengthen, is only in `extra_data`."""
    tests, hidden_points, hidden_score, split = [], 0, 0.0, []
    withheld = hidden_visibility != "visible"
    for number, test in enumerate(result.get("tests") or [], 1):
        hidden = bool(test.get("hidden"))
        if hidden and not exercises.optional(test.get("exercise")):
            hidden_points += _points(test.get("max_score"))
            hidden_score += _points(test.get("score"))
        tests.append({
            "name": test.get("name", ""), "number": str(number),
            "score": test.get("score", 0), "max_score": test.get("max_score", 0),
            "status": "passed" if test.get("status") == "passed" else "failed",
            "output": test.get("output", ""), "output_format": "text",
            "tags": [test.get("exercise", ""), "oculta" if hidden else "pública"],
            "visibility": hidden_visibility if hidden else "visible",
            "extra_data": {"id": test.get("id", ""), "hidden": hidden,
                           "status": test.get("status")}})
    output = result.get("output", "")
    if withheld and hidden_points:
        output = result.get("public_output") or output
        when = WHEN[hidden_visibility]
        output += f"\nPruebas ocultas: {spoken(hidden_points)} puntos más. " + (
            f"No se muestran; la nota total, que las incluye, se muestra {when}."
            if hidden_visibility == "hidden" else
            f"Se muestran, con la nota total (que las incluye), {when}.")
        graded = sorted({t.get("exercise", "") for t in result.get("tests") or []
                         if t.get("hidden") and not exercises.optional(t.get("exercise"))})
        for exercise in graded:
            mine = [t for t in result["tests"] if t.get("hidden") and t.get("exercise") == exercise]
            split.append(f"{one_line(exercise)}: ocultas "
                         f"{spoken(sum(_points(t.get('score')) for t in mine))} / "
                         f"{spoken(sum(_points(t.get('max_score')) for t in mine))}")
        tests.append({
            "name": "Pruebas ocultas y nota total", "number": str(len(tests) + 1),
            "score": 0, "max_score": 0,
            "status": "passed" if hidden_score == hidden_points else "failed",
            "output": f"Pruebas ocultas: {spoken(hidden_score)} / {spoken(hidden_points)}\n"
                      + "\n".join(split), "output_format": "text", "tags": ["oculta"],
            "visibility": "after_due_date" if hidden_visibility == "hidden"
            else hidden_visibility,
            "extra_data": {"summary": True}})
    for exercise in exercises.EXERCISES:
        summary = optional_summary(result, exercise, len(tests) + 1, hidden_visibility)
        if summary is not None:
            tests.append(summary)
    return json_text({
        "score": result.get("score", 0),
        "output": clean(output) + "\n" + protections_line(result),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"protections": result.get("protections"),
                       "problems": result.get("problems"), "suite": result.get("suite"),
                       "optional": result.get("optional"),
                       "execution_time": result.get("execution_time", 0)},
    }, indent=1) + "\n"


def optional_summary(result, exercise, number, hidden_visibility):
    """An optional exercise's zero-point summary test (Gradescope): its total, apart from the
    exercises' score. Withheld like the hidden tests when some of its points are hidden. None
    for a required exercise, one not graded, or when it is all that was graded (the top-level
    score is then its own)."""
    if not exercise.optional:
        return None
    mine = [t for t in result.get("tests") or [] if t.get("exercise") == exercise.id]
    if not mine or not any(not exercises.optional(t.get("exercise")) for t in result["tests"]):
        return None
    public = [t for t in mine if not t.get("hidden")]
    hidden = [t for t in mine if t.get("hidden")]
    name = exercise.shown[:1].upper() + exercise.shown[1:].split(" (")[0]
    lines = [f"{name} (opcional): {spoken(sum(_points(t.get('score')) for t in mine))} / "
             f"{spoken(sum(_points(t.get('max_score')) for t in mine))}, aparte de la nota de los "
             "ejercicios (no suma ni resta en ella).",
             f"Públicas: {spoken(sum(_points(t.get('score')) for t in public))} / "
             f"{spoken(sum(_points(t.get('max_score')) for t in public))}"]
    if hidden:
        lines.append(f"Ocultas: {spoken(sum(_points(t.get('score')) for t in hidden))} / "
                     f"{spoken(sum(_points(t.get('max_score')) for t in hidden))}")
    withheld = hidden and hidden_visibility != "visible"
    visibility = ("after_due_date" if hidden_visibility == "hidden" else hidden_visibility) \
        if withheld else "visible"
    return {"name": f"{name} (opcional): total aparte", "number": str(number), "score": 0,
            "max_score": 0,
            "status": "passed" if all(t.get("score") == t.get("max_score") for t in mine)
            else "failed",
            "output": "\n".join(lines), "output_format": "text", "tags": [exercise.id],
            "visibility": visibility, "extra_data": {"summary": exercise.id}}


def _points(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if number == number and abs(number) != float("inf") else 0.0


SELF_CHECK = "no: autoevaluación en modo local (sin aislamiento), no es la nota oficial"
PUBLIC_ONLY = "no: solo las pruebas públicas"


def official(result):
    """The gradebook's `oficial` cell: "sí", or why this row is not an official grade (a
    self-check host graded it, or only the public tests ran)."""
    if (result.get("protections") or {}).get("self_check"):
        return SELF_CHECK
    return "sí" if result.get("suite", "all") == "all" else PUBLIC_ONLY


def gradebook(results):
    """One CSV row per submission: whether it is an official grade (`oficial`: a self-check
    host's row, or a public-only one, says it is not), the exercises' total, each optional
    exercise's total (`reto`, `reto_max_score`, ...: empty when it was not graded), then one
    column per test (in test order)."""
    names = []
    for result in results:
        for test in result.get("tests") or []:
            if test.get("name") not in names:
                names.append(test.get("name"))
    out = io.StringIO()
    writer = csv.writer(out)
    apart = sorted(exercises.OPTIONAL, key=exercises.IDS.index)
    writer.writerow(["submission", "oficial", "score", "max_score",
                     *[column for name in apart for column in (name, f"{name}_max_score")],
                     *[csv_cell(n) for n in names], "problems"])
    for result in results:
        scores = {t.get("name"): t.get("score") for t in result.get("tests") or []}
        totals = {part.get("exercise"): part for part in result.get("optional") or []}
        writer.writerow([csv_cell(result.get("submission", "")), official(result),
                         _number(result.get("score")),
                         _number(result.get("max_score")),
                         *[_number(totals[name][k]) if name in totals else ""
                           for name in apart for k in ("score", "max_score")],
                         *[_number(scores[n]) if n in scores else "" for n in names],
                         csv_cell(" | ".join(one_line(p) for p in result.get("problems") or []))])
    return out.getvalue()
