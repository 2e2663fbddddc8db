"""Whose is what among the 2026-07-28 clients of `serve --http`: a space for each client.

2026-07-28 has no sessions: each request stands alone. What the server still keeps between
two requests (open handles, a call waiting for its setup page, the flows it started, what
each root URI named) must belong to the client that made it, never to whoever sends the next
request. So each client gets a *space* (streamable_http.py: a Session of its own, its handles
named `h-N.<its name>`), found from the request by `identify`:

- a client identity the transport establishes: the cookie COOKIE, a random secret the server
  sets on the first answer (`Set-Cookie`, HttpOnly, SameSite=Strict). A client that keeps
  cookies (the lesson's client, the Python SDK, a browser) is one client across requests; its
  space's name is a digest of the secret (the same on every replica), and once the cookie
  came back the space is *claimed*: only that cookie reaches it;
- what the client carries back, for clients that keep no cookie: a requestState starts with
  its space's name (`<name>~<sealed token>`, and the name is sealed inside too,
  revisions.py), a handle id ends with it. Whoever holds such a value is that client (nothing
  else can tell two clients without cookies apart); a claimed space is never reached this way.

`Spaces` holds them: at most `limit`, each ended after `idle_seconds` unused (a client that
went away frees its handles); a space with nothing in it is dropped after its request. When
the table is full the least recently used space that holds nothing is ended; one that holds
something (open handles, a waiting call, a pending flow) is never taken: the new client gets
`Full` (503, `Retry-After`) instead.

Deliberate simplifications: a client without cookies opens each handle in a space of its own
(two `notes_open` calls carry nothing that ties them), so its limits are the server's, not
its own; the table is per process (a replica has its own spaces; what a call carries between
rounds is sealed in its requestState, so any replica serves it).
"""

import base64
import hashlib
import re
import secrets
import time
from collections import OrderedDict, namedtuple

COOKIE = "mcp-cliente"
NAME = r"c[A-Za-z0-9_-]{22}"
SECRET = re.compile(r"[A-Za-z0-9_-]{32,64}")
IN_STATE = re.compile(rf"({NAME})~")        # a requestState: <name>~<sealed token>
IN_HANDLE = re.compile(rf"h-\d+\.({NAME})")  # a handle id: h-N.<name>


class Full(Exception):
    """Every space holds something and there is no room for a new client."""


class Who(namedtuple("Who", "name secret claimed")):
    """Which client a request comes from: its space's `name`; `secret`, the cookie to set
    when the server just made one up (else None); `claimed`, whether it showed its cookie."""

    __slots__ = ()


def name_of(secret):
    digest = hashlib.sha256(b"mcp client space|" + secret.encode("ascii")).digest()
    return "c" + base64.urlsafe_b64encode(digest).decode("ascii")[:22]


def identify(headers, msg):
    """The Who of a 2026-07-28 request: its cookie, else what it carries back, else a new
    client (with a new secret to set)."""
    secret = cookie(headers)
    if secret is not None:
        return Who(name_of(secret), None, True)
    carried = carried_name(msg)
    if carried is not None:
        return Who(carried, None, False)
    secret = secrets.token_urlsafe(32)
    return Who(name_of(secret), secret, False)


def cookie(headers):
    """The value of COOKIE in the request's Cookie headers, if it is a well-formed secret."""
    for line in headers.get_all("Cookie") or ():
        for pair in line.split(";"):
            name, _, value = pair.strip().partition("=")
            if name == COOKIE and SECRET.fullmatch(value.strip('"')):
                return value.strip('"')
    return None


def carried_name(msg):
    """The space named by what the request carries back: its requestState, or a handle id
    among its tool's arguments."""
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    state = params.get("requestState")
    if isinstance(state, str) and (found := IN_STATE.match(state)):
        return found[1]
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    for value in arguments.values():
        if isinstance(value, str) and (found := IN_HANDLE.fullmatch(value)):
            return found[1]
    return None


def set_cookie(secret):
    """The Set-Cookie header value for a new client's secret."""
    return f"{COOKIE}={secret}; Path=/; HttpOnly; SameSite=Strict"


class Spaces:
    """The spaces of the clients, least recently used first. `make(name)` builds one; a space
    has `in_use()`, `end()` and `claimed`. Not thread-safe: the caller holds its lock."""

    def __init__(self, make, limit, idle_seconds, clock=time.monotonic, log=None):
        self.make, self.limit, self.idle_seconds = make, limit, idle_seconds
        self.clock, self.log = clock, log or (lambda text: None)
        self.table = OrderedDict()  # name -> space
        self.used = {}              # name -> when it was last used

    def __len__(self):
        return len(self.table)

    def get(self, who):
        """The space of `who` (made if needed); Full when there is no room for a new one. A
        claimed space asked for without its cookie gives a throwaway space instead (where
        that client's handles and states are not)."""
        space = self.table.get(who.name)
        if space is not None and space.claimed and not who.claimed:
            return self.make(f"c{secrets.token_urlsafe(16)[:22]}")
        if space is None:
            if len(self.table) >= self.limit:
                self._make_room()
            space = self.table[who.name] = self.make(who.name)
        self.table.move_to_end(who.name)
        self.used[who.name] = self.clock()
        if who.claimed:
            space.claimed = True
        return space

    def done(self, space):
        """After a request: a space that holds nothing is forgotten."""
        name = space.name
        if self.table.get(name) is space and not space.in_use():
            del self.table[name]
            self.used.pop(name, None)
            space.end()
        elif self.table.get(name) is not space and not space.in_use():
            space.end()  # a throwaway space

    def _make_room(self):
        for name, space in self.table.items():
            if not space.in_use():
                self.end(name)
                return
        raise Full(f"hay {self.limit} clientes con notas abiertas o llamadas en curso")

    def end(self, name):
        space = self.table.pop(name, None)
        self.used.pop(name, None)
        if space is not None:
            space.end()

    def reap(self, busy=lambda space: False):
        """End the spaces unused for `idle_seconds`, unless `busy(space)` (a request of theirs
        is being answered): their clients went away."""
        old = self.clock() - self.idle_seconds
        for name in [n for n, when in self.used.items() if when < old]:
            if not busy(self.table[name]):
                self.log(f"client {name[:8]}…: unused for {self.idle_seconds:g} s, its "
                         "handles closed")
                self.end(name)

    def close(self):
        for name in list(self.table):
            self.end(name)
