"""Reto: mi sello del requestState, con tuplas con nombre para las partes del token.

El formato del enunciado: Partes(nonce, cifrado, etiqueta) se leen y se escriben en un solo
sitio; la etiqueta se calcula en un solo sitio (para sellar y para comprobar); los nonces de un
solo uso se apuntan con setdefault, que dice en un paso si ya estaban.
"""
import hmac
import json
import secrets
from collections import namedtuple

from extension import Extension
from sealkit import NONCE, TAG, decode, encode, keys_from, stream_xor, tag_of

extension = Extension()

Partes = namedtuple("Partes", "nonce cifrado etiqueta")


def leer(token):
    crudo = decode(token)
    if len(crudo) < NONCE + TAG:
        raise ValueError("corto")
    return Partes(crudo[:NONCE], crudo[NONCE:-TAG], crudo[-TAG:])


def escribir(partes):
    return encode(b"".join(partes))


def etiqueta(binding, nonce, cifrado):
    atadura = [binding.tool, binding.arguments, binding.principal]
    return tag_of(keys_from(binding.key)[1], atadura, nonce, cifrado)


@extension.request_state
class SelloConTuplas:
    def __init__(self):
        self.gastados = {}

    def seal(self, payload, binding):
        nonce = secrets.token_bytes(NONCE)
        sobre = json.dumps({"caduca": binding.expires_at, "datos": payload}).encode()
        cifrado = stream_xor(keys_from(binding.key)[0], nonce, sobre)
        return escribir(Partes(nonce, cifrado, etiqueta(binding, nonce, cifrado)))

    def open(self, token, binding):
        partes = leer(token)
        if not hmac.compare_digest(partes.etiqueta,
                                   etiqueta(binding, partes.nonce, partes.cifrado)):
            raise ValueError("etiqueta")
        sobre = json.loads(stream_xor(keys_from(binding.key)[0], partes.nonce, partes.cifrado))
        if sobre["caduca"] < binding.now:
            raise ValueError("caducado")
        if binding.one_time:
            self.gastados = {n: t for n, t in self.gastados.items() if t >= binding.now}
            if self.gastados.setdefault(partes.nonce, sobre["caduca"]) is not sobre["caduca"]:
                raise ValueError("repetido")
        return sobre["datos"]
