"""Statically: the portable self-check path uses no Linux-only primitive.

The path is what `ui.revisar` runs on macOS and Windows: lessons/mcp_ui/review.py, the grader
it starts (`python -m grader ... --host auto`, grader/__main__.py), everything those import,
at module level or inside functions, and the notes server each check starts as a plain
subprocess (code/main.py and its imports). The sandbox's own modules are allowed only behind a
function-level import (the branch for `--host sandbox`), never at module level.
"""

from __future__ import annotations

import ast
from pathlib import Path

from laptop_helpers import REPO

ENTRIES = {"mcp_ui.review": REPO / "lessons" / "mcp_ui" / "review.py",
           "grader.__main__": REPO / "grader" / "__main__.py",
           "main": REPO / "code" / "main.py",
           # loaded by file name (pytest, grader/checks/direct.py), not by an import statement
           **{f"grader.checks.public.{p.stem}": p
              for p in sorted((REPO / "grader" / "checks" / "public").glob("test_ej*.py"))}}
SANDBOX_ONLY = {"grader.hosts.sandbox", "grader.hosts.zygote", "grader.hosts.tempspace",
                "grader.hosts.ahead", "grader.boundary", "grader.intake.submission",
                "grader.worker",
                "grader.batch"}  # --batch's descriptor search: imported where dir_fd works
LINUX_ONLY_MODULES = {"fcntl", "resource", "termios", "pty", "grp", "pwd", "posix", "ctypes"}
LINUX_ONLY_NAMES = {  # module -> attributes missing (or not working) on macOS or Windows
    "os": {"fork", "forkpty", "setsid", "setpgid", "killpg", "setresuid", "setuid", "fchown",
           "O_PATH", "O_DIRECTORY", "O_NOFOLLOW", "unshare", "setns", "pidfd_open",
           "sched_setaffinity", "getuid", "geteuid", "link", "mkfifo"},
    "select": {"poll", "epoll"},
    "socket": {"SOCK_SEQPACKET", "send_fds", "recv_fds", "AF_UNIX"},
    "signal": {"SIGKILL", "pthread_kill", "SIGALRM", "alarm", "setitimer"},
    "prctl": None,
}
LINUX_ONLY_ARGUMENTS = {"dir_fd", "pass_fds", "start_new_session", "preexec_fn"}
POSIX_ONLY_POPEN_ARGUMENTS = {"user", "group", "extra_groups", "process_group", "umask"}


def locate(name: str, importer: str) -> Path | None:
    """The repository file of module ``name`` (None for the stdlib and third parties)."""
    parts = name.split(".")
    if parts[0] == "grader":
        base = REPO.joinpath(*parts)
        return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if parts[0] == "mcp_ui":  # one flat package: a longer name is a module's attribute
        if len(parts) > 2:
            return None
        return REPO / "lessons" / "mcp_ui" / (parts[1] + ".py" if len(parts) > 1
                                              else "__init__.py")
    code = REPO.joinpath("code", *parts)  # code/'s top, or one of its layers' folders
    if code.is_dir():
        return code / "__init__.py"
    return code.with_suffix(".py") if code.with_suffix(".py").exists() else None


def imports_of(path: Path, module: str) -> tuple[set[str], set[str]]:
    """(imported at module level, imported inside functions) by the file of ``module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module.rpartition(".")[0] if path.name != "__init__.py" else module
    top, nested = set(), set()

    def names(node) -> set[str]:
        if isinstance(node, ast.Import):
            return {alias.name for alias in node.names}
        if node.level:  # from .env import X / from . import env
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            stem = f"{base}.{node.module}" if node.module else base
        else:
            stem = node.module
        return {stem} | {f"{stem}.{alias.name}" for alias in node.names}

    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top |= names(node)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            nested |= names(node)
    return top, nested - top


def closure() -> dict[str, Path]:
    """Every repository module on the portable path: {module: file}."""
    found, pending = {}, list(ENTRIES.items())
    while pending:
        module, path = pending.pop()
        if module in found or module in SANDBOX_ONLY:
            continue
        found[module] = path
        top, nested = imports_of(path, module)
        for name in top | nested:
            target = locate(name, module)
            if target is not None and target.exists() and name not in found:
                pending.append((name, target))
    return found


def test_the_closure_reaches_the_grader_the_portable_host_and_the_server():
    modules = set(closure())
    assert {"mcp_ui.review", "grader.cli", "grader.hosts.portable", "grader.checks.runs",
            "grader.checks.public.test_ej2", "main", "core.session", "transports.transport",
            "client.sync_client"} <= modules, sorted(modules)


def test_sandbox_modules_are_imported_only_inside_functions():
    for module, path in closure().items():
        top, _ = imports_of(path, module)
        assert not top & SANDBOX_ONLY, (module, top & SANDBOX_ONLY)


def guarded(tree) -> set[int]:
    """ids of the nodes inside a `try:` that handles ImportError: code that expects the
    module to be missing (e.g. `import pwd` for a user name, with a fallback)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                "ImportError" in ast.unparse(h.type or ast.Name("BaseException"))
                or "ModuleNotFoundError" in ast.unparse(h.type or ast.Name("x"))
                for h in node.handlers):
            inside |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return inside


