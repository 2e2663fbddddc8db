"""What the grader reads in the challenge's file, reto.py, as text: parsed with `ast`, never run.

`source_facts(text)` says whether the file was handed in, whether it defines and registers its
own sealer (a class with `@extension.request_state`, or registered by a call), whether that
sealer's `open` reaches `hmac.compare_digest` (through the functions and methods of reto.py it
calls), and which text and bytes constants it holds: an attacker who has the code knows them,
so grader/checks/reto.py tries them as keys.

Deliberate simplifications: only module-level classes, functions and assignments are followed;
a sealer built at run time (by `type(...)`, say) is not recognised, and the statement asks for
a class.
"""

import ast
from dataclasses import dataclass

MAX_LITERALS = 40     # constants of reto.py tried as keys


@dataclass
class RetoSource:
    """What the grader reads in the challenge's file (parsed as text, never run): whether it was
    handed in, whether it defines and registers the sealer, whether that sealer's `open`
    reaches `compare_digest`, and its constants (an attacker with the code knows them)."""
    present: bool = False
    sealer_here: bool = False
    compare_digest: bool = False
    literals: tuple = ()


def source_facts(text):
    """RetoSource of reto.py's text (None: not handed in). Parsed, never run."""
    if text is None:
        return RetoSource()
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return RetoSource(present=True)  # the server reports a file that does not load
    sealer = registered_sealer(module)
    return RetoSource(present=True, sealer_here=sealer is not None,
                      compare_digest=sealer is not None and verifies_in_constant_time(
                          module, sealer),
                      literals=constants(module))


def registered_sealer(module):
    """The class defined in `module` and registered with `request_state` (as a decorator, or
    `extension.request_state(Class)`, `(Class())` or `(instance)`), the last one; or None."""
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}
    instances = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and node.value.func.id in classes:
            instances.update({target.id: node.value.func.id for target in node.targets
                              if isinstance(target, ast.Name)})
    found = None
    for node in module.body:
        if isinstance(node, ast.ClassDef) and any(_names_request_state(d)
                                                  for d in node.decorator_list):
            found = node
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and _names_request_state(node.value.func) and len(node.value.args) == 1:
            argument = node.value.args[0]
            if isinstance(argument, ast.Call):
                argument = argument.func
            if isinstance(argument, ast.Name):
                found = classes.get(argument.id) or classes.get(instances.get(argument.id)) \
                    or found
    return found


def _names_request_state(node):
    return (isinstance(node, ast.Attribute) and node.attr == "request_state") or \
        (isinstance(node, ast.Name) and node.id == "request_state")


def verifies_in_constant_time(module, sealer):
    """Does the sealer's `open`, or a function or method of reto.py it calls (and so on), call
    `compare_digest`?"""
    functions = {node.name: node for node in module.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    methods = {node.name: node for node in sealer.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(module)
               if isinstance(node, ast.ImportFrom) for alias in node.names}
    queue, seen = [methods.get("open")], set()
    while queue:
        function = queue.pop()
        if function is None or id(function) in seen:
            continue
        seen.add(id(function))
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            called = node.func
            if isinstance(called, ast.Attribute):
                if called.attr == "compare_digest":
                    return True
                if isinstance(called.value, ast.Name) and \
                        called.value.id in ("self", sealer.name):
                    queue.append(methods.get(called.attr))
            elif isinstance(called, ast.Name):
                if aliases.get(called.id, called.id) == "compare_digest":
                    return True
                queue.append(functions.get(called.id) or methods.get(called.id))
    return False


def constants(module):
    """The text and bytes constants of reto.py (an attacker reads them too), as bytes."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) \
                and 0 < len(node.value) <= 256:
            value = node.value if isinstance(node.value, bytes) else \
                node.value.encode("utf-8", "surrogatepass")
            if value not in found:
                found.append(value)
        if len(found) >= MAX_LITERALS:
            break
    return tuple(found)
