"""The learner's self-check (`ui.revisar`): the public tests of one exercise, on this machine.

    from grader import selfcheck
    result = selfcheck.run("lessons/soluciones", "ejercicio2")              # in this process
    line = selfcheck.json_line(result)    # what `python -m grader ... --format json` prints

`run` grades with the public tests only and, by default, the host that fits where it runs
(grader/hosts/): in the browser (JupyterLite) the in-process host, which needs no process and
no thread; elsewhere the same host `python -m grader --host auto` picks (the sandbox on Linux,
the portable host on macOS and Windows). Every result says which protections were in force and,
for a self-check host, that it is a self-check (`notice`).

On CPython, `ui.revisar` may equally run `python -m grader FOLDER --only ejercicioN --tests
public --host auto --format json` in a subprocess; in the browser it must call `run` (there are
no subprocesses).

Deliberate simplifications: one exercise per call; the budget is the grader's default.
"""

import os
import sys

from grader import report, runner


def default_host():
    return "inprocess" if sys.platform == "emscripten" else "auto"


def run(folder, exercise, host=None, budget=runner.SUBMISSION_BUDGET):
    """The public tests of `exercise` (an id of grader/exercises.py: "ejercicio3a", "reto"...)
    on the solutions in `folder`: the result dict of grader.runner.grade."""
    folder = os.fspath(folder)
    return runner.grade(folder, name=os.path.basename(os.path.normpath(folder)),
                        only=[exercise], budget=budget, tests="public",
                        host=host or default_host())


def json_line(result):
    return report.json_line(result)
