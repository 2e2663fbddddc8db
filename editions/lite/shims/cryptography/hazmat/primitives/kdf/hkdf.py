"""HKDF (RFC 5869) from the standard library, as the MCP SDK calls it (see cryptography/)."""

import hashlib
import hmac


class HKDF:
    def __init__(self, algorithm, length: int, salt: bytes | None, info: bytes | None):
        self._hash = getattr(hashlib, algorithm.name)
        self._length, self._info = length, info or b""
        self._salt = salt or bytes(algorithm.digest_size)

    def derive(self, key_material: bytes) -> bytes:
        prk = hmac.new(self._salt, key_material, self._hash).digest()
        block, out, counter = b"", b"", 1
        while len(out) < self._length:
            block = hmac.new(prk, block + self._info + bytes([counter]), self._hash).digest()
            out += block
            counter += 1
        return out[:self._length]
