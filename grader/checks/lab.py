"""One test's workspace (`Lab`): its note folders and its servers, all stopped afterwards.

A graded test gets a `lab` and a `grade` (grader/checks/grading.py). `lab.require_tool(name)`
gates on what the server's `tools/list` answered; `lab.folders(...)` lays out notes
(grader/checks/notes_tree.py); `lab.server(revision, ...)` starts a server with the learner's
solution and connects the grader's client (grader/checks/runs.py). `open_lab` and `close_lab`
are the lifecycle both runners (the pytest plugin and grader/checks/direct.py) give each test.
A test that waits on the clock hands its rest to `lab.wait_then`: its lab stays open until
grader/checks/later.py finishes it.

No memory between tests (grader/README.md, *No memory between tests*): nothing of a test is
there for the next one. No server outlives its test; each test's servers run as the test's own
identity (with private uids, a fresh uid: `host.identity()`), whose every process ends with the
test (`host.release`); its note folders are its own (a random name, that identity's, 0700) and
are removed with it; HOME and TMPDIR are read-only in the sandbox.

The grader's settings are not the learner's to see: every server of a submission starts with
the same command line and environment (`common_settings`: the same lifetimes `URL_TTL` and
`STATE_TTL`, the same setup page channel and wait, the same two user names, new in each run:
`state.names`). What a test varies (the simulated SDK version; the requestState sealer, key and
subject of the reto) reaches only the server's options (`private`), never its command line,
environment or files: the learner's code sees it only where the lesson's API shows it
(`ctx.sdk_version`, `binding.key`, `ctx.user`). A lifetime the learner must honour (`ctx.url_ttl`,
`binding.ttl`) cannot be hidden from it, so it is the same everywhere; a legitimate flow that
outlived it on the grader's side (a machine far too slow) is the grader's fault, not the
learner's (`require_in_time`).

Deliberate simplifications: one lab per test; a server that died is not restarted.
"""

import collections
import time

import nube_copias
from grader import exercises
from grader.checks.channels import LocalChannel
from grader.checks.grading import Abort, Broken, TooSlow
from grader.checks.notes_tree import Tree
from grader.checks.runs import local_run, process_run, scripted_user
from grader.errors import HostError
from grader.state import OUT_OF_TIME
from shared.protocol import PROVIDER_METHOD
from urlflow.setup_page import INLINE_BASE

# A test waiting on the clock: its lab, its grade, the rest of its steps (a generator), when
# they may go on, the sweeps so far (a sweep kills its servers), and how to start it again
# (its generator function and its other arguments, such as the revision).
Waiting = collections.namedtuple("Waiting", "key spec lab grade steps deadline sweeps steps_of "
                                            "arguments")

URL_TTL = 4.0      # seconds a URL elicitation lives, in every server (--url-ttl, ctx.url_ttl)
STATE_TTL = 3.0    # seconds a 2026-07-28 requestState lives, in every server (binding.ttl)
SETUP_WAIT = 30.0  # seconds a call may wait for the setup page, in every server
DEFAULT_SDK = "2.3.0"
# server.Config field -> its `main.py serve` option (a process gets its settings as options)
OPTIONS = {"sdk_version": "--sdk-version", "setup_wait": "--setup-wait",
           "page_transport": "--setup-page", "url_ttl": "--url-ttl",
           "state_ttl": "--state-ttl",
           "subject": "--subject", "second_user": "--second-user",
           "state_sealer": "--state-sealer", "state_key": "--state-key",
           "solution": "--solution", "demo_url_guard": "--demo-url-guard",
           "provider": "--provider"}
STATE_OPTIONS = {"sealer": "state_sealer", "key": "state_key", "subject": "subject"}
UNSET = object()


def common_settings(state):
    """The settings every server of this submission starts with (server.Config fields)."""
    return {"setup_wait": SETUP_WAIT, "page_transport": "rpc", "url_ttl": URL_TTL,
            "state_ttl": STATE_TTL, "subject": state.names.user,
            "second_user": state.names.other, "state_sealer": "server"}


def as_options(settings):
    """`serve` options for server.Config `settings` (a flag for a field that is True)."""
    options = []
    for field, value in settings.items():
        options += [OPTIONS[field]] if value is True else [OPTIONS[field], str(value)]
    return options


