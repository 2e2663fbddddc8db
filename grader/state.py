"""`SubmissionState`: everything the grading of one submission keeps, in one typed object.

grader.runner creates it (`state`), hands it to the test runner (the pytest plugin, or
grader.checks.direct in the browser), and each test's `Lab` reaches it as `lab.state`. What the
server said about itself is not in here: only what the grader observed (the tools `tools/list`
named, what came back on the wire, the disk). The facts of the scenarios that several tests
share (exercise 2's positive scenario, exercise 4's main removal, the challenge's positive
scenario) are typed dataclasses too (exercise 3's live in grader/checks/ej3.py).

The budget lives here too: `deadline` is when the watchdog ends the sandbox; `left()` is what a
timeout may still use, so no call ever waits past the budget.

Deliberate simplifications: one submission per state; the per-exercise caches are plain typed
fields (the tests are the only writers).
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


@dataclass
class ArchiveFacts:
    """Exercise 2's positive scenario in one revision: two notes titled alike in two roots, the
    user picks the one in the second root, accepts and confirms."""
    asked: bool = False               # a form arrived during the call
    changed_before_asking: str = ""   # which notes had changed on disk when the form arrived
    folders_before_asking: str = ""   # folders that had appeared by then (an empty .archive/)
    form: dict | None = None          # the first form's params (as the server sent them)
    offered: list | None = None       # the note ids the first form offered
    prompts: int = 0                  # questions asked during the call
    moved: bool = False               # the chosen note, intact, is now in its root's .archive/
    landed: str = ""                  # where the chosen note's content is now ("" if nowhere)
    other_changes: str = ""           # any change besides the expected move
    changes: str = ""                 # every change the call made
    listed: frozenset = frozenset()   # note ids notes_list shows afterwards
    tool: dict | None = None          # what tools/list says of notes_archive
    reply: str = ""                   # what the tool answered (escaped, short)
    is_error: bool = False

    @property
    def shown(self):
        return self.asked and not self.changed_before_asking and self.moved


@dataclass
class HandleFacts:
    """One open handle in an exercise-4 scenario and what the first read after the change gave."""
    note: str         # the note's id
    where: str        # its folder, as the learner sees it ("Trabajo/sub")
    should_live: bool
    alive: bool
    text: str         # the body it read, or the server's error message (escaped, short)
    now: str = ""     # the folder its file was moved to with the handle open ("" if not)
    file: str = ""    # its file's name ("t2.md"): feedback names a note by where it is

    @property
    def shown(self):
        """How feedback names the note: by its file, where it was opened."""
        return f"{self.where}/{self.file}" if self.file else self.note


@dataclass
class RemovalFacts:
    """Exercise 4's main scenario: roots Trabajo + Personal, four handles, Personal removed."""
    handles: list = field(default_factory=list)   # [HandleFacts]
    changes: str = ""                              # what changed on disk meanwhile

    @property
    def exact(self):
        return bool(self.handles) and all(h.alive == h.should_live for h in self.handles)


@dataclass
class RetoSource:
    """What the grader reads in the challenge's file (parsed as text, never run): whether it was
    handed in, whether it defines and registers the sealer, whether that sealer's `open`
    reaches `compare_digest`, and its constants (an attacker with the code knows them)."""
    present: bool = False
    sealer_here: bool = False
    compare_digest: bool = False
    literals: tuple = ()


@dataclass
class RetoFacts:
    """The challenge's positive scenario: notes_delete played round by round with the learner's
    sealer, and its round-2 token read with the statement's format and the server's key."""
    marker: str = ""                  # the secret-looking part of n-b's file name
    principal: str = ""               # the user every server of this submission acts for
    intruder: str = ""                # another user, for the servers of the other-user tests
    problem: str = ""                 # why the positive scenario failed ("" when it worked)
    form_token: str = ""              # T2: the state of the round that asks which note
    reading: object = None            # grader.checks.reto.Reading of T2: its keys and binding


@dataclass
class SubmissionState:
    only: frozenset = frozenset()             # exercises to grade (empty: all)
    budget: float = 240.0                     # seconds of wall time for the whole submission
    deadline: float = 0.0                     # time.monotonic() when the watchdog fires
    host: object = None                       # where servers run (grader/hosts/)
    suite: str = "all"                        # "public" or "all" (public + hidden when present)
    hidden_now: bool = False                  # the running test is hidden (feedback redacted)
    hidden_started: bool = False              # a hidden test has started (they run last)
    tools: frozenset = frozenset()            # tool names observed with tools/list
    broken: str | None = None                 # why nothing can be graded (Spanish)
    broken_in_hidden: bool = False            # `broken` came while the hidden tests ran
    expired: bool = False                     # the watchdog fired
    dirty: bool = False                       # sweep the sandbox after this test
    counter: int = 0                          # tests started (each Lab gets its number)
    sweeps: int = 0                           # sandbox sweeps so far (they kill every server)
    pending: list = field(default_factory=list)  # tests waiting on the clock (checks/later.py)
    frame_cost: int = 0                       # real bytes of the frames of all its servers
    strikes: dict = field(default_factory=dict)        # tool -> why it is not called again
    names: RunNames = field(default_factory=RunNames.fresh)  # who uses the servers (this run)
    argv: list | None = None                  # every server's command line (checks/lab.py)
    archive_shown: dict = field(default_factory=dict)  # revision -> ArchiveFacts (or Broken)
    url_decisions: dict = field(default_factory=dict)  # (sdk, protocol, caps) -> what happened
    auth_shown: dict = field(default_factory=dict)     # revision -> ej3.AuthFacts (or Broken)
    roots_removal: object = None                       # RemovalFacts (or the Broken)
    reto_source: RetoSource = field(default_factory=RetoSource)  # the challenge's file, read
    reto: object = None                                # RetoFacts (or the Broken)
    expected: dict = field(default_factory=dict)       # nodeid -> test spec
    results: dict = field(default_factory=dict)        # nodeid -> test result
    collected: dict = field(default_factory=dict)      # check file name -> graded tests in it
    findings: list = field(default_factory=list)       # planted links and the like (Spanish)
    public_findings: list = field(default_factory=list)  # those found outside hidden tests
    internal_errors: list = field(default_factory=list)  # the grader's own faults (exit 3)
    warnings: list = field(default_factory=list)         # for the instructor's stderr only
    handlers: int = 0                         # server-to-client requests being answered
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    parsing: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one frame
    slots: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def __post_init__(self):
        self.only = frozenset(self.only or ())
        self.deadline = self.deadline or time.monotonic() + self.budget

    def left(self):
        """Seconds of budget left (0 when it is spent)."""
        return max(0.0, self.deadline - time.monotonic())

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
            self.broken_in_hidden = self.hidden_started

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
