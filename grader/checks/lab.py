"""One test's workspace (`Lab`): its note folders and its servers, all stopped afterwards.

A graded test gets a `lab` and a `grade` (grader/checks/grading.py). `lab.require_tool(name)`
gates on what the server's `tools/list` answered; `lab.folders(...)` lays out notes
(grader/checks/notes_tree.py); `lab.server(revision, ...)` starts a server with the learner's
solution and connects the grader's client (grader/checks/runs.py); `lab.shared_server(...)`
reuses one per revision for the whole submission. `open_lab` and `close_lab` are the lifecycle
both runners (the pytest plugin and grader/checks/direct.py) give each test. A test that waits
on the clock hands its rest to `lab.wait_then`: its lab stays open until grader/checks/later.py
finishes it.

Deliberate simplifications: one lab per test; a shared server that died is replaced, not
repaired.
"""

import collections
import time

import nube_copias
from grader.checks.grading import Abort, Broken
from grader.checks.notes_tree import Tree
from grader.checks.runs import InProcessRun, ServerRun, scripted_user
from grader.errors import HostError
from grader.state import OUT_OF_TIME
from protocol import PROVIDER_METHOD
from setup_page import INLINE_BASE

# A test waiting on the clock: its lab, its grade, the rest of its steps (a generator), when
# they may go on, the sweeps so far (a sweep kills its servers), and how to start it again
# (its generator function and its other arguments, such as the revision).
Waiting = collections.namedtuple("Waiting", "key spec lab grade steps deadline sweeps steps_of "
                                            "arguments")

STATE_OPTIONS = {  # lab.server(state=...) -> (`main.py serve` option, server.Config field)
    "sealer": ("--state-sealer", "state_sealer"), "key": ("--state-key", "state_key"),
    "subject": ("--subject", "subject"), "ttl": ("--state-ttl", "state_ttl")}


