"""The host kinds, one class each: everything the grader asks of where a submission's servers
run, besides the host itself.

`grader.hosts.kind(name)` builds one of these once (the command line: once per run; the runner
and a worker: once per submission), and from then on grader/cli.py, grader/runner.py and
grader/pool.py ask it; none of them compares host names. What a kind answers:

    name                  "sandbox", "portable" or "inprocess" (what `--host` says, and what a
                          job carries to a worker)
    threads               may start threads (the budget watchdog); False in the browser
    pytest                run the checks with pytest (else grader/checks/direct.py)
    self_check_without_pytest
                          a self-check (only the public tests asked for) runs its checks
                          without pytest all the same (the sandbox: its worker's standard
                          output is not the report, grader/worker.py)
    in_workers            grade every submission in a worker process (grader/pool.py), even a
                          single one, so that its hard deadline holds
    fallback              picked for you (no --host, or auto) where the sandbox cannot run, and
                          it would run a class's code with your rights: plain mode's rules then
                          grade only a self-check (grader/hosts/plainmode.py)
    unavailable()         "" if it can run on this machine, else why not (Spanish, exit 4)
    mode()                the isolation in force: the sandbox's strongest mode here ("root",
                          "userns", "plain"), or a self-check host's name
    clean_leftovers()     remove what killed grader runs left (temp folders, cgroups, a plain
                          sandbox's processes); at the start and the end of a run, and after
                          the pool killed a worker
    stop()                the grader exits on a signal: end every host this process started
    start_ahead()         a warm helper (grader/warm.py) is about to wait for its one check:
                          start now what its host will use (the portable host's fork server;
                          the sandbox itself, built in the helper's worker before its
                          submission is known: grader/hosts/ahead.py)
    prepare(path, name)   read the submission before its host starts (grader/intake/) -> a
                          Prepared; write(prepared, folder) puts its files where the host reads
                          them and returns that folder
    workspace() / remove(folder)
                          one submission's temporary folder, and its removal
    open(solution, workspace)
                          its host, not started (what a host offers: grader/hosts/__init__.py)
    describe()            the protections in force when nothing of the submission ran

The sandbox kind reads the submission through descriptors (grader/intake/submission.py) and
keeps its folders where tempspace can find them after a crash; the self-check kinds read it by
path (grader/intake/solutions.py) into a plain temporary folder.

Deliberate simplifications: a kind holds no state but how it was chosen; the sandbox's modules
are Linux only, so its kind imports them in the methods that use them (the class itself can be
built, and can refuse, on any system).
"""

import os
import shutil
import sys
import tempfile

from grader.hosts import portable
from grader.hosts.inprocess import PLAN as INPROCESS_PLAN
from grader.hosts.inprocess import InProcessHost
from grader.hosts.portable import PLAN as PORTABLE_PLAN
from grader.hosts.portable import PortableHost
from grader.intake import solutions

SYSTEM_PYTHON = "/usr/bin/python3"
IN_BROWSER = sys.platform == "emscripten"


def sandbox_possible():
    """Can the official sandbox start here at all (Linux with a system python3)?"""
    return sys.platform.startswith("linux") and os.path.exists(SYSTEM_PYTHON)


class Kind:
    """What every host kind answers (see the module's docstring); a subclass sets `name` and
    fills in the rest."""

    name = ""
    threads = not IN_BROWSER
    pytest = True
    self_check_without_pytest = False
    in_workers = False

    def __init__(self, automatic=False):
        self.automatic = automatic  # chosen by auto (or no --host), not by its name

    @property
    def fallback(self):
        return False

    def unavailable(self):
        return ""

    def mode(self):
        return self.name

    def clean_leftovers(self):
        """Nothing: a self-check host leaves nothing a later run must remove."""

    def stop(self):
        """Nothing: a self-check host runs in this process, which is exiting."""

    def start_ahead(self):
        """Nothing to start ahead of a check."""

    def prepare(self, path, name=None):
        raise NotImplementedError

    def write(self, prepared, folder):
        raise NotImplementedError

    def workspace(self):
        raise NotImplementedError

    def remove(self, folder):
        raise NotImplementedError

    def open(self, solution_dir, workspace):
        raise NotImplementedError

    def describe(self):
        raise NotImplementedError


