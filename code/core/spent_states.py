"""Spent requestStates shared by replicas: what a fleet needs besides a shared key.

Replicas of one server (`serve --http` processes with the same `--state-key`) open each
other's 2026-07-28 requestStates: any of them may serve the retry of a call another one
started. A state a tool that changes things (request_state.one_time) hands out may be opened
once; remembering that in one process's memory would let the same token be replayed on the
other replica. `SpentStates` keeps that memory in a store every replica shares
(`serve --spent-states WHERE`) and wraps the server's request_state.States, so it holds
whatever sealer seals (the server's own, or a solution's). Opening such a state records a
marker named after the token's digest, in one atomic step that only one replica can win:

- a folder (`--spent-states DIR`; one machine, or a shared disk that honours O_EXCL): a file
  created with O_CREAT | O_EXCL;
- an SQLite file (`--spent-states PATH.sqlite`, or `sqlite:PATH`; several processes of one
  machine: the file must be on a local disk): an INSERT into a table whose key is the
  digest;
- Redis (`--spent-states redis://HOST:PORT/DB`; several machines): `SET key NX PX ttl`. The
  `redis` client package is loaded only then (code/ imports nothing else beyond the standard
  library).

Every replay, on any replica, is then refused (StateError: -32602). A store that cannot be
reached, or cannot say whether the marker was new, refuses the state too (fail closed), and
the log says why in one line; `open_store` checks the store once at start, so a replica with
an unreachable store does not start.

Deliberate simplifications: the store is the operator's (nothing here creates a Redis or
protects its network); a marker is kept for the states' lifetime (`--state-ttl`) and then
forgotten (swept in a folder or SQLite, expired by Redis), since an expired state is refused
anyway.
"""

import hashlib
import os
import sqlite3
import threading
import time

from core.request_state import StateError, one_time

SWEEP_EVERY = 64     # markers written between two sweeps of the expired ones
TIMEOUT = 5.0        # seconds a store may take to answer before the state is refused
REDIS_PREFIX = "notas-mcp:spent:"
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
SQLITE_MAGIC = b"SQLite format 3\x00"
USAGE = ("name a folder, an SQLite file (PATH.sqlite or sqlite:PATH) or a Redis URL "
         "(redis://HOST:PORT/DB)")


class StoreUnavailable(Exception):
    """The store cannot be used (unreachable, not a store, refused the write): one line."""


def open_store(spec, clock=time.time):
    """The store `spec` names (see the module docstring), checked once: StoreUnavailable with
    a one-line reason when it is not one, or cannot be reached."""
    if not isinstance(spec, str) or not spec.strip():
        raise StoreUnavailable(f"--spent-states needs a value: {USAGE}")
    if spec.startswith(("redis://", "rediss://", "unix://")):
        store = RedisStore(spec)
    elif spec.startswith("sqlite:"):
        store = SqliteStore(spec[len("sqlite:"):], clock)
    elif spec.lower().endswith(SQLITE_SUFFIXES) or _is_sqlite(spec):
        store = SqliteStore(spec, clock)
    elif "://" in spec:
        raise StoreUnavailable(f"--spent-states {spec}: unknown kind of URL; {USAGE}")
    else:
        store = FolderStore(spec, clock)
    store.check()
    return store


def _is_sqlite(path):
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


class FolderStore:
    """Markers as files in a folder, created exclusively."""

    def __init__(self, folder, clock=time.time):
        self.folder, self.clock = os.path.abspath(folder), clock
        self.where = f"--spent-states {folder}"
        self._written = 0

    def check(self):
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
        except FileExistsError:
            raise StoreUnavailable(f"{self.where}: not a folder; {USAGE}") from None
        except OSError as exc:
            raise StoreUnavailable(f"{self.where}: cannot create the folder: "
                                   f"{exc.strerror}") from None
        if not os.path.isdir(self.folder) or not os.access(self.folder, os.W_OK | os.X_OK):
            raise StoreUnavailable(f"{self.where}: not a folder this process can write in")

    def spend(self, name, ttl):
        """True for the first replica to spend `name`; False when it was spent before."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            os.close(os.open(os.path.join(self.folder, name), flags, 0o600))
        except FileExistsError:
            return False
        except OSError as exc:  # cannot tell whether it was spent
            raise StoreUnavailable(f"{self.where}: {exc.strerror}") from None
        self._written += 1
        if self._written % SWEEP_EVERY == 0:
            self.sweep(ttl)
        return True

    def sweep(self, ttl):
        """Forget the markers older than a state's lifetime (those states expired)."""
        old = self.clock() - ttl
        with os.scandir(self.folder) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False) and \
                            entry.stat(follow_symlinks=False).st_mtime < old:
                        os.unlink(entry.path)
                except OSError:
                    pass


