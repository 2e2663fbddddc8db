"""Sound imports: each grader module imports on its own, and no tree has an import cycle.

The first test imports every grader module in a fresh interpreter (so one that works only
because another module happened to set sys.path first is caught). The second reads the
imports of code/, grader/ and lessons/ from their source (the AST, imports inside functions
included: a cycle hidden in a function is still a cycle) and reports every cycle it finds.
"""

import ast
import os
import subprocess
import sys

import pytest

from grader.paths import REPO_DIR
from import_graph import cycles

GRADER = os.path.join(REPO_DIR, "grader")
NOT_MODULES = ("reference",)  # solutions (run inside the server) and a script


def grader_modules():
    found = []
    for folder, dirs, files in os.walk(GRADER):
        dirs[:] = sorted(d for d in dirs if d not in NOT_MODULES and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") and name != "__main__.py":
                relative = os.path.relpath(os.path.join(folder, name[:-3]), REPO_DIR)
                found.append(relative.replace(os.sep, ".").removesuffix(".__init__"))
    return found


@pytest.mark.parametrize("module", grader_modules())
def test_each_grader_module_imports_on_its_own(module):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=REPO_DIR, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]


# -- import cycles -------------------------------------------------------------------------------
def modules_of(tree):
    """{dotted name: path} of the Python modules under REPO_DIR/tree; code/ and lessons/ are
    on sys.path themselves (flat names), grader/ is a package."""
    top = os.path.join(REPO_DIR, tree)
    found = {}
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            base = REPO_DIR if tree == "grader" else top
            dotted = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
            found[dotted.removesuffix(".__init__")] = path
    return found


def typing_only(tree):
    """The nodes under `if TYPE_CHECKING:` (read by editors and type checkers, never run):
    their imports cannot make an import cycle."""
    return {inner for node in ast.walk(tree) if isinstance(node, ast.If)
            and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING"
            for stmt in node.body for inner in ast.walk(stmt)}


def imports_of(path, dotted, modules):
    """The modules of the same tree that the module at `path` imports (anywhere in it)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    package = dotted if path.endswith("__init__.py") else dotted.rpartition(".")[0]
    found, skipped = set(), typing_only(tree)
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(parts + ([node.module] if node.module else []))
            names = [base] + [f"{base}.{alias.name}" if base else alias.name
                              for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != dotted and not dotted.startswith(name + "."):
                found.add(name)  # (a package is always imported before its own modules)
    return found


def test_the_cycle_finder_finds_a_cycle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_an_import_only_for_type_checkers_is_no_edge_and_a_real_one_is(tmp_path):
    module = tmp_path / "a.py"
    module.write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from b import B\n"
                      "import c\n")
    assert imports_of(str(module), "a", {"a", "b", "c"}) == {"c"}


@pytest.mark.parametrize("tree", ["code", "grader", "lessons"])
def test_no_import_cycle(tree):
    modules = modules_of(tree)
    graph = {name: imports_of(path, name, modules) for name, path in modules.items()}
    assert cycles(graph) == []
