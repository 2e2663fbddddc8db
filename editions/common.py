"""What every edition's build shares: the repository, how a build fails and logs, what only
instructors may see, the course content the learner-facing sites stage, and the one leak check.

- `INSTRUCTOR_ONLY` is the one list of what no learner-facing edition may carry (the reference
  solutions, the hidden tests, the grader's own tests, the release builder, the instructors'
  guide); the student
  edition leaves it out, the JupyterLite and rendered sites never stage it.
- `check_no_leak(folder)` is the one leak check, run by every build on what it made (the student
  edition, the JupyterLite site's content, the rendered pages): no instructor-only file, no
  distinctive line or run of lines of a reference solution or hidden test, no hidden test's
  name. The secrets are read from this repository; in the student edition there are none, and
  the check still refuses instructor-only paths.
- `stage_content(dest, course)` is the course as the two sites take it: code/ (its .py files,
  folders included), lessons/ (notebooks and UI package) and the public grader, without learner
  files or caches.

Each build (editions/release, editions/lite, editions/rendered) puts the repository on
sys.path and imports this module; it is stdlib only, so any of their Pythons can.

Deliberate simplifications: the files of a folder are what git tracks there (or, outside a git
checkout, every file but caches and environments); a secret is matched as normalised text, so
a reworded copy passes (the check stops accidents, not a determined instructor).
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

INSTRUCTOR_ONLY = (
    "PROFESORADO.md",                  # the instructors' guide: grading, Gradescope, editions
    "editions/release/*",              # the student edition's and Gradescope's builder
    "grader/reference/*",              # the reference solutions
    "grader/checks/hidden/*",          # hidden grading tests
    "tests/instructor/*",              # tests that need the reference, hidden tests, the build
    "tests/grader/*",                  # the grader's own tests and catalogues (reference, nulls)
    "tests/browser/test_reference_*",  # browser journeys that type the reference solutions
    "benchmarks/grader_bench.py",      # grades the reference
    "benchmarks/gradescope_bench.py",  # builds the bundle, grades the reference
    "benchmarks/loop_bench.py",        # checks the reference, as a learner's loop would
)
# Lines of a reference solution that a notebook's statement gives on purpose, so they are no
# secret: the whole −32042 call of exercise 3B's API table and the «no» answer of exercise 2's
# rules (issue 42). tests/instructor/test_release.py checks that each is in a reference and in a
# notebook's text, so the list cannot outlive the statements.
GIVEN_IN_STATEMENTS = (
    "raise URLElicitationRequired([ctx.url_params(MESSAGE, url, flow_id)])",
    'return ok("No se archivó nada.", {"archived": None, "reason": answer.action})',
)
REFERENCE_SOURCES = ("grader/reference/soluciones/*.py",)
HIDDEN_SOURCES = ("grader/checks/hidden/*.py",)
PUBLIC_SOURCES = ("grader/checks/*.py", "grader/checks/public/*.py")
LONG_LINE = 40   # a line this long, from a secret source, is distinctive on its own (anywhere)
WINDOW = 3       # or this many consecutive lines of it, in the same order
NOT_COURSE = {".git", "build", "node_modules", "__pycache__", ".venv", ".venv-lite", ".venv-lab"}
# hidden names too (".ipynb_checkpoints", ".git", the `.tmp-nbval-*` scratch copies the
# notebooks' tests make in lessons/ for a moment while other make test groups build sites)
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "soluciones")


class BuildError(RuntimeError):
    """The build cannot go on; its message says why (and, where it can, what to do)."""


def logger(edition):
    """`log(message)` for one edition's build: one flushed line, prefixed with its name."""
    def log(message):
        print(f"[{edition}] {message}", flush=True)
    return log