class Lab:
    """One test's workspace: its folders, its servers; everything is stopped afterwards."""

    def __init__(self, state, index, spec=None, key=None):
        self.state, self.index = state, index
        self.spec, self.key = spec, key
        self.runs = []
        self.trees = []
        self.waiting = False  # kept open for the rest of its test (grader/checks/later.py)

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
        tree = Tree(self, f"t{self.index}-{len(self.trees) + 1}")
        self.trees.append(tree)
        for entry in notes:
            tree.add(*entry)
        return tree

    def shared_server(self, revision, *, roots, answers=()):
        """A server kept for the whole submission (one per revision) and re-pointed at this
        test's folders: 2025-11-25 through roots/list_changed, 2026-07-28 per request. A
        server that died or misbehaved is replaced, so one test's crash costs only itself."""
        run = self.state.shared.get(revision)
        if run is not None and not run.alive():
            run.close()
            run = None
        if run is None:
            run = self.state.shared[revision] = self.server(revision, roots=roots,
                                                            answers=answers, keep=True)
            return run
        run.lab = self
        run.user = run.client.user = scripted_user(answers)
        if revision == "2026-07-28":
            run.client.roots = list(roots)
        else:
            run.set_roots(list(roots))
        return run

    def server(self, revision, *, roots=(), sdk="2.3.0", setup_wait=30.0, elicitation=None,
               answers=(), protocol=None, connect=True, keep=False, state=None, pages=False,
               url_ttl=None, user=None, second_user=None, second_answers=(), solution=None,
               course_guard=False, provider=False):
        """A server with the learner's solution, and the grader's client connected to it.

        `state`: its requestState options (`sealer`: "server", the default, so that no exercise
        depends on the optional challenge's file, or "solution"; `key`: a fleet's shared key in
        hex; `subject`; `ttl` in seconds). `pages`: its pages are reachable through the private
        rpc channel (`run.fetch`, the user's browser; `--setup-page rpc`) and every frame it
        sends is scanned for the provider's credentials (`run.leaks`). `user` names who uses it
        (`--user`); `second_user` adds a second session of that other user (`run.peer`, with its
        own scripted user playing `second_answers`; `--second-user`). `url_ttl`: `--url-ttl`.
        `solution`: load only this file of the solution (exercise 3A or 3B, each on its own);
        `course_guard`: the course's own URL-mode guard when that file brings none
        (`--demo-url-guard`); `provider`: exercise 3's Nube de Copias is the grader's, out of
        the server's process (`--provider rpc`): `run.provider`, a nube_copias.Provider whose
        records say which copies were really made, and for whom."""
        self.require_solution()
        host = self.state.host
        scripted = scripted_user(answers)
        second = scripted_user(second_answers) if second_user else None
        roots = list(roots) if roots is not None else None
        state = {"sealer": "server", **(state or {})}
        options = {"pages": pages, "url_ttl": url_ttl, "user": user, "second_user": second_user}
        fields = {"demo_url_guard": True} if course_guard else {}
        if provider:
            fields["provider"] = "rpc"
        if host.processes:
            where = host.inner("solution")
            argv = ["serve", "--solution", f"{where}/{solution}" if solution else where,
                    "--sdk-version", sdk, "--setup-wait", str(setup_wait)] \
                + server_flags(**options) + ["--demo-url-guard"] * course_guard \
                + ["--provider", "rpc"] * provider
            for option, value in state.items():
                argv += [STATE_OPTIONS[option][0], str(value)]
            run = ServerRun(self, revision, argv, roots, elicitation, scripted,
                            protocol=protocol, watch=pages, second=second)
        else:
            config = {STATE_OPTIONS[option][1]: value for option, value in state.items()}
            try:
                server = host.new_server(sdk, setup_wait, {**config, **fields},
                                         solution=solution, **options)
            except HostError as exc:
                raise Broken(f"el servidor no arrancó ({exc})") from None
            run = InProcessRun(self, revision, server, roots, elicitation, scripted,
                               protocol=protocol, watch=pages, second=second)
        run.provider = grader_provider(run) if provider else None
        (self.state.kept if keep else self.runs).append(run)
        if connect:
            run.connect()
            if run.peer is not None:
                run.peer.connect()
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
        for run in self.runs:
            try:
                run.close()
            except Exception:
                pass
        self.runs = []
        for tree in self.trees:
            tree.close()
        self.trees = []


def grader_provider(run):
    """The grader's own Nube de Copias for `run` (exercise 3): it answers the server's provider
    requests (PROVIDER_METHOD on the pipe; in-process, the server's RemoteProvider is attached
    to it directly) and, through ej3's browser, serves the provider's page."""
    provider = nube_copias.Provider(lambda: INLINE_BASE)
    if isinstance(run, InProcessRun):
        run.server.provider.attach(provider.answer)
    else:
        run.client.core.handlers[PROVIDER_METHOD] = lambda params: nube_copias.rpc_answer(
            provider, params)
    return provider


def server_flags(pages=False, url_ttl=None, user=None, second_user=None):
    """`serve` options for what `Lab.server` was asked (see main.py --help)."""
    flags = ["--setup-page", "rpc"] if pages else []
    if url_ttl is not None:
        flags += ["--url-ttl", str(url_ttl)]
    if user:
        flags += ["--user", user]
    if second_user:
        flags += ["--second-user", second_user]
    return flags


def open_lab(state, spec, key=None):
    """The `lab` of one test: a fresh workspace, or Broken when nothing can run any more.
    `key`: the test's key in `state.results` (pytest's node id, or the spec's id)."""
    state.counter += 1
    state.hidden_now = spec["hidden"]
    state.hidden_started = state.hidden_started or spec["hidden"]
    lab = Lab(state, state.counter, spec, key)
    if state.left() <= 0:
        state.fail(OUT_OF_TIME)
    if state.broken:
        raise Broken(state.broken)
    return lab


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
