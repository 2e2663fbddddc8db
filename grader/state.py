"""`SubmissionState`: everything the grading of one submission keeps, in one typed object.

grader.runner creates it (`state`), hands it to the test runner (the pytest plugin, or
grader.checks.direct in the browser), and each test's `Lab` reaches it as `lab.state`. What the
server said about itself is not in here: only what the grader observed (the tools `tools/list`
named, what came back on the wire, the disk). The facts of the scenarios that several tests
share (exercise 2's positive scenario, exercise 4's main removal, the challenge's positive
scenario...) are kept in `scenarios`, each played once (`Lab.once`) and typed by its own exercise
module (grader/checks/ej2.py's ArchiveFacts, ej4.py's RemovalFacts, ...): this file knows no
exercise. `sources` holds what the grader read, as text, in a submission's files
(grader/checks/sources.py).

The budget lives here too: `deadline` is when the watchdog ends the sandbox; `left()` is what a
timeout may still use, so no call ever waits past the budget. `rest(seconds)` is how a check
waits on the clock: in a batch (grader/pool.py) the worker lends its busy slot to another
learner meanwhile (`idle`), and whatever it then waits to get the slot back is added to the
budget, so the grader's scheduling never costs a learner time.

Deliberate simplifications: one submission per state; a scenario's key is a plain tuple that
names its exercise first (the tests are the only writers).
"""

import random
import secrets
import threading
import time
from dataclasses import dataclass, field

OUT_OF_TIME = "se agotó el tiempo total de corrección de esta entrega"
HIDDEN_FINDING = ("durante una prueba oculta tu servidor puso en su carpeta de datos algo que el "
                  "corrector no había creado (un enlace, una FIFO...)")


NAMES = ("lucia", "mateo", "sofia", "hugo", "valeria", "leo", "martina", "dani", "julia",
         "pablo", "alba", "marcos", "irene", "bruno", "carla", "nico")


@dataclass(frozen=True)
class RunNames:
    """The two people of a submission's servers, new in every run (so that no learner's code
    can tell a test by who uses it): `user` uses every server (`serve --user`, `ctx.user`) and
    `other` is the second person who may share one (`serve --second-user`)."""
    user: str
    other: str

    @classmethod
    def fresh(cls):
        first, second = random.SystemRandom().sample(NAMES, 2)
        return cls(f"{first}-{secrets.token_hex(2)}", f"{second}-{secrets.token_hex(2)}")


def sleep_here(seconds):
    """Wait on the clock holding nothing to lend (one submission, a self-check): no extra."""
    time.sleep(seconds)
    return 0.0


@dataclass
class SubmissionState:
    only: frozenset = frozenset()             # exercises to grade (empty: all)
    budget: float = 240.0                     # seconds of wall time for the whole submission
    deadline: float = 0.0                     # time.monotonic() when the watchdog fires
    host: object = None                       # where servers run (grader/hosts/)
    suite: str = "all"                        # "public" or "all" (public + hidden when present)
    hidden_now: bool = False                  # the running test is hidden (feedback redacted)
    tools: frozenset = frozenset()            # tool names observed with tools/list
    broken: str | None = None                 # why nothing can be graded (Spanish)
    broken_in_hidden: bool = False            # `broken` came while a hidden test ran
    expired: bool = False                     # the watchdog fired
    dirty: bool = False                       # sweep the sandbox after this test
    counter: int = 0                          # tests started (each Lab gets its number)
    sweeps: int = 0                           # sandbox sweeps so far (they kill every server)
    pending: list = field(default_factory=list)  # tests waiting on the clock (checks/later.py)
    frame_cost: int = 0                       # real bytes of the frames of all its servers
    strikes: dict = field(default_factory=dict)        # tool -> why it is not called again
    names: RunNames = field(default_factory=RunNames.fresh)  # who uses the servers (this run)
    argv: list | None = None                  # every server's command line (checks/lab.py)
    scenarios: dict = field(default_factory=dict)  # (exercise, ...) -> its facts, or what ended it
    sources: dict = field(default_factory=dict)    # solution file -> what its text shows
    files: frozenset | None = None            # the solution files it brought (None: unknown)
    order: object = None                      # shuffles its tests (random.Random): runner.py
    expected: dict = field(default_factory=dict)       # nodeid -> test spec
    results: dict = field(default_factory=dict)        # nodeid -> test result
    collected: dict = field(default_factory=dict)      # check file name -> graded tests in it
    findings: list = field(default_factory=list)       # planted links and the like (Spanish)
    public_findings: list = field(default_factory=list)  # those found outside hidden tests
    internal_errors: list = field(default_factory=list)  # the grader's own faults (exit 3)
    warnings: list = field(default_factory=list)         # for the instructor's stderr only
    handlers: int = 0                         # server-to-client requests being answered
    idle: object = field(default=sleep_here, repr=False)  # sleep(s) -> s spent getting back
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    parsing: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one frame
    slots: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def __post_init__(self):
        self.only = frozenset(self.only or ())
        self.deadline = self.deadline or time.monotonic() + self.budget

    def left(self):
        """Seconds of budget left (0 when it is spent)."""
        return max(0.0, self.deadline - time.monotonic())

    def rest(self, seconds):
        """Wait `seconds` on the clock (checks/later.py), the host's servers lowest in line for
        the CPU meanwhile (`lend`); the time then spent waiting for a busy slot again moves
        the deadline by as much."""
        host = self.host
        if host is not None:
            host.lend(True)
        try:
            self.deadline += max(0.0, self.idle(seconds))
        finally:
            if host is not None:
                host.lend(False)

    def expire(self):
        """The watchdog: the budget is spent, so the host ends now, whatever it is doing."""
        with self.lock:
            self.expired = True
            self.fail(OUT_OF_TIME)
            host = self.host
        if host is not None:
            host.kill()

    def fail(self, reason):
        """From now on nothing can be graded, for `reason` (the first reason stays)."""
        if self.broken is None:
            self.broken = reason
            self.broken_in_hidden = self.hidden_now

    def charge(self, cost, limit):
        """Count `cost` bytes of frames; False once the submission's total passes `limit`."""
        with self.lock:
            self.frame_cost += cost
            return self.frame_cost <= limit

    def take_slot(self, limit, give_up):
        """Wait until fewer than `limit` server requests are being answered (in all of this
        submission's servers), then count one more; False if `give_up()` turns true first."""
        with self.slots:
            while self.handlers >= limit:
                if give_up():
                    return False
                self.slots.wait(0.2)
            self.handlers += 1
            return True

    def free_slots(self, count=1):
        with self.slots:
            self.handlers = max(0, self.handlers - count)
            self.slots.notify_all()

    def find(self, text):
        """A finding for the report; during a hidden test, only that one happened (and that is
        kept out of what a learner sees before the hidden tests are shown)."""
        hidden = self.hidden_now
        text = HIDDEN_FINDING if hidden else text
        with self.lock:
            if text not in self.findings:
                self.findings.append(text)
            if not hidden and text not in self.public_findings:
                self.public_findings.append(text)
