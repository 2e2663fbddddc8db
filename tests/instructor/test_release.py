"""`make release`: the student edition and the Gradescope bundle, as learners and Gradescope
get them.

- the build gives both editions and its leak check passes; the check is seen to catch a hidden
  test, a reference line and an instructor-only file planted in the student edition;
- the student edition, cloned into a temporary folder, runs its own demo, and the tests it
  ships that differ from this repository's (the exercise cells: `ui.revisar` on the starters
  scores 0 with the public tests only) pass there, reusing this repository's .venv;
- the bundle, unpacked into an /autograder-style folder (AUTOGRADER_ROOT) and run as Gradescope
  runs it (setup.sh once, which installs the grader's packages from the registry, then
  run_autograder per submission), gives the reference full marks and the starter zero, writes
  results.json with only Gradescope's documented fields, and, in the plain sandbox mode a
  container may force, keeps a hostile submission from reading the hidden tests, writing the
  results or reaching the network; run_autograder is also run the way a Docker container runs
  it (root without CAP_SYS_ADMIN, namespaces refused: tests/grader/nonamespaces.py), where the
  grader falls back to plain mode by itself and says so in results.json.
"""

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from conftest import REFERENCE, REPO
from grading_points import OPTIONAL_FULL, PUBLIC_TOTAL, TOTAL

sys.path.insert(0, str(REPO))  # editions/ is a package at the top level
from editions import common  # noqa: E402  (the one leak check)
from editions.release import build as builder  # noqa: E402  (editions/release/build.py)

STARTER = REPO / "tests" / "grader" / "fixtures" / "starter.ipynb"
CONTAINER = REPO / "tests" / "grader" / "nonamespaces.py"  # root, namespaces refused
NOTEBOOK = REPO / "grader" / "reference" / "solucion.ipynb"
TOP_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format",
              "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
              "leaderboard"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output",
               "output_format", "tags", "visibility", "extra_data"}
