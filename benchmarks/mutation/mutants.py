"""Mutation benchmark (issue 12): how many small bugs in the server's security core do the
notes-server tests catch? Not a CI step and not part of `make test`; run it with `make mutants`.

Mutants come from mutmut's own mutation operators (mutmut 3.x, pinned in
benchmarks/mutation/requirements.txt): the same libcst operators `mutmut run` uses, inside every
function and method (not module-level constants, not logging lines). Each mutant is written, on
its own, into a fresh copy of code/, and the module's tests run against that copy through
NOTES_CODE_DIR (tests/notes_server/server_support.py), stopping at the first failure.

Why not `mutmut run` itself: it keeps every mutant in one file and picks the active one at run
time from the MUTANT_UNDER_TEST environment variable, and code/ does not fit that:
- the official SDK's stdio client starts the server with only a whitelisted environment
  (HOME, PATH, ...), so in every SDK-driven test the mutant is silently inactive;
- its trampolines import `mutmut` when a module loads, so the lesson's no-site-packages
  runs (`python -I -S code/main.py`, test_demo.py) fail on import;
- it swaps sys.stderr for an in-memory catcher, and the SDK hands sys.stderr to the server
  process (`io.UnsupportedOperation: fileno`);
- its per-test coverage map only sees calls made in the pytest process, not in the servers
  the tests start, and it expects package imports (`code.roots`) where the tests import
  `roots`.
A plain mutated file on disk is seen the same way by every process the tests start.

Each test run is forked from this process after the heavy third-party imports (pytest, the
SDK, jsonschema, hypothesis), never after importing anything from code/. One mutant at a time,
at the lowest priority (`make mutants` runs it under `nice -n 19`).

A surviving mutant either gets a test that kills it, or an entry in
benchmarks/mutation/equivalent.md that says why no behaviour can tell it apart; the run exits 1
while any survivor is unexplained.

    make mutants                                    # everything, under nice -n 19
    .venv/bin/python benchmarks/mutation/mutants.py -m roots -m store
    .venv/bin/python benchmarks/mutation/mutants.py --list -m url_mode   # mutants and keys
    .venv/bin/python benchmarks/mutation/mutants.py --key 1a2b3c4d       # re-run some
    .venv/bin/python benchmarks/mutation/mutants.py --survivors          # last survivors
"""

import argparse
import difflib
import gc
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "code"
BASE = CODE  # what the mutants are made from: a snapshot of code/ taken when a run starts
TESTS = ROOT / "tests" / "notes_server"
WORK = ROOT / "build" / "mutants"
RESULTS = WORK / "results.json"
EQUIVALENT = Path(__file__).with_name("equivalent.md")

# Lines never mutated: what the server writes to its own log (stderr) is not behaviour any
# client, learner or test can rely on.
DO_NOT_MUTATE = [r"self\.server\.log\(", r"server\.log\("]
# Nor the wording of prose (a literal with two words in a row: the explanations the learner
# reads, error messages): rewording them is no bug, and the tests check which explanation
# comes, not its letters. Words without spaces (keys, methods, reason codes) are mutated.
PROSE = re.compile(r"[^\W\d_]{2,}\s+[^\W\d_]{2,}")


MODULES = ["roots", "elicitation", "request_state", "url_mode", "revisions", "calls", "session",
           "note_format", "place", "handles", "store", "dirfd"]


def source_of(name):
    """Where module `name` of MODULES is, relative to code/: in its layer's folder (the top of
    code/ only re-exports the learner's modules). Mutants keep the bare name in their keys."""
    found = sorted(CODE.glob(f"*/{name}.py"))
    assert len(found) == 1, f"{name}: {found}"
    return found[0].relative_to(CODE).as_posix()


def copy_code(source, target):
    """code/'s .py files, its layers' folders included, from `source` into `target`."""
    for path in sorted(source.rglob("*.py")):
        if "__pycache__" not in path.parts and ".probe" not in path.parts:
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / path.relative_to(source))

# Preloaded before forking: what every test run imports and nothing from code/.
PRELOAD = ["pytest", "anyio", "anyio.pytest_plugin", "hypothesis", "_hypothesis_pytestplugin",
           "pytest_timeout", "jsonschema", "mcp", "mcp.client.stdio", "mcp.client.session",
           "mcp.types", "mcp_schema"]
