"""Type hints on the learner's API: everything a solution can call is annotated, so an editor
completes it (`ctx.`, `page.`, `extension.`, `binding.` ...).

    python3 tools/check_hints.py        (make lint and tools/lint_course.py, so make test, run it)

`LEARNER_API` is the one list of what a learner's solution can reach: modules of code/ and, in
each, the classes and functions it calls. For each function, and each public method of each
class (its own and those it inherits from code/, `__init__` included, a property through its
getter and setter), every parameter but the first of a method (`self`, `cls`) and the return
must be annotated, and every annotation must name something that exists: the annotations are
evaluated against the module's names plus what its `if TYPE_CHECKING:` blocks import (the
modules of code/ import those names for editors only, never at run time: the demo's
start-up). A name of the list that no longer exists fails too. Exit 1 lists every miss, one
line each (`module.Class.method: ...`), and 0 says how many callables were checked.

Deliberate simplifications: it checks that each hint is there and names something, not that
it is right (that is a type checker's job; this one needs no package); dunder methods other
than `__init__` are left out; a class attribute's type is not required.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CODE = REPO / "code"

# module of code/ -> the names in it that a learner's solution calls or is handed.
LEARNER_API = {
    "core.context": ("ToolContext", "InputRequest"),  # `ctx`, and ctx.form_request & co.
    "extension": ("Extension",),                      # `extension` and its decorators
    "urlflow.setup_page": ("PageRequest", "PageResponse"),  # `page` and what it answers
    "nube_copias": ("Address", "Provider", "RemoteProvider", "ProviderError"),  # the provider
    "elicitation": ("choice", "Answer", "supports_form", "supports_url"),
    "request_state": ("Binding", "Sealer"),           # the sealer's `binding`, and a model
    "sealkit": ("keys_from", "stream_xor", "tag_of", "encode", "decode"),  # the challenge
    "store": ("Note", "read_note"),
    "tooling": ("ok", "ToolError", "MissingCapability", "URLElicitationRequired"),
    "server": ("RootsChange",),                       # exercise 4's `change`
    "roots": ("RootSet",),                            # `ctx.roots`, `change.new_roots`
}


def type_checking_names(module) -> dict[str, object]:
    """The module's names plus what its top-level `if TYPE_CHECKING:` blocks define."""
    names = dict(vars(module))
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            block = ast.Module(body=node.body, type_ignores=[])
            exec(compile(block, module.__file__, "exec"), names)  # imports and TypeVars only
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def callables(name: str, value: object, code: Path) -> list[tuple[str, object, bool]]:
    """(qualified name, function, is a method) for a function, or for each public method of a
    class and of its bases defined in `code` (the nearest definition of each name)."""
    if not inspect.isclass(value):
        return [(name, value, False)] if inspect.isfunction(value) else []
    found, seen = [], set()
    for klass in value.__mro__:
        if not _defined_in(klass, code):
            continue
        for attr, member in vars(klass).items():
            if attr in seen or (attr.startswith("_") and attr != "__init__"):
                continue
            seen.add(attr)
            if isinstance(member, property):
                parts = [member.fget, member.fset]
            elif isinstance(member, staticmethod):
                found.append((f"{name}.{attr}", member.__func__, False))
                continue
            else:
                parts = [getattr(member, "__func__", member)]
            found += [(f"{name}.{attr}", part, True) for part in parts
                      if inspect.isfunction(part)]
    return found


def _defined_in(klass: type, code: Path) -> bool:
    """Was `klass` defined in a module of the folder `code`, at its top or in one of its
    layers' folders (not builtins, not object)?"""
    source = getattr(sys.modules.get(klass.__module__), "__file__", None)
    return source is not None and code.resolve() in Path(source).resolve().parents


def misses(function: object, is_method: bool, names: dict[str, object]) -> list[str]:
    """What `function` lacks: an annotation per parameter and return, names that resolve."""
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())[1 if is_method else 0:]
    found = [f"parameter {p.name} has no annotation" for p in parameters
             if p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        found.append("the return has no annotation")
    try:
        typing.get_type_hints(function, globalns=names)
    except Exception as exc:  # NameError, an import that fails, a bad expression
        found.append(f"an annotation names nothing that exists ({type(exc).__name__}: {exc})")
    return found


def problems(api: dict[str, tuple[str, ...]] = LEARNER_API, code: Path = CODE
             ) -> tuple[list[str], int]:
    """(every miss, one line each; how many callables were checked) for `api` in `code`."""
    lines, checked = [], 0
    sys.path.insert(0, str(code))
    try:
        for module_name, members in api.items():
            module = importlib.import_module(module_name)
            names = type_checking_names(module)
            for member in members:
                if not hasattr(module, member):
                    lines.append(f"{module_name}.{member}: not in {module_name}.py any more")
                    continue
                value = getattr(module, member)
                for qualified, function, is_method in callables(member, value, code):
                    checked += 1
                    # a name re-exported from a folder of code/ is read among its own module's
                    home = sys.modules.get(function.__module__)
                    here = names if home in (None, module) else type_checking_names(home)
                    lines += [f"{module_name}.{qualified}: {miss}"
                              for miss in misses(function, is_method, here)]
    finally:
        sys.path.remove(str(code))
    return lines, checked


def main(api: dict[str, tuple[str, ...]] = LEARNER_API, code: Path = CODE) -> int:
    lines, checked = problems(api, code)
    if lines:
        print("Type hints missing on the learner's API (tools/check_hints.py):", *lines,
              sep="\n  ")
        return 1
    print(f"check_hints: {checked} callables of the learner's API, all annotated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