VISIBILITIES = {"visible", "hidden", "after_due_date", "after_published"}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    run = subprocess.run([sys.executable, str(REPO / "editions" / "release" / "build.py"), "--out",
                          str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return out / "student", out / "autograder.zip", run.stdout


def files_of(folder):
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(folder).parts}


def tracked_test_files():
    return [name for name in common.tracked_files()
            if name.startswith("tests/") and name.endswith(".py")]


# -- the student edition ------------------------------------------------------------------------
def test_the_student_edition_is_a_git_repository_without_anything_instructor_only(release):
    student, _, output = release
    log = subprocess.run(["git", "log", "--oneline"], cwd=student, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(log) == 1
    files = files_of(student)
    assert {"README.md", "Makefile", "code/main.py", "grader/checks/public/test_ej2.py",
            "lessons/02_formularios.ipynb", "tests/notebooks/test_exercise_cells.py"} <= files
    for prefix in ("grader/reference/", "grader/checks/hidden/", "tests/grader/",
                   "tests/instructor/", "editions/release/"):
        assert not [f for f in files if f.startswith(prefix)], prefix
    assert "no leak found" in output


def test_tests_marked_instructor_only_are_left_out_and_said_so(release):
    student, _, output = release
    cells = (student / "tests/notebooks/test_exercise_cells.py").read_text()
    assert "def test_starter_scores_zero_through_revisar" in cells
    assert (student / "tests/browser/test_every_notebook.py").exists()  # the starters' journeys
    assert not (student / "tests/browser/test_reference_every_notebook.py").exists()
    marked = [name for name in tracked_test_files()
              if builder.instructor_only_reason((REPO / name).read_text())]
    assert "tests/notebooks/test_try_flow_reference.py" in marked
    for name in marked:
        why = builder.instructor_only_reason((REPO / name).read_text())
        assert f"left out of the student edition (marked instructor_only: {why}): {name}" \
            in output
        assert not (student / name).exists()
    for name in files_of(student):
        if name.startswith("tests/") and name.endswith(".py"):
            assert builder.instructor_only_reason((student / name).read_text()) is None, name


def test_the_build_reads_the_mark_of_a_module_and_nothing_else():
    reason = builder.instructor_only_reason
    assert reason('import pytest\npytestmark = pytest.mark.instructor_only("runs 3B")\n') == \
        "runs 3B"
    assert reason("import pytest\npytestmark = [pytest.mark.timeout(9),\n"
                  "              pytest.mark.instructor_only('reads it')]\n") == "reads it"
    assert reason("pytestmark: list = [pytest.mark.instructor_only()]\n") == \
        "marked instructor_only"
    # how a file spells the reference is not the mark: the audit holds what it reads
    assert reason('REFERENCE = REPO / "grader" / "reference" / "soluciones"\n') is None
    assert reason('"""Needs grader/reference."""\nfrom mutants import MUTANTS\n') is None
    assert reason("@pytest.mark.instructor_only('one test')\ndef test_x():\n    pass\n") \
        is None
    assert reason("def broken(:\n") is None


def test_the_student_edition_has_the_learners_readme_and_the_maintainers_guide_not_ours(release):
    student, _, _ = release
    readme = (student / "README.md").read_text()
    original = (REPO / "README.md").read_text()
    assert "Edición para estudiantes" in readme
    assert builder.INSTRUCTORS_SECTION in original and builder.INSTRUCTORS_SECTION not in readme
    assert "PROFESORADO.md" not in readme and not (student / "PROFESORADO.md").exists()
    for kept in ("## Para empezar", "## Mapa del curso", "## Cómo entregar",
                 "## Para quien mantiene el curso"):
        assert readme.split(kept)[1].split("\n## ")[0] == \
            original.split(kept)[1].split("\n## ")[0], kept
    guide = "## Using the server with real clients"  # tests/clients read it
    assert (student / "MAINTAINERS.md").read_text() == (REPO / "MAINTAINERS.md").read_text()
    assert guide in (student / "MAINTAINERS.md").read_text()


def test_a_readme_that_names_the_instructors_guide_elsewhere_does_not_build(monkeypatch):
    original = builder.read(builder.README)
    leaky = original.replace("## Cómo entregar\n", "## Cómo entregar\n\nVer PROFESORADO.md.\n", 1)
    monkeypatch.setattr(builder, "read", lambda name: leaky if name == builder.README
                        else common.read(name))
    with pytest.raises(common.BuildError, match="PROFESORADO.md"):
        builder.student_readme()


def test_the_reference_lines_a_statement_gives_are_in_a_reference_and_in_a_notebooks_text():
    references = "\n".join(common.normalise(line) for path in sorted(REFERENCE.glob("*.py"))
                           for line in path.read_text().splitlines())
    notebooks = " ".join(common.normalise(common.readable(path.name, path.read_text()))
                         for path in sorted((REPO / "lessons").glob("*.ipynb"))
                         if not path.name.startswith("."))
    for line in common.GIVEN_IN_STATEMENTS:
        assert common.normalise(line) in references.splitlines(), line
        assert common.normalise(line) in notebooks, line


def test_the_leak_check_catches_a_hidden_test_a_reference_line_and_an_instructor_file(
        release, tmp_path):
    student, _, _ = release
    copy = tmp_path / "student"
    shutil.copytree(student, copy, ignore=shutil.ignore_patterns(".git"))
    assert common.check_no_leak(copy) == []
    hidden = REPO / "grader" / "checks" / "hidden" / "test_ej4_hidden.py"
    shutil.copy(hidden, copy / "grader" / "checks" / "public" / "extra.py")
    notebook = copy / "lessons" / "01_roots.ipynb"
    cells = json.loads(notebook.read_text())
    line = "        if where is None or not change.new_roots.contains(where):\n"
    assert line in (REFERENCE / "ejercicio4.py").read_text()
    cells["cells"][0]["source"].append(line)
    notebook.write_text(json.dumps(cells))
    (copy / "grader" / "reference").mkdir()
    (copy / "grader" / "reference" / "x.py").write_text("x = 1\n")
    leaks = "\n".join(common.check_no_leak(copy))
    assert "grader/checks/public/extra.py: names the hidden test" in leaks
    assert "lessons/01_roots.ipynb: carries" in leaks and "ejercicio4.py" in leaks
    assert "grader/reference/x.py: instructor-only file" in leaks


@pytest.fixture(scope="module")
def student_clone(release, tmp_path_factory):
    student, _, _ = release
    clone = tmp_path_factory.mktemp("clone") / "curso"
    subprocess.run(["git", "clone", "-q", str(student), str(clone)], check=True)
    return clone


def test_the_cloned_student_edition_runs_its_demo(student_clone):
    run = subprocess.run([sys.executable, "code/main.py"], cwd=student_clone,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "elicitation/create" in run.stdout and "roots/list" in run.stdout


def test_the_cloned_student_edition_passes_its_own_exercise_tests(student_clone):
    """The shipped tests that differ from this repository's: revisar on the starters gives 0,
    with the public tests only (there are no others there)."""
    env = {**os.environ, "LESSON_USER": "scripted"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/notebooks/test_exercise_cells.py"], cwd=student_clone,
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout


def test_the_student_grader_has_only_the_public_suite_and_says_so(student_clone):
    run = subprocess.run([sys.executable, "-m", "grader", str(STARTER), "--format", "json"],
                         cwd=student_clone, capture_output=True, text=True, timeout=600)
    result = json.loads(run.stdout)
    assert run.returncode == 1, run.stderr[-2000:]
    assert result["suite"] == "public" and result["score"] == 0
    assert result["max_score"] == PUBLIC_TOTAL and not any(t["hidden"] for t in result["tests"])
    assert "Solo pruebas públicas" in result["notice"]


# -- the Gradescope bundle ----------------------------------------------------------------------
def test_the_bundle_has_gradescopes_layout_the_hidden_tests_and_no_reference(release):
    _, bundle, _ = release
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
    assert {"setup.sh", "run_autograder", "requirements-autograder.txt"} <= names
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    assert {"grader/checks/hidden/test_ej2_hidden.py", "grader/checks/public/test_ej2.py",
            "code/main.py"} <= names
    assert not [n for n in names if n.startswith("grader/reference/")]
    assert builder.check_bundle(bundle) == []


HOSTILE = '''
import json
import os
import socket

from extension import Extension

extension = Extension()
ROOT = {root!r}


def attempt(action):
    try:
        return "ok " + repr(action())[:30]
    except Exception as exc:
        return type(exc).__name__


control = attempt(lambda: open(os.path.join(ROOT, "run_autograder")).read())
hidden = attempt(lambda: open(os.path.join(ROOT, "source", "grader", "checks", "hidden",
                                            "test_ej2_hidden.py")).read())
listing = attempt(lambda: os.listdir(os.path.join(ROOT, "source")))
fake = {{"score": 75, "tests": [], "output": "trampa"}}
written = attempt(lambda: open(os.path.join(ROOT, "results", "results.json"), "w").write(
    json.dumps(fake)))
network = attempt(lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))


@extension.tool("notes_archive", description="x",
                input_schema={{"type": "object", "required": ["title"],
                              "properties": {{"title": {{"type": "string"}}}}}},
                annotations={{"readOnlyHint": False, "destructiveHint": True}})
def notes_archive(ctx, title):
    return (f"lectura-control: {{control}}; lectura-oculta: {{hidden}}; "
            f"listado: {{listing}}; escritura: {{written}}; red: {{network}}")
'''


@pytest.fixture(scope="module")
def autograder(release):
    """An /autograder-style folder (world-traversable, like Gradescope's), after setup.sh."""
    _, bundle, _ = release
    root = Path(tempfile.mkdtemp(prefix="autograder-", dir="/tmp"))
    os.chmod(root, 0o755)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) or 0o644)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root, env=env,
                           capture_output=True, text=True, timeout=900)
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    yield root, env
    shutil.rmtree(root, ignore_errors=True)


def grade_as_gradescope(root, env, files, container=False, **extra_env):
    """run_autograder on `files`; `container`: as Docker runs it (namespaces refused)."""
    submission = root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    submission.mkdir()
    for name, text in files.items():
        (submission / name).write_text(text, encoding="utf-8")
    launcher = [sys.executable, str(CONTAINER)] if container else []
    if container == "no-landlock":  # a container whose seccomp profile refuses Landlock too
        launcher.append("--no-landlock")
    run = subprocess.run([*launcher, str(root / "run_autograder")], cwd=root,
                         env={**env, **extra_env}, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


def assert_gradescope_fields(results):
    assert set(results) <= TOP_FIELDS, set(results) - TOP_FIELDS
    assert isinstance(results["score"], (int, float)) and results["visibility"] in VISIBILITIES
    for test in results["tests"]:
        assert set(test) <= TEST_FIELDS, set(test) - TEST_FIELDS
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in VISIBILITIES
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], int)