# pytest plugins these tests never use (loading them is most of a run's start-up)
NO_PLUGINS = ["no:cacheprovider", "no:nbval"]


# -- mutants -----------------------------------------------------------------------------------
@dataclass
class Mutant:
    module: str
    function: str
    key: str      # 8 hex digits from the module, function and changed lines: stable across edits
    diff: str
    source: str   # the whole mutated module

    def header(self):
        return f"{self.module}.py · {self.function} · {self.key}"


def set_work(folder):
    global WORK, RESULTS
    WORK, RESULTS = folder, folder / "results.json"


def snapshot_code():
    """Mutate and test a copy of code/ taken now: edits made to code/ during a long run must
    not mix with it (mutants from one version, the other modules from another)."""
    global BASE
    BASE = WORK / "code"
    shutil.rmtree(BASE, ignore_errors=True)
    BASE.mkdir(parents=True)
    copy_code(CODE, BASE)


def load_mutmut():
    """mutmut's config is read from the working directory: give it one that names code/ and
    the lines it must not mutate, then hand back its mutation generator."""
    import mutmut.configuration
    from mutmut.mutation.file_mutation import create_mutations, deep_replace

    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as folder:
        patterns = ", ".join(json.dumps(p) for p in DO_NOT_MUTATE)
        Path(folder, "pyproject.toml").write_text(
            f'[tool.mutmut]\nsource_paths = ["code"]\ndo_not_mutate_patterns = [{patterns}]\n')
        old = os.getcwd()
        os.chdir(folder)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mutmut.configuration.reset_config()
                mutmut.configuration.config()
        finally:
            os.chdir(old)
    return create_mutations, deep_replace


def function_names(module):
    """libcst FunctionDef node -> "name" or "Class.name", for the nodes mutmut mutates."""
    import libcst as cst

    names = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            names[statement] = statement.name.value
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for method in statement.body.body:
                if isinstance(method, cst.FunctionDef):
                    names[method] = f"{statement.name.value}.{method.name.value}"
    return names


def is_prose(node):
    import libcst as cst

    return isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str) \
        and bool(PROSE.search(node.evaluated_value))


def generate(name, create_mutations, deep_replace):
    path = BASE / source_of(name)
    original = path.read_text()
    module, mutations, _, _ = create_mutations(str(path), original)
    names = function_names(module)
    mutants, seen = [], {}
    for mutation in mutations:
        function = names.get(mutation.contained_by_top_level_function)
        if function is None:  # module level: mutmut does not mutate it either
            continue
        if is_prose(mutation.original_node):
            continue
        source = deep_replace(module, mutation.original_node, mutation.mutated_node).code
        if source == original or source in seen:
            continue
        old, new = original.splitlines(), source.splitlines()
        changed = [line.strip() for line in difflib.ndiff(old, new) if line[:1] in "-+"]
        digest = hashlib.sha256("\0".join([name, function, *changed]).encode()).hexdigest()
        key = digest[:8]
        while key in {m.key for m in mutants}:  # the same change twice in one function
            digest = hashlib.sha256(digest.encode()).hexdigest()
            key = digest[:8]
        diff = "".join(difflib.unified_diff(original.splitlines(True), source.splitlines(True),
                                            f"a/code/{source_of(name)}",
                                            f"b/code/{source_of(name)}", n=1))
        seen[source] = key
        mutants.append(Mutant(name, function, key, diff, source))
    return mutants


# -- equivalents ---------------------------------------------------------------------------------
HEADING = re.compile(r"^### `([0-9a-f]{8})`")


def load_equivalents(path=EQUIVALENT):
    """key -> reason, from headings "### `key` module · function" and the prose under them up
    to the next heading (a diff block under a heading is for the reader, not the reason)."""
    reasons, key, lines, fence = {}, None, [], False

    def close():
        if key is not None:
            reason = " ".join(" ".join(lines).split())
            if not reason:
                raise SystemExit(f"{path.name}: the entry for {key} gives no reason")
            reasons[key] = reason

    for line in (path.read_text().splitlines() if path.exists() else []):
        if line.startswith("```"):
            fence = not fence
        elif fence:
            continue
        elif line.startswith("#"):
            close()
            match = HEADING.match(line)
            key, lines = (match[1] if match else None), []
        elif key is not None:
            lines.append(line)
    close()
    return reasons


