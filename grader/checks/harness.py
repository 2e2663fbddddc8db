"""What a grading test works with: fresh notes folders, a fresh server, a scripted user.

A test gets a `Lab` (one per test) and a `Grade`. `lab.folders(...)` lays out notes in the host's
data area; `lab.server(revision, ...)` starts a notes server with the learner's solution and
connects the grader's own MCP client to it (code/client.py, trusted code in the grader process);
`run.call(...)` returns a `Call` with the result and every elicitation the server sent during
that call. Everything a test decides is read from the wire and from the files, never from what
the learner's process says about itself: whether a tool exists is what `tools/list` answered,
whether a hook exists does not matter (the server's defaults without a hook are the coarse safe
ones, so the behaviour decides).

Where the servers run is the state's *host* (grader/hosts.py), and the checks never know which:
- the official sandbox (grader/sandbox.py) and the portable self-check (grader/portable.py) run
  each server as a process: `ProcessRun` drives it over its pipes;
- the in-process self-check (grader/inprocess.py, JupyterLite: no process, no thread) builds the
  server in this interpreter: `LocalRun` drives it with `Client.local` (transport.Loopback).
Both runs offer the same methods, so every check is the same code in every mode.

`Grade.check` records one expectation in Spanish (what was sent, what came back, what was
expected); `Grade.require` is a gate: when it fails the test scores 0 with that reason. A gate
on a scenario another test grades names that test (`gate=`), which is all a hidden test shows.
In a hidden test (`Grade(hidden=True)`) `got`/`expected` are dropped by construction: the
texts of a hidden test are written without its inputs and expected values. `Broken` means the
server crashed, hung or sent garbage: the test scores 0 with status "error".

The grader's side holds against a hostile server:
- notes are laid out and read back only through the host's data folder (grader.boundary in the
  sandbox: descriptors, no links, no FIFOs, caps); a planted link or special file is a `Broken`
  test and a finding in the report;
- what a server process sends is read with caps (grader/checks/intake.py): `MAX_LINE_BYTES` per
  frame, each frame parsed once (one of the submission's frames at a time) and counted in real
  bytes per server (`MAX_RUN_BYTES`) and per submission (`MAX_SUBMISSION_BYTES`), `MAX_FRAMES`
  frames, nesting at most `MAX_NESTING` deep; past them the server is killed ("flooded"); of
  the frames only the questions (elicitations) are kept;
- at most `MAX_HANDLERS` server-to-client requests are being answered at once, in all the
  servers of a submission: a reader stops reading its server until one has been answered;
- every timeout is cut to what is left of the submission's budget.

Deliberate simplifications: a test runs its calls sequentially; timeouts are generous
constants (a correct server answers in milliseconds); an in-process server cannot be stopped
in the middle of a learner's endless loop (that mode is a formative self-check, said so).
"""

import json
import threading

import store
import wire
from client import Client, ScriptedUser, questions_in
from grader.checks import intake
from grader.checks.intake import (
    MAX_FRAMES,
    MAX_LINE_BYTES,
    MAX_NESTING,  # noqa: F401  (the caps, re-exported for callers)
    MAX_RUN_BYTES,
    MAX_SUBMISSION_BYTES,
)
from grader.errors import Full, HostError, Refused
from grader.escape import one_line
from grader.state import OUT_OF_TIME
from roots import path_to_uri

REVISIONS = ("2025-11-25", "2026-07-28")
CALL_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
MAX_PROMPTS = 3  # per call; beyond this the grader stops answering
MAX_HANDLERS = 8                  # server-to-client requests answered at once
CLIENT_WORKERS = 1                # threads per client answering them (the gate is above)


class Abort(Exception):
    """A gate failed: the behaviour under test never happened, so nothing else counts.

    `gate` is the title of the (public) test that grades the scenario this gate is about, when
    the gate is not this test's own: a hidden test shows only that title."""

    def __init__(self, text, gate=None):
        super().__init__(text)
        self.gate = gate


class Broken(Exception):
    """The server crashed, hung or broke the protocol: zero for this test, status error."""


