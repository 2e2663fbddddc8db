"""The JupyterLite build's parts that need neither a download nor a browser: staging the
course, the course wheel, the lock-file closure, the pins, the fingerprint, course_lite's
setup() and the notebooks' first cell on CPython."""

from __future__ import annotations

import ast
import asyncio
import base64
import hashlib
import importlib.util
import json
import os
import re
import sys
import zipfile
from pathlib import Path

import pytest
from litesite import PROBE_NOTEBOOK, REPO, load_build_module

build = load_build_module()
LITE = REPO / "editions" / "lite"


def load_course_lite():
    spec = importlib.util.spec_from_file_location("course_lite_under_test",
                                                  LITE / "course_lite.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def fake_repo(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "code" / "roots.py", "def uri_to_path(u): return u\n")
    write(repo / "code" / "notes.txt", "not a module\n")
    write(repo / "code" / "__pycache__" / "roots.cpython-311.pyc", "x")
    write(repo / "lessons" / "01_x.ipynb", "{}")
    write(repo / "lessons" / "mcp_ui" / "__init__.py", "X = 1\n")
    write(repo / "lessons" / "soluciones" / "ejercicio2.py", "learner = True\n")
    write(repo / "lessons" / ".ipynb_checkpoints" / "01_x-checkpoint.ipynb", "{}")
    return repo


def test_staging_copies_code_modules_and_lessons_without_learner_files(fake_repo, tmp_path):
    content = build.stage_content(tmp_path / "content", repo=fake_repo)
    files = sorted(p.relative_to(content).as_posix() for p in content.rglob("*") if p.is_file())
    assert files == ["code/roots.py", "lessons/01_x.ipynb", "lessons/mcp_ui/__init__.py"]


def test_course_wheel_holds_the_helper_and_every_non_notebook_file(fake_repo, tmp_path):
    content = build.stage_content(tmp_path / "content", repo=fake_repo)
    write(content / "lessons" / "soluciones" / "ejercicio3b.py", "learner = True\n")
    wheel = build.course_wheel(content, tmp_path, "ab" * 32)
    assert wheel.name == "course_lite-1.0+abababababab-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        record = zf.read("course_lite-1.0+abababababab.dist-info/RECORD").decode()
        metadata = zf.read("course_lite-1.0+abababababab.dist-info/METADATA").decode()
        helper = zf.read("course_lite/__init__.py")
        for line in record.splitlines():
            name, digest, size = line.split(",")
            if digest:
                data = zf.read(name)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                assert (digest, int(size)) == (f"sha256={expected.decode()}", len(data)), name
    assert {n for n in names if not n.endswith((".dist-info/RECORD", "METADATA", "WHEEL"))} == {
        "course_lite/__init__.py", "course_lite/files/code/roots.py",
        "course_lite/files/lessons/mcp_ui/__init__.py",
        # the pins ui.diagnostico() compares with and ui.install_sdk() installs
        "course_lite/piplite-wheels.txt", "course_lite/sdk-wheels.txt",
        "course_lite/sdk-wasm-wheels.txt"}
    assert "Name: course-lite\n" in metadata
    assert helper == (LITE / "course_lite.py").read_bytes()


def test_lock_closure_follows_dependencies_once():
    lock = {"packages": {
        "micropip": {"name": "micropip", "depends": []},
        "ipython": {"name": "ipython", "depends": ["traitlets", "pygments"]},
        "traitlets": {"name": "traitlets", "depends": []},
        "pygments": {"name": "Pygments", "depends": ["traitlets"]},
        "jedi": {"name": "jedi", "depends": ["parso"]},
        "parso": {"name": "parso", "depends": []},
        "numpy": {"name": "numpy", "depends": []},
    }}
    assert sorted(build.lock_closure(lock)) == ["ipython", "jedi", "micropip", "parso",
                                                "pygments", "traitlets"]
    with pytest.raises(build.BuildError, match="ipython is not in"):
        build.lock_closure({"packages": {"micropip": {"name": "micropip", "depends": []}}})


def test_pins_must_carry_a_sha256(tmp_path):
    good = write(tmp_path / "good.txt", "# c\nipywidgets==8.1.9 --hash=sha256:ab \\\n"
                                        "    --hash=sha256:cd\n")
    assert build.read_pins(good) == {"ipywidgets": ("ipywidgets", "8.1.9", {"ab", "cd"})}
    with pytest.raises(build.BuildError, match="--hash=sha256"):
        build.read_pins(write(tmp_path / "bad.txt", "ipywidgets==8.1.9\n"))


def test_committed_pins_are_exact_versions_with_hashes():
    for name in ("pyodide-wheels.txt", "piplite-wheels.txt", "sdk-wheels.txt",
                 "sdk-wasm-wheels.txt"):
        pins = build.read_pins(LITE / name)
        assert pins and all(re.fullmatch(r"[\w.]+", v) for _, v, _ in pins.values()), name
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for *_, hs in pins.values() for h in hs)
    requirements = (LITE / "requirements-lite.txt").read_text().splitlines()
    assert all("==" in line for line in requirements if line and not line.startswith("#"))
    widgets = build.read_pins(LITE / "piplite-wheels.txt")["jupyterlab-widgets"][1]
    assert f"jupyterlab_widgets=={widgets}" in requirements  # labextension == kernel side
    npm = json.loads((LITE / "package.json").read_text())["dependencies"]["pyodide"]
    lock = json.loads((LITE / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/pyodide"]["version"] == npm
    assert lock["packages"]["node_modules/pyodide"]["integrity"].startswith("sha512-")


def test_the_sdk_in_the_browser_is_the_version_the_course_pins():
    required = {build.norm(name): version for name, version in re.findall(
        r"^([A-Za-z0-9_.-]+)==(\S+)", (REPO / "requirements.txt").read_text(), re.M)}
    only_in_the_browser = {"httpx2-jsfetch"}  # httpx2's transport on Emscripten
    for name in ("sdk-wheels.txt", "sdk-wasm-wheels.txt"):
        for key, (_, version, _) in build.read_pins(LITE / name).items():
            if key not in only_in_the_browser:
                assert required.get(key) == version, f"{name}: {key} {version}"
    assert "httpx2-jsfetch" not in required


def test_fingerprint_changes_with_content_and_source_maps(fake_repo, tmp_path):
    content = build.stage_content(tmp_path / "content", repo=fake_repo)
    first = build.fingerprint(content, sourcemaps=False)
    assert build.fingerprint(content, sourcemaps=False) == first
    assert build.fingerprint(content, sourcemaps=True) != first
    write(content / "code" / "roots.py", "changed = True\n")
    assert build.fingerprint(content, sourcemaps=False) != first


def test_a_site_built_without_bytecode_is_never_reused_as_one_with_it(fake_repo, tmp_path):
    content = build.stage_content(tmp_path / "content", repo=fake_repo)
    assert build.fingerprint(content, False, bytecode=False) != build.fingerprint(content, False)


@pytest.fixture
def isolated_path(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    return sys.path


@pytest.fixture
def course_lite(monkeypatch):
    """course_lite as the site's wheel has it; the cell runner it installs is recorded."""
    module = load_course_lite()
    installs = []
    monkeypatch.setattr(module, "run_cells_as_tasks", lambda: installs.append(True))
    monkeypatch.setenv("MCP_UI_LESSONS", "")  # restored after the test, whatever setup() sets
    monkeypatch.delenv("MCP_UI_LESSONS")
    module.installs = installs
    return module


def test_setup_finds_the_course_above_the_notebook_folder_and_imports_the_packed_copy(
        tmp_path, monkeypatch, isolated_path, course_lite):
    drive = tmp_path / "drive"
    for folder in ("code", "lessons", "probe"):
        (drive / folder).mkdir(parents=True)
    monkeypatch.chdir(drive / "probe")
    monkeypatch.setattr(course_lite, "MEMORY_ROOT", tmp_path / "memory")
    isolated_path[:0] = ["", str(drive / "probe")]  # what IPython puts first: the notebook's
    assert course_lite.setup() == drive
    packed = course_lite.FILES
    assert isolated_path[:2] == [str(packed / "code"), str(packed / "lessons")]
    assert "" not in isolated_path and str(drive / "probe") not in isolated_path
    assert os.environ["MCP_UI_LESSONS"] == str(drive / "lessons")
    assert Path.cwd() == drive / "probe" and not (tmp_path / "memory").exists()
    course_lite.setup()  # a second run (the cell re-run) does not stack entries
    assert isolated_path.count(str(packed / "code")) == 1
    assert course_lite.installs == [True, True]


def test_setup_without_drive_copies_the_course_to_memory(tmp_path, monkeypatch,
                                                         isolated_path, course_lite):
    files = tmp_path / "wheel" / "files"
    write(files / "code" / "roots.py", "X = 1\n")
    write(files / "lessons" / "mcp_ui.py", "Y = 2\n")
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path / "home")
    monkeypatch.setattr(course_lite, "FILES", files)
    monkeypatch.setattr(course_lite, "MEMORY_ROOT", tmp_path / "memory")
    assert course_lite.setup() == tmp_path / "memory"
    assert Path.cwd() == tmp_path / "memory" / "lessons"
    assert (tmp_path / "memory" / "code" / "roots.py").read_text() == "X = 1\n"
    assert isolated_path[:2] == [str(files / "code"), str(files / "lessons")]
    assert os.environ["MCP_UI_LESSONS"] == str(tmp_path / "memory" / "lessons")


def first_code_cell(notebook: Path) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "code")["source"])


