"""lessons/mcp_ui/ as a package: one file per job, each saying what it does and what it
simplifies; the API the notebooks use; code/'s constants imported, not copied; no import-time
side effect beyond putting code/ on sys.path; no import cycle."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys

import pytest
from notebook_helpers import LESSONS, NOTEBOOKS, REPO, code_cells, import_mcp_ui

from cli.demo import LESSON_NOTES
from shared import protocol

ui = import_mcp_ui()
PACKAGE = LESSONS / "mcp_ui"
MODULES = sorted(PACKAGE.glob("*.py"))
JOBS = {"forms.py": "ElicitationForm", "consent.py": "ConsentDialog", "users.py": "WidgetUser",
        "lab.py": "NotesLab", "lab_client.py": "LabClient", "checks.py": "check_url_flow",
        "transcript.py": "summarize_frame", "pages.py": "submit_page", "review.py": "revisar",
        "recap.py": "quiz"}


def test_there_is_one_file_per_job_and_no_single_module_left():
    assert not (LESSONS / "mcp_ui.py").exists()
    for name, what in JOBS.items():
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                                                                ast.AsyncFunctionDef))}
        assert what in defined, f"{what} is not in {name}"


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_each_file_opens_with_what_it_does_and_what_it_simplifies(module):
    doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
    assert doc and len(doc.splitlines()[0]) > 20, module.name
    assert "Deliberate simplifications:" in doc, module.name


def test_the_form_widget_file_stays_small():
    assert len((PACKAGE / "forms.py").read_text(encoding="utf-8").splitlines()) <= 220


def relative_imports(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
    return found


def test_no_import_cycle_inside_the_package():
    graph = {m.stem: relative_imports(m) - {None} for m in MODULES}
    done, visiting = set(), []

    def visit(name):
        assert name not in visiting, f"import cycle: {' -> '.join(visiting + [name])}"
        if name in done:
            return
        visiting.append(name)
        for other in graph.get(name, ()):
            visit(other)
        visiting.pop()
        done.add(name)
    for name in graph:
        visit(name)


def test_protocol_constants_and_the_lessons_notes_are_imported_not_copied():
    homes = {v for k, v in vars(protocol).items() if k.isupper() and isinstance(v, str)}
    homes |= {protocol.SERVER_INFO["name"], protocol.CLIENT_INFO["name"]}
    homes |= {field for note in LESSON_NOTES for field in note if field.startswith("note-")}
    homes -= MODES  # also a field ("url") and an HTML tag ("form"): the next test checks them
    for module in MODULES:
        literals = {n.value for n in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert literals & homes == set(), f"{module.name} copies {literals & homes}"


MODES = {protocol.FORM_MODE, protocol.URL_MODE}


def names_a_mode(node):
    """A literal elicitation mode: `{"mode": "url"}`, `.get("mode", "form")`, `== "url"`, or
    a capability's key (`{"form": {}}`)."""
    def mode(value):
        return isinstance(value, ast.Constant) and value.value in MODES
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and (k.value == "mode" and mode(v) or
                                                    mode(k) and isinstance(v, ast.Dict))
                   for k, v in zip(node.keys, node.values, strict=True))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "get" and len(node.args) == 2 and mode(node.args[1])
    if isinstance(node, ast.Compare):
        return any(mode(side) for side in [node.left, *node.comparators])
    return False


def test_elicitation_modes_are_protocols_constants_not_copies():
    for module in MODULES:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        lines = [node.lineno for node in ast.walk(tree) if names_a_mode(node)]
        assert not lines, f"{module.name} spells a mode by hand on lines {lines}"


def test_the_pieces_nobody_used_are_gone():
    assert not hasattr(ui, "preview_form") and not hasattr(ui.NotesLab, "check")
    lab = ui.NotesLab(quiet=True)
    try:
        assert not hasattr(lab, "guard_rows")
    finally:
        lab.close()
    assert "handle_status" not in (PACKAGE / "lab_client.py").read_text(encoding="utf-8")


def test_every_name_the_notebooks_use_exists():
    used = {"ui": set(), "lab": set(), "conn": set()}
    for name in NOTEBOOKS:
        cells = [c.source for c in code_cells(name) if not c.source.startswith("%%writefile")]
        source = "\n".join(cells)
        conns = re.findall(r"^(\w+) = await lab\.connect\(", source, re.M)
        pattern = re.compile(rf"\b(ui|lab|{'|'.join(conns) or 'conn'})\.(\w+)")
        for owner, attr in pattern.findall(source):
            used[owner if owner in ("ui", "lab") else "conn"].add(attr)
    assert used["ui"] and used["lab"] and used["conn"]
    assert sorted(a for a in used["ui"] if not hasattr(ui, a)) == []
    lab = ui.NotesLab(quiet=True)
    try:
        assert sorted(a for a in used["lab"] if not hasattr(lab, a)) == []
    finally:
        lab.close()
    assert sorted(a for a in used["conn"] if not hasattr(ui.LabClient, a)
                  and a not in ("frames", "last")) == []


NO_SIDE_EFFECTS = """
import atexit, json, os, sys, threading
import ipywidgets, IPython.display  # what the package builds on (ipywidgets registers an
                                    # exit hook of its own)
before = (sorted(os.listdir(".")), atexit._ncallbacks(), threading.active_count())
import mcp_ui as ui
after = (sorted(os.listdir(".")), atexit._ncallbacks(), threading.active_count())
code = os.path.abspath(os.path.join("..", "code"))
import roots
lab = ui.NotesLab(quiet=True)
made = os.path.isdir("soluciones")
lab.close()
print(json.dumps({"before": before, "after": after, "code_on_path": code in sys.path,
                  "roots_from": os.path.dirname(roots.__file__), "code": code,
                  "soluciones_after_lab": made}))
"""


def test_importing_the_package_changes_nothing_but_sys_path(tmp_path):
    """In a fresh interpreter and a fresh copy: no folder, no exit hook, no thread; the
    first NotesLab makes soluciones/ (the %%writefile cells need it)."""
    shutil.copytree(REPO / "code", tmp_path / "code",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PACKAGE, tmp_path / "lessons" / "mcp_ui",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", NO_SIDE_EFFECTS], cwd=tmp_path / "lessons",
                         capture_output=True, text=True, timeout=120, check=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
                              "PYTHONPATH": str(tmp_path / "lessons")})
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] == seen["after"] == [["mcp_ui"], seen["before"][1],
                                              seen["before"][2]]
    assert seen["code_on_path"] and seen["roots_from"] == seen["code"]
    assert seen["soluciones_after_lab"]


def test_every_notebook_creates_its_lab_before_writing_into_soluciones():
    for name in NOTEBOOKS:
        cells = [c.source for c in code_cells(name)]
        writes = [i for i, s in enumerate(cells) if s.startswith("%%writefile soluciones/")]
        labs = [i for i, s in enumerate(cells) if "ui.NotesLab(" in s]
        assert not writes or (labs and labs[0] < writes[0]), name
