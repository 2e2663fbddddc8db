"""Reto: sellar y verificar el requestState de 2026-07-28 (solución de referencia).

La receta del enunciado, con las piezas de code/sealkit.py: el sobre (la caducidad y el
payload) va cifrado; la etiqueta cubre lo que el token no lleva pero a lo que está atado (la
herramienta, la huella de los argumentos, el usuario), el nonce y el cifrado. Al abrir se
comprueba todo antes de apuntar el token como usado, y el token solo vale escrito tal cual.
"""
import hmac
import json
import secrets

from extension import Extension
from sealkit import NONCE, TAG, decode, encode, keys_from, stream_xor, tag_of

extension = Extension()


def claves(binding):
    """(la de cifrar, la de firmar): de la clave secreta del servidor, nunca de binding.key_id,
    que es público, ni de una constante de este archivo, que lee cualquiera."""
    return keys_from(binding.key)


def atado(binding):
    """Lo que el token no lleva pero su etiqueta cubre: la llamada y el usuario."""
    return [binding.tool, binding.arguments, binding.principal]


@extension.request_state
class MiSello:
    def __init__(self):
        # Se crea una vez, al cargar la solución: lo que tu servidor recuerda entre llamadas.
        self.usados = {}  # nonce -> caducidad: los tokens de una sola vez ya abiertos

    def seal(self, payload, binding):
        clave_cifrar, clave_firmar = claves(binding)
        nonce = secrets.token_bytes(NONCE)
        sobre = {"caduca": binding.expires_at, "datos": payload}
        cifrado = stream_xor(clave_cifrar, nonce, json.dumps(sobre).encode())
        etiqueta = tag_of(clave_firmar, atado(binding), nonce, cifrado)
        return encode(nonce + cifrado + etiqueta)

    def open(self, token, binding):
        clave_cifrar, clave_firmar = claves(binding)
        crudo = decode(token)  # ValueError si no está escrito exactamente como se dio
        nonce, cifrado, etiqueta = crudo[:NONCE], crudo[NONCE:-TAG], crudo[-TAG:]
        esperada = tag_of(clave_firmar, atado(binding), nonce, cifrado)
        if not hmac.compare_digest(etiqueta, esperada):
            raise ValueError("sello roto, de otra llamada, de otro usuario o de otra clave")
        sobre = json.loads(stream_xor(clave_cifrar, nonce, cifrado))
        if sobre["caduca"] < binding.now:
            raise ValueError("caducado")
        if binding.one_time:  # solo ahora, con todo comprobado: un intento rechazado no gasta
            self.usados = {n: hasta for n, hasta in self.usados.items() if hasta >= binding.now}
            if nonce in self.usados:
                raise ValueError("ya usado")
            self.usados[nonce] = sobre["caduca"]
        return sobre["datos"]
