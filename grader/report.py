"""Output formats for graded submissions: text, JSON Lines, CSV and Gradescope results.json.

Every format is built from the result dicts of grader.runner.grade; nothing here grades.
Feedback is the Spanish `output` of each test; instructors' details (internal errors) go to
stderr, never into what a learner sees.
"""

import csv
import io
import json

STATUS = {"passed": "✔", "failed": "✘", "error": "⚠"}


def text(result):
    lines = [result["output"], ""]
    for test in result["tests"]:
        lines.append(f"{STATUS.get(test['status'], '?')} {test['score']:g}/{test['max_score']:g}"
                     f"  {test['name']}")
        if test["status"] != "passed":
            lines += ["      " + line for line in test["output"].splitlines()]
    protections = result.get("protections") or {}
    active = [k for k, v in protections.items() if v is True]
    missing = [k for k, v in protections.items() if v is False]
    lines += ["", f"Aislamiento ({protections.get('mode', '?')}): "
              + ", ".join(active) + (f"; NO disponibles: {', '.join(missing)}" if missing
                                     else "")]
    return "\n".join(lines) + "\n"


def json_line(result):
    public = {k: v for k, v in result.items() if k != "internal_errors"}
    return json.dumps(public, ensure_ascii=False) + "\n"


def gradescope(result):
    """The Gradescope autograder results.json shape."""
    return json.dumps({
        "score": result["score"],
        "execution_time": result.get("execution_time", 0),
        "output": result["output"],
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{"name": t["name"], "score": t["score"], "max_score": t["max_score"],
                   "status": t["status"], "output": t["output"], "visibility": "visible"}
                  for t in result["tests"]],
        "extra_data": {"protections": result.get("protections"),
                       "problems": result.get("problems")},
    }, ensure_ascii=False, indent=1) + "\n"


def gradebook(results):
    """One CSV row per submission: total, then one column per test (in test order)."""
    names = []
    for result in results:
        for test in result["tests"]:
            if test["name"] not in names:
                names.append(test["name"])
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["submission", "score", "max_score", *names, "problems"])
    for result in results:
        scores = {t["name"]: t["score"] for t in result["tests"]}
        writer.writerow([result["submission"], f"{result['score']:g}",
                         f"{result['max_score']:g}",
                         *[f"{scores[n]:g}" if n in scores else "" for n in names],
                         " | ".join(result.get("problems") or [])])
    return out.getvalue()