def test_first_cell_does_nothing_on_cpython(isolated_path):
    source = first_code_cell(PROBE_NOTEBOOK)
    code = compile(source, "<first cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    before, cwd, modules = list(sys.path), os.getcwd(), set(sys.modules)
    result = eval(code, {})  # a coroutine: the cell has a top-level await
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    assert (sys.path, os.getcwd()) == (before, cwd)
    assert {"piplite", "course_lite"}.isdisjoint(set(sys.modules) - modules)


def test_readme_recommends_the_first_cell_the_probe_runs():
    readme = (LITE / "README.md").read_text()
    block = re.search(r"<!-- first-cell -->\n```python\n(.*?)```", readme, re.S)
    assert block, "editions/lite/README.md must show the first cell after <!-- first-cell -->"
    assert block[1].strip() == first_code_cell(PROBE_NOTEBOOK).strip()


def test_a_given_content_folder_is_copied_without_learner_files(fake_repo, tmp_path):
    copy = build.copy_content(fake_repo, tmp_path / "copy")
    files = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert files == ["code/notes.txt", "code/roots.py", "lessons/01_x.ipynb",
                     "lessons/mcp_ui/__init__.py"]


def test_staging_takes_the_public_grader_for_the_in_browser_self_check(fake_repo, tmp_path):
    write(fake_repo / "grader" / "selfcheck.py", "def run(): pass\n")
    write(fake_repo / "grader" / "checks" / "public" / "test_ej4.py", "# public\n")
    write(fake_repo / "grader" / "reference" / "soluciones" / "ejercicio4.py", "secret\n")
    write(fake_repo / "grader" / "checks" / "hidden" / "test_ej4_hidden.py", "secret\n")
    content = build.stage_content(tmp_path / "content", repo=fake_repo)
    files = sorted(p.relative_to(content).as_posix() for p in content.rglob("*") if p.is_file())
    assert "grader/selfcheck.py" in files and "grader/checks/public/test_ej4.py" in files
    assert not [f for f in files if f.startswith(("grader/reference", "grader/checks/hidden"))]


def test_staging_this_repository_leaves_out_everything_instructor_only(tmp_path):
    """The instructors' source holds the reference and the hidden tests; what the sites stage
    from it passes the one leak check every edition passes (editions/common.py)."""
    content = build.stage_content(tmp_path / "content", repo=REPO)
    assert (content / "grader" / "checks" / "public").is_dir()
    assert not (content / "grader" / "reference").exists()
    assert not (content / "grader" / "checks" / "hidden").exists()


def test_a_content_folder_with_instructor_only_material_fails_the_build(fake_repo, tmp_path):
    write(fake_repo / "grader" / "checks" / "hidden" / "test_ej4_hidden.py", "secret\n")
    with pytest.raises(build.BuildError, match="instructor-only"):
        build.check_content(build.copy_content(fake_repo, tmp_path / "copy"))
    result = build.main(["--content", str(fake_repo), "--out", str(tmp_path / "site")])
    assert result == 1 and not (tmp_path / "site").exists()
