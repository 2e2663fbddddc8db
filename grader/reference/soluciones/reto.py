"""Reto: sellar y verificar el requestState de 2026-07-28 (solución de referencia).

Cifrar y luego autenticar (encrypt-then-MAC) solo con la biblioteca estándar:

- dos claves derivadas de la del servidor (binding.key) con HMAC: una cifra, otra firma;
- cifrado: XOR con un flujo HMAC-SHA256(clave de cifrar, nonce || contador), un nonce
  aleatorio por token (el mismo contenido nunca da el mismo token);
- etiqueta: HMAC-SHA256(clave de firmar, cabecera || nonce || cifrado), donde la cabecera ata
  el token a la llamada (herramienta, huella de los argumentos), al usuario y a su
  caducidad, que viaja en claro delante;
- se comprueba todo antes de descifrar, y el token solo vale escrito exactamente como se dio;
- un solo uso: los nonces de las herramientas con binding.one_time, apuntados al abrir (después
  de comprobar el sello), y olvidados cuando caducan.
"""

import hmac
import json
import re
import secrets
from base64 import urlsafe_b64decode, urlsafe_b64encode
from hashlib import sha256

from extension import Extension

extension = Extension()

VERSION = "reto-v1"
NONCE, TAG = 16, 32


def derive(key, purpose):
    return hmac.new(key, purpose, sha256).digest()


def keystream(key, nonce, length):
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hmac.new(key, nonce + counter.to_bytes(8, "big"), sha256).digest()
        counter += 1
    return bytes(out[:length])


def xor(data, stream):
    return bytes(a ^ b for a, b in zip(data, stream, strict=True))


def header(binding, expires):
    """Lo que el token no lleva pero la etiqueta sí cubre: la llamada, el usuario, la caducidad
    (la clave del servidor ya está en las claves derivadas)."""
    fields = [VERSION, binding.tool, binding.arguments, binding.principal, expires]
    return json.dumps(fields, separators=(",", ":")).encode()


def b64(data):
    return urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    data = urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64(data) != text:  # relleno, espacios, otro alfabeto o bits sobrantes: otro token
        raise ValueError("el token no está escrito como se dio")
    return data


@extension.request_state
class Sello:
    def __init__(self):
        self.usados = {}  # nonce -> hasta cuándo hay que recordarlo

    def seal(self, payload, binding):
        expires = int(binding.expires_at)
        nonce = secrets.token_bytes(NONCE)
        plain = json.dumps(payload, separators=(",", ":")).encode()
        cipher = xor(plain, keystream(derive(binding.key, b"cifrar"), nonce, len(plain)))
        tag = hmac.new(derive(binding.key, b"firmar"), header(binding, expires) + nonce + cipher,
                       sha256).digest()
        return f"{expires}.{b64(nonce + cipher + tag)}"

    def open(self, token, binding):
        expires_text, _, body = token.partition(".")
        if not re.fullmatch(r"[1-9][0-9]*", expires_text):
            raise ValueError("caducidad ilegible")
        expires = int(expires_text)
        data = unb64(body)
        if len(data) < NONCE + TAG:
            raise ValueError("demasiado corto")
        nonce, cipher, tag = data[:NONCE], data[NONCE:-TAG], data[-TAG:]
        expected = hmac.new(derive(binding.key, b"firmar"),
                            header(binding, expires) + nonce + cipher, sha256).digest()
        if not hmac.compare_digest(tag, expected):
            raise ValueError("sello roto, de otra llamada, de otro usuario o de otra clave")
        if binding.now > expires:
            raise ValueError("caducado")
        if binding.one_time:
            self.usados = {n: hasta for n, hasta in self.usados.items() if hasta >= binding.now}
            if nonce in self.usados:
                raise ValueError("ya usado")
            self.usados[nonce] = expires
        plain = xor(cipher, keystream(derive(binding.key, b"cifrar"), nonce, len(cipher)))
        return json.loads(plain)
