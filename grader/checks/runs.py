"""Runs of a learner's server: one server in the host and the grader's own client talking to it.

`lab.server(revision, ...)` starts a notes server with the learner's solution and connects the
grader's MCP client to it (code/client.py, trusted code in the grader process); `run.call(...)`
returns a `CallTrace` with the result and every elicitation the server sent during that call.
Everything a test decides is read from the wire and from the files, never from what the
learner's process says about itself.

Where the servers run is the state's *host* (grader/hosts/), and the checks never know which:
- the official sandbox (grader/hosts/sandbox.py) and the portable self-check
  (grader/hosts/portable.py) run each server as a process: its `ProcessChannel` reads and
  writes its pipes, within the caps of grader/checks/intake.py (`process_run`);
- the in-process self-check (grader/hosts/inprocess.py, JupyterLite: no process, no thread)
  builds the server in this interpreter: its `LocalChannel` speaks to it with `Client.local`
  (transport.Loopback) (`local_run`).
A `Run` is what a test does with a session, over either channel, so every check is the same
code in every mode; a second user's session on the same server is a Run over the same channel.

The grader's side holds against a hostile server:
- notes are laid out and read back only through the host's data folder (grader.boundary in the
  sandbox: descriptors, no links, no FIFOs, caps); a planted link or special file is a `Broken`
  test and a finding in the report;
- what a server process sends is read with caps (grader/checks/intake.py): `LEARNER_FRAME_BYTES`
  per frame, each frame parsed once (one of the submission's frames at a time) and counted in real
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
import queue
import threading
import time
from urllib.parse import urlsplit

import wire
from client import Client
from client_core import questions_in
from grader.checks import intake
from grader.checks.grading import Broken, short
from grader.checks.intake import (
    LEARNER_FRAME_BYTES,
    MAX_FRAMES,
    MAX_NESTING,  # noqa: F401  (the caps, re-exported for callers)
    MAX_RUN_BYTES,
    MAX_SUBMISSION_BYTES,
)
from grader.errors import HostError
from grader.escape import one_line
from grader.state import OUT_OF_TIME
from nube_copias import CODE_PREFIX, TOKEN_PREFIX
from protocol import (
    FORM_MODE,
    PROVIDER_METHOD,
    SECOND_SESSION_METHOD,
    SETUP_PAGE_METHOD,
    URL_MODE,
)
from simulated_user import ScriptedUser

CALL_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
MAX_PROMPTS = 3  # per call; beyond this the grader stops answering
MAX_HANDLERS = 8                  # server-to-client requests answered at once
CLIENT_WORKERS = 1                # threads per client answering them (the gate is above)
SECRETS = ((CODE_PREFIX.encode(), "un code de Nube de Copias"),
           (TOKEN_PREFIX.encode(), "un token de Nube de Copias"))
SECOND_HEAD = b'{"jsonrpc":"2.0","method":"' + SECOND_SESSION_METHOD.encode() \
    + b'","params":{"frame":'


def scripted_user(answers=()):
    """The scripted user (code/simulated_user.py): answers from a list; asked more than MAX_PROMPTS
    times in one call it answers with an error, never an endless conversation."""
    return ScriptedUser(*answers, max_per_call=MAX_PROMPTS)


class CallTrace:
    """What happened during one tools/call: its result (or JSON-RPC error), the elicitations the
    server sent during it and every frame. (Not session.Call: that is the server's own record.)"""

    def __init__(self, result=None, error=None, prompts=(), frames=(), error_code=None,
                 error_data=None):
        self.result, self.error = result, error
        self.error_code, self.error_data = error_code, error_data  # of a JSON-RPC error
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
        return [p for p in self.prompts if p.get("mode", FORM_MODE) == FORM_MODE]

    def urls(self):
        return [p for p in self.prompts if p.get("mode") == URL_MODE]


class ProcessChannel:
    """A server process (sandbox or portable host): its pipes, read within the grader's caps,
    and the slots of the server requests being answered. Each session speaking over it (the
    main one, then the second user's of `serve --second-user`) gets its client from
    `client(run, ...)`; the frames of the second one travel wrapped on the same pipe."""

    def __init__(self, state, process, second=False):
        self.state, self.process = state, process
        self.main = self.peer = None  # the Runs speaking over it
        self._peer_lines = queue.SimpleQueue() if second else None
        self._lock = threading.Lock()
        self._held = {}       # server request id -> handler slots of the submission it holds
        self._reading = False
        self.cost = 0         # real bytes of every frame it sent (intake.take)
        self.count = 0        # frames it sent
        self.flooded = None   # why the server was cut off, once it was
        self.dead = False
        self.closed = False

    def client(self, run, roots, elicitation, protocol):
        """The client of `run`'s session: the main one first, then the second user's."""
        if self.main is None:
            self.main, send, inbound, close = run, self._send, self._inbound(), \
                self.process.close_input
        else:
            self.peer, send, inbound, close = run, self._send_peer, self._peer_inbound(), None
        return intake.GraderClient(
            send, inbound, close, workers=CLIENT_WORKERS, roots=roots, elicitation=elicitation,
            protocol=protocol, user=run.user, on_frame=lambda direction, msg: self.keep(
                run, direction, msg), timeout=CONNECT_TIMEOUT)

    # -- the wire, within the grader's caps ------------------------------------------------
    def _lines(self):
        """Lines from the server's stdout; a line longer than LEARNER_FRAME_BYTES is cut (so the
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
                        if len(buffer) > LEARNER_FRAME_BYTES:
                            if not skipping:
                                yield bytes(buffer[:LEARNER_FRAME_BYTES + 1])
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
        counted in real bytes before the client gets it. A frame of the second session goes to
        its own client (`peer`)."""
        try:
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
                owner = self.main
                if self._peer_lines is not None and msg is not None \
                        and msg["kind"] == "notification" \
                        and msg.get("method") == SECOND_SESSION_METHOD:
                    frame, owner = self._unwrap(msg), self.peer
                    if frame is None:
                        continue
                    msg = frame.message
                if owner.watching:
                    owner.scan(frame, msg)
                key = (lambda i: i) if owner is self.main else (lambda i: ("peer", i))
                if msg is not None and msg["kind"] == "request":
                    if not self._take_slot(key(msg["id"])):
                        return
                elif msg is not None and msg.get("method") == "notifications/cancelled":
                    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
                    if wire.valid_id(params.get("requestId")):  # the client will not answer it
                        self._free_slot(key(params["requestId"]))
                if owner is self.main:
                    yield frame
                else:
                    self._peer_lines.put(frame)
        finally:
            if self._peer_lines is not None:
                self._peer_lines.put(None)

    def _unwrap(self, msg):
        """The second session's frame that `msg` carries, parsed as any frame (or None)."""
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if "frame" not in params:
            return None
        try:
            text = json.dumps(params["frame"], ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return None
        frame = intake.take(text.encode("utf-8", "replace"))
        return frame if frame.message is not None else None

    def _peer_inbound(self):
        while (frame := self._peer_lines.get()) is not None:
            yield frame

    def _send_peer(self, data):
        """The second session's frames, wrapped for the shared pipe."""
        answered = _answered(data) if self._held else None
        try:
            self.process.send(SECOND_HEAD + bytes(data).rstrip(b"\n") + b"}}\n")
        except wire.ConnectionClosed:
            if answered is None:
                raise
        finally:
            if answered is not None:
                self._free_slot(("peer", answered))

    def _take_slot(self, request_id):
        if not self.state.take_slot(MAX_HANDLERS, lambda: self.closed):
            return False
        with self._lock:
            self._held[request_id] = self._held.get(request_id, 0) + 1
        return True

    def _free_slot(self, request_id):
        if not (wire.valid_id(request_id) or isinstance(request_id, tuple)):
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

    def keep(self, run, direction, msg):
        """Only the questions are kept (what `prompts_since` reads); they are counted already."""
        if not intake.is_question(direction, msg):
            return
        with self._lock:
            if not self.flooded:
                run.frames.append((direction, msg))

    def _flood(self, reason):
        with self._lock:
            if self.flooded:
                return
            self.flooded = reason
            self.main.frames = []  # nothing it sent is kept any more
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
        self.main.client.close()
        if self.peer is not None:
            self._peer_lines.put(None)
            self.peer.client.close()
        with self._lock:  # requests it never got an answer to free their slots now
            held, self._held = sum(self._held.values()), {}
        self.state.free_slots(held)
        if not self._reading:  # the reader has let go of the pipe (it does within 0.2 s)
            self.process.close_output()


class LocalChannel:
    """The in-process host's server (grader/hosts/inprocess.py): a NotesServer in this
    interpreter, and a `Client.local` on transport.Loopback for each session (the second one as
    the second user). No process, no thread: every wait pumps frames."""

    flooded = None  # nothing here is read through the grader's caps

    def __init__(self, state, server):
        self.state, self.server = state, server
        self.clients = []
        self.dead = False

    def client(self, run, roots, elicitation, protocol):
        """The client of `run`'s session: the main one first, then the second user's."""
        second = {"session_user": self.server.config.second_user} if self.clients else {}
        client = Client.local(self.server, **second, roots=roots, elicitation=elicitation,
                              protocol=protocol, user=run.user,
                              on_frame=lambda direction, msg: self.keep(run, direction, msg),
                              timeout=CONNECT_TIMEOUT)
        self.clients.append(client)
        return client

    def keep(self, run, direction, msg):
        if len(run.frames) < MAX_FRAMES:
            run.frames.append((direction, msg))
        if direction == "←" and run.watching:
            run.scan(json.dumps(msg, ensure_ascii=False).encode("utf-8", "replace"), msg)

    def kill(self):
        self.dead = True

    def alive(self):
        return not self.dead

    def died(self):
        self.dead = True
        if self.state.expired:
            return OUT_OF_TIME
        tail = self.state.host.log_tail()
        return "el servidor dejó de responder" + (f": {one_line(tail, 600)}" if tail else "")

    def close(self):
        self.dead = True
        for client in self.clients:
            client.close()
        self.server.close()


class Run:
    """One MCP session with a learner's server, as tests use it, over its channel (a process:
    ProcessChannel; or in-process: LocalChannel): the same code for every host. `peer` is the
    second user's session on the same server (`second=`), a Run over the same channel."""

    def __init__(self, lab, revision, channel, roots, elicitation, user, protocol=None,
                 watch=False, second=None):
        self.lab, self.revision, self.state = lab, revision, lab.state
        self.channel = channel
        self.user = user or scripted_user()
        self.frames = []       # the questions it received (and the tests' marks)
        self.watching = watch  # look for the provider's credentials in every frame it gets
        self.leaks = []        # what of them reached the client (Spanish)
        self.page_ids = set()  # our requests to its pages: their answers are the browser's
        self.provider = None   # the grader's Nube de Copias, when the test asked for it
        self.client = channel.client(self, roots, elicitation, protocol or revision)
        self.peer = None if second is None else Run(lab, revision, channel, roots,
                                                    elicitation, second, protocol, watch)

    @property
    def flooded(self):
        """Why the server was cut off (it sent too much), or None."""
        return self.channel.flooded

    def kill(self):
        self.channel.kill()

    def alive(self):
        return self.channel.alive()

    def died(self):
        """Why the server stopped answering (Spanish)."""
        return self.channel.died()

    def close(self):
        self.channel.close()

    def mark(self, name):
        self.frames.append(("mark", name))

    def answer_with(self, *answers):
        """From now on the scripted user plays these answers (a test's next call)."""
        self.user = self.client.user = scripted_user(answers)

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
        result = error = code = data = None
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
            code, data = exc.code, exc.data
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{name}: {self.died()} ({type(exc).__name__})") from None
        except RuntimeError as exc:  # still input_required after the rounds we allow
            error = f"sin resultado final: {one_line(exc, 300)}"
        if self.flooded:
            raise Broken(self.died())
        if result is not None and not isinstance(result, dict):
            raise Broken(f"{name} devolvió algo que no es un resultado: {short(result)}")
        return CallTrace(result, error, self.prompts_since(start), self.frames[start:], code,
                         data)

    def request(self, method, params, timeout=CALL_TIMEOUT):
        """One request and its raw answer, with no `input_required` loop: (result, None), or
        (None, the wire.RpcError it got). Broken when the server hangs, dies or floods."""
        wait = self._budget(timeout)
        result = error = None
        try:
            result = self.client.request(method, params, timeout=wait)
        except TimeoutError:
            if self.state.left() <= 0:
                raise Broken(OUT_OF_TIME) from None
            self.kill()
            self.died()
            raise Broken(f"{method} no respondió en {timeout:.0f} s") from None
        except wire.RpcError as exc:
            error = exc
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{method}: {self.died()} ({type(exc).__name__})") from None
        if self.flooded:
            raise Broken(self.died())
        if error is None and not isinstance(result, dict):
            raise Broken(f"{method} devolvió algo que no es un resultado: {short(result)}")
        return result, error

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

    def wait_for(self, found, timeout):
        """Wait until `found()` (e.g. a notification arrived), at most `timeout` seconds of
        the budget; whether it did. In-process, the wait pumps the session's frames."""
        deadline = time.monotonic() + self._budget(timeout)
        loopback = getattr(self.client, "_loopback", None)
        if loopback is not None:
            try:
                loopback.pump_until(found, max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                pass
            return bool(found())
        while not found() and time.monotonic() < deadline and not self.flooded:
            time.sleep(0.02)
        return bool(found())

    # -- the user's browser, through the server's private page channel ----------------------
    def fetch(self, url, method="GET", data=None):
        """One request of this run's user's browser to the server's pages, through the
        private rpc channel (`serve --setup-page rpc`, no socket): {"status", "body"} and
        "location" for a redirect, or {"error"}. The answers are the browser's, never the MCP
        client's (they are not scanned for credentials)."""
        parts = urlsplit(url) if isinstance(url, str) else urlsplit("")
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")

        def send():  # the id is known before the frame goes out (frames go after the lock)
            outcome = self.client.core.request(SETUP_PAGE_METHOD, {
                "method": method, "target": target, "body": data or ""})
            self.page_ids.add(outcome.request_id)
            return outcome
        try:
            result = self.client._wait(self.client._enter(send), self._budget(CALL_TIMEOUT))
        except TimeoutError:
            if self.state.left() <= 0:
                raise Broken(OUT_OF_TIME) from None
            raise Broken(f"la página {one_line(parts.path, 80)} de tu servidor no respondió "
                         f"en {CALL_TIMEOUT:.0f} s") from None
        except wire.RpcError as exc:
            return {"error": f"{exc.code}: {one_line(exc.message, 200)}"}
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{self.died()} ({type(exc).__name__})") from None
        if self.flooded:
            raise Broken(self.died())
        if not isinstance(result, dict) or not isinstance(result.get("status"), int):
            return {"error": "la página respondió algo que no es una página"}
        fetched = {"status": result["status"],
                   "body": result["body"] if isinstance(result.get("body"), str) else ""}
        if isinstance(result.get("location"), str):
            fetched["location"] = result["location"]
        return fetched

    def scan(self, data, msg):
        """A frame to the client (not an answer to our page requests, nor a request to the
        grader's Nube de Copias, `--provider rpc`): does it carry one of the provider's
        credentials?"""
        if isinstance(msg, dict) and msg.get("kind", "response") == "response" \
                and msg.get("id") in self.page_ids and "method" not in msg:
            return
        if isinstance(msg, dict) and msg.get("method") == PROVIDER_METHOD:
            return
        for prefix, what in SECRETS:
            if prefix in data and what not in self.leaks:
                self.leaks.append(what)


def process_run(lab, revision, argv, private, roots, elicitation, user, protocol=None,
                watch=False, second=None):
    """A Run of a new server process of the host (its command line `argv`, this test's
    `private` options), as the test's identity."""
    state = lab.state
    try:
        process = state.host.spawn(argv, private, identity=lab.identity)
    except HostError as exc:
        if state.expired:
            raise Broken(OUT_OF_TIME) from None
        raise Broken(f"el entorno no pudo arrancar otro servidor ({exc})") from None
    return Run(lab, revision, ProcessChannel(state, process, second is not None), roots,
               elicitation, user, protocol, watch, second)


def local_run(lab, revision, server, roots, elicitation, user, protocol=None, watch=False,
              second=None):
    """A Run of `server`, a NotesServer the in-process host built in this interpreter."""
    return Run(lab, revision, LocalChannel(lab.state, server), roots, elicitation, user,
               protocol, watch, second)


def _answered(data):
    """The id of the server request that `data` (one of our frames) answers, or None."""
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    if isinstance(msg, dict) and "method" not in msg and wire.valid_id(msg.get("id")):
        return msg["id"]
    return None