@pytest.fixture(scope="module")
def reference_results(autograder):
    root, env = autograder
    return grade_as_gradescope(root, env, {"solucion.ipynb": NOTEBOOK.read_text()})


def test_gradescope_gives_the_reference_full_marks(reference_results):
    results = reference_results
    assert_gradescope_fields(results)
    exercises = [t for t in results["tests"] if not set(t["tags"]) & set(OPTIONAL_FULL)]
    assert results["score"] == sum(t["max_score"] for t in exercises) == TOTAL
    # the optional ones (reto.py, and 3B's 2026-07-28 part, in the reference notebook too) are
    # counted apart, each with its summary
    for name, points in OPTIONAL_FULL.items():
        assert sum(t["max_score"] for t in results["tests"] if name in t["tags"]) == points
    assert results["extra_data"]["optional"] == [
        {"exercise": name, "score": points, "max_score": points}
        for name, points in OPTIONAL_FULL.items()]
    hidden = [t for t in results["tests"] if "oculta" in t["tags"]]
    summary = [t for t in results["tests"] if t["extra_data"].get("summary") in OPTIONAL_FULL]
    assert hidden and {t["visibility"] for t in hidden} == {"after_due_date"}
    assert [t["visibility"] for t in summary] == ["after_due_date"] * 2  # totals count hidden
    assert {t["visibility"] for t in results["tests"] if t not in hidden + summary} == \
        {"visible"}
    assert results["extra_data"]["protections"]["mode"] in ("root", "userns", "plain")
    assert "Aislamiento (" in results["output"]


