"""The in-process self-check host: the checks run in the notebook's own interpreter.

JupyterLite (Pyodide in the browser) has no processes and cannot start threads, so
`ui.revisar` there cannot start the grader, nor a server process. Here each notes server is a
`NotesServer` built in this interpreter with the learner's solution loaded
(`extension.load`, as `serve --solution` does), and the grader's client talks to it through
`Client.local` (transport.Loopback: frames through a queue, timers fired by the pump, no thread
at all); its settings are the ones every server of the submission gets (grader/checks/lab.py),
so its setup page is the rpc one that exercise 3's browser uses (a request on the same
loopback, no socket). Notes live in a temporary folder written by path (grader/hosts/plainfs.py).
The checks, the client, the scoring and the feedback are the same code as in official grading;
the checks run without pytest (grader/checks/direct.py), because there is none in the browser.

`grader.selfcheck.run(folder, exercise, host="inprocess")` is what `ui.revisar` calls in
JupyterLite: the public tests of one exercise, in this interpreter, and the same result dict
every other mode gives.

This is formative and says so (`NOTICE`, `PLAN`): nothing is isolated, nothing is limited. The
solution runs with the notebook's own rights, and an endless loop in it blocks the notebook
like any other cell would (no timeout can interrupt code running in this very interpreter).
The grade comes from the official grader.

Deliberate simplifications: a solution is loaded again for every server (as a new process
would), but modules it imports from code/ are shared by all the servers of a run.
"""

import os

from grader.errors import HostError
from grader.hosts.plainfs import SelfCheckHost
from grader.hosts.protections import self_check_plan

NOTICE = ("Autoevaluación en el navegador: las pruebas corren aquí mismo, junto a tu código, sin "
          "aislamiento ni límites (un bucle infinito bloquea el cuaderno). Solo sirve para "
          "practicar: la nota la pone el corrector oficial, con todas las protecciones.")
PLAN = self_check_plan("inprocess")
LOG_KEPT = 40


class InProcessHost(SelfCheckHost):
    """Servers built in this interpreter; notes in a temporary folder."""

    processes = False
    mode = "inprocess"
    plan = PLAN
    notice = NOTICE

    def __init__(self, solution_dir, workspace):
        super().__init__(solution_dir, workspace)
        self._log = []

    def new_server(self, settings):
        """A fresh notes server with the learner's solution, like `serve --solution` with the
        options grader/checks/lab.py gives a process: `settings` are server.Config fields (the
        submission's common ones and this test's own), and `solution`, one file of the
        solution folder to load instead of all of it (exercise 3A or 3B alone)."""
        import extension
        from server import Config, NotesServer
        settings = dict(settings)
        solution = settings.pop("solution", None)
        try:
            loaded = extension.load(os.path.join(self.solution_dir, solution) if solution
                                    else self.solution_dir)
            return NotesServer(Config(**settings), loaded, log=self.log)
        except Exception as exc:  # the solution broke the server itself
            raise HostError(f"{type(exc).__name__}: {exc}") from None

    def log(self, text):
        self._log = (self._log + [str(text)])[-LOG_KEPT:]

    def log_tail(self):
        return " | ".join(self._log[-3:])

    def sweep(self):
        """Nothing runs on its own here: each server stops when its run is closed."""

    def kill(self):
        """No thread can stop code running in this interpreter (said in NOTICE)."""

    def close(self):
        self.data = None