def linux_only_uses(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = guarded(tree)
    used = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            stems = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""] if not node.level else []
            used |= {f"import {s}" for s in stems if s.split(".")[0] in LINUX_ONLY_MODULES}
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.attr in (LINUX_ONLY_NAMES.get(node.value.id) or ()):
            used.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in LINUX_ONLY_ARGUMENTS:
            used.add(f"{node.arg}=")
        elif isinstance(node, ast.Call) and "Popen" in ast.unparse(node.func) or \
                isinstance(node, ast.Call) and ast.unparse(node.func).startswith("subprocess."):
            used |= {f"{k.arg}=" for k in node.keywords if k.arg in POSIX_ONLY_POPEN_ARGUMENTS}
        elif isinstance(node, ast.Name) and node.id == "prctl":
            used.add("prctl")
    return used


def portable_path_uses() -> dict[str, set[str]]:
    return {module: uses for module, path in sorted(closure().items())
            if (uses := linux_only_uses(path))}


# Uses that are on the portable path but only run where the platform has them: each module
# decides at run time, with the flag or the branch named here, and has a fallback elsewhere.
RUNTIME_GUARDED = {
    # Folder acts through dir_fd only when HAVE_DIR_FD (os.supports_dir_fd); elsewhere by path
    # (tests/notes_server/test_held_folders.py runs both); os.link names an O_TMPFILE file
    # and runs only after create_unnamed gave one, which needs UNNAMED (Linux) and a held fd
    "notes.dirfd": ({"dir_fd=", "os.link"}, ("HAVE_DIR_FD", "if not UNNAMED or self.fd is None")),
    # OutputFolder only where DESCRIPTORS; PathFolder elsewhere
    "grader.outfiles": ({"dir_fd="}, "DESCRIPTORS"),
    # the permission probe runs only for plain mode as root (a Linux sandbox), never for the
    # portable host; geteuid is looked up with getattr (Windows has none)
    "grader.hosts.plainmode": ({"user=", "group=", "extra_groups="},
                               'mode == "plain" and root'),
    # the portable host's fork server: only inside functions of grader/hosts/forks.py, whose
    # one way in, ForkServer.start, returns None unless POSSIBLE (fork and descriptor passing
    # exist, not Windows); the host then launches its servers (see the test below)
    "grader.hosts.forks": ({"socket.send_fds", "socket.AF_UNIX", "signal.SIGKILL"},
                           ('POSSIBLE = sys.platform != "win32" and hasattr(os, "fork") and '
                            'hasattr(socket, "send_fds")', "if not POSSIBLE:")),
}


def test_nothing_linux_only_is_imported_called_or_passed_on_the_portable_path():
    uses = portable_path_uses()
    for module, (allowed, guard) in RUNTIME_GUARDED.items():
        text = closure()[module].read_text(encoding="utf-8")
        for one in (guard,) if isinstance(guard, str) else guard:
            assert one in text, (module, one)
        uses[module] = uses.get(module, set()) - allowed
    assert {module: found for module, found in uses.items() if found} == {}


def test_the_fork_server_is_reached_only_through_its_guarded_start(tmp_path):
    """grader/hosts/forks.py uses its POSIX names only inside functions; ForkServer.start, the
    only way to a fork server (the portable host calls nothing else of the module), returns
    None first thing unless POSSIBLE."""
    path = closure()["grader.hosts.forks"]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = [node for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    module_level = ast.Module(body=top, type_ignores=[])
    sample = tmp_path / "forks_module_level.py"
    sample.write_text(ast.unparse(module_level), encoding="utf-8")
    assert linux_only_uses(sample) == set()
    server = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ForkServer")
    start = next(n for n in server.body if isinstance(n, ast.FunctionDef) and n.name == "start")
    first = next(s for s in start.body if not isinstance(s, ast.Expr))  # past the docstring
    assert ast.unparse(first) == "if not POSSIBLE:\n    return None"
    portable = closure()["grader.hosts.portable"].read_text(encoding="utf-8")
    assert "ForkServer.start(" in portable and "ForkServer(" not in portable


def test_the_checker_sees_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import os, fcntl, subprocess\n"
                      "try:\n    import pwd\nexcept ImportError:\n    pwd = None\n"
                      "os.fork()\nos.open('x', os.O_NOFOLLOW)\n"
                      "subprocess.Popen(['x'], start_new_session=True, user='nobody')\n"
                      "client(user='ana')\n")
    assert linux_only_uses(sample) == {"import fcntl", "os.fork", "os.O_NOFOLLOW",
                                       "start_new_session=", "user="}
