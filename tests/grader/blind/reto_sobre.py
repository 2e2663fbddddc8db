"""Reto, escrito a ciegas desde el enunciado (otro estilo): funciones sueltas y un objeto.

El formato del enunciado, paso a paso en funciones de módulo (cerrar, abrir, partir), y un
objeto Sobre registrado con extension.request_state(...). El uso único guarda los nonces en un
conjunto y sus caducidades aparte, y los olvida cuando caducan.
"""
import hmac
import json
import secrets

from extension import Extension
from sealkit import NONCE, TAG, decode, encode, keys_from, stream_xor, tag_of

extension = Extension()


def partir(token):
    crudo = decode(token)
    return crudo[:NONCE], crudo[NONCE:len(crudo) - TAG], crudo[len(crudo) - TAG:]


def lo_atado(binding):
    return (binding.tool, binding.arguments, binding.principal)


def cerrar(payload, binding):
    para_cifrar, para_firmar = keys_from(binding.key)
    nonce = secrets.token_bytes(NONCE)
    claro = json.dumps({"datos": payload, "caduca": binding.expires_at},
                       ensure_ascii=False).encode("utf-8")
    cifrado = stream_xor(para_cifrar, nonce, claro)
    return encode(nonce + cifrado + tag_of(para_firmar, list(lo_atado(binding)), nonce, cifrado))


def abrir(token, binding):
    """(el nonce, el sobre) de un token bueno para esta llamada; ValueError si no lo es."""
    para_cifrar, para_firmar = keys_from(binding.key)
    nonce, cifrado, etiqueta = partir(token)
    if len(nonce) != NONCE or len(etiqueta) != TAG:
        raise ValueError("token incompleto")
    if not hmac.compare_digest(tag_of(para_firmar, list(lo_atado(binding)), nonce, cifrado),
                               etiqueta):
        raise ValueError("etiqueta que no cuadra")
    sobre = json.loads(stream_xor(para_cifrar, nonce, cifrado))
    if not binding.now <= sobre["caduca"]:
        raise ValueError("caducado")
    return nonce, sobre


class Sobre:
    def __init__(self):
        self.gastados = set()
        self.hasta = {}

    def olvidar_caducados(self, ahora):
        for nonce in [n for n in self.gastados if self.hasta[n] < ahora]:
            self.gastados.discard(nonce)
            del self.hasta[nonce]

    def seal(self, payload, binding):
        return cerrar(payload, binding)

    def open(self, token, binding):
        nonce, sobre = abrir(token, binding)
        if binding.one_time:
            self.olvidar_caducados(binding.now)
            if nonce in self.gastados:
                raise ValueError("ya gastado")
            self.gastados.add(nonce)
            self.hasta[nonce] = sobre["caduca"]
        return sobre["datos"]


extension.request_state(Sobre())
