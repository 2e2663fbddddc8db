"""A client by hand for the session core, the same at both revisions: start a tools/call, see
what it asks, answer it, read how it ended. Built on test_session_core.Peer (a Session fed
frame by frame, with a manual clock).

At 2025-11-25 a question is an `elicitation/create` request and the answer goes back as its
response; at 2026-07-28 a question is an `input_required` result and the answer is a retry
with `inputResponses` and the sealed `requestState`. `Talk` hides that difference, so one test
can check one behaviour at both revisions.
"""

from test_session_core import Peer, questions, result_of

CAPS_2026 = {"elicitation": {"form": {}, "url": {}}}  # no roots: the server's --root is used
ENVELOPE_2026 = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities": CAPS_2026}


class Talk:
    """One client of `server` at `protocol`, sharing `roots` (2025: as its roots; 2026: the
    server must have them as --root). `start=False` leaves a 2025 client before initialize."""

    def __init__(self, server, protocol, roots=(), start=True):
        self.peer = Peer(server)
        self.protocol = protocol
        self.stateless = protocol == "2026-07-28"
        if start and not self.stateless:
            self.peer.start(list(roots))
        self.call_id = self.params = self.question = self.pending = None

    @property
    def session(self):
        return self.peer.session

    def call(self, name, arguments=None):
        """Start a tools/call: ("done", response) | ("asks", question params) | ("waits", [])."""
        self.params = {"name": name, "arguments": arguments or {}}
        if self.stateless:
            self.params["_meta"] = ENVELOPE_2026
        self.call_id = self.peer.request("tools/call", self.params)
        return self.outcome()

    def answer(self, answer):
        """Answer the last question (an ElicitResult, or a roots/list result)."""
        if self.stateless:
            [key] = self.pending["inputRequests"]
            self.call_id = self.peer.request("tools/call", {
                **self.params, "requestState": self.pending["requestState"],
                "inputResponses": {key: answer}})
        else:
            self.peer.answer(self.question["id"], answer)
        return self.outcome()

    def outcome(self, frames=None):
        frames = self.peer.take() if frames is None else frames
        done = result_of(frames, self.call_id)
        if done is not None and done.get("result", {}).get("resultType") == "input_required":
            self.pending = done["result"]
            [request] = self.pending["inputRequests"].values()
            return "asks", request["params"]
        if done is not None:
            return "done", done
        asked = questions(frames) + [f for f in frames if f.get("method") == "roots/list"]
        if asked:
            self.question = asked[0]
            return "asks", asked[0].get("params")
        return "waits", frames

    def ping(self, msg_id="ping"):
        """The session still answers: a ping gets its empty result."""
        self.peer.send({"id": msg_id, "method": "ping"})
        return [f for f in self.peer.take() if f.get("id") == msg_id] == [
            {"jsonrpc": "2.0", "id": msg_id, "result": {}}]
