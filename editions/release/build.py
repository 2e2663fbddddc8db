"""Build the two editions of the course from this repository (the instructor's source).

    python3 editions/release/build.py [--out build/release]          (or: make release)

- `student/`: the repository a learner clones (a git repository with one commit, ready to
  publish, e.g. as a GitHub Classroom template). Every tracked file except what only the
  instructor may see (editions/common.py's `INSTRUCTOR_ONLY`: the reference solutions, the
  hidden grading tests, the grader's own tests and catalogues, this folder); a test file whose
  module is marked `pytestmark = pytest.mark.instructor_only("why")` is left out too, and the
  build's output says which and why (tests/reference_audit.py fails, in this source, any
  unmarked shipped test that reads an instructor-only file). Its README is this README with a
  note under the title (`student/nota.md`, here) and its one section for instructors (the link
  to PROFESORADO.md, the instructors' guide, which is instructor-only) left out. Its grader runs
  the public tests only (`grader/checks/hidden/` is not there).
- `autograder.zip`: Gradescope's format (`setup.sh` and `run_autograder` at the root, from
  `autograder/` here), with the grader (public and hidden tests) and the server code. No
  reference solution.

After building, the one leak check (editions/common.py's `check_no_leak`) reads every file of
the student edition and fails the build if any carries an instructor-only path, a distinctive
line or a run of lines of a reference solution or of a hidden test, or a hidden test's name;
`check_bundle` does the same for the bundle, where only the reference is secret.
tests/instructor/test_release.py runs the same checks, and shows they catch planted leaks.

Deliberate simplifications: stdlib only; the student edition is a snapshot of the tracked files
(uncommitted changes are included as they are in the working tree, and said so); one commit.
"""

import argparse
import ast
import os
import shutil
import subprocess
import sys
import zipfile

RELEASE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(RELEASE)))  # editions/common.py
from editions.common import (  # noqa: E402
    INSTRUCTOR_ONLY,
    REFERENCE_SOURCES,
    REPO,
    BuildError,
    check_no_leak,
    leaks_in,
    logger,
    matches,
    read,
    secrets,
    tracked_files,
)

log = logger("release")
# Tests of files that ship, which need instructor-only files, say so with a mark on their module
# (tests/reference_audit.py holds the mark honest: in this source, an unmarked shipped test that
# reads an instructor-only file fails); they are cut out of the student edition and still run
# here.
MARK = "instructor_only"
README = "README.md"
STUDENT_NOTE = "editions/release/student/nota.md"          # goes right under the title
INSTRUCTORS_SECTION = "## Para el profesorado"  # links PROFESORADO.md: left out
AUTOGRADER_FILES = ("code/*", "grader/*")
AUTOGRADER_EXCLUDED = ("grader/reference/*",)
AUTOGRADER_TEMPLATES = ("setup.sh", "run_autograder", "requirements-autograder.txt")


