"""Build the two editions of the course from this repository (the instructor's source).

    python3 release/build.py [--out build/release]

- `student/`: the repository a learner clones (a git repository with one commit, ready to
  publish, e.g. as a GitHub Classroom template). Everything tracked here except what only the
  instructor may see (INSTRUCTOR_ONLY): the reference solutions, the hidden grading tests, the
  tests that need them, and this folder. Its README is `release/student/README.md`.
- `autograder.zip`: Gradescope's format (`setup.sh` and `run_autograder` at the root, the grader
  with its public and hidden tests, the server code, pinned requirements). No reference.

After building, `check_no_leak` reads every file of the student edition and fails the build if
any carries a line of a reference solution, the name or a line of a hidden test, or one of the
instructor-only paths. The same check runs in the tests (tests/instructor/test_release.py).

Deliberate simplifications: stdlib only; the student edition is a snapshot of the tracked files
(uncommitted changes are included as they are in the working tree, and said so); one commit.
"""

import argparse
import ast
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(REPO, "release")

INSTRUCTOR_ONLY = (
    "release/*",                      # this builder, the editions' templates
    "grader/reference/*",             # the reference solutions
    "grader/checks/hidden/*",         # hidden grading tests
    "tests/instructor/*",             # tests that need the reference or hidden tests
    "tests/grader/*",                 # the grader's own tests (reference, hostile catalogue)
    "tests/browser/test_reference_*",  # browser journeys that type the reference solutions
    "benchmarks/grader_bench.py",     # grades the reference
)
REPLACED = {"README.md": "release/student/README.md"}
AUTOGRADER_FILES = ("code/*", "grader/*")
AUTOGRADER_EXCLUDED = ("grader/reference/*",)
AUTOGRADER_TEMPLATES = ("setup.sh", "run_autograder", "requirements-autograder.txt")


def tracked_files():
    """Files git tracks here, as they are in the working tree (deleted ones skipped)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    files = [name for name in out.stdout.decode().split("\0") if name]
    return [name for name in files if os.path.isfile(os.path.join(REPO, name))]


def matches(name, patterns):
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def student_files():
    return [name for name in tracked_files() if not matches(name, INSTRUCTOR_ONLY)]


def build_student(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    for name in student_files():
        source = os.path.join(REPO, REPLACED.get(name, name))
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)
    git = ["git", "-c", "user.name=Curso MCP", "-c", "user.email=curso-mcp@example.invalid"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"],
                    ["commit", "-q", "-m", "Roots y Elicitación: edición para estudiantes"]):
        subprocess.run(git + command, cwd=out, check=True)
    return out


def build_autograder(path):
    names = [name for name in tracked_files()
             if matches(name, AUTOGRADER_FILES) and not matches(name, AUTOGRADER_EXCLUDED)]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for template in AUTOGRADER_TEMPLATES:
            info = zipfile.ZipInfo(template)
            info.external_attr = (0o755 if template != "requirements-autograder.txt"
                                  else 0o644) << 16
            with open(os.path.join(RELEASE, "autograder", template), "rb") as handle:
                archive.writestr(info, handle.read())
        for name in names:
            archive.write(os.path.join(REPO, name), name)
    return path


# -- the leak check ---------------------------------------------------------------------------
SECRET_SOURCES = ("grader/reference/soluciones/*.py", "grader/checks/hidden/*.py")
LONG_LINE = 40   # a line this long, from a secret source, is distinctive on its own
WINDOW = 3       # or this many consecutive lines of it, in the same order


def secrets():
    """What must not appear in the student edition: (lines, windows, names), with origins."""
    starters = starter_lines()
    lines, windows, names = {}, {}, {}
    for name in tracked_files():
        if not matches(name, SECRET_SOURCES):
            continue
        with open(os.path.join(REPO, name), encoding="utf-8") as handle:
            text = handle.read()
        body = [normalise(line) for line in text.splitlines()]
        body = [line for line in body if len(line) >= 8 and not line.startswith("#")]
        for line in body:
            if len(line) >= LONG_LINE and line not in starters:
                lines.setdefault(line, name)
        for start in range(len(body) - WINDOW + 1):
            window = tuple(body[start:start + WINDOW])
            if not set(window) <= starters:
                windows.setdefault(window, name)
        if name.startswith("grader/checks/hidden/"):
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                    names.setdefault(node.name, name)
    return lines, windows, names


def starter_lines():
    """Lines of the exercises' starter cells: the skeleton every learner gets anyway."""
    import json
    found = set()
    for name in student_files():
        if name.startswith("lessons/") and name.endswith(".ipynb"):
            with open(os.path.join(REPO, name), encoding="utf-8") as handle:
                cells = json.load(handle)["cells"]
            for cell in cells:
                source = "".join(cell.get("source", []))
                if cell.get("cell_type") == "code" and source.startswith("%%writefile"):
                    found.update(normalise(line) for line in source.splitlines())
    return found


def normalise(line):
    return " ".join(line.strip().split())


def check_no_leak(folder, known=None):
    """Every file of an edition: no instructor path, no distinctive line or run of lines of a
    reference solution or hidden test, no hidden test's name."""
    lines, windows, names = known or secrets()
    found = []
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for file in files:
            path = os.path.join(base, file)
            relative = os.path.relpath(path, folder)
            if matches(relative, INSTRUCTOR_ONLY):
                found.append(f"{relative}: instructor-only file")
                continue
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
            body = [normalise(line) for line in text.splitlines()]
            body = [line for line in body if len(line) >= 8 and not line.startswith("#")]
            present = set(body)
            for line, origin in lines.items():
                if line in present:
                    found.append(f"{relative}: carries {line[:60]!r} from {origin}")
            runs = {tuple(body[i:i + WINDOW]) for i in range(len(body) - WINDOW + 1)}
            for window, origin in windows.items():
                if window in runs:
                    found.append(f"{relative}: carries {window[0][:40]!r}... from {origin}")
            for name, origin in names.items():
                if re.search(rf"\b{name}\b", text):
                    found.append(f"{relative}: names the hidden test {name} ({origin})")
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
    student = build_student(os.path.join(args.out, "student"))
    bundle = build_autograder(os.path.join(args.out, "autograder.zip"))
    leaks = check_no_leak(student)
    if leaks:
        print("LEAK: the student edition carries instructor-only material:", file=sys.stderr)
        for leak in leaks:
            print("  " + leak, file=sys.stderr)
        return 1
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
    print(f"student edition: {student} ({len(student_files())} files, no leak found)")
    print(f"autograder bundle: {bundle} ({len(names)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

