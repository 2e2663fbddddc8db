"""Sealed `requestState` for the 2026-07-28 revision: the server's memory, kept by the client.

At 2026-07-28 a server cannot pause a call to ask the user; it answers `input_required` and
the client retries the same request with the answers and the `requestState` it was given. The
state comes back through the client, so it is attacker-controlled input: whatever fails
verification is refused as a whole (-32602) and changes nothing.

Who seals is pluggable (the challenge of notebook 6, `@extension.request_state`). A *sealer* is
an object with two methods:

    seal(payload, binding) -> token      a string the client will echo back
    open(token, binding) -> payload      the same payload, or raise (anything) to refuse

`payload` is a JSON dict (the session's answers, question digests and memos). `Binding` is what
the server knows about the call, identical at `seal` and `open` time except the clock: its key
(`key`, secret, and `key_id`), the tool, a digest of its arguments, the principal it acts for,
`now`, the lifetime `ttl`, and `one_time` (the tool changes things, so each of its states may be
opened at most once). `States` is the server's side: it builds the binding, asks the sealer, and
turns whatever goes wrong (an exception, a token that is not text) into StateError.

`Sealer` is the server's own, used when no solution brings one: HMAC-SHA256 over the payload,
bound to the tool, the arguments' digest, the principal and an expiry, read back only in its
exact encoding (a fleet's replicas share a key, and may serve different users: a state sealed
for one user never opens for another). Deliberately no more than that (notebook 6 shows each
gap live): it is signed, not encrypted (anyone can read the answers and the notes found), and
it does not stop replays (a state opens again until it expires; `serve --spent-states` keeps
the one-time ones spent across a fleet, spent_states.py).
`ServerKey` is random at every start (a restart invalidates every outstanding state, which is
safe) unless a fleet of workers shares one (`serve --state-key`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from typing import Any


class StateError(ValueError):
    """A requestState that is forged, tampered with, expired, used up or bound to another call."""


def digest(value):
    """A short stable digest of a JSON value; ValueError/TypeError for what is not JSON."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ServerKey:
    """The server's secret for requestState. `id` is public (a sealer may write it in the
    token, to say which key sealed it); the secret never leaves the server (nor its repr)."""

    def __init__(self, secret):
        self.secret = secret

    def __repr__(self):
        return f"ServerKey(id={self.id!r})"

    @property
    def id(self):
        return hashlib.sha256(b"requestState key id|" + self.secret).hexdigest()[:8]

    @classmethod
    def new(cls):
        return cls(secrets.token_bytes(32))

    @classmethod
    def from_hex(cls, text):
        """A fleet's shared key: at least 32 bytes, written in hex."""
        secret = bytes.fromhex(text)
        if len(secret) < 32:
            raise ValueError("a requestState key needs at least 32 bytes (64 hex digits)")
        return cls(secret)


class Binding:
    """What a state is bound to: the same at `seal` and at `open`, except the clock.

    `key`: the server's secret key (never in the token, never shown, not even in the repr);
    `key_id`: which key this server has (public); `tool`: the tool called; `arguments`:
    digest(arguments) of the call; `principal`: the user of the session that seals or opens
    the state (each session of a shared server has its own); `now`: the
    server's clock, seconds since the epoch; `ttl`: how long a state may live, seconds;
    `one_time`: the tool changes things, so each of its states may be opened only once."""

    def __init__(self, key: bytes, key_id: str, tool: str, arguments: str, principal: str,
                 now: float, ttl: float, one_time: bool) -> None:
        self.key, self.key_id, self.tool, self.arguments = key, key_id, tool, arguments
        self.principal, self.now, self.ttl, self.one_time = principal, now, ttl, one_time

    def __repr__(self):
        return (f"Binding(key_id={self.key_id!r}, tool={self.tool!r}, "
                f"arguments={self.arguments!r}, principal={self.principal!r}, now={self.now!r}, "
                f"ttl={self.ttl!r}, one_time={self.one_time!r})")

    @property
    def expires_at(self) -> float:
        """When a state sealed now stops being valid."""
        return self.now + self.ttl


def one_time(tool):
    """A tool whose states may be opened once: it changes things (`destructiveHint`) and doing
    it twice is not the same as once (no `idempotentHint`)."""
    hints = tool.annotations
    return hints.get("destructiveHint") is True and hints.get("idempotentHint") is not True


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text):
    """The bytes of `text`, only if `text` is exactly how `_b64` writes them (no padding,
    spaces, other alphabet or stray bits): one state, one spelling."""
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not in its canonical encoding")
    return data


class Sealer:
    """The server's own sealer: signed with HMAC-SHA256 and bound to the tool, the arguments'
    digest, the principal and an expiry (see the module docstring for what it deliberately
    does not do)."""

    def seal(self, payload: dict[str, Any], binding: Binding) -> str:
        body = {"tool": binding.tool, "args": binding.arguments, "sub": binding.principal,
                "exp": binding.expires_at, "data": payload}  # exact: a state lives its whole ttl
        raw = json.dumps(body, separators=(",", ":")).encode()
        tag = hmac.new(binding.key, raw, hashlib.sha256).digest()
        return f"v1.{_b64(raw)}.{_b64(tag)}"

    def open(self, token: str, binding: Binding) -> dict[str, Any]:
        """The payload sealed for exactly this tool, these arguments and this principal, or
        StateError."""
        try:
            version, raw_b64, tag_b64 = token.split(".")
            raw, tag = _unb64(raw_b64), _unb64(tag_b64)
        except (AttributeError, ValueError):
            raise StateError("malformed") from None
        expected = hmac.new(binding.key, raw, hashlib.sha256).digest()
        if version != "v1" or not hmac.compare_digest(tag, expected):
            raise StateError("seal")
        body = json.loads(raw)
        if body["exp"] < binding.now:
            raise StateError("expired")
        if body["tool"] != binding.tool or body["args"] != binding.arguments:
            raise StateError("bound to another request")
        if body.get("sub") != binding.principal:
            raise StateError("bound to another user")
        return body["data"]


class States:
    """The server's side of requestState: one binding per call, the sealer asked, and every
    failure a StateError (the session refuses with -32602, or ends the call with a tool error).

    The principal of a binding is the user of the session that seals or opens the state (in
    a shared server, `serve --second-user`, each session has its own)."""

    def __init__(self, sealer, key, ttl, clock=time.time):
        self.sealer, self.key, self.ttl, self.clock = sealer, key, ttl, clock

    def binding(self, tool, arguments, principal):
        return Binding(key=self.key.secret, key_id=self.key.id, tool=tool.name,
                       arguments=digest(arguments), principal=principal,
                       now=self.clock(), ttl=self.ttl, one_time=one_time(tool))

    def seal(self, tool, arguments, payload, principal):
        """The token for `payload` (a JSON dict; the sealer gets its own copy), sealed for
        `principal`."""
        try:
            token = self.sealer.seal(json.loads(json.dumps(payload)),
                                     self.binding(tool, arguments, principal))
        except (Exception, SystemExit) as exc:
            raise StateError(f"the sealer failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(token, str) or not token:
            raise StateError(f"the sealer gave {type(token).__name__}, not a text token")
        return token

    def open(self, token, tool, arguments, principal):
        """What was sealed in `token` for this call of `principal`; StateError for anything
        else."""
        if not isinstance(token, str):
            raise StateError("not a text token")
        try:
            return self.sealer.open(token, self.binding(tool, arguments, principal))
        except StateError:
            raise
        except (Exception, SystemExit) as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from None
