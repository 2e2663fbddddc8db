"""Reto: mi sello del requestState, en hexadecimal y con blake2b con clave.

Token = hex(nonce | caducidad | contenido cifrado | etiqueta). La etiqueta (blake2b con la
clave del servidor) cubre también la herramienta, la huella de los argumentos y el usuario,
que no viajan en el token. El contenido se cifra con un flujo blake2b(clave, nonce, bloque).
"""
import hashlib
import hmac
import json
import re
import secrets
import struct

from extension import Extension

extension = Extension()

HEX = re.compile(r"(?:[0-9a-f]{2})+")


def tag_of(binding, data):
    context = json.dumps([binding.tool, binding.arguments, binding.principal]).encode()
    mac = hashlib.blake2b(key=binding.key, person=b"reto-etiqueta", digest_size=32)
    mac.update(struct.pack(">I", len(context)) + context + data)
    return mac.digest()


def stream(binding, nonce, size):
    blocks = []
    for number in range(0, size, 64):
        block = hashlib.blake2b(nonce + struct.pack(">Q", number), key=binding.key,
                                person=b"reto-cifrado")
        blocks.append(block.digest())
    return b"".join(blocks)[:size]


def xor(data, flujo):
    return bytes(a ^ b for a, b in zip(data, flujo, strict=True))


@extension.request_state
class SelloHex:
    def __init__(self):
        self.gastados = {}

    def seal(self, payload, binding):
        nonce = secrets.token_bytes(12)
        plain = json.dumps(payload).encode()
        secret = xor(plain, stream(binding, nonce, len(plain)))
        data = nonce + struct.pack(">Q", int(binding.expires_at)) + secret
        return (data + tag_of(binding, data)).hex()

    def open(self, token, binding):
        if not HEX.fullmatch(token):
            raise ValueError("no es un token mío")
        raw = bytes.fromhex(token)
        if len(raw) < 12 + 8 + 32:
            raise ValueError("corto")
        data, tag = raw[:-32], raw[-32:]
        if not hmac.compare_digest(tag, tag_of(binding, data)):
            raise ValueError("etiqueta")
        nonce, (caduca,), secret = data[:12], struct.unpack(">Q", data[12:20]), data[20:]
        if caduca < binding.now:
            raise ValueError("caducado")
        if binding.one_time:
            for viejo in [n for n, hasta in self.gastados.items() if hasta < binding.now]:
                del self.gastados[viejo]
            if nonce in self.gastados:
                raise ValueError("repetido")
            self.gastados[nonce] = caduca
        plain = xor(secret, stream(binding, nonce, len(secret)))
        return json.loads(plain)
