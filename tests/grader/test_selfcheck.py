"""The learner's self-check (`ui.revisar`) on any laptop and in the browser.

- portable host (grader/hosts/portable.py): forced here on Linux, as revisar runs it
  (`python -m grader ... --tests public --host auto` with GRADER_HOST=portable), it gives the same
  verdicts as the sandbox and says plainly that it is a self-check and which protections are
  off; statically, nothing on its path imports or calls anything Linux-only;
- in-process host (grader/hosts/inprocess.py, JupyterLite): the same verdicts, in this interpreter,
  with no thread, no process and no socket started (checked by forbidding them);
- the checks are the same code in every mode: the in-process runner (no pytest) and the pytest
  runner give the same tests, scores and feedback.
"""

import ast
import json
import os
import subprocess
import sys

import pytest
from mutants import MUTANTS, REFERENCE

from grader import runner, selfcheck
from grader.paths import REPO_DIR
from grading_points import PUBLIC, TOTAL

STARTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "starter.ipynb")
EXERCISES = ("ejercicio2", "ejercicio3a", "ejercicio3b", "ejercicio4")


def grader(*args, env=None):
    run = subprocess.run([sys.executable, "-m", "grader", *args], cwd=REPO_DIR,
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, **(env or {})})
    return run, [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def verdicts(result):
    return [(t["id"], t["score"], t["status"]) for t in result["tests"]]


# -- the portable host ------------------------------------------------------------------------
@pytest.mark.parametrize("exercise", EXERCISES)
def test_revisar_forced_portable_on_linux_gives_the_sandboxs_verdicts(exercise, tmp_path):
    name = {"ejercicio2": "archiva_con_confirm_false",
            "ejercicio3a": "compara_versiones_como_texto",
            "ejercicio3b": "el_enlace_dice_quien_eres",
            "ejercicio4": "compara_rutas_con_startswith"}[exercise]  # each loses a public test
    bug = next(m for m in MUTANTS if m.name == name)
    mutant = bug.write(str(tmp_path / bug.name))
    for path in (REFERENCE, STARTER, mutant):
        run, (portable,) = grader(path, "--only", exercise, "--tests", "public", "--host",
                                  "auto", "--format", "json", env={"GRADER_HOST": "portable"})
        assert portable["protections"]["mode"] == "portable", run.stderr
        _, (official,) = grader(path, "--only", exercise, "--tests", "public", "--format",
                                "json")
        assert official["protections"]["mode"] != "portable"
        assert verdicts(portable) == verdicts(official)
    assert portable["score"] < portable["max_score"]  # the mutant loses there too


def test_the_portable_report_says_it_is_a_self_check_and_which_protections_are_off():
    run, _ = grader(REFERENCE, "--only", "ejercicio4", "--tests", "public", "--host",
                    "portable")
    text = run.stdout
    assert "Autoevaluación en modo local (sin aislamiento)" in text and "sin aislamiento" in text
    assert "la nota la pone el corrector oficial" in text
    off = text.split("NO disponibles:", 1)[1]
    for protection in ("network_namespace", "private_filesystem", "unprivileged_uid",
                       "pid_namespace", "grader_touches_data_only_through_descriptors"):
        assert protection in off
    run, (result,) = grader(REFERENCE, "--only", "ejercicio4", "--tests", "public", "--host",
                            "portable", "--format", "json")
    assert result["protections"]["self_check"] is True
    assert "modo local (sin aislamiento)" in result["notice"]
    assert "Solo pruebas públicas" in result["notice"]


def test_the_portable_host_cannot_pass_for_the_full_sandbox():
    run, _ = grader(REFERENCE, "--host", "portable", "--require-isolation")
    assert run.returncode == 4


def test_the_portable_plan_lists_the_same_protections_as_the_sandbox():
    from grader.hosts.inprocess import PLAN as INPROCESS
    from grader.hosts.portable import PLAN as PORTABLE
    from grader.hosts.sandbox import plan
    assert set(PORTABLE) - {"self_check"} == set(plan("plain"))
    assert set(INPROCESS) == set(PORTABLE)


# -- statically: nothing Linux-only on the portable path ---------------------------------------
PORTABLE_ENTRIES = ("grader.cli", "grader.selfcheck", "grader.hosts.portable",
                    "grader.hosts.inprocess", "grader.checks.plugin", "grader.checks.direct",
                    "grader.checks.public.test_ej2", "grader.checks.public.test_ej3a",
                    "grader.checks.public.test_ej3b", "grader.checks.public.test_ej3b_2026",
                    "grader.checks.public.test_ej4")
SANDBOX_ONLY = {"grader.hosts.sandbox", "grader.hosts.zygote", "grader.hosts.tempspace",
                "grader.boundary", "grader.intake.submission", "grader.worker"}
LINUX_ONLY_MODULES = {"fcntl", "resource", "termios", "pty", "ctypes", "grp", "pwd", "posix"}
LINUX_ONLY_NAMES = {  # module -> attributes that do not exist, or do not work, elsewhere
    "os": {"fork", "forkpty", "setsid", "killpg", "setresuid", "fchown", "O_PATH",
           "O_DIRECTORY", "O_NOFOLLOW", "unshare", "setns", "pidfd_open"},
    "select": {"poll", "epoll"},
    "socket": {"SOCK_SEQPACKET", "send_fds", "recv_fds"},
    "signal": {"SIGKILL", "pthread_kill"},
}
LINUX_ONLY_ARGUMENTS = {"dir_fd", "pass_fds", "start_new_session", "preexec_fn"}


def module_path(name):
    parts = name.split(".")
    base = os.path.join(REPO_DIR, *parts)
    if os.path.isdir(base):
        return os.path.join(base, "__init__.py")
    if parts[0] == "grader":
        return base + ".py"
    code = os.path.join(REPO_DIR, "code", *parts)  # code/'s top, or one of its layers
    if os.path.isdir(code):
        return os.path.join(code, "__init__.py")
    return code + ".py" if os.path.exists(code + ".py") else None


def top_level_imports(path):
    """Modules imported when `path` is imported: module-level statements only (imports inside
    functions run only on their own path: the sandbox's are inside `if` branches there)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found | {name.rsplit(".", n)[0] for name in found  # a.b.c imports a and a.b
                    for n in range(1, name.count(".") + 1)}


def portable_closure():
    seen, pending = set(), list(PORTABLE_ENTRIES) + ["grader"]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_path(name)
        if path and os.path.exists(path):
            pending += [m for m in top_level_imports(path) if m not in seen]
    return seen


def test_the_portable_path_imports_nothing_linux_only():
    closure = portable_closure()
    assert "grader.hosts.portable" in closure and "client" in closure
    assert not closure & SANDBOX_ONLY, closure & SANDBOX_ONLY
    assert not {name.split(".")[0] for name in closure} & LINUX_ONLY_MODULES


def test_the_portable_path_calls_nothing_linux_only():
    used = {}
    for name in sorted(portable_closure()):
        path = module_path(name)
        if not (path and os.path.exists(path)) or name.split(".")[0] != "grader":
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.attr in LINUX_ONLY_NAMES.get(node.value.id, ()):
                used.setdefault(name, set()).add(f"{node.value.id}.{node.attr}")
            elif isinstance(node, ast.keyword) and node.arg in LINUX_ONLY_ARGUMENTS:
                used.setdefault(name, set()).add(f"{node.arg}=")
            elif isinstance(node, ast.Name) and node.id == "prctl":
                used.setdefault(name, set()).add("prctl")
    assert used == {}, used


def test_the_portable_path_runs_with_the_sandbox_modules_forbidden(tmp_path):
    """Dynamically: grade on the portable host with every sandbox-only and Linux-only module
    made unimportable, fork and descriptor passing removed and poll made to fail."""
    script = tmp_path / "forbid.py"
    script.write_text(f"""
import os, select, socket, sys
sys.path.insert(0, {REPO_DIR!r})
for name in {sorted(SANDBOX_ONLY | LINUX_ONLY_MODULES - {"posix", "pwd", "grp"})!r}:
    sys.modules[name] = None
del os.fork  # as on Windows: no fork, no descriptor passing (no fork server: launched servers)
for name in ("send_fds", "recv_fds"):
    delattr(socket, name)
if hasattr(select, "poll"):
    del select.poll
sys.argv = ["grader", {REFERENCE!r}, "--only", "ejercicio2", "--tests", "public",
            "--host", "portable", "--format", "json"]
from grader.hosts import forks
assert not forks.POSSIBLE
from grader.cli import main
sys.exit(main())
""")
    run = subprocess.run([sys.executable, str(script)], cwd=REPO_DIR, capture_output=True,
                         text=True, timeout=600)
    result = json.loads(run.stdout)
    assert run.returncode == 0, run.stderr[-2000:]
    assert result["score"] == result["max_score"] == PUBLIC["ejercicio2"]
    assert result["protections"]["mode"] == "portable"


# -- the in-process host (JupyterLite) ----------------------------------------------------------
@pytest.mark.parametrize("exercise", EXERCISES + ("reto",))
def test_inprocess_gives_the_same_tests_scores_and_feedback_as_the_official_runner(exercise):
    for path in (REFERENCE, STARTER):
        local = runner.grade(path, only=[exercise], tests="all", host="inprocess")
        official = runner.grade(path, only=[exercise], tests="all", host="sandbox")
        assert local["protections"]["mode"] == "inprocess"
        assert [(t["id"], t["score"], t["status"], t["output"]) for t in local["tests"]] == \
            [(t["id"], t["score"], t["status"], t["output"]) for t in official["tests"]]


def test_inprocess_starts_no_thread_no_process_and_no_socket(tmp_path):
    """What JupyterLite cannot do is made to fail; revisar's in-process call still grades."""
    script = tmp_path / "browser_like.py"
    script.write_text(f"""
import json, os, socket, subprocess, sys, threading
def forbidden(*args, **kwargs):
    raise RuntimeError("not in the browser")
threading.Thread.start = forbidden
subprocess.Popen.__init__ = forbidden
os.fork = forbidden
socket.socket.__init__ = forbidden
sys.path.insert(0, {REPO_DIR!r})
from grader import runner, selfcheck
out = {{}}
for exercise in ("ejercicio2", "ejercicio3a", "ejercicio3b", "ejercicio4"):
    result = selfcheck.run({REFERENCE!r}, exercise, host="inprocess")
    out[exercise] = [result["score"], result["max_score"], result["protections"]["mode"],
                     result["notice"]]
every = runner.grade({REFERENCE!r}, tests="all", host="inprocess")  # hidden tests too
out["all"] = [every["score"], every["max_score"], every["suite"], ""]
print(json.dumps(out))
""")
    run = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.splitlines()[-1])
    assert {k: v[:3] for k, v in out.items()} == {
        **{e: [PUBLIC[e], PUBLIC[e], "inprocess"] for e in EXERCISES},
        "all": [TOTAL, TOTAL, "all"]}
    assert all("Autoevaluación en el navegador" in out[e][3]
               for e in EXERCISES)


def test_selfcheck_runs_the_public_tests_of_one_exercise_and_prints_the_json_line():
    result = selfcheck.run(REFERENCE, "ejercicio3b", host="inprocess")
    assert result["suite"] == "public" and {t["exercise"] for t in result["tests"]} == \
        {"ejercicio3b"}
    assert not any(t["hidden"] for t in result["tests"])
    assert json.loads(selfcheck.json_line(result))["score"] == PUBLIC["ejercicio3b"]
    assert selfcheck.default_host() == "auto"  # CPython; "inprocess" under emscripten


def test_every_host_lists_the_same_protections_in_the_same_order():
    from grader.hosts import inprocess, portable, protections, sandbox
    for mode in ("root", "userns", "plain"):
        assert tuple(sandbox.plan(mode))[1:] == protections.PROTECTIONS
    for plan in (portable.PLAN, inprocess.PLAN):
        assert tuple(plan)[2:] == protections.PROTECTIONS and plan["self_check"] is True
