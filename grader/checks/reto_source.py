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
    handed in, whether it defines the sealer and registers it on an Extension that the server
    loads (`sealer`: that class's name; `open_line`: the line where the code of its `open`
    starts, 0 when it has none of its own), whether that `open` reaches `compare_digest`, and
    its constants (an attacker with the code knows them). grader/checks/reto.py holds the
    sealer the server reports it installed against `sealer` and `open_line`."""
    present: bool = False
    sealer_here: bool = False
    compare_digest: bool = False
    literals: tuple = ()
    sealer: str = ""
    open_line: int = 0


def source_facts(text):
    """RetoSource of reto.py's text (None: not handed in). Parsed, never run."""
    if text is None:
        return RetoSource()
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return RetoSource(present=True)  # the server reports a file that does not load
    sealer = registered_sealer(module)
    opener = _methods(sealer, module).get("open") if sealer is not None else None
    return RetoSource(present=True, sealer_here=sealer is not None,
                      compare_digest=opener is not None and verifies_in_constant_time(
                          module, sealer, opener),
                      literals=constants(module), sealer=sealer.name if sealer else "",
                      open_line=first_line(opener) if opener is not None else 0)


def _is_extension(value):
    """Is `value` a call that makes an Extension the server loads: `Extension()` (or
    `extension.Extension()`), with no origin or the default one ("solution")?"""
    if not isinstance(value, ast.Call):
        return False
    called = value.func
    named = (isinstance(called, ast.Name) and called.id == "Extension") or \
        (isinstance(called, ast.Attribute) and called.attr == "Extension")
    origins = value.args[:1] + [k.value for k in value.keywords if k.arg == "origin"]
    return named and len(value.args) <= 1 and all(k.arg == "origin" for k in value.keywords) \
        and all(isinstance(o, ast.Constant) and o.value == "solution" for o in origins)


def _bound_names(node):
    """The module-level names a statement binds (or unbinds)."""
    names = set()
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(node.name)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        names.update((a.asname or a.name).split(".")[0] for a in node.names)
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.If, ast.While,
                           ast.Try)) or type(node).__name__ in ("TryStar", "Match"):
        for inner in ast.walk(node):  # anything bound inside a block at module level
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                names.add(inner.id)
    for target in targets:
        for inner in ast.walk(target):
            if isinstance(inner, ast.Name):
                names.add(inner.id)
    return names


def registered_sealer(module):
    """The class defined in `module` and registered with `request_state` on an Extension the
    server loads (a module-level name bound to `Extension()` and still bound to it when the file
    ends), as a decorator, or `extension.request_state(Class)`, `(Class())` or `(instance)`;
    the last registration counts, and one the grader cannot follow (something not defined in
    reto.py, an Extension made and thrown away, an assignment to `state_sealer`, a
    registration inside a block or a function) gives None."""
    classes, instances, loaded = {}, {}, set()
    registered = {}  # name of a loaded Extension -> (order, the class registered on it or None)
    order = 0
    accounted = set()  # the nodes that name request_state where the grader followed them

    def register(base, sealer):
        """A registration on `base`: one on something the server does not load (an Extension
        made and thrown away, another module's) installs nothing."""
        nonlocal order
        order += 1
        if isinstance(base, ast.Name) and base.id in loaded:
            registered[base.id] = (order, sealer)

    for node in module.body:
        if isinstance(node, ast.ClassDef):
            for decorator in node.decorator_list:
                if _names_request_state(decorator):
                    accounted.add(id(decorator))
                    register(getattr(decorator, "value", None), node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and _names_request_state(node.value.func):
            accounted.add(id(node.value.func))
            argument = node.value.args[0] if len(node.value.args) == 1 \
                and not node.value.keywords else None
            if isinstance(argument, ast.Call) and not argument.args and not argument.keywords:
                argument = argument.func
            sealer = None
            if isinstance(argument, ast.Name):
                sealer = classes.get(argument.id) or classes.get(instances.get(argument.id))
            register(getattr(node.value.func, "value", None), sealer)
        for name in _bound_names(node):
            loaded.discard(name)
            registered.pop(name, None)
            classes.pop(name, None)
            instances.pop(name, None)
        if isinstance(node, ast.ClassDef):
            classes[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
            if _is_extension(value):
                loaded.add(target)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                    and value.func.id in classes and not value.args and not value.keywords:
                instances[target] = value.func.id
    for node in ast.walk(module):  # any other registration: the grader cannot follow it
        if (_names_request_state(node) and id(node) not in accounted) or \
                (isinstance(node, ast.Attribute) and node.attr == "state_sealer"):
            return None
    live = [(at, sealer) for name, (at, sealer) in registered.items() if name in loaded]
    if not live:
        return None
    return max(live, key=lambda item: item[0])[1]


def _names_request_state(node):
    return (isinstance(node, ast.Attribute) and node.attr == "request_state") or \
        (isinstance(node, ast.Name) and node.id == "request_state")


def _methods(sealer, module=None):
    """The methods of class `sealer`; with `module`, also those it inherits from classes of
    reto.py named as its bases (the nearest first, as Python looks them up for a simple
    hierarchy)."""
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)} \
        if module is not None else {}
    found, queue, seen = {}, [sealer], set()
    while queue:
        kind = queue.pop(0)
        if kind is None or id(kind) in seen:
            continue
        seen.add(id(kind))
        for node in kind.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(node.name, node)
        queue += [classes.get(base.id) for base in kind.bases if isinstance(base, ast.Name)]
    return found


def first_line(function):
    """The line a function's code starts on (co_firstlineno): its first decorator's, or its
    `def`'s."""
    return min([d.lineno for d in function.decorator_list] + [function.lineno])


def verifies_in_constant_time(module, sealer, start):
    """Does `start` (the sealer's `open`), or a function or method of reto.py it calls (and so
    on), call `compare_digest`? `sealer`: the class whose methods `self.x(...)` names."""
    functions = {node.name: node for node in module.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    methods = _methods(sealer, module)
    own = ("self", sealer.name)
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(module)
               if isinstance(node, ast.ImportFrom) for alias in node.names}
    queue, seen = [start], set()
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
                if isinstance(called.value, ast.Name) and called.value.id in own:
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
