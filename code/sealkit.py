"""The parts of notebook 6's challenge (the reto): what a requestState sealer is built from.

The challenge gives the cryptography and fixes the token's format; the learner writes what the
token is bound to, in what order `open` checks it, and the memory of used tokens. The format
(the same one the grader reads, with the key it gave the server):

    cipher_key, tag_key = keys_from(binding.key)
    nonce     = secrets.token_bytes(NONCE)
    envelope  = {"caduca": binding.expires_at, "datos": payload}      (JSON, then encrypted)
    encrypted = stream_xor(cipher_key, nonce, json.dumps(envelope).encode())
    bound     = [binding.tool, binding.arguments, binding.principal]
    tag       = tag_of(tag_key, bound, nonce, encrypted)
    token     = encode(nonce + encrypted + tag)

- `keys_from(secret)`: two keys from the server's secret, one to encrypt and one to tag
  (HMAC-SHA256 with a label each), so that neither use weakens the other.
- `stream_xor(key, nonce, data)`: XOR with a keystream HMAC-SHA256(key, nonce ‖ counter); the
  same call decrypts. The nonce must be new for every token: two tokens with one nonce and one
  key give away the XOR of their contents.
- `tag_of(key, bound, nonce, encrypted)`: HMAC-SHA256 over `bound` (a JSON list: what the
  token is bound to but does not carry), the nonce and the encrypted content.
- `encode(data)` / `decode(text)`: base64url without padding; `decode` refuses every other
  spelling of the same bytes (padding, spaces, the other alphabet, stray bits), so a token is
  valid only exactly as it was given.

Together `stream_xor` and `tag_of` do by hand what an AEAD does in one call (encrypt, and
authenticate the content plus associated data, here `bound`):
`AESGCM(key).encrypt(nonce, content, bound)` in the `cryptography` package, which the official
MCP SDK uses for its requestState.

Deliberate simplifications: a teaching stand-in, never a cipher for production (use an AEAD
such as AES-GCM): it is slow in pure Python, nobody has reviewed it, and it only shows the
shape of encrypt-then-MAC. No key rotation (the SDK writes a key id in its tokens).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from typing import Any

NONCE, TAG = 16, 32  # bytes: the nonce at the start of a token, the tag at its end
BLOCK = hashlib.sha256().digest_size


def keys_from(secret: bytes) -> tuple[bytes, bytes]:
    """(the key that encrypts, the key that tags), both taken from the server's `secret`."""
    return (hmac.new(secret, b"requestState cifrar", hashlib.sha256).digest(),
            hmac.new(secret, b"requestState firmar", hashlib.sha256).digest())


def stream_xor(key: bytes, nonce: bytes, data: bytes) -> bytes:
    """`data` XOR the keystream of (`key`, `nonce`): encrypts, and decrypts what it encrypted."""
    stream = b"".join(hmac.new(key, nonce + counter.to_bytes(8, "big"), hashlib.sha256).digest()
                      for counter in range(-(-len(data) // BLOCK)))
    return bytes(a ^ b for a, b in zip(data, stream[:len(data)], strict=True))


def tag_of(key: bytes, bound: list[Any], nonce: bytes, encrypted: bytes) -> bytes:
    """The HMAC-SHA256 of what the token is bound to (`bound`, a JSON list), its nonce and its
    encrypted content."""
    head = json.dumps(bound, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return hmac.new(key, head + nonce + encrypted, hashlib.sha256).digest()


def encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode(text: str) -> bytes:

    """The bytes of `text`, only if `text` is exactly how `encode` writes them (ValueError)."""
    if not isinstance(text, str) or not text.isascii():
        raise ValueError("a token is ASCII text")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if encode(data) != text:
        raise ValueError("not in its canonical encoding")
    return data