# -- which tests reach which function ----------------------------------------------------------
PROBE = """\
# Written by benchmarks/mutation/mutants.py into a throw-away copy of code/: records which
# functions of the mutated modules run, in the pytest process and in every process it starts
# (servers started by the SDK get no environment from the test, hence files, not variables).
import os
import sys
import threading

HERE = os.path.dirname(os.path.realpath(__file__))
WATCHED = {os.path.join(HERE, *path.split("/")): name for name, path in %(modules)r}
FOLDER = os.path.join(HERE, ".probe")
IN_PYTEST = False  # the pytest process sets it and collects `hits` after each test
PYTEST_PID = None  # ... and its pid: a process a test forks from it writes its own hits
hits = set()
_names = {}
_lock = threading.Lock()


def _current():
    with open(os.path.join(FOLDER, "current")) as f:
        return f.read()


_started_in = _current()


def _name(code):
    try:
        return _names[code]
    except KeyError:
        module = WATCHED.get(os.path.realpath(code.co_filename))
        name = None if module is None else module + ":" + code.co_qualname.split(".<locals>")[0]
        _names[code] = name
        return name


def _profile(frame, event, arg):
    if event == "call":
        name = _name(frame.f_code)
        if name is not None and name not in hits:
            with _lock:
                hits.add(name)
                # a child a test forked (the one that drops to nobody, say) writes a file too
                forked = IN_PYTEST and os.getpid() != PYTEST_PID
                if forked or not IN_PYTEST:
                    try:
                        test = _current() if forked else _started_in
                        with open(os.path.join(FOLDER, "hits-%%d" %% os.getpid()), "a") as out:
                            out.write(test + "\\t" + name + "\\n")
                    except OSError:
                        pass


sys.setprofile(_profile)
threading.setprofile(_profile)
"""


class CoverageRecorder:
    """pytest plugin for the probe run: test -> functions it reached, and its duration. What a
    process started during a test reaches is that test's (a server started by a module-scoped
    fixture is handled by running its whole file, see tests_for)."""

    def __init__(self, code_dir):
        self.folder = code_dir / ".probe"
        self.reached, self.seconds, self.failed = {}, {}, []

    def pytest_runtest_logstart(self, nodeid, location):
        (self.folder / "current").write_text(nodeid)
        probe = sys.modules.get("_mutation_probe")
        if probe is not None:  # a RecursionError in a profiler makes Python drop it for good
            sys.setprofile(probe._profile)  # (the tests that parse JSON nested thousands
            threading.setprofile(probe._profile)  # deep did: every later test went unmapped)

    def pytest_runtest_logreport(self, report):
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            self.failed.append(report.nodeid)

    def pytest_runtest_logfinish(self, nodeid, location):
        probe = sys.modules.get("_mutation_probe")
        if probe is not None:
            probe.IN_PYTEST, probe.PYTEST_PID = True, os.getpid()
            self.reached.setdefault(nodeid, set()).update(probe.hits)
            probe.hits.clear()

    def handed(self):  # from the forked child ...
        return {"reached": {k: sorted(v) for k, v in self.reached.items()},
                "seconds": self.seconds, "failed": self.failed}

    def take(self, data):  # ... to the parent
        self.reached = {k: set(v) for k, v in data["reached"].items()}
        self.seconds, self.failed = data["seconds"], data["failed"]


def instrumented_copy():
    """A copy of code/ whose mutated modules import the probe first (after their docstring and
    their `from __future__` imports, which must come first)."""
    import ast

    folder = fresh_copy()
    (folder / ".probe").mkdir()
    folder.chmod(0o755)  # a test may drop to another user in a forked child: its calls
    (folder / ".probe").chmod(0o777)  # are that test's too (it reads "current", writes hits)
    (folder / ".probe" / "current").write_text("")
    watched = [(name, source_of(name)) for name in MODULES]
    (folder / "_mutation_probe.py").write_text(PROBE % {"modules": watched})
    for name in MODULES:
        path = folder / source_of(name)
        lines = path.read_text().splitlines(True)
        after = 0
        for node in ast.parse("".join(lines)).body:
            docstring = after == 0 and isinstance(node, ast.Expr) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            if not (docstring or (isinstance(node, ast.ImportFrom)
                                  and node.module == "__future__")):
                break
            after = node.end_lineno
        lines.insert(after, "import _mutation_probe  # noqa\n")
        path.write_text("".join(lines))
    return folder


