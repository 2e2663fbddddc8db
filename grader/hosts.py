"""Where a submission's servers run: the official sandbox, or one of the two self-check hosts.

Every host offers the same interface, so the checks (grader/checks/) are the same code in every
mode; runs.py, lab.py and notes_tree.py of grader/checks/ are the only code that talks to one:

    mode, plan, notice        what is in force (the report's `protections`), and a Spanish
                              sentence saying plainly what this mode is ("" when official)
    processes                 True: servers are processes (`spawn`); False: in-process
                              (`new_server(settings)` -> a NotesServer; settings are
                              server.Config fields)
    start() / close()         set up and tear down (close leaves nothing running)
    kill()                    end every server now, from any thread (the budget watchdog)
    sweep()                   end every server (between tests, after one misbehaved)
    identity()                who one test's servers run as (a fresh uid where the host has
                              private uids, else None)
    release(identity)         that test is over: end every process that ran as it
    data                      the data folder: make_dir, write_file, make_link, move, remove,
                              remove_link, snapshot, close
    inner(name)               where the server sees "solution" and "data"
    spawn(argv, private, identity) -> process
                              `argv` is every server's command line, `private` this test's
                              options (never on the command line); the process offers
                              read(timeout), send(data), close_input(), close_output(), kill(),
                              status(wait), stderr(), pid

The three kinds:

| kind        | module             | servers                          | for                      |
| ----------- | ------------------ | -------------------------------- | ------------------------ |
| `sandbox`   | grader/sandbox.py  | forked by a zygote in namespaces | official grading (Linux) |
| `portable`  | grader/portable.py | `python code/main.py serve`      | ui.revisar on any laptop |
| `inprocess` | grader/inprocess.py| NotesServer + Client.local       | ui.revisar in JupyterLite|

`auto` is the sandbox where it can run (Linux, with its system python3) and portable elsewhere.
Each kind also says how a submission is read and written before its host starts: the sandbox
reads it through descriptors (grader/submission.py), the self-checks by path
(grader/solutions.py).

Deliberate simplifications: the kind is chosen per run, not per submission.
"""

import os
import sys
from dataclasses import dataclass

KINDS = ("auto", "sandbox", "portable", "inprocess")


@dataclass(frozen=True)
class Kind:
    name: str
    threads: bool      # may start threads (the budget watchdog); False in the browser
    pytest: bool       # run the checks with pytest (else grader.checks.direct)

    def prepare(self, path, name=None):
        if self.name == "sandbox":
            from grader import submission
            return submission.prepare(path, name)
        from grader import solutions
        return solutions.prepare_plain(path, name)

    def write(self, prepared, folder):
        if self.name == "sandbox":
            from grader import submission
            return submission.write(prepared, folder)
        from grader import solutions
        return solutions.write_plain(prepared, folder)

    def workspace(self):
        if self.name == "sandbox":
            from grader import tempspace
            folder = tempspace.mkdtemp("sub")
            os.chmod(folder, 0o711)  # a plain sandbox's uid reaches its solution (0750) in it
            return folder
        import tempfile
        return tempfile.mkdtemp(prefix="grader-selfcheck-")

    def remove(self, folder):
        if self.name == "sandbox":
            from grader import boundary
            boundary.remove_tree(folder)
        else:
            import shutil
            shutil.rmtree(folder, ignore_errors=True)

    def open(self, solution_dir, workspace):
        """The host for one submission (not started)."""
        if self.name == "sandbox":
            from grader.sandbox import Sandbox
            return Sandbox(solution_dir)
        if self.name == "portable":
            from grader.portable import PortableHost
            return PortableHost(solution_dir, os.path.join(workspace, "host"))
        from grader.inprocess import InProcessHost
        return InProcessHost(solution_dir, os.path.join(workspace, "host"))

    def describe(self):
        """The protections of this kind when nothing of the submission ran."""
        if self.name == "sandbox":
            from grader.sandbox import detect_mode, plan
            return plan(detect_mode())
        if self.name == "portable":
            from grader.portable import PLAN
            return dict(PLAN)
        from grader.inprocess import PLAN
        return dict(PLAN)


def sandbox_possible():
    """Can the official sandbox start here at all (Linux with a system python3)?"""
    return sys.platform.startswith("linux") and os.path.exists("/usr/bin/python3")


def kind(name="sandbox"):
    """The kind called `name`; `auto` may be forced with GRADER_HOST (to test the portable
    self-check on Linux, as ui.revisar runs it: `--host auto`). None (no --host given) is the
    sandbox where it can run and the portable host elsewhere (the report says so)."""
    if name is None:
        name = "sandbox" if sandbox_possible() else "portable"
    if name == "auto":
        name = os.environ.get("GRADER_HOST") or "auto"
    if name == "auto":
        name = "sandbox" if sandbox_possible() else "portable"
    if name not in KINDS:
        raise ValueError(f"unknown host {name!r} (use one of {', '.join(KINDS)})")
    threads = sys.platform != "emscripten"
    return Kind(name, threads=threads and name != "inprocess", pytest=name != "inprocess")
