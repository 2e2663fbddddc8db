"""Which tests need the instructors' source: declared by a mark, held by what each test reads.

The student edition (editions/release/build.py) ships every test file except those whose module
says `pytestmark = pytest.mark.instructor_only("why")`: the build reads that mark and nothing
else. To keep the mark honest, this plugin (registered by tests/conftest.py) watches, through
an audit hook (PEP 578), every file a test of a shipped file opens and every path it hands to
a process it starts, from collection (its module's imports) to teardown. A read of something
the student edition leaves out (editions/common.py's INSTRUCTOR_ONLY: the reference solutions,
the hidden tests, the grader's own tests and helpers, ...; the release builder aside, see
AUDITED) by an unmarked test fails that test, whatever spelled the path: a literal,
`grader.paths.REFERENCE_DIR`, a helper, a symlink.

It is active only where those files exist (the instructors' source): in the student edition
there is nothing to read, and the marked files are not there.

Two readers are allowed, because they read whatever is there to guard it and work the same
where it is not: the editions' leak check (`editions.common.secrets`), which reads the reference
to refuse copies of it and, without one, still refuses instructor-only paths; and the grader's
tripwire (`grader.runner.fingerprint`), which hashes every check file there is, the hidden ones
included, so that a grading run cannot change them.

Deliberate simplifications: a read is an `open` (files and directories, `os.open` included) or
a path among the arguments of `subprocess.Popen`, `os.exec*`, `os.posix_spawn` and
`os.spawn*` (a path a test sends to an already running process through a pipe is not seen);
listing or stat-ing a folder is not a read. The mark is per file, because the build leaves out
whole files.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from editions.common import INSTRUCTOR_ONLY, matches  # noqa: E402

MARK = "instructor_only"
# What a shipped test must not read unmarked: every instructor-only file but the release
# builder, which the rendered and Lite fixtures run where it exists (in this source they build
# the student edition first; in the student edition they build from it): running a builder
# reads no secret, and a test that needs it unconditionally fails in the student edition's own
# `make test`.
AUDITED = tuple(pattern for pattern in INSTRUCTOR_ONLY if not pattern.startswith("editions/"))
PROCESS_EVENTS = {"subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn"}
ALLOWED_READERS = {(str(REPO / "editions" / "common.py"), "secrets"),
                   (str(REPO / "grader" / "runner.py"), "fingerprint")}
STACK_DEPTH = 40  # frames looked at for an allowed reader


def instructor_only(path, repo=REPO):
    """The path (str, bytes or PathLike; relative to the working folder) as the repository
    name of an instructor-only file or folder, or None."""
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return None  # a file descriptor
    real = os.path.realpath(text)
    try:
        name = Path(real).relative_to(repo).as_posix()
    except ValueError:
        return None
    return name if matches(name, AUDITED) or matches(name + "/", AUDITED) else None


def paths_in(args, cwd):
    """The strings of a command line that may name a file: each argument, and the value of
    an `--option=value` one, relative to the process's working folder."""
    for arg in args if isinstance(args, (list, tuple)) else [args]:
        try:
            text = os.fsdecode(os.fspath(arg))
        except TypeError:
            continue
        for part in {text, text.partition("=")[2]} - {""}:
            yield part if os.path.isabs(part) else os.path.join(cwd, part)


def module_mark(module):
    """The instructor_only mark of a test module (its `pytestmark`), or None."""
    marks = getattr(module, "pytestmark", [])
    for mark in marks if isinstance(marks, list) else [marks]:
        if getattr(mark, "name", None) == MARK:
            return mark
    return None


class ReferenceAudit:
    """The pytest plugin: reads of instructor-only files by unmarked tests of shipped files."""

    def __init__(self, repo=REPO):
        self.repo = repo
        self.watching = None          # nodeid of the unmarked test (or module) being run
        self.reads: list[str] = []
        self.misplaced = False
        self.local = threading.local()
        sys.addaudithook(self.hook)

    # -- the audit hook: it runs for every event of the process, so it returns early ---------
    def hook(self, event, args):
        if self.watching is None or getattr(self.local, "busy", False):
            return
        if event != "open" and event not in PROCESS_EVENTS:
            return
        self.local.busy = True
        try:
            if event == "open":
                candidates = [args[0]]
            elif event == "subprocess.Popen":
                _, argv, cwd, _ = args
                candidates = list(paths_in(argv, os.fsdecode(cwd) if cwd else os.getcwd()))
            else:
                candidates = list(paths_in([args[0], *args[1]], os.getcwd()))
            for candidate in candidates:
                name = instructor_only(candidate, self.repo)
                if name and not self.allowed_reader():
                    self.reads.append(f"{event}: {name}")
        finally:
            self.local.busy = False

    @staticmethod
    def allowed_reader():
        frame = sys._getframe(2)
        for _ in range(STACK_DEPTH):
            if frame is None:
                return False
            if (frame.f_code.co_filename, frame.f_code.co_name) in ALLOWED_READERS:
                return True
            frame = frame.f_back
        return False

    # -- which tests are watched -------------------------------------------------------------
    def shipped(self, path):
        try:
            name = Path(path).resolve().relative_to(self.repo).as_posix()
        except ValueError:
            return False
        return not matches(name, INSTRUCTOR_ONLY)

    def take(self):
        reads, self.reads = self.reads, []
        return sorted(set(reads))

    def explain(self, reads, where):
        shown = "\n".join(f"  {read}" for read in reads[:10])
        return (f"{where} reads what the student edition leaves out:\n{shown}\n"
                f"Mark its module as the instructors' own, so the student edition leaves the "
                f"file out:\n  pytestmark = pytest.mark.{MARK}(\"what it needs\")")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        watched = isinstance(collector, pytest.Module) and self.shipped(collector.path)
        if watched:
            self.watching, self.reads = collector.nodeid, []
        outcome = yield
        if not watched:
            return
        self.watching = None
        reads = self.take()
        report = outcome.get_result()
        module = getattr(collector, "_obj", None)
        if reads and report.passed and module_mark(module) is None:
            report.outcome = "failed"
            report.longrepr = self.explain(reads, f"importing {collector.nodeid}")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item):
        marked = module_mark(getattr(item, "module", None)) is not None
        self.misplaced = not marked and any(True for _ in item.iter_markers(MARK))
        self.watching = item.nodeid if self.shipped(item.path) and not marked else None
        self.reads = []
        yield
        self.watching = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if self.misplaced and call.when == "setup":
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid}: the {MARK} mark goes on the module "
                               f"(pytestmark = pytest.mark.{MARK}(...)): the student edition "
                               f"leaves out whole files")
        reads = self.take() if self.watching == item.nodeid else []
        if not reads:
            return
        message = self.explain(reads, item.nodeid)
        if report.failed:
            report.sections.append((f"{MARK} audit", message))
        else:
            report.outcome = "failed"
            report.longrepr = message
