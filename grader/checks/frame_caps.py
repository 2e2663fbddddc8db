"""What the grader reads from a learner's server, and the caps that keep it bounded.

A learner's server is hostile: whatever it writes on its stdout is read through these caps
(grader/checks/runs.py applies them): `MAX_FRAME_FROM_SERVER` bytes per frame (a longer line is
cut, so the client refuses it, and the rest skipped), an estimated memory cost per server
(`MAX_RUN_COST`) and per submission (`MAX_SUBMISSION_COST`), at most `MAX_FRAMES` frames kept,
nesting at most `MAX_NESTING` deep (a deeper frame is replaced before the client parses it), and
at most `MAX_HANDLERS` server-to-client requests being answered at once in all the servers of a
submission.

Why 1 MiB here and 4 MiB in code/wire.py (`MAX_LINE_BYTES`): that one is the most code/ parses
at all, on either side of the wire (generous: a peer sending a big but honest frame); this one
is what the grader keeps from a server it does not trust, sized to a run's memory budget (one
frame is an eighth of `MAX_RUN_COST`), and it cuts a line before the client parses it. No frame
of a correct server comes near either.

Deliberate simplifications: the memory cost of a frame is estimated from its bytes (containers
and items cost more than their characters), not measured.
"""

import wire

MAX_FRAME_FROM_SERVER = 1 << 20   # one frame from the learner's server
MAX_RUN_COST = 8 << 20            # estimated memory kept for one server's frames
MAX_SUBMISSION_COST = 48 << 20    # the same for every server of one submission
MAX_FRAMES = 4000                 # frames kept per server
MAX_NESTING = 48                  # JSON depth of one frame
MAX_HANDLERS = 8                  # server-to-client requests answered at once


def frame_cost(line):
    """An estimate of the memory a parsed frame keeps (containers and items cost more than
    their characters): what the caps on kept frames count."""
    return len(line) + 56 * (line.count(b"{") + line.count(b"[")) + 8 * line.count(b",")


def nesting(value, limit=MAX_NESTING):
    """True when `value` is nested deeper than `limit` (iterative: never a RecursionError)."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            pending += [(child, depth + 1) for child in item.values()]
        elif isinstance(item, list):
            pending += [(child, depth + 1) for child in item]
    return False


GARBAGE = b'"(frame refused by the grader)"\n'


def classify(line):
    """(message or None, line): the message as the client will parse it, when it may be a
    request or a notification; a frame the client must not even parse (nested too deep) is
    replaced by a string, which it ignores."""
    if b'"method"' not in line and line.count(b"{") + line.count(b"[") <= MAX_NESTING:
        return None, line  # a response (or garbage): not a request, cannot be too deep
    try:
        msg = wire.parse(line)
    except wire.RpcError:
        return None, line
    except (RecursionError, MemoryError, ValueError):
        return None, GARBAGE
    if nesting(msg):
        return None, GARBAGE
    return msg, line
