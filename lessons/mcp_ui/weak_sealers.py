"""Deliberately broken requestState sealers: lesson material for notebook 6, never for a server.

Each one is a `seal(payload, binding)` / `open(token, binding)` pair, the shape of the
challenge's `@extension.request_state` (code/core/request_state.py describes `binding`), that round
trips a legitimate flow and fails at exactly one thing an attacker can exploit. Notebook 6
plugs each into the lab's server (`lab.connect(..., sealer=...)`) and runs the attack that
breaks it on the 2026-07-28 wire (attacks.py), next to the server's own `request_state.Sealer`:

- `EncodedOnly`: base64 of the JSON, no key. Anyone reads it (the notes the server found, with
  their paths) and anyone writes a new one.
- `UnkeyedHash`: the JSON plus its SHA-256. A hash without a key proves nothing: whoever changes
  the JSON computes the new hash. A key written in the file (a constant) is the same mistake,
  only one step longer: the attacker reads the code (or the course's repository) too.
- `KeyedButUnbound`: signed with the server's key and with an expiry, but not bound to the
  call: a state sealed for one tool and its arguments opens just as well in another call.
- `ForeverReusable`: signed and bound to the tool and the arguments, but with no expiry and no
  memory of what was used: a state opens again tomorrow, and the round that asked «¿borro?»
  can be sent again with a «sí» after the user said «no».
- `SpendsFirst`: signed, bound and of one use, but it notes a token as used before checking its
  tag: a copy with one character changed, sent first, is refused and spends the real one, so
  the user's own answer is refused too (the order of the checks, asked in the «06-ataques»
  quiz and in the challenge).

Deliberate simplifications: every one of them is readable (none encrypts), and none is bound to
the principal: the lesson shows one hole at a time. They are not the challenge's answer: a
sealer that fixes one hole still has the others (and, like the server's own, lets the user's
answers and the notes be read and a used round be replayed).
"""

import base64
import hashlib
import hmac
import json
import secrets


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _json(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _signed(raw: bytes, key: bytes) -> str:
    """`body.tag`: the content in base64 and its HMAC-SHA256 with the server's key."""
    return f"{_b64(raw)}.{_b64(hmac.new(key, raw, hashlib.sha256).digest())}"


def _verified(token: str, key: bytes):
    """The JSON inside a `_signed` token whose tag matches the key (ValueError if not)."""
    body, tag = token.split(".")
    raw = _unb64(body)
    if not hmac.compare_digest(_unb64(tag), hmac.new(key, raw, hashlib.sha256).digest()):
        raise ValueError("bad tag")
    return json.loads(raw)


class EncodedOnly:
    """BROKEN: no key at all. base64 hides nothing and proves nothing."""

    def seal(self, payload, binding):
        return _b64(_json(payload))

    def open(self, token, binding):
        return json.loads(_unb64(token))


class UnkeyedHash:
    """BROKEN: a SHA-256 of the content is not a signature; anyone can compute it again."""

    def seal(self, payload, binding):
        raw = _json(payload)
        return f"{_b64(raw)}.{hashlib.sha256(raw).hexdigest()}"

    def open(self, token, binding):
        body, check = token.split(".")
        raw = _unb64(body)
        if not hmac.compare_digest(hashlib.sha256(raw).hexdigest(), check):
            raise ValueError("the hash does not match")
        return json.loads(raw)


class KeyedButUnbound:
    """BROKEN: the server's key and an expiry, but nothing about the call it was sealed for."""

    def seal(self, payload, binding):
        return _signed(_json({"exp": binding.expires_at, "data": payload}), binding.key)

    def open(self, token, binding):
        sealed = _verified(token, binding.key)
        if sealed["exp"] < binding.now:
            raise ValueError("expired")
        return sealed["data"]  # for whichever tool and arguments came with it


class ForeverReusable:
    """BROKEN: keyed and bound to the call, but it never expires and never forgets."""

    def seal(self, payload, binding):
        sealed = {"tool": binding.tool, "args": binding.arguments, "data": payload}
        return _signed(_json(sealed), binding.key)

    def open(self, token, binding):
        sealed = _verified(token, binding.key)
        if (sealed["tool"], sealed["args"]) != (binding.tool, binding.arguments):
            raise ValueError("sealed for another call")
        return sealed["data"]  # no expiry checked, no note of having been opened


class SpendsFirst:
    """BROKEN: one use per token, but noted before the tag is checked: a forged try spends it."""

    def __init__(self):
        self.used = set()

    def seal(self, payload, binding):
        sealed = {"tool": binding.tool, "args": binding.arguments,
                  "nonce": secrets.token_hex(16), "data": payload}
        return _signed(_json(sealed), binding.key)

    def open(self, token, binding):
        nonce = json.loads(_unb64(token.split(".")[0])).get("nonce")  # read, not yet checked
        if nonce in self.used:
            raise ValueError("already used")
        self.used.add(nonce)  # noted before the tag below is checked
        sealed = _verified(token, binding.key)
        if (sealed["tool"], sealed["args"]) != (binding.tool, binding.arguments):
            raise ValueError("sealed for another call")
        return sealed["data"]