def fingerprint():
    digest = hashlib.sha256()
    for path in sorted([*BASE.rglob("*.py"), *TESTS.rglob("*.py"), Path(__file__)]):
        where = path.relative_to(BASE).as_posix() if BASE in path.parents else path.name
        digest.update(where.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def coverage_map():
    """{"reached": {function: [test ids]}, "seconds": {test id: s}}, from one run of all the
    notes-server tests on an instrumented copy (cached until code/ or the tests change).
    That run is also the clean run: every test must pass on the unmutated code."""
    cache = WORK / "coverage.json"
    stamp = fingerprint()
    if cache.exists():
        saved = json.loads(cache.read_text())
        if saved.get("fingerprint") == stamp:
            return saved
    folder = instrumented_copy()
    recorder = CoverageRecorder(folder)
    files = sorted(str(p.relative_to(ROOT)) for p in TESTS.glob("test_*.py"))
    print(f"coverage: running {len(files)} test files once on an instrumented copy of code/",
          flush=True)
    outcome, seconds = run_tests(folder, files, 1800, WORK / "logs" / "clean.log",
                                 plugin=recorder, stop_at_first=False)
    if outcome != "passed":
        raise SystemExit(f"the notes-server tests do not pass on the unmutated code ({outcome});"
                         f" see {WORK / 'logs' / 'clean.log'}")
    reached = {}
    for test, names in recorder.reached.items():
        for name in names:
            reached.setdefault(name, set()).add(test)
    for hits in (folder / ".probe").glob("hits-*"):
        for line in hits.read_text().splitlines():
            test, _, name = line.partition("\t")
            if test:
                reached.setdefault(name, set()).add(test)
    shutil.rmtree(folder, ignore_errors=True)
    saved = {"fingerprint": stamp, "seconds": recorder.seconds,
             "reached": {k: sorted(v) for k, v in sorted(reached.items())}}
    cache.write_text(json.dumps(saved, indent=1))
    print(f"coverage: done in {seconds:.0f}s", flush=True)
    return saved


SHARED_FIXTURE = re.compile(r"""scope\s*=\s*["'](module|class|package|session)""")


def tests_for(mutant, coverage):
    """The tests that run the mutated function, fastest first. In a file with a fixture shared
    between tests (what it started ran during its first test only), every test of the file."""
    found = set(coverage["reached"].get(f"{mutant.module}:{mutant.function}", []))
    shared = {t.split("::")[0] for t in found
              if SHARED_FIXTURE.search((ROOT / t.split("::")[0]).read_text())}
    found |= {t for t in coverage["seconds"] if t.split("::")[0] in shared}
    return sorted(found, key=lambda t: (coverage["seconds"].get(t, 0.0), t))


# -- running -------------------------------------------------------------------------------------
def preload():
    sys.path.insert(0, str(ROOT / "tests"))
    for name in PRELOAD:
        __import__(name)
    import mcp_schema
    for revision in mcp_schema.SCHEMA_REVISIONS:  # the parsed official schemas
        mcp_schema._revision(revision)
    local = {p.stem for p in CODE.glob("*.py")} | {p.name for p in CODE.iterdir() if p.is_dir()}
    leaked = sorted(name for name in local if name in sys.modules)
    assert not leaked, f"preloading imported code/ modules {leaked}: forked runs would share them"
    gc.freeze()  # forked runs neither copy nor collect what is loaded by now


def fresh_copy(name=None, source=None):
    """A new copy of code/: its own __pycache__, so no bytecode of another mutant (same size,
    same mtime second) can be picked up."""
    folder = Path(tempfile.mkdtemp(prefix="code-", dir=WORK / "runs"))
    copy_code(BASE, folder)
    if name is not None:
        (folder / source_of(name)).write_text(source)
    return folder


def run_tests(code_dir, tests, timeout, log, plugin=None, stop_at_first=True):
    """Fork, run pytest on `tests` (test files or ids) against `code_dir`:
    ("passed"|"failed"|"timeout"|"error N", seconds).
    With a plugin, the child hands back what it recorded in a file next to the log."""
    start = time.monotonic()
    handed = Path(f"{log}.json")
    handed.unlink(missing_ok=True)
    pid = os.fork()
    if pid == 0:  # the child: its own process group, so a timeout can stop its servers too
        status = 99
        try:
            os.setpgid(0, 0)
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            # a private temp folder: the demo test compares what it leaves in it
            private_tmp = WORK / "tmp"
            private_tmp.mkdir(exist_ok=True)
            os.environ.update(NOTES_CODE_DIR=str(code_dir), LESSON_USER="scripted",
                              TMPDIR=str(private_tmp))
            tempfile.tempdir = None
            os.chdir(code_dir.parent)  # hypothesis keeps its database under the work folder
            import pytest
            files = list(dict.fromkeys(t.split("::")[0] for t in tests))
            status = int(pytest.main(
                ["-x"] * stop_at_first + [
                    "-q", "--no-header", "-W", "ignore::pytest.PytestAssertRewriteWarning",
                    *[a for p in NO_PLUGINS for a in ("-p", p)], "-c", str(ROOT / "pytest.ini"),
                    "--rootdir", str(ROOT), *[str(ROOT / f) for f in files]],
                plugins=[plugin or Select(tests)]))
            if plugin is not None:
                handed.write_text(json.dumps(plugin.handed()))
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    try:
        deadline = start + timeout
        while True:
            done, wait_status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                _kill_group(pid)
                os.waitpid(pid, 0)
                return "timeout", time.monotonic() - start
            time.sleep(0.02)
    finally:
        _kill_group(pid)  # whatever a test left running
    if plugin is not None and handed.exists():
        plugin.take(json.loads(handed.read_text()))
    code = os.waitstatus_to_exitcode(wait_status)
    # pytest: 0 all passed, 1 a test failed, 2 interrupted (a collection error), 3 internal error
    outcome = {0: "passed", 1: "failed", 2: "failed", 3: "failed"}.get(code, f"error {code}")
    return outcome, time.monotonic() - start


class Select:
    """pytest plugin: run exactly these test ids (or whole files), in this order. (Test ids
    with "/" or a NUL in their parameters cannot be given on the command line.)"""

    def __init__(self, tests):
        self.order = {t: i for i, t in enumerate(tests)}

    def pytest_collection_modifyitems(self, session, config, items):
        if all("::" not in t for t in self.order):
            return
        keep = sorted((i for i in items if i.nodeid in self.order),
                      key=lambda i: self.order[i.nodeid])
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in self.order])
        items[:] = keep


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(signum, frame):
    raise SystemExit(128 + signum)  # runs the finally blocks: the test run's group is killed


