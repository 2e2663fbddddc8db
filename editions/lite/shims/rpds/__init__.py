"""A stand-in for `rpds` (rpds-py) for JupyterLite only: the persistent collections that
`referencing` and `jsonschema` use, in plain Python.

rpds-py is compiled code and PyPI has no WebAssembly build of it; jsonschema needs it, and the
official MCP SDK's client needs jsonschema to check a tool's result against its outputSchema
(notebook 05's MCPServer tool has one). editions/lite/build.py packs this package, with the
cryptography stand-in, into the wheel `course-lite-shims`, installed only by
`ui.install_sdk()` in the browser. It offers what those two libraries call: `HashTrieMap`
(convert, insert, remove, discard, update, get, keys/values/items), `HashTrieSet` (insert,
discard, remove, update) and `List` (push_front, first, rest), each immutable: every change
returns a new object.

Deliberate simplifications: each change copies the whole collection (the schemas a tool
declares are small); no structural sharing, no `Queue`, no `ItemsView` types of their own.
"""

from collections.abc import Mapping

__version__ = "0+course-lite"


class HashTrieMap(Mapping):
    __slots__ = ("_data", "_hash")

    def __init__(self, value=(), **kwargs):
        self._data = dict(value, **kwargs)
        self._hash = None

    @classmethod
    def convert(cls, value):
        return value if isinstance(value, HashTrieMap) else cls(value)

    @classmethod
    def fromkeys(cls, keys, value=None):
        return cls(dict.fromkeys(keys, value))

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other):
        return isinstance(other, Mapping) and dict(self._data) == dict(other)

    def __repr__(self):
        return f"HashTrieMap({self._data!r})"

    def __reduce__(self):
        return (HashTrieMap, (self._data,))

    def insert(self, key, value):
        return HashTrieMap({**self._data, key: value})

    def remove(self, key):
        if key not in self._data:
            raise KeyError(key)
        return self.discard(key)

    def discard(self, key):
        return HashTrieMap({k: v for k, v in self._data.items() if k != key})

    def update(self, *maps, **kwargs):
        data = dict(self._data)
        for other in maps:
            data.update(other)
        data.update(kwargs)
        return HashTrieMap(data)

    def keys(self):
        return self._data.keys()

    def values(self):
        return self._data.values()

    def items(self):
        return self._data.items()


class HashTrieSet:
    __slots__ = ("_data",)

    def __init__(self, value=()):
        self._data = frozenset(value)

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __contains__(self, item):
        return item in self._data

    def __hash__(self):
        return hash(self._data)

    def __eq__(self, other):
        return isinstance(other, (HashTrieSet, set, frozenset)) and self._data == set(other)

    def __repr__(self):
        return f"HashTrieSet({set(self._data)!r})"

    def insert(self, value):
        return HashTrieSet(self._data | {value})

    def discard(self, value):
        return HashTrieSet(self._data - {value})

    def remove(self, value):
        if value not in self._data:
            raise KeyError(value)
        return self.discard(value)

    def update(self, *iterables):
        return HashTrieSet(self._data.union(*iterables))

    def union(self, other):
        return self.update(other)


class List:
    __slots__ = ("_items",)

    def __init__(self, value=()):
        self._items = tuple(value)

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __contains__(self, item):
        return item in self._items

    def __hash__(self):
        return hash(self._items)

    def __eq__(self, other):
        return isinstance(other, List) and self._items == other._items

    def __repr__(self):
        return f"List({list(self._items)!r})"

    def __reversed__(self):
        return reversed(self._items)

    @property
    def first(self):
        if not self._items:
            raise IndexError("empty list has no first element")
        return self._items[0]

    @property
    def rest(self):
        return List(self._items[1:])

    def push_front(self, value):
        return List((value, *self._items))

    def drop_first(self):
        return self.rest