def require_in_time(since, lifetime):
    """A legitimate flow failed: if `lifetime` seconds had passed since it started (`since`,
    time.monotonic()), the grading machine was too slow for it and that is not the learner's
    doing: TooSlow (an internal error, grade again), never a lost point."""
    if time.monotonic() - since >= lifetime:
        raise TooSlow(f"a legitimate flow took over {lifetime:g} s on the grader's side")


class Lab:
    """One test's workspace: its folders, its servers; everything is stopped afterwards."""

    def __init__(self, state, index, spec=None, key=None):
        self.state, self.index = state, index
        self.spec, self.key = spec, key
        self.runs = []
        self.trees = []
        self.waiting = False  # kept open for the rest of its test (grader/checks/later.py)
        self._identity = UNSET  # who its servers run as (taken from the host when first needed)
        self._reused = {}       # key -> a server this test uses for several cases (`reuse`)

    @property
    def identity(self):
        """Who this test's servers run as, and whose its folders are: the host's `identity()`
        (a fresh uid with private uids, else None), taken once."""
        if self._identity is UNSET:
            try:
                self._identity = self.state.host.identity()
            except HostError as exc:
                raise Broken(f"el entorno no pudo preparar esta prueba ({exc})") from None
        return self._identity

    def require_solution(self):
        if self.state.broken:
            raise Broken(self.state.broken)

    def require_tool(self, name):
        """Gate on what the server's tools/list answered (observed once per submission)."""
        self.require_solution()
        if name not in self.state.tools:
            raise Abort(f"tu servidor no ofrece la herramienta {name}: tools/list no la "
                        f"incluye (¿falta @extension.tool(\"{name}\", ...) en tu solución, o "
                        "no se cargó?)")

    def folders(self, *notes):
        """A fresh folder tree; each note is (folder, filename, id, title)."""
        self.require_solution()
        tree = Tree(self)
        self.trees.append(tree)
        for entry in notes:
            tree.add(*entry)
        return tree

    def server(self, revision, *, roots=(), sdk=DEFAULT_SDK, elicitation=None, answers=(),
               protocol=None, connect=True, state=None, watch=False, second=False,
               second_answers=(), solution=None, course_guard=False, provider=False):
        """A server with the learner's solution, and the grader's client connected to it.

        Every server starts with the submission's common settings (`common_settings`); `sdk`
        (the simulated SDK version) and `state` (the reto's requestState options: `sealer`,
        "server" unless given, `key`, a fleet's shared key in hex, and `subject`) are this
        test's inputs and reach only the server's options. Its pages are reached through the
        private rpc channel (`run.fetch`, the user's browser). `watch`: every frame it sends to
        a client is scanned for the provider's credentials (`run.leaks`). `second`: a second
        session, of the other user (`state.names.other`), on the same server (`run.peer`, with
        its own scripted user playing `second_answers`). Exercise 3's own inputs, private too:
        `solution`, one file of the solution folder loaded alone (3A's guard, 3B's flow);
        `course_guard`, the course's own URL-mode guard when that file brings none
        (`--demo-url-guard`); `provider`, Nube de Copias out of the server's process
        (`--provider rpc`): `run.provider`, the grader's nube_copias.Provider, whose records say
        which copies were really made, and for whom."""
        self.require_solution()
        host = self.state.host
        scripted = scripted_user(answers)
        other = scripted_user(second_answers) if second else None
        roots = list(roots) if roots is not None else None
        private = {"sdk_version": sdk,
                   **{STATE_OPTIONS[option]: value for option, value in (state or {}).items()}}
        private.update({"demo_url_guard": True} if course_guard else {},
                       **({"provider": "rpc"} if provider else {}))
        if host.processes:
            if self.state.argv is None:
                self.state.argv = ["serve", "--solution", host.inner("solution"),
                                   *as_options(common_settings(self.state))]
            where = {"solution": f"{host.inner('solution')}/{solution}"} if solution else {}
            run = process_run(self, revision, self.state.argv,
                              as_options({**private, **where}), roots, elicitation, scripted,
                              protocol=protocol, watch=watch, second=other)
        else:
            try:
                server = host.new_server({**common_settings(self.state), **private,
                                          "sdk_version": sdk or None,
                                          **({"solution": solution} if solution else {})})
            except HostError as exc:
                raise Broken(f"el servidor no arrancó ({exc})") from None
            run = local_run(self, revision, server, roots, elicitation, scripted,
                            protocol=protocol, watch=watch, second=other)
        run.provider = grader_provider(run) if provider else None
        self.runs.append(run)
        if connect:
            run.connect()
            if run.peer is not None:
                run.peer.connect()
        return run

    def once(self, key, play):
        """The facts of a scenario that several tests share, played once per submission:
        `play()` (a zero-argument callable) the first time `key` is asked for (a tuple whose
        first item names the exercise), its result every time after. What ended it (Broken:
        the server broke; Abort: a gate failed) is kept too, and raised again to every test
        that asks."""
        scenarios = self.state.scenarios
        if key not in scenarios:
            try:
                scenarios[key] = play()
            except (Broken, Abort) as exc:
                scenarios[key] = exc
        if isinstance(scenarios[key], (Broken, Abort)):
            raise scenarios[key]
        return scenarios[key]

    def reuse(self, key, make):
        """The server this test started for `key` with `make()` (a zero-argument callable),
        started now if there is none yet or it died: several cases of one test on one server,
        never beyond the test."""
        run = self._reused.get(key)
        if run is None or not run.alive():
            run = self._reused[key] = make()
        return run

    def wait_then(self, seconds, steps, grade, steps_of, arguments):
        """Keep this lab (servers, folders) for the rest of its test, which goes on `seconds`
        from now (grader/checks/later.py). Broken when the budget cannot cover the wait."""
        if self.state.left() <= seconds:
            steps.close()
            raise Broken(OUT_OF_TIME)
        self.waiting = True
        self.state.pending.append(Waiting(self.key, self.spec, self, grade, steps,
                                          time.monotonic() + seconds, self.state.sweeps,
                                          steps_of, arguments))

    def finish(self, run):
        """Stop a server of this test now (its threads and its process go at once)."""
        if run in self.runs:
            self.runs.remove(run)
        try:
            run.close()
        except Exception:
            pass

    def close(self):
        """Stop its servers, end every process of its identity, remove its folders."""
        for run in self.runs:
            try:
                run.close()
            except Exception:
                pass
        self.runs = []
        host = self.state.host
        if self._identity is not UNSET:
            try:
                host.release(self._identity)
            except Exception:  # what it could not end, the sweep after this test ends
                self.state.dirty = True
        for tree in self.trees:
            tree.close()
            try:
                host.data.remove(tree.name)
            except Exception:
                self.state.dirty = True
        self.trees = []