def test_gradescope_gives_the_starter_zero(autograder, reference_results):
    root, env = autograder
    results = grade_as_gradescope(root, env, {"entrega.ipynb": STARTER.read_text()})
    assert_gradescope_fields(results)
    assert results["score"] == 0  # on the same tests as the reference (and the hidden summary)
    assert [t["name"] for t in results["tests"]] == \
        [t["name"] for t in reference_results["tests"] if "reto" not in t["tags"]
         and t["extra_data"].get("summary") != "reto"]  # the starter brings no reto.py


def seen_before_the_due_date(results):
    """What Gradescope shows a learner before the due date, by its documented rules: the
    top-level output, the tests marked visible, and the total only while no test is withheld
    (after_due_date or after_published)."""
    withheld = any(t["visibility"] in ("after_due_date", "after_published")
                   for t in results["tests"])
    return {"output": results["output"],
            "tests": [t for t in results["tests"] if t["visibility"] == "visible"],
            "total": None if withheld else results["score"]}


@pytest.mark.parametrize("mode", ["root", "plain"])
def test_before_the_due_date_a_learner_sees_the_same_whatever_the_hidden_tests_gave(
        autograder, mode):
    """The reference and a solution that fails only hidden tests (its reaction revokes every
    handle when a root it had not seen before is shared: a narrowed root, a URI with ..),
    graded as Gradescope runs the bundle: what a learner sees before the due date is
    identical, and the total is withheld."""
    root, env = autograder
    forced = {"GRADER_SANDBOX": "plain"} if mode == "plain" else {}
    reference = {name: (REFERENCE / name).read_text() for name in
                 ("ejercicio2.py", "ejercicio3a.py", "ejercicio3b.py", "ejercicio4.py")}
    wrong = dict(reference)
    reaction = ("        if where is None or not change.new_roots.contains(where):\n"
                "            change.revoke(handle, \"su nota quedó fuera de las roots\")\n")
    assert wrong["ejercicio4.py"].count(reaction) == 1
    wrong["ejercicio4.py"] = wrong["ejercicio4.py"].replace(reaction, (
        "        known = {root.path for root in change.old_roots.roots}\n"
        "        fresh = any(root.path not in known for root in change.new_roots.roots)\n"
        "        if fresh or where is None or not change.new_roots.contains(where):\n"
        "            change.revoke(handle)\n"))
    good = grade_as_gradescope(root, env, reference, **forced)
    bad = grade_as_gradescope(root, env, wrong, **forced)
    assert good["score"] == TOTAL and bad["score"] < TOTAL
    assert seen_before_the_due_date(good) == seen_before_the_due_date(bad)
    assert seen_before_the_due_date(bad)["total"] is None
    assert "ocultas" not in bad["output"].lower().split("pruebas ocultas:")[0]
    assert "execution_time" not in bad and "execution_time" in bad["extra_data"]


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1 that a learner's code must never reach (stopped here)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    sock.setblocking(False)
    yield sock
    sock.close()


def assert_nothing_connected(sock):
    with pytest.raises(BlockingIOError):
        sock.accept()


