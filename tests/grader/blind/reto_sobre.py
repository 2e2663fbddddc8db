"""Reto, escrito a ciegas desde el enunciado (otro estilo): el «sobre con cinco partes».

    v2.<kid>.<sal>.<contenido cifrado>.<firma>       (cada parte en base64url sin relleno)

- kid: 6 bytes derivados de la clave (para decir «esta clave no es la mía» pronto).
- sal: 12 bytes al azar por token; de ella sale una clave de cifrado solo para este token.
- contenido: JSON {"exp", "t", "a", "p", "d"} cifrado con un flujo BLAKE2b con clave.
  Las ataduras van también dentro (además de en la firma): doble comprobación.
- firma: HMAC-SHA256 con otra clave derivada, sobre las cuatro primeras partes tal como se
  escribieron más la atadura de la llamada.
- uso único: el servidor apunta el resumen de cada firma gastada hasta su caducidad.
"""
import base64
import hashlib
import hmac
import json
import secrets
import threading

from extension import Extension

extension = Extension()

PREFIJO = "v2"


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text):
    if not text or any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789-_" for c in text):
        raise ValueError("caracteres no válidos")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("codificación no canónica")
    return data


def _sub(key, etiqueta, extra=b""):
    return hmac.new(key, b"reto-sello-v2:" + etiqueta + b":" + extra, hashlib.sha256).digest()


def _flujo(clave, n):
    bloques = []
    i = 0
    while sum(map(len, bloques)) < n:
        bloques.append(hashlib.blake2b(i.to_bytes(8, "little"), key=clave,
                                       digest_size=64).digest())
        i += 1
    return b"".join(bloques)[:n]


def _atadura(binding):
    return json.dumps({"t": binding.tool, "a": binding.arguments, "p": binding.principal,
                       "o": bool(binding.one_time)}, sort_keys=True,
                      separators=(",", ":")).encode()


@extension.request_state
class SelloDeCincoPartes:
    def __init__(self):
        self.gastados = {}  # sha256(firma) -> caduca
        self.cerrojo = threading.Lock()

    def seal(self, payload, binding):
        sal = secrets.token_bytes(12)
        claro = json.dumps({"exp": binding.expires_at, "t": binding.tool,
                            "a": binding.arguments, "p": binding.principal, "d": payload},
                           separators=(",", ":")).encode()
        clave = _sub(binding.key, b"cifrado", sal)
        cifrado = bytes(x ^ y for x, y in zip(claro, _flujo(clave, len(claro)), strict=False))
        kid = _sub(binding.key, b"kid")[:6]
        cabeza = ".".join([PREFIJO, _b64(kid), _b64(sal), _b64(cifrado)])
        firma = hmac.new(_sub(binding.key, b"firma"),
                         cabeza.encode() + b"\n" + _atadura(binding), hashlib.sha256).digest()
        return cabeza + "." + _b64(firma)

    def open(self, token, binding):
        partes = token.split(".")
        if len(partes) != 5 or partes[0] != PREFIJO:
            raise ValueError("forma no válida")
        kid, sal, cifrado, firma = (_unb64(p) for p in partes[1:])
        if not hmac.compare_digest(kid, _sub(binding.key, b"kid")[:6]):
            raise ValueError("otra clave")
        cabeza = token.rsplit(".", 1)[0]
        esperada = hmac.new(_sub(binding.key, b"firma"),
                            cabeza.encode() + b"\n" + _atadura(binding), hashlib.sha256).digest()
        if not hmac.compare_digest(firma, esperada):
            raise ValueError("firma no válida")
        clave = _sub(binding.key, b"cifrado", sal)
        cuerpo = json.loads(bytes(x ^ y for x, y in zip(cifrado,
                                                       _flujo(clave, len(cifrado)), strict=False)))
        if (cuerpo["t"], cuerpo["a"], cuerpo["p"]) != (binding.tool, binding.arguments,
                                                        binding.principal):
            raise ValueError("atado a otra llamada")
        if not cuerpo["exp"] >= binding.now:
            raise ValueError("caducado")
        if binding.one_time:
            huella = hashlib.sha256(firma).digest()
            with self.cerrojo:
                ahora = binding.now
                for h in [h for h, c in self.gastados.items() if c < ahora]:
                    del self.gastados[h]
                if huella in self.gastados:
                    raise ValueError("ya usado")
                self.gastados[huella] = cuerpo["exp"]
        return cuerpo["d"]