# -- the student edition ------------------------------------------------------------------------
def instructor_only_reason(text):
    """Why a test module is the instructors' own: the text of its module-level
    `pytestmark = pytest.mark.instructor_only("why")` (or one in a list of marks), or None."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            continue
        for call in ast.walk(node.value):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and call.func.attr == MARK:
                words = [arg.value for arg in call.args
                         if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
                return words[0] if words else "marked instructor_only"
    return None


def student_plan():
    """{name: text or None (copied as is)} of the student edition, and the test files left out
    because they are marked instructor_only: [(name, why)]."""
    plan, dropped = {}, []
    for name in tracked_files():
        if matches(name, INSTRUCTOR_ONLY):
            continue
        text = None
        if name.startswith("tests/") and name.endswith(".py"):
            why = instructor_only_reason(read(name))
            if why:
                dropped.append((name, why))
                continue
        if name == README:
            text = student_readme()
        plan[name] = text
    return plan, dropped


def sections(text):
    """[(heading or "", body)] split at the second-level headings."""
    parts, heading, body = [], "", []
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            parts.append((heading, "".join(body)))
            heading, body = line.rstrip("\n"), []
        body.append(line)
    parts.append((heading, "".join(body)))
    return parts


def student_readme():
    """This README, for learners: a note under the title, and the section for instructors (the
    link to PROFESORADO.md, which the student edition does not carry) left out. No other
    section may name PROFESORADO.md: the student edition would point at a file it lacks."""
    parts = sections(read(README))
    if INSTRUCTORS_SECTION not in [heading for heading, _ in parts]:
        raise BuildError(f"README.md has no section {INSTRUCTORS_SECTION!r}")
    out = []
    for heading, body in parts:
        if heading == INSTRUCTORS_SECTION:
            continue
        if "PROFESORADO.md" in body:
            raise BuildError(f"README.md names PROFESORADO.md outside {INSTRUCTORS_SECTION!r} "
                             f"(in {heading or 'its first lines'!r}): the student edition "
                             "has no such file")
        if heading == "":
            title, _, rest = body.partition("\n")
            body = f"{title}\n\n{read(STUDENT_NOTE).rstrip()}\n{rest}"
        out.append(body)
    return "".join(out)


def build_student(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    plan, dropped = student_plan()
    for name, text in plan.items():
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if text is None:
            shutil.copy2(os.path.join(REPO, name), target)
        else:
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
            shutil.copymode(os.path.join(REPO, name), target)
    git = ["git", "-c", "user.name=Curso MCP", "-c", "user.email=curso-mcp@example.invalid",
           "-c", "commit.gpgsign=false"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"],
                    ["commit", "-q", "-m", "Roots y Elicitación: edición para estudiantes"]):
        subprocess.run(git + command, cwd=out, check=True)
    return out, sorted(plan), dropped


# -- the Gradescope bundle --------------------------------------------------------------------
def autograder_files():
    return [name for name in tracked_files()
            if matches(name, AUTOGRADER_FILES) and not matches(name, AUTOGRADER_EXCLUDED)]


def build_autograder(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for template in AUTOGRADER_TEMPLATES:
            info = zipfile.ZipInfo(template)
            info.external_attr = (0o755 if template != "requirements-autograder.txt"
                                  else 0o644) << 16
            with open(os.path.join(RELEASE, "autograder", template), "rb") as handle:
                archive.writestr(info, handle.read())
        for name in autograder_files():
            archive.write(os.path.join(REPO, name), name)
    return path


# -- the leak check of the bundle (the student edition's is editions/common.py's) ----------
def check_bundle(path, known=None):
    """The Gradescope bundle: hidden tests belong there, the reference does not."""
    known = known or secrets(REFERENCE_SOURCES)
    found = []
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            text = archive.read(name).decode("utf-8", "replace")
            found += leaks_in(name, text, known, AUTOGRADER_EXCLUDED)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the student edition and the "
                                                 "Gradescope autograder bundle.")
    parser.add_argument("--out", default=os.path.join(REPO, "build", "release"))
    args = parser.parse_args(argv)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout
    if dirty.strip():
        print("note: uncommitted changes are included as they are in the working tree",
              file=sys.stderr)
    try:
        student, files, dropped = build_student(os.path.join(args.out, "student"))
    except BuildError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    bundle = build_autograder(os.path.join(args.out, "autograder.zip"))
    leaks = check_no_leak(student) + check_bundle(bundle)
    if leaks:
        print("LEAK: an edition carries instructor-only material:", file=sys.stderr)
        for leak in leaks:
            print("  " + leak, file=sys.stderr)
        return 1
    with zipfile.ZipFile(bundle) as archive:
        count = len(archive.namelist())
    for name, why in dropped:
        log(f"left out of the student edition (marked instructor_only: {why}): {name}")
    log(f"student edition: {student} ({len(files)} files, no leak found)")
    log(f"autograder bundle: {bundle} ({count} files, no reference)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
