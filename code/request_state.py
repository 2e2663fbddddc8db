"""Sealed `requestState` for the 2026-07-28 revision: the server's memory, kept by the client.

At 2026-07-28 a server cannot pause a call to ask the user; it answers `input_required` and
the client retries the same request with the answers and the `requestState` it was given. The
state comes back through the client, so it is attacker-controlled input: it is sealed with an
HMAC-SHA256 tag, bound to the tool name, a digest of its arguments and an expiry. Anything that
fails verification is refused as a whole (-32602) and changes nothing.

Deliberate simplifications: the state is signed, not encrypted (it only holds what the client
already saw: its own answers and roots), and the key lives in this process, so a restart
invalidates every outstanding state, which is safe.
"""

import base64
import hashlib
import hmac
import json
import secrets
import time


class StateError(ValueError):
    """A requestState that is forged, tampered with, expired or bound to another call."""


def digest(value):
    """A short stable digest of a JSON value; ValueError/TypeError for what is not JSON."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Sealer:
    def __init__(self, key=None, ttl_seconds=600, clock=time.time):
        self._key = key or secrets.token_bytes(32)
        self.ttl = ttl_seconds
        self.clock = clock

    def seal(self, tool, arguments, data):
        body = {"tool": tool, "args": digest(arguments),
                "exp": int(self.clock() + self.ttl), "data": data}
        payload = json.dumps(body, separators=(",", ":")).encode()
        tag = hmac.new(self._key, payload, hashlib.sha256).digest()
        return f"v1.{_b64(payload)}.{_b64(tag)}"

    def open(self, token, tool, arguments):
        """The data sealed for exactly this tool and these arguments, or StateError."""
        try:
            version, payload_b64, tag_b64 = token.split(".")
            payload, tag = _unb64(payload_b64), _unb64(tag_b64)
        except (AttributeError, ValueError):
            raise StateError("malformed") from None
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        if version != "v1" or not hmac.compare_digest(tag, expected):
            raise StateError("seal")
        body = json.loads(payload)
        if body["exp"] < self.clock():
            raise StateError("expired")
        if body["tool"] != tool or body["args"] != digest(arguments):
            raise StateError("bound to another request")
        return body["data"]
