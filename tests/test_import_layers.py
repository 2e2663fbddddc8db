"""code/ shows its architecture: the learner's modules on top, the layers in folders, no cycle.

Read from the source (every `import`, at module level, inside a function or under
`if TYPE_CHECKING:`, since each one is a dependency a reader must follow):

- no import cycle among the modules of code/, grader/ and lessons/mcp_ui/ (together: the grader
  and the lessons' package import code/);
- in code/, a layer imports only itself and the layers below it (LAYERS, bottom first), and
  no folder imports the top of code/: the top (the learner's modules, re-exported from their
  layers, and main.py) imports the layers, never the other way round;
- inside each layer, a chain of imports is shorter than the 13 floors of the flat code/ the
  layers replaced;
- no module of code/ is over 600 lines, and none of lessons/mcp_ui/ over 400, unless its
  docstring says why it is one job ("Why one module over ...").

The instructors' own files (the reference solutions, the hidden checks) are left out: the
student edition has none, and the same test runs there.
"""

import ast
from pathlib import Path

from import_graph import cycles
from reference_audit import instructor_only

REPO = Path(__file__).resolve().parent.parent
CODE = REPO / "code"
LAYERS = ["shared", "notes", "core", "urlflow", "transports", "client", "lesson", "cli"]
MAX_LINES = {CODE: 600, REPO / "lessons" / "mcp_ui": 400}
ONE_JOB = "Why one module over"
FLAT_FLOORS = 13  # the longest chain of imports of code/ when it was one flat folder


def modules():
    """{dotted name: file} for code/ (on sys.path), grader/ (from the repository) and
    mcp_ui (from lessons/)."""
    found = {}
    for base, prefix in ((CODE, ""), (REPO, "grader."), (REPO / "lessons", "mcp_ui.")):
        folder = base / prefix.rstrip(".") if prefix else base
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts or instructor_only(path):
                continue
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if parts:
                found[".".join(parts)] = path
    return found


def imported(path, name, known):
    """The known modules that the file of module `name` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package
                for _ in range(node.level - 1):
                    up = up.rpartition(".")[0]
                base = f"{up}.{base}".strip(".")
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                          for alias in node.names]
        else:
            continue
        targets |= {c for c in candidates if c in known and c != name}
    return targets


def graph():
    known = modules()
    return {name: imported(path, name, known) for name, path in known.items()}


def layer_of(name):
    """The index of a code/ module's layer; len(LAYERS) for the top of code/."""
    head = name.split(".")[0]
    return LAYERS.index(head) if head in LAYERS else len(LAYERS)


def code_modules():
    return {name for name, path in modules().items() if CODE in path.parents}


def test_no_module_of_code_grader_or_mcp_ui_imports_itself_back():
    assert cycles(graph()) == []


def test_each_layer_of_code_imports_only_itself_and_the_layers_below():
    edges, inside = graph(), code_modules()
    upward = sorted(f"{name} -> {target}" for name in inside for target in edges[name]
                    if target in inside and layer_of(target) > layer_of(name))
    assert upward == []


def floors(edges, members):
    """The longest chain of imports among `members` (a module alone is one floor)."""
    memo = {}

    def depth(name):
        if name not in memo:
            memo[name] = 1 + max((depth(t) for t in edges[name] if t in members), default=0)
        return memo[name]
    return max(map(depth, members), default=0)


def test_inside_each_layer_a_chain_of_imports_is_shorter_than_the_flat_folders():
    edges, inside = graph(), code_modules()
    deep = {layer: floors(edges, {n for n in inside if n.startswith(layer + ".")})
            for layer in LAYERS}
    assert max(deep.values()) < FLAT_FLOORS, deep


def test_every_folder_of_code_is_a_layer_and_every_layer_a_folder():
    folders = sorted(p.name for p in CODE.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(LAYERS)


def test_the_top_of_code_is_main_and_the_learners_modules_only():
    """Besides main.py, each module at the top re-exports one module of a layer, or (sealkit)
    imports nothing of code/: a reader opening code/ sees what a solution imports."""
    edges, inside = graph(), code_modules()
    for name in sorted(n for n in inside if layer_of(n) == len(LAYERS) and "." not in n):
        if name == "main":
            continue
        assert len(edges[name] & inside) <= 1, (name, edges[name])


def test_no_module_is_over_its_size_unless_its_docstring_says_why():
    over = []
    for folder, limit in MAX_LINES.items():
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            lines = len(text.splitlines())
            if lines > limit and ONE_JOB not in (ast.get_docstring(ast.parse(text)) or ""):
                over.append(f"{path.relative_to(REPO)}: {lines} lines")
    assert over == []


def test_the_cycle_finder_finds_a_cycle():
    """The checks above can fail: a loop through three modules is found, a chain is not, and a
    chain of three is three floors."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert floors({"a": {"b"}, "b": {"c"}, "c": set()}, {"a", "b", "c"}) == 3