STATUS = {"failed": "killed", "passed": "survived", "timeout": "timeout"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-m", "--module", action="append", choices=MODULES,
                        help="only this module (repeatable); default: all of MODULES")
    parser.add_argument("--key", action="append", default=[], help="only these mutants")
    parser.add_argument("--survivors", action="store_true",
                        help="re-run what survived in the last run and run what it did not get "
                             "to (keeps its other results)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--work", type=Path, default=WORK,
                        help=f"work folder: copies, logs, results (default {WORK})")
    args = parser.parse_args(argv)
    set_work(args.work.resolve())
    modules = args.module or MODULES
    signal.signal(signal.SIGTERM, _stop)

    started = time.monotonic()
    if not args.list:
        snapshot_code()
    create_mutations, deep_replace = load_mutmut()
    mutants = {name: generate(name, create_mutations, deep_replace) for name in modules}
    if args.list:
        for name in modules:
            for mutant in mutants[name]:
                print(f"== {mutant.header()}\n{mutant.diff}")
        print({name: len(found) for name, found in mutants.items()})
        return 0
    equivalents = load_equivalents()

    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    again = None  # None: every mutant
    if args.key or args.survivors:
        again = set(args.key)
        if args.survivors:  # and what the last run did not get to
            again |= {k for k, r in previous.items() if r["status"] not in ("killed", "timeout")}
            again |= {m.key for found in mutants.values() for m in found if m.key not in previous}
    results = {k: r for k, r in previous.items() if again is not None and k not in again}
    if args.key and not args.survivors:  # report just those
        mutants = {name: [m for m in found if m.key in again] for name, found in mutants.items()}

    preload()
    shutil.rmtree(WORK / "runs", ignore_errors=True)
    (WORK / "runs").mkdir(parents=True)
    (WORK / "logs").mkdir(parents=True, exist_ok=True)
    coverage = coverage_map()
    for name in modules:
        todo = [m for m in mutants[name] if again is None or m.key in again]
        if not todo:
            continue
        print(f"{name}: {len(todo)} mutants", flush=True)
        for i, mutant in enumerate(todo, 1):
            chosen = tests_for(mutant, coverage)
            killer = ""
            if not chosen:
                status, seconds = "not reached", 0.0
            else:
                expected = sum(coverage["seconds"].get(t, 0.0) for t in chosen)
                folder = fresh_copy(name, mutant.source)
                log = WORK / "logs" / f"{mutant.key}.log"
                outcome, seconds = run_tests(folder, chosen, 3 * expected + 60, log)
                shutil.rmtree(folder, ignore_errors=True)
                status = STATUS.get(outcome, outcome)
                failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", log.read_text(), re.M)
                killer = failed[0] if failed and status == "killed" else ""
                if status == "killed":
                    log.unlink()
            results[mutant.key] = {"module": name, "function": mutant.function,
                                   "status": status, "seconds": round(seconds, 2),
                                   "tests": len(chosen), "killed_by": killer}
            print(f"  [{i}/{len(todo)}] {mutant.key} {mutant.function}: {status} "
                  f"({seconds:.1f}s, {len(chosen)} tests) {killer}", flush=True)
            RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True))
    shutil.rmtree(WORK / "runs", ignore_errors=True)
    whole = len(modules) == len(MODULES) and not (args.key and not args.survivors)
    return report(modules, mutants, results, equivalents, time.monotonic() - started, whole)


