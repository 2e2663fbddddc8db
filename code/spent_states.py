"""Spent requestStates shared by replicas: what a fleet needs besides a shared key.

Replicas of one server (`serve --http` processes with the same `--state-key`) open each
other's 2026-07-28 requestStates: any of them may serve the retry of a call another one
started. A state a tool that changes things (request_state.one_time) hands out may be opened
once; remembering that in one process's memory would let the same token be replayed on the
other replica. `SpentStates` keeps that memory in a folder every replica shares
(`serve --spent-states DIR`): opening such a state creates a file named after its digest,
exclusively (O_CREAT | O_EXCL), so the first replica to open it wins and every replay, on
any replica, is refused (StateError: -32602). It wraps the server's request_state.States, so
it holds whatever sealer seals (the server's own, or a solution's).

Deliberate simplifications: the folder is the operator's (same machine, or a shared disk that
honours O_EXCL); a marker is kept for the states' lifetime (`--state-ttl`) and then swept,
since an expired state is refused anyway.
"""

import hashlib
import os
import time

from request_state import StateError, one_time

SWEEP_EVERY = 64  # markers written between two sweeps of the expired ones


class SpentStates:
    """request_state.States, plus: a one-time state opens once across every replica."""

    def __init__(self, states, folder, clock=time.time):
        self.states, self.folder, self.clock = states, os.path.abspath(folder), clock
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        self._written = 0

    def __getattr__(self, name):  # sealer, key, ttl, principal: the wrapped States'
        if name == "states":
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
        (StateError if any replica marked it before)."""
        payload = self.states.open(token, tool, arguments, principal)
        if one_time(tool):
            self._spend(token)
        return payload

    def _spend(self, token):
        name = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:48]
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            os.close(os.open(os.path.join(self.folder, name), flags, 0o600))
        except FileExistsError:
            raise StateError("already used (spent on this or another replica)") from None
        except OSError as exc:  # cannot tell whether it was spent: refuse (fail closed)
            raise StateError(f"cannot record the spent state: {exc}") from None
        self._written += 1
        if self._written % SWEEP_EVERY == 0:
            self.sweep()

    def sweep(self):
        """Forget the markers older than a state's lifetime (those states expired)."""
        old = self.clock() - self.states.ttl
        with os.scandir(self.folder) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False) and \
                            entry.stat(follow_symlinks=False).st_mtime < old:
                        os.unlink(entry.path)
                except OSError:
                    pass