class Grade:
    def __init__(self, hidden=False):
        self.hidden = hidden
        self.checks = []   # (passed, text)
        self.notes = []    # context lines shown before the checks

    def note(self, text):
        self.notes.append(text)

    def check(self, passed, text, got=None, expected=None):
        """One expectation. In a hidden test only `text` (written without inputs) is kept."""
        detail = text
        if not passed and not self.hidden and (got is not None or expected is not None):
            detail += f" — recibido: {short(got)}; esperado: {expected}"
        self.checks.append((bool(passed), detail))
        return bool(passed)

    def require(self, passed, text, gate=None):
        if not passed:
            raise Abort(text, gate)

    def fraction(self):
        if not self.checks:
            return 0.0
        return sum(1 for ok, _ in self.checks if ok) / len(self.checks)

    def lines(self):
        return self.notes + [("✔ " if ok else "✘ ") + text for ok, text in self.checks]


def short(value, limit=300):
    """A learner's value as one escaped line of at most `limit` characters."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            value = f"<{type(value).__name__}>"
    return one_line(value, limit)


# -- notes on disk -------------------------------------------------------------------------------
class Tree:
    """A test's private folder in the host's data area: notes written by the grader, read back
    by it, both only through the host's data folder (in the sandbox, grader.boundary: see there
    why nothing can redirect them)."""

    def __init__(self, lab, name):
        self.lab = lab
        host = lab.state.host
        self.inner = f"{host.inner('data')}/{name}"
        self.folders = {}
        self.folders[""] = self._guarded(lambda: host.data.make_dir(name))
        self.ids = {}  # note id -> relative path

    def _guarded(self, action):
        try:
            return action()
        except Refused as exc:
            self.lab.state.dirty = True
            if not isinstance(exc, Full):
                self.lab.state.find(f"en la carpeta de datos del servidor: {exc}")
            raise Broken(f"en la carpeta de datos de tu servidor: {exc}") from None

    def _folder(self, relative):
        if relative not in self.folders:
            parent, _, name = relative.rpartition("/")
            self.folders[relative] = self._guarded(
                lambda: self._folder(parent).make_dir(name))
        return self.folders[relative]

    def add(self, folder, filename, note_id, title, created="2025-03-02", body=None):
        text = store.render(note_id, title, created, body or f"Cuerpo de {note_id}.\n")
        target = self._folder(folder)
        self._guarded(lambda: target.write_file(filename, text.encode("utf-8")))
        self.ids[note_id] = f"{folder}/{filename}"
        return self

    def link(self, name, target):
        """A symbolic link `name` -> `target`, two folders side by side at the top."""
        self._guarded(lambda: self.folders[""].make_link(name, target))
        return self

    def uri(self, folder):
        return path_to_uri(f"{self.inner}/{folder}")

    def snapshot(self):
        """{relative path: (sha256, inode)} of every file below this folder."""
        return self._guarded(self.folders[""].snapshot)

    def close(self):
        for folder in self.folders.values():
            folder.close()
        self.folders = {}


def describe_changes(before, after):
    """Spanish summary of what differs between two snapshots ('' when nothing does)."""
    parts = []
    for path in sorted(set(before) - set(after)):
        parts.append(f"desapareció {path}")
    for path in sorted(set(after) - set(before)):
        parts.append(f"apareció {path}")
    for path in sorted(set(before) & set(after)):
        if before[path][0] != after[path][0]:
            parts.append(f"cambió el contenido de {path}")
    return "; ".join(parts)


# -- the user and the browser ------------------------------------------------------------------
def scripted_user(answers=()):
    """The scripted user (code/client.py): answers from a list; asked more than MAX_PROMPTS
    times in one call it answers with an error, never an endless conversation."""
    return ScriptedUser(*answers, max_per_call=MAX_PROMPTS)


# -- one server and the grader's client -------------------------------------------------------
class Call:
    """What happened during one tools/call."""

    def __init__(self, result=None, error=None, prompts=(), frames=()):
        self.result, self.error = result, error
        self.prompts = list(prompts)   # elicitation/create params sent during this call
        self.frames = list(frames)

    @property
    def is_error(self):
        return self.error is not None or not isinstance(self.result, dict) \
            or self.result.get("isError") is True

    @property
    def structured(self):
        data = self.result.get("structuredContent") if isinstance(self.result, dict) else None
        return data if isinstance(data, dict) else {}

    def text(self):
        if self.error is not None:
            return f"error JSON-RPC {self.error}"
        try:
            return " ".join(c.get("text", "") for c in self.result["content"])
        except (TypeError, KeyError, AttributeError):
            return short(self.result)

    def forms(self):
        return [p for p in self.prompts if p.get("mode", "form") == "form"]

    def urls(self):
        return [p for p in self.prompts if p.get("mode") == "url"]


class ProcessRun:
    """A server process (sandbox or portable host) and the grader's client on its pipes."""

    def __init__(self, lab, revision, argv, roots, elicitation, user, protocol=None):
        self.lab, self.revision = lab, revision
        self.state = lab.state
        self.user = user or scripted_user()
        self.frames = []
        self._lock = threading.Lock()
        self._held = {}       # server request id -> handler slots of the submission it holds
        self._reading = False
        self.cost = 0         # real bytes of every frame it sent (intake.take)
        self.count = 0        # frames it sent
        self.flooded = None   # why the server was cut off, once it was
        self.dead = False
        self.closed = False
        try:
            self.process = self.state.host.spawn(argv)
        except HostError as exc:
            if self.state.expired:
                raise Broken(OUT_OF_TIME) from None
            raise Broken(f"el entorno no pudo arrancar otro servidor ({exc})") from None
        self.client = intake.GraderClient(
            self._send, self._inbound(), self.process.close_input, workers=CLIENT_WORKERS,
            roots=roots, elicitation=elicitation, protocol=protocol or revision, user=self.user,
            on_frame=self._on_frame, timeout=CONNECT_TIMEOUT)

    # -- the wire, within the grader's caps ------------------------------------------------
    def _lines(self):
        """Lines from the server's stdout; a line longer than MAX_LINE_BYTES is cut (so the
        client refuses it) and the rest of it skipped. Ends when the run is closed."""
        buffer, skipping, seen = bytearray(), False, 0  # buffer[:seen] holds no newline
        self._reading = True
        try:
            while not self.closed:
                chunk = self.process.read(0.2)
                if chunk is None:
                    continue
                if not chunk:
                    return
                buffer += chunk
                while True:
                    end = buffer.find(b"\n", seen)  # each byte is searched once
                    if end < 0:
                        seen = len(buffer)
                        if len(buffer) > MAX_LINE_BYTES:
                            if not skipping:
                                yield bytes(buffer[:MAX_LINE_BYTES + 1])
                            skipping = True
                            del buffer[:]
                            seen = 0
                        break
                    line = bytes(buffer[:end + 1])
                    del buffer[:end + 1]
                    seen = 0
                    if skipping:
                        skipping = False
                        continue
                    yield line
        finally:
            self._reading = False

    def _inbound(self):
        """Each frame parsed once (intake.take), one frame of the submission at a time, and
        counted in real bytes before the client gets it."""
        for line in self._lines():
            self.count += 1
            if self.count > MAX_FRAMES:
                self._flood(f"el servidor envió más de {MAX_FRAMES} mensajes")
                return
            too_much = f"el servidor envió demasiados datos (más de {MAX_RUN_BYTES >> 20} MiB)"
            if not self.state.charge(0, MAX_SUBMISSION_BYTES):  # spent by other servers
                self._flood(too_much)
                return
            with self.state.parsing:
                frame = intake.take(line)
            self.cost += frame.cost
            if self.cost > MAX_RUN_BYTES or not self.state.charge(frame.cost,
                                                                  MAX_SUBMISSION_BYTES):
                self._flood(too_much)
                return
            msg = frame.message
            if msg is not None and msg["kind"] == "request":
                if not self._take_slot(msg["id"]):
                    return
            elif msg is not None and msg.get("method") == "notifications/cancelled":
                params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
                self._free_slot(params.get("requestId"))  # the client will not answer it
            yield frame

    def _take_slot(self, request_id):
        if not self.state.take_slot(MAX_HANDLERS, lambda: self.closed):
            return False
        with self._lock:
            self._held[request_id] = self._held.get(request_id, 0) + 1
        return True

    def _free_slot(self, request_id):
        if not wire.valid_id(request_id):
            return
        with self._lock:
            held = self._held.get(request_id, 0)
            if held > 1:
                self._held[request_id] = held - 1
            elif held:
                del self._held[request_id]
        if held:
            self.state.free_slots()

    def _send(self, data):
        """Our frames to the server; the answer to a server request frees its slot."""
        answered = _answered(data) if self._held else None  # only answers hold slots
        try:
            self.process.send(data)
        except wire.ConnectionClosed:
            if answered is None:
                raise  # our own request: the caller learns the server is gone
            # an answer to a server that is gone (or does not read): dropped, and the reader
            # sees the end of its output; the client's worker thread carries on
        finally:
            if answered is not None:
                self._free_slot(answered)

    def _on_frame(self, direction, msg):
        """Only the questions are kept (what `prompts_since` reads); they are counted already."""
        if not intake.is_question(direction, msg):
            return
        with self._lock:
            if not self.flooded:
                self.frames.append((direction, msg))

    def _flood(self, reason):
        with self._lock:
            if self.flooded:
                return
            self.flooded = reason
            self.frames = []  # nothing it sent is kept any more
        self.state.dirty = True
        threading.Thread(target=self.kill, daemon=True).start()

    def kill(self):
        self.process.kill()

    def alive(self):
        return not (self.dead or self.flooded) and self.process.status() is None

    def died(self):
        """Why the server stopped answering (its exit code, the end of its stderr)."""
        self.dead = True
        self.state.dirty = True
        if self.state.expired:
            return OUT_OF_TIME
        code = self.process.status(wait=min(2.0, self.state.left()))
        tail = self.process.stderr().strip().splitlines()[-3:]
        why = f"el servidor terminó (código {code})" if code is not None \
            else "el servidor dejó de responder"
        if self.flooded:
            why = self.flooded
        return why + (": " + one_line(" | ".join(tail), 600) if tail else "")

    def close(self):
        self.closed = True
        self.kill()  # SIGKILL to its process group (sandbox) or to it (portable)
        self.process.close_input()
        self.client.close()
        with self._lock:  # requests it never got an answer to free their slots now
            held, self._held = sum(self._held.values()), {}
        self.state.free_slots(held)
        if not self._reading:  # the reader has let go of the pipe (it does within 0.2 s)
            self.process.close_output()