@pytest.mark.parametrize("how", ["GRADER_SANDBOX=plain", "container"])
def test_in_the_plain_mode_the_learner_cannot_read_the_hidden_tests_nor_reach_the_network(
        autograder, listener, how):
    root, env = autograder
    hostile = HOSTILE.format(root=str(root), port=listener.getsockname()[1])
    extra = {"container": True} if how == "container" else {"GRADER_SANDBOX": "plain"}
    results = grade_as_gradescope(root, env, {"ejercicio2.py": hostile}, **extra)
    assert_gradescope_fields(results)
    assert results["extra_data"]["protections"]["mode"] == "plain"
    assert results["extra_data"]["protections"]["unprivileged_uid"] is True
    assert "Aislamiento (plain): " in results["output"]
    everything = json.dumps(results, ensure_ascii=False)
    # without Landlock the folder is reachable and the chmod is what holds; with it, nothing
    # outside the sandbox's own folders and the system's is
    landlock = results["extra_data"]["protections"]["landlock"]
    assert ("lectura-control: PermissionError" if landlock else "lectura-control: ok") \
        in everything
    assert "lectura-oculta: PermissionError" in everything
    assert "listado: PermissionError" in everything
    assert "escritura: PermissionError" in everything
    assert "red: PermissionError" in everything
    assert_nothing_connected(listener)
    assert results["score"] == 0 and results["output"] != "trampa"
    assert "test_roots_change_while_the_form_is_open" not in results["output"]


def test_in_a_container_that_refuses_namespaces_the_reference_keeps_full_marks(autograder):
    root, env = autograder
    results = grade_as_gradescope(root, env, {"solucion.ipynb": NOTEBOOK.read_text()},
                                  container=True)
    assert_gradescope_fields(results)
    assert results["score"] == TOTAL, results["output"]
    assert results["extra_data"]["protections"]["mode"] == "plain"
    assert results["extra_data"]["protections"]["sockets_denied"] is True
    assert "Aislamiento (plain): " in results["output"]


METADATA_SPY = '''
import json
import os

from extension import Extension

extension = Extension()
try:
    with open({path!r}) as handle:
        earlier = handle.read()
except OSError as exc:
    earlier = type(exc).__name__
raise RuntimeError("mis entregas anteriores: " + earlier)
'''
CANARY = "canario-de-entregas-anteriores"


def test_without_landlock_the_learner_cannot_read_its_earlier_submissions(autograder):
    """Gradescope's submission_metadata.json says how this learner's earlier submissions did
    (their totals, the hidden tests' statuses): run_autograder makes it root's, so that the
    learner's code cannot echo it into the output everyone sees at once."""
    root, env = autograder
    meta = root / "submission_metadata.json"
    meta.write_text(json.dumps({"previous_submissions": [{"score": 88.5, "results": {
        "tests": [{"name": "oculta", "status": CANARY}]}}]}))
    os.chmod(meta, 0o644)  # as Gradescope leaves it
    try:
        results = grade_as_gradescope(root, env, {"ejercicio2.py": METADATA_SPY.format(
            path=str(meta))}, container="no-landlock")
        assert results["extra_data"]["protections"]["mode"] == "plain"
        assert results["extra_data"]["protections"]["landlock"] is None
        everything = json.dumps(results, ensure_ascii=False)
        assert CANARY not in everything and "88.5" not in everything
        assert "mis entregas anteriores: PermissionError" in everything
        assert stat.S_IMODE(os.stat(meta).st_mode) == 0o600
    finally:
        meta.unlink()


def test_the_plain_mode_refuses_to_grade_while_a_private_file_is_readable(autograder,
                                                                          tmp_path):
    """The check before grading reads what GRADER_PRIVATE_FILES names as a fresh uid: a file
    it can read stops the run (exit 4), so a forgotten chmod cannot leak it."""
    root, env = autograder
    secret = root / "metadatos-olvidados.json"
    secret.write_text("{}")
    os.chmod(secret, 0o644)
    (tmp_path / "ejercicio2.py").write_text("x = 1\n")
    try:
        run = subprocess.run([sys.executable, str(CONTAINER), "--no-landlock",
                              str(root / "venv" / "bin" / "python"), "-m", "grader",
                              str(tmp_path), "--format", "gradescope"], cwd=root / "source",
                             env={**env, "GRADER_PRIVATE_FILES": str(secret)},
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 4, run.stderr[-2000:]
        assert str(secret) in run.stderr and run.stdout == ""
    finally:
        secret.unlink()


def test_run_autograder_always_writes_results_even_when_the_grader_cannot_run(autograder):
    root, env = autograder
    results = grade_as_gradescope(root, env, {"ejercicio2.py": "x = 1\n"},
                                  GRADER_PYTHON="/bin/false")
    assert results["score"] == 0 and "no pudo producir un resultado" in results["output"]
    assert set(results) <= TOP_FIELDS
