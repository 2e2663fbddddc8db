"""What the grader takes from a learner's server process: each frame parsed once, counted in real
bytes, one frame of a submission parsed at a time.

A server process writes frames (JSON lines) on its stdout; the harness
(grader/checks/channels.py) splits them, with `LEARNER_FRAME_BYTES` per frame, and hands each
one here before the grader's MCP client (code/client.py over code/client_core.py) sees it:

- `take(line)` parses the frame once (`wire.parse`) and returns it as a `Parsed` line: the same
  bytes, carrying the message, or None when it is not a message or is nested deeper than
  `MAX_NESTING`. `GraderClient` is the client that reads that message instead of parsing the
  line again (the plain client parses each frame twice: one copy for `on_frame`, one to act on).
- `Parsed.cost` is the frame's size in real bytes (`grader.sizes.retained`: what Python holds for
  the parsed message, about 12 times the text for a list of two-character strings, 22 times for
  a list of empty lists), or its length when that is more (blanks) or it did not parse. The
  harness counts it against `MAX_RUN_BYTES` per server and `MAX_SUBMISSION_BYTES` per
  submission, whether the message is kept or not, and never gives it back: what the grader holds
  from a submission's servers stays below the second (plus one frame being parsed), and once a
  cap is reached nothing more of that server (or submission) is parsed.
- The harness parses under the submission's `parsing` lock, so one frame of a submission is being
  parsed at a time: at most `sizes.json_bound(LEARNER_FRAME_BYTES)` of transient memory, however
  many of its servers flood at once.
- `GraderClient` keeps nothing of a notification but its method (and the ids a cancellation or
  a completion names); the harness keeps, of the frames, only the questions (`is_question`).

Why 1 MiB here (`LEARNER_FRAME_BYTES`) and 4 MiB in code/wire.py (`MAX_LINE_BYTES`), two limits
under two names: that one is the most code/ parses at all, on either side of the wire (generous:
a peer sending a big but honest frame); this one is what the grader takes from a server it does
not trust, sized to a run's memory budget (one frame is an eighth of `MAX_RUN_BYTES`), and it cuts
a line before the client parses it. No frame of a correct server comes near either.

Deliberate simplifications: costs are never given back (a long run is charged for every frame it
ever sent); Python's allocator overhead is not counted.
"""

from client.client_core import ClientCore
from client.sync_client import Client
from grader.sizes import retained
from shared import wire

LEARNER_FRAME_BYTES = 1 << 20     # one frame from the learner's server
MAX_RUN_BYTES = 8 << 20           # real bytes of every frame of one server
MAX_SUBMISSION_BYTES = 32 << 20   # the same for every server of one submission
MAX_NESTING = 48                  # JSON depth of one frame
MAX_FRAMES = 4000                 # frames of one server
MAX_KEPT_ID = 512                 # an elicitationId kept from a completion notification


class Parsed(bytes):
    """A frame as read (its bytes), with what `take` found in it."""
    message = None   # the message (wire.parse's dict, with its "kind"), or None
    cost = 0         # real bytes


def take(line):
    """The frame `line`, parsed once: a `Parsed` with its message (or None) and its cost."""
    frame = Parsed(line)
    frame.cost = len(line)
    try:
        msg = wire.parse(line)
    except (wire.RpcError, RecursionError, MemoryError, ValueError):
        return frame
    size = retained(msg, MAX_NESTING)
    if size is not None:
        frame.message, frame.cost = msg, max(size, len(line))
    return frame


def is_question(direction, msg):
    """A frame the harness keeps: an elicitation the server sent (2025-11-25 requests, 2026-07-28
    `input_required` results), what `client.questions_in` reads."""
    if direction != "←" or not isinstance(msg, dict):
        return False
    result = msg.get("result")
    return msg.get("method") == "elicitation/create" or (
        isinstance(result, dict) and isinstance(result.get("inputRequests"), dict))


class GraderCore(ClientCore):
    """The client core on frames `take` already parsed: no second parse, and nothing of a
    notification kept but its method (and the id a cancellation names)."""

    def _parse(self, line):
        msg = getattr(line, "message", None)
        if msg is None:
            raise wire.RpcError(wire.PARSE_ERROR, "frame refused by the grader")
        self.on_frame("←", msg)
        return msg

    def _note(self, msg):
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        eid = params.get("elicitationId")
        if msg["method"] == "notifications/cancelled" and wire.valid_id(params.get("requestId")):
            params = {"requestId": params["requestId"]}
        elif msg["method"] == "notifications/elicitation/complete" and isinstance(eid, str) \
                and len(eid) <= MAX_KEPT_ID:
            params = {"elicitationId": eid}
        else:
            params = {}
        super()._note({"method": msg["method"], "params": params})


class GraderClient(Client):
    """code/client.py's blocking client over `GraderCore`."""

    Core = GraderCore