class SandboxKind(Kind):
    """The official grading: servers forked by a zygote in namespaces (grader/hosts/sandbox.py),
    in its root, userns or plain mode, whichever is the strongest this machine offers."""

    name = "sandbox"
    in_workers = True
    self_check_without_pytest = True

    def unavailable(self):
        if sandbox_possible():
            return ""
        return ("--host sandbox: el entorno aislado del corrector solo funciona en Linux con "
                "/usr/bin/python3; aquí no puede ejecutarse. Para una autoevaluación usa "
                "--host portable. No se corrigió nada.")

    def mode(self):
        from grader.hosts.sandbox import detect_mode
        return detect_mode()

    def clean_leftovers(self):
        from grader.hosts import tempspace
        tempspace.clean_stale()

    def stop(self):
        from grader.hosts import sandbox, tempspace
        sandbox.kill_all()
        tempspace.clean_stale()  # the workers' leftovers (they are dead now)
        tempspace.remove_own()

    def start_ahead(self):
        """A sandbox built before its submission is known (grader/hosts/ahead.py): the next
        grading in this process (a warm helper's worker) claims it."""
        from grader.hosts import ahead
        workspace = self.new_workspace()
        if not ahead.build(workspace):
            self.remove(workspace)

    def prepare(self, path, name=None):
        from grader.intake import submission
        return submission.prepare(path, name)

    def write(self, prepared, folder):
        from grader.hosts import ahead
        from grader.intake import submission
        if ahead.waiting(folder):  # made ahead, empty, bound in its sandbox already
            return submission.fill(prepared, folder)
        return submission.write(prepared, folder)

    def workspace(self):
        from grader.hosts import ahead
        return ahead.claim() or self.new_workspace()

    def new_workspace(self):
        from grader.hosts import tempspace
        folder = tempspace.mkdtemp("sub")
        os.chmod(folder, 0o711)  # a plain sandbox's uid reaches its solution (0750) in it
        return folder

    def remove(self, folder):
        from grader import boundary
        from grader.hosts import ahead
        ahead.drop(folder)
        boundary.remove_tree(folder)

    def open(self, solution_dir, workspace):
        from grader.hosts import ahead
        from grader.hosts.sandbox import Sandbox
        return ahead.opened(workspace, solution_dir) or Sandbox(solution_dir)

    def describe(self):
        from grader.hosts.sandbox import detect_mode, plan
        return plan(detect_mode())


class SelfCheckKind(Kind):
    """A learner's self-check on their own machine: the submission read by path into a plain
    temporary folder, the host's files in it."""

    host = None   # the host class: built with (solution_dir, its folder in the workspace)
    plan = None   # its protections (the same whether or not anything ran)

    def prepare(self, path, name=None):
        return solutions.prepare_plain(path, name)

    def write(self, prepared, folder):
        return solutions.write_plain(prepared, folder)

    def workspace(self):
        return tempfile.mkdtemp(prefix="grader-selfcheck-")

    def remove(self, folder):
        shutil.rmtree(folder, ignore_errors=True)

    def open(self, solution_dir, workspace):
        return self.host(solution_dir, os.path.join(workspace, "host"))

    def describe(self):
        return dict(self.plan)


class PortableKind(SelfCheckKind):
    """Servers as plain subprocesses of this Python (grader/hosts/portable.py): `ui.revisar` on
    macOS and Windows, and what `python -m grader` falls back to there."""

    name = "portable"
    host = PortableHost
    plan = PORTABLE_PLAN

    def start_ahead(self):
        portable.start_ahead()

    @property
    def fallback(self):
        return self.automatic


class InProcessKind(SelfCheckKind):
    """Servers built in this interpreter (grader/hosts/inprocess.py): `ui.revisar` in
    JupyterLite, with no process, no thread and no pytest."""

    name = "inprocess"
    threads = False
    pytest = False
    host = InProcessHost
    plan = INPROCESS_PLAN
