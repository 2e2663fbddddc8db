"""Reto, escrito a ciegas desde el enunciado: sella y verifica el requestState de 2026-07-28.

Sigo el formato del enunciado con las piezas de sealkit, repartido en métodos pequeños:
_claves, _atado, _etiqueta. Los nonces ya usados se guardan con su caducidad y se comprueban
y apuntan en un solo paso, con un candado, y solo si el token pasó todo lo demás.
"""
import hmac
import json
import secrets
import threading

import sealkit
from extension import Extension

extension = Extension()


@extension.request_state
class MiSello:
    def __init__(self):
        self._usados = {}  # nonce -> caduca, solo de herramientas one_time
        self._lock = threading.Lock()

    def _claves(self, binding):
        return sealkit.keys_from(binding.key)

    def _atado(self, binding):
        return [binding.tool, binding.arguments, binding.principal]

    def _etiqueta(self, binding, nonce, cifrado):
        _, firmar = self._claves(binding)
        return sealkit.tag_of(firmar, self._atado(binding), nonce, cifrado)

    def seal(self, payload, binding):
        cifrar, _ = self._claves(binding)
        nonce = secrets.token_bytes(sealkit.NONCE)
        sobre = {"caduca": binding.expires_at, "datos": payload}
        cifrado = sealkit.stream_xor(cifrar, nonce, json.dumps(sobre).encode("utf-8"))
        return sealkit.encode(nonce + cifrado + self._etiqueta(binding, nonce, cifrado))

    def open(self, token, binding):
        raw = sealkit.decode(token)
        if len(raw) < sealkit.NONCE + sealkit.TAG:
            raise ValueError("token demasiado corto")
        nonce = raw[:sealkit.NONCE]
        cifrado = raw[sealkit.NONCE:-sealkit.TAG]
        tag = raw[-sealkit.TAG:]
        if not hmac.compare_digest(tag, self._etiqueta(binding, nonce, cifrado)):
            raise ValueError("firma no válida")
        cifrar, _ = self._claves(binding)
        sobre = json.loads(sealkit.stream_xor(cifrar, nonce, cifrado).decode("utf-8"))
        if sobre["caduca"] < binding.now:
            raise ValueError("caducado")
        if binding.one_time:
            with self._lock:  # comprobar y apuntar en un solo paso, y solo si todo verificó
                for viejo, cuando in list(self._usados.items()):
                    if cuando < binding.now:
                        del self._usados[viejo]
                if nonce in self._usados:
                    raise ValueError("ya usado")
                self._usados[nonce] = sobre["caduca"]
        return sobre["datos"]