def matches(name, patterns):
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def tracked_files(repo=REPO):
    """Files git tracks in `repo`, as they are in the working tree (deleted ones skipped);
    outside a git checkout, every file but caches and environments."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True,
                             check=True).stdout.decode()
        names = [name for name in out.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = [path.relative_to(repo).as_posix() for path in Path(repo).rglob("*")
                 if not NOT_COURSE & set(path.relative_to(repo).parts)]
    return [name for name in names if os.path.isfile(os.path.join(repo, name))]


def read(name, repo=REPO):
    with open(os.path.join(repo, name), encoding="utf-8") as handle:
        return handle.read()


# -- the course content of the two sites ---------------------------------------------------------
def stage_content(dest, repo=REPO):
    """The sites' content from a course folder: code/'s .py files (its folders too), lessons/
    (notebooks and UI module) and the public grader, without learner files, caches or anything
    instructor-only."""
    dest, repo = Path(dest), Path(repo)
    (dest / "code").mkdir(parents=True)
    for module in sorted((repo / "code").rglob("*.py")):  # its top and its layers' folders
        if "__pycache__" not in module.parts:
            inside = module.relative_to(repo / "code")
            (dest / "code" / inside.parent).mkdir(parents=True, exist_ok=True)
            shutil.copy2(module, dest / "code" / inside)
    shutil.copytree(repo / "lessons", dest / "lessons", ignore=SKIP)
    if (repo / "grader").is_dir():
        def skip(folder, names):
            inside = Path(folder).relative_to(repo).as_posix()
            return set(SKIP(folder, names)) | {
                name for name in names if matches(f"{inside}/{name}", INSTRUCTOR_ONLY)
                or matches(f"{inside}/{name}/", INSTRUCTOR_ONLY)}
        shutil.copytree(repo / "grader", dest / "grader", ignore=skip)
    check_content(dest)
    return dest


def check_content(content):
    """Fail loudly if the sites' content carries anything instructor-only (they are for
    learners): the one leak check."""
    leaks = check_no_leak(content)
    if leaks:
        raise BuildError("instructor-only material in the site's content; build from the "
                         "student edition (`make release`, then `make lite`):\n  "
                         + "\n  ".join(leaks[:20]))


# -- the leak check ---------------------------------------------------------------------------
def normalise(line):
    return " ".join(line.strip().split())


def meaningful(text):
    lines = [normalise(line) for line in text.splitlines()]
    return [line for line in lines if len(line) >= 8 and not line.startswith("#")]


def starter_lines(files):
    """Lines of the exercises' starter cells: the skeleton every learner gets anyway."""
    found = set()
    for name in files:
        if name.startswith("lessons/") and name.endswith(".ipynb"):
            for cell in json.loads(read(name))["cells"]:
                source = "".join(cell.get("source", []))
                if cell.get("cell_type") == "code" and source.startswith("%%writefile"):
                    for line in source.splitlines():
                        # the line as given, and its code without a trailing comment
                        # (an import line that ends in a linter directive, say)
                        found.update((normalise(line), normalise(line.split("  #")[0])))
    return found


def secrets(sources=REFERENCE_SOURCES + HIDDEN_SOURCES):
    """What must not appear in an edition: (lines, windows, names), each with its origin. A line
    or run of lines is secret only if it is not also in the public grading code, a starter or
    GIVEN_IN_STATEMENTS."""
    files = tracked_files()
    common = starter_lines(files) | {normalise(line) for line in GIVEN_IN_STATEMENTS}
    for name in files:
        if matches(name, PUBLIC_SOURCES):
            common.update(meaningful(read(name)))
    lines, windows, names = {}, {}, {}
    for name in files:
        if not matches(name, sources):
            continue
        text = read(name)
        body = meaningful(text)
        for line in body:
            if len(line) >= LONG_LINE and line not in common:
                lines.setdefault(line, name)
        for start in range(len(body) - WINDOW + 1):
            window = tuple(body[start:start + WINDOW])
            if not set(window) <= common:
                windows.setdefault(window, name)
        if matches(name, HIDDEN_SOURCES):
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                    names.setdefault(node.name, name)
    return lines, windows, names


def readable(relative, text):
    """What a person reads in a file: a notebook's cell sources and text outputs, not its JSON
    (where a pasted line is one escaped string among others)."""
    if not relative.endswith(".ipynb"):
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return text
    parts = []
    for cell in cells:
        source = cell.get("source", "")
        parts.append("".join(source) if isinstance(source, list) else str(source))
        for output in cell.get("outputs", []):
            for value in [output.get("text", "")] + list((output.get("data") or {}).values()):
                parts.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(parts)


def leaks_in(relative, text, known, forbidden_paths=INSTRUCTOR_ONLY):
    lines, windows, names = known
    if matches(relative, forbidden_paths):
        return [f"{relative}: instructor-only file"]
    text = readable(relative, text)
    found = []
    body = meaningful(text)
    flat = normalise(text)  # a distinctive line counts anywhere: inline in prose too
    for line, origin in lines.items():
        if line in flat:
            found.append(f"{relative}: carries {line[:60]!r} from {origin}")
    runs = {tuple(body[i:i + WINDOW]) for i in range(len(body) - WINDOW + 1)}
    for window, origin in windows.items():
        if window in runs:
            found.append(f"{relative}: carries {window[0][:40]!r}... from {origin}")
    for name, origin in names.items():
        if re.search(rf"\b{name}\b", text):
            found.append(f"{relative}: names the hidden test {name} ({origin})")
    return found


def check_no_leak(folder, known=None):
    """Every file of a learner-facing edition: no instructor path, no distinctive line or run
    of lines of a reference solution or hidden test, no hidden test's name."""
    known = known or secrets()
    found = []
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for file in files:
            path = os.path.join(base, file)
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
            found += leaks_in(os.path.relpath(path, folder).replace(os.sep, "/"), text, known)
    return found