class LocalRun:
    """The in-process host's server (grader/inprocess.py): a NotesServer in this interpreter
    and `Client.local` on transport.Loopback. No process, no thread: every wait pumps frames."""

    def __init__(self, lab, revision, server, roots, elicitation, user, protocol=None):
        self.lab, self.revision = lab, revision
        self.state = lab.state
        self.user = user or scripted_user()
        self.frames = []
        self.flooded = None
        self.dead = False
        self.server = server
        self.client = Client.local(server, roots=roots, elicitation=elicitation,
                                   protocol=protocol or revision, user=self.user,
                                   on_frame=self._on_frame, timeout=CONNECT_TIMEOUT)

    def _on_frame(self, direction, msg):
        if len(self.frames) < MAX_FRAMES:
            self.frames.append((direction, msg))

    def kill(self):
        self.dead = True

    def alive(self):
        return not self.dead

    def died(self):
        self.dead = True
        if self.state.expired:
            return OUT_OF_TIME
        tail = self.lab.state.host.log_tail()
        return "el servidor dejó de responder" + (f": {one_line(tail, 600)}" if tail else "")

    def close(self):
        self.dead = True
        self.client.close()
        self.server.close()


class RunMixin:
    """What a test does with a run, the same for a process and an in-process server."""

    def mark(self, name):
        self.frames.append(("mark", name))

    def _budget(self, wanted):
        """`wanted` seconds, or what is left of the budget if that is less."""
        left = self.state.left()
        if left <= 0:
            raise Broken(OUT_OF_TIME)
        return min(wanted, left)

    def connect(self, timeout=CONNECT_TIMEOUT):
        self.client.timeout = self._budget(timeout)
        try:
            self.client.connect()
        except Exception as exc:
            raise Broken(f"no se pudo iniciar la sesión MCP ({type(exc).__name__}): "
                         + self.died()) from None
        finally:
            self.client.timeout = CONNECT_TIMEOUT
        return self

    def prompts_since(self, start):
        """The elicitation params the server sent since frame number `start`."""
        return questions_in(list(self.frames[start:]))

    def call(self, name, arguments=None, timeout=CALL_TIMEOUT):
        strikes = self.state.strikes
        if name in strikes:
            raise Broken(strikes[name])
        wait = self._budget(timeout)
        self.user.new_call()
        start = len(self.frames)
        result = error = None
        try:
            result = self.client.call_tool(name, arguments or {}, timeout=wait,
                                           max_rounds=MAX_PROMPTS + 3)
        except TimeoutError:
            if self.state.left() <= 0:
                raise Broken(OUT_OF_TIME) from None
            strikes[name] = f"{name} no respondió en {timeout:.0f} s (en esta u otra prueba)"
            self.kill()
            self.died()
            raise Broken(f"{name} no respondió en {timeout:.0f} s") from None
        except wire.RpcError as exc:
            error = f"{exc.code}: {one_line(exc.message, 300)}"
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{name}: {self.died()} ({type(exc).__name__})") from None
        except RuntimeError as exc:  # still input_required after the rounds we allow
            error = f"sin resultado final: {one_line(exc, 300)}"
        if self.flooded:
            raise Broken(self.died())
        if result is not None and not isinstance(result, dict):
            raise Broken(f"{name} devolvió algo que no es un resultado: {short(result)}")
        return Call(result, error, self.prompts_since(start), self.frames[start:])

    def set_roots(self, uris):
        self.client.timeout = self._budget(CONNECT_TIMEOUT)
        try:
            self.client.set_roots(uris)
        except Exception as exc:
            raise Broken(f"tras cambiar las roots el servidor no volvió a pedirlas "
                         f"({type(exc).__name__}): {self.died()}") from None
        finally:
            self.client.timeout = CONNECT_TIMEOUT

    def tools(self):
        """{name: description} of what tools/list answers (names that are strings only)."""
        self.client.timeout = self._budget(CONNECT_TIMEOUT)
        try:
            listed = self.client.list_tools()
            if not isinstance(listed, list):
                raise TypeError("tools is not a list")
            return {t["name"]: t for t in listed
                    if isinstance(t, dict) and isinstance(t.get("name"), str)}
        except Exception as exc:
            raise Broken(f"tools/list falló ({type(exc).__name__}): {self.died()}") from None
        finally:
            self.client.timeout = CONNECT_TIMEOUT

    def notifications(self, method):
        return [n for n in list(self.client.notifications) if n.get("method") == method]


