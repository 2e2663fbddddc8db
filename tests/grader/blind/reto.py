"""Reto, escrito a ciegas desde el enunciado: sella y verifica el requestState de 2026-07-28.

Mi sello: cifrar y después firmar (encrypt-then-MAC), todo con la biblioteca estándar.

    token = base64url( nonce[16] | caduca[8] | cifrado[...] | etiqueta[32] )   (sin '=')

- Dos claves derivadas de binding.key con HMAC (una para cifrar, otra para firmar).
- Cifrado: flujo pseudoaleatorio HMAC(k_cifrar, nonce | contador) combinado con XOR.
- Etiqueta: HMAC-SHA256(k_firmar) sobre todo el token y sobre aquello a lo que está atado
  (herramienta, huella de argumentos, usuario, one_time), aunque eso no viaje en el token.
- Uso único: los nonces ya abiertos de herramientas one_time se apuntan hasta que caducan.
"""
import base64
import hashlib
import hmac
import json
import secrets
import struct
import threading

from extension import Extension

extension = Extension()

NONCE = 16
TAG = 32
EXP = 8
VERSION = b"mi-sello/1"


def _derive(key, label):
    return hmac.new(key, VERSION + b"|" + label, hashlib.sha256).digest()


def _keystream(key, nonce, length):
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hmac.new(key, nonce + struct.pack(">I", counter), hashlib.sha256).digest()
        counter += 1
    return bytes(out[:length])


def _xor(data, stream):
    return bytes(a ^ b for a, b in zip(data, stream, strict=False))


def _context(binding):
    """Lo que ata el token y no viaja en él, escrito sin ambigüedad (JSON de una lista)."""
    return json.dumps([binding.tool, binding.arguments, binding.principal,
                       bool(binding.one_time)], separators=(",", ":")).encode()


def _encode(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _decode(text):
    if not isinstance(text, str) or not text.isascii():
        raise ValueError("token no válido")
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _encode(raw) != text:  # una sola forma de escribir cada token
        raise ValueError("token no canónico")
    return raw


@extension.request_state
class MiSello:
    def __init__(self):
        self._usados = {}  # nonce -> caducidad (ms), solo de herramientas one_time
        self._lock = threading.Lock()

    def _tag(self, binding, body):
        k_mac = _derive(binding.key, b"firmar")
        return hmac.new(k_mac, VERSION + b"|" + _context(binding) + b"|" + body,
                        hashlib.sha256).digest()

    def seal(self, payload, binding):
        nonce = secrets.token_bytes(NONCE)
        exp = int(binding.expires_at * 1000)
        plain = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        cipher = _xor(plain, _keystream(_derive(binding.key, b"cifrar"), nonce, len(plain)))
        body = nonce + struct.pack(">Q", exp) + cipher
        return _encode(body + self._tag(binding, body))

    def open(self, token, binding):
        raw = _decode(token)
        if len(raw) < NONCE + EXP + TAG:
            raise ValueError("token demasiado corto")
        body, tag = raw[:-TAG], raw[-TAG:]
        if not hmac.compare_digest(tag, self._tag(binding, body)):
            raise ValueError("firma no válida")
        nonce = body[:NONCE]
        (exp,) = struct.unpack(">Q", body[NONCE:NONCE + EXP])
        now = int(binding.now * 1000)
        if exp < now:
            raise ValueError("caducado")
        if binding.one_time:
            with self._lock:  # comprobar y apuntar en un solo paso, y solo si todo verificó
                for viejo, cuando in list(self._usados.items()):
                    if cuando < now:
                        del self._usados[viejo]
                if nonce in self._usados:
                    raise ValueError("ya usado")
                self._usados[nonce] = exp
        cipher = body[NONCE + EXP:]
        plain = _xor(cipher, _keystream(_derive(binding.key, b"cifrar"), nonce, len(cipher)))
        return json.loads(plain.decode())