def grader_provider(run):
    """The grader's own Nube de Copias for `run` (exercise 3): it answers the server's provider
    requests (PROVIDER_METHOD on the pipe; in-process, the server's RemoteProvider is attached
    to it directly) and, through ej3's browser, serves the provider's page."""
    provider = nube_copias.Provider(lambda: INLINE_BASE)
    if isinstance(run.channel, LocalChannel):
        run.channel.server.provider.attach(provider.answer)
    else:
        run.client.core.handlers[PROVIDER_METHOD] = lambda params: nube_copias.rpc_answer(
            provider, params)
    return provider


def open_lab(state, spec, key=None):
    """The `lab` of one test: a fresh workspace; Abort when the submission did not bring its
    exercise's file (the test scores 0 at once, with that reason, and starts no server); or
    Broken when nothing can run any more. `key`: the test's key in `state.results` (pytest's
    node id, or the spec's id)."""
    state.counter += 1
    state.hidden_now = spec["hidden"]
    absent = missing_file(state, spec["exercise"])
    if absent:
        raise Abort(absent)
    lab = Lab(state, state.counter, spec, key)
    if state.left() <= 0:
        state.fail(OUT_OF_TIME)
    if state.broken:
        raise Broken(state.broken)
    return lab


def missing_file(state, exercise):
    """Why a test of `exercise` cannot be graded at all: its solution file is not in the
    submission (Spanish); "" when it is there, or when what the submission brought is not known
    (`state.files` None: a state built without a submission)."""
    if state.files is None:
        return ""
    wanted = exercises.by_id(exercise)
    if wanted.file in state.files:
        return ""
    return (f"no entregaste {wanted.file}: este ejercicio se queda en 0 sin ponerlo a prueba "
            f"(su enunciado y la celda %%writefile soluciones/{wanted.file} están en "
            f"{wanted.notebook})")


def close_lab(state, lab):
    """End a test's turn: its lab is closed (unless it waits on the clock: later.py closes it),
    and after a misbehaving server the sandbox is swept (every server in it is killed)."""
    if not lab.waiting:
        lab.close()
    if state.dirty:  # something misbehaved: nothing it left behind may reach the next test
        state.dirty = False
        state.sweeps += 1
        try:
            state.host.sweep()
        except Exception:
            pass
    state.hidden_now = False