class SqliteStore:
    """Markers as rows of one SQLite table (several processes of one machine)."""

    def __init__(self, path, clock=time.time):
        self.path, self.clock = os.path.abspath(path), clock
        self.where = f"--spent-states {path}"
        self._lock = threading.Lock()
        self._db = None
        self._written = 0

    def check(self):
        if os.path.isdir(self.path):
            raise StoreUnavailable(f"{self.where}: a folder, not an SQLite file")
        # Several processes may open a new file at once: switching it to WAL takes a lock that
        # SQLite does not always wait for (its busy timeout), so a busy answer is retried until
        # TIMEOUT; any other error is the file's.
        deadline = time.monotonic() + TIMEOUT
        while True:
            db = None
            try:
                db = sqlite3.connect(self.path, timeout=TIMEOUT, isolation_level=None,
                                     check_same_thread=False)
                if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    db.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
                db.execute("CREATE TABLE IF NOT EXISTS spent "
                           "(name TEXT PRIMARY KEY, expires REAL NOT NULL)")
                break
            except sqlite3.Error as exc:
                if db is not None:
                    db.close()
                busy = isinstance(exc, sqlite3.OperationalError) and \
                    ("locked" in str(exc) or "busy" in str(exc))
                if not busy or time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        f"{self.where}: not a usable SQLite file ({exc})") from None
                time.sleep(0.02)
        self._db = db

    def spend(self, name, ttl):
        with self._lock:
            try:
                self._db.execute("INSERT INTO spent (name, expires) VALUES (?, ?)",
                                 (name, self.clock() + ttl))
            except sqlite3.IntegrityError:
                return False
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"{self.where}: {exc}") from None
            self._written += 1
            if self._written % SWEEP_EVERY == 0:
                self.sweep()
            return True

    def sweep(self, ttl=None):
        try:
            self._db.execute("DELETE FROM spent WHERE expires < ?", (self.clock(),))
        except sqlite3.Error:
            pass  # swept next time


class RedisStore:
    """Markers as Redis keys that expire with their states (several machines)."""

    def __init__(self, url):
        self.url = url
        self.where = "--spent-states " + _without_password(url)
        self._client = None

    def check(self):
        try:
            import redis  # optional: only a fleet that names Redis needs the package
        except ImportError:
            raise StoreUnavailable(f"{self.where}: the redis package is not installed "
                                   "(pip install redis)") from None
        self._errors = redis.RedisError
        try:
            self._client = redis.Redis.from_url(self.url, socket_timeout=TIMEOUT,
                                                socket_connect_timeout=TIMEOUT)
            self._client.ping()
        except (redis.RedisError, ValueError) as exc:
            raise StoreUnavailable(f"{self.where}: {_one_line(exc)}") from None

    def spend(self, name, ttl):
        try:
            return bool(self._client.set(REDIS_PREFIX + name, b"1", nx=True,
                                         px=max(1, int(ttl * 1000) + 1)))
        except self._errors as exc:
            raise StoreUnavailable(f"{self.where}: {_one_line(exc)}") from None

    def sweep(self, ttl=None):
        """Nothing to do: Redis expires its markers."""


def _without_password(url):
    head, at, tail = url.rpartition("@")
    return url if not at else head.split("//", 1)[0] + "//…@" + tail


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


class SpentStates:
    """request_state.States, plus: a one-time state opens once across every replica."""

    def __init__(self, states, store, log=None):
        self.states, self.store = states, store
        self.log = log or (lambda text: None)

    def __getattr__(self, name):  # sealer, key, ttl, principal: the wrapped States'
        if name in ("states", "store"):
            raise AttributeError(name)
        return getattr(self.states, name)

    def __setattr__(self, name, value):
        if name == "sealer":  # a solution's sealer, installed after the wrap
            self.states.sealer = value
        else:
            super().__setattr__(name, value)

    def seal(self, tool, arguments, payload, principal):
        return self.states.seal(tool, arguments, payload, principal)

    def open(self, token, tool, arguments, principal):
        """The sealed payload, once the seal is good; a one-time state is then marked spent
        (StateError if any replica marked it before, or the store cannot say)."""
        payload = self.states.open(token, tool, arguments, principal)
        if one_time(tool):
            self._spend(token)
        return payload

    def _spend(self, token):
        name = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:48]
        try:
            first = self.store.spend(name, self.states.ttl)
        except StoreUnavailable as exc:  # cannot tell whether it was spent: refuse
            raise StateError(f"cannot record the spent state: {exc}") from None
        if not first:
            raise StateError("already used (spent on this or another replica)")

    def sweep(self):
        self.store.sweep(self.states.ttl)