class ServerRun(RunMixin, ProcessRun):
    """A server process, as tests use it."""


class InProcessRun(RunMixin, LocalRun):
    """An in-process server, as tests use it."""


def _answered(data):
    """The id of the server request that `data` (one of our frames) answers, or None."""
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    if isinstance(msg, dict) and "method" not in msg and wire.valid_id(msg.get("id")):
        return msg["id"]
    return None


class Lab:
    """One test's workspace: its folders, its servers; everything is stopped afterwards."""

    def __init__(self, state, index):
        self.state, self.index = state, index
        self.runs = []
        self.trees = []

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
               answers=(), protocol=None, connect=True, keep=False):
        self.require_solution()
        host = self.state.host
        user = scripted_user(answers)
        roots = list(roots) if roots is not None else None
        if host.processes:
            argv = ["serve", "--solution", host.inner("solution"), "--sdk-version", sdk,
                    "--setup-wait", str(setup_wait)]
            run = ServerRun(self, revision, argv, roots, elicitation, user, protocol=protocol)
        else:
            try:
                server = host.new_server(sdk, setup_wait)
            except HostError as exc:
                raise Broken(f"el servidor no arrancó ({exc})") from None
            run = InProcessRun(self, revision, server, roots, elicitation, user,
                               protocol=protocol)
        (self.state.kept if keep else self.runs).append(run)
        return run.connect() if connect else run

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
