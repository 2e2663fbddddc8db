"""Ejercicio 3A (solución de referencia): la guarda de versión del modo URL."""
import re

from elicitation import supports_url
from extension import Extension

extension = Extension()


def parse_version(text):
    """'2.3.0' -> ((2, 3, 0), True); '2.3' -> ((2, 3, 0), True); '2.0.0b1' -> ((2, 0, 0), False)
    (False: una versión preliminar); None si no se puede leer."""
    if not isinstance(text, str):
        return None
    match = re.fullmatch(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?((?:a|b|rc)[0-9]+)?", text)
    if match is None:
        return None
    return tuple(int(part or 0) for part in match.groups()[:3]), match.group(4) is None


def at_least(version, minimum):
    """¿Llega `version` (lo que da parse_version) a `minimum`, p. ej. (1, 23, 1)?"""
    numbers, final = version
    return numbers > minimum or (numbers == minimum and final)  # 2.0.0b1 < 2.0.0


@extension.url_mode_guard
def allow_url_mode(sdk_version, protocol_version, client_capabilities):
    version = parse_version(sdk_version)
    minimum = {"2025-11-25": (1, 23, 1), "2026-07-28": (2, 0, 0)}.get(protocol_version)
    if version is None or minimum is None:
        return False
    return at_least(version, minimum) and supports_url(client_capabilities)