def report(modules, mutants, results, equivalents, wall, whole=True):
    print("\n== mutation score: (killed + timeouts) / mutants")
    print(f"{'module':<18}{'mutants':>8}{'killed':>8}{'timeout':>8}{'survived':>9}"
          f"{'score':>8}{'explained':>10}")
    unexplained, errors, survivors = 0, 0, []
    for name in modules:
        rows = [(m, results.get(m.key, {}).get("status", "not run")) for m in mutants[name]]
        count = {s: sum(1 for _, st in rows if st == s) for s in ("killed", "timeout")}
        lived = [m for m, st in rows if st in ("survived", "not reached")]
        others = [st for _, st in rows if st not in count and st not in ("survived", "not reached")]
        errors += len(others)
        explained = sum(1 for m in lived if m.key in equivalents)
        unexplained += len(lived) - explained
        survivors += [(m, st) for m, st in rows if m in lived]
        total = len(rows)
        score = (count["killed"] + count["timeout"]) / total if total else 1.0
        print(f"{name + '.py':<18}{total:>8}{count['killed']:>8}{count['timeout']:>8}"
              f"{len(lived):>9}{score:>8.1%}{explained:>10}"
              + (f"   ({len(others)} not run or errors)" if others else ""))
    for mutant, status in survivors:
        reason = equivalents.get(mutant.key)
        mark = f"explained: {reason}" if reason else "UNEXPLAINED"
        how = "" if status == "survived" else f" ({status}: no test runs this function)"
        print(f"\n-- {mutant.header()}{how} -- {mark}\n{mutant.diff.rstrip()}")
    if whole:
        alive = {m.key for m, _ in survivors}
        stale = sorted(set(equivalents) - alive)
        if stale:
            print(f"\n{EQUIVALENT.name}: entries for no surviving mutant (killed now, or the "
                  f"code changed): {', '.join(stale)}")
    print(f"\n{sum(len(m) for m in mutants.values())} mutants, {len(survivors)} survived, "
          f"{unexplained} unexplained; wall time {wall / 60:.1f} min")
    return 1 if unexplained or errors else 0


if __name__ == "__main__":
    sys.exit(main())
