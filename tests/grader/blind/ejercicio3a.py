"""Ejercicio 3A, escrito a ciegas desde el enunciado: la guarda de versión del modo URL."""
import re

from extension import Extension

extension = Extension()

VERSION = re.compile(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:(a|b|rc)([0-9]+))?")
ORDEN_PRE = {"a": 0, "b": 1, "rc": 2}
FINAL = 3  # una versión final va después de todas sus preliminares
MINIMO_URL = (1, 23, 1, FINAL, 0)
MINIMO_2026 = (2, 0, 0, FINAL, 0)


def version_key(texto):
    """(mayor, menor, parche, tipo, n) comparable como números; None si no se entiende."""
    if not isinstance(texto, str):
        return None
    m = VERSION.fullmatch(texto)
    if m is None:
        return None
    mayor, menor, parche, pre, n = m.groups()
    tipo = ORDEN_PRE[pre] if pre else FINAL
    return (int(mayor), int(menor), int(parche or 0), tipo, int(n or 0))


@extension.url_mode_guard
def allow_url_mode(sdk_version, protocol_version, client_capabilities):
    sdk = version_key(sdk_version)
    if sdk is None or sdk < MINIMO_URL:
        return False
    if protocol_version == "2025-11-25":
        pass
    elif protocol_version == "2026-07-28":
        if sdk < MINIMO_2026:
            return False
    else:
        return False
    if not isinstance(client_capabilities, dict):
        return False
    elicitacion = client_capabilities.get("elicitation")
    return isinstance(elicitacion, dict) and isinstance(elicitacion.get("url"), dict)
