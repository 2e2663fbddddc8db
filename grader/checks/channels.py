"""Channels to a learner's server: how the grader's client reaches it and what it lets through.

A `Run` (grader/checks/runs.py) speaks to its server over a channel. `client(run, ...)` gives a
session its MCP client (the main session first, then the second user's of
`serve --second-user`); `keep(run, direction, msg)` decides what of a frame the run keeps;
`kill()`, `alive()`, `died()` and `close()` end it and say why it ended.
- `ProcessChannel`: a server process of the sandbox or the portable host, over its pipes; the
  second session's frames travel wrapped on the same pipe (SECOND_SESSION_METHOD).
- `LocalChannel`: a NotesServer the in-process host built in this interpreter, with a
  `Client.local` per session.

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

Deliberate simplifications: one pipe per server process, read by one thread; the caps are
constants of grader/checks/intake.py, the same for every exercise.
"""

import json
import queue
import threading

from client.sync_client import Client
from grader.checks import intake
from grader.checks.intake import (
    LEARNER_FRAME_BYTES,
    MAX_FRAMES,
    MAX_RUN_BYTES,
    MAX_SUBMISSION_BYTES,
)
from grader.escape import one_line
from grader.state import OUT_OF_TIME
from shared import wire
from shared.protocol import SECOND_SESSION_METHOD

CONNECT_TIMEOUT = 10.0
MAX_HANDLERS = 8                  # server-to-client requests answered at once
CLIENT_WORKERS = 1                # threads per client answering them (the gate is above)
SECOND_HEAD = b'{"jsonrpc":"2.0","method":"' + SECOND_SESSION_METHOD.encode() \
    + b'","params":{"frame":'


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


def _answered(data):
    """The id of the server request that `data` (one of our frames) answers, or None."""
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    if isinstance(msg, dict) and "method" not in msg and wire.valid_id(msg.get("id")):
        return msg["id"]
    return None
