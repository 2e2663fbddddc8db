"""What JSON from a submission costs in the grader's memory: bounded before parsing, counted after.

Parsed JSON is much bigger than its text: a list of empty lists (`[[],[],...]`) takes 22 times
its bytes once parsed, a list of one-key objects 28 times, two-character strings 12 times. The
grader never parses JSON a submission sent (frames from a server, a notebook) without knowing
first what it can cost, and it counts what it keeps in the bytes Python really uses:

- `json_bound(data)`: an upper bound, from the bytes alone (a few C-speed counts), of the memory
  `json.loads(data)` uses at its peak: the text decoded to a str and every string in the result
  (each at most 4 bytes per character), plus `PER_TOKEN` bytes for each value, key and container
  (each is introduced by one of `[ { , :`), which covers the costliest shapes measured with
  tracemalloc on CPython 3.11 (a one-key object in a list: 73 bytes per token).
- `retained(value)`: the bytes a parsed value occupies, by `sys.getsizeof` of every object in
  it (iteratively, with no recursion): what the caps on frames count.

Deliberate simplifications: shared objects (interned keys, small ints) are counted once per
occurrence, so `retained` errs on the high side; allocator overhead is not counted.
"""

import sys

PER_TOKEN = 96           # bytes per JSON value, key or container at most (73 measured)
STRING_FACTOR = 8        # the decoded text and the strings of the result, 4 bytes a character
BASE = 4096


def tokens(data):
    """How many values, keys and containers `data` (JSON text, bytes or str) can hold at most."""
    marks = "[{,:" if isinstance(data, str) else b"[{,:"
    return sum(data.count(marks[index:index + 1]) for index in range(4))


def json_bound(data):
    """An upper bound of the bytes `json.loads(data)` uses at its peak."""
    return STRING_FACTOR * len(data) + PER_TOKEN * tokens(data) + BASE


def retained(value, max_depth=None):
    """The bytes a parsed JSON value occupies (every dict, list, str, number in it); None when
    anything in it is nested deeper than `max_depth`. Level by level, without recursion (never
    a RecursionError); each level's items are sized in one `map`."""
    total, level, depth = sys.getsizeof(value), [value], 0
    while level:
        below = []
        for container in level:
            if isinstance(container, dict):
                items = list(container.keys())
                items += container.values()
            else:
                items = container
            if items and max_depth is not None and depth >= max_depth:
                return None
            total += sum(map(sys.getsizeof, items))
            below += [item for item in items if type(item) in _CONTAINERS]
        level, depth = below, depth + 1
    return total


_CONTAINERS = (dict, list)   # what json.loads makes that holds other values
