"""Ejercicio 3 (solución de referencia): ¿puede el servidor usar el modo URL?"""
import re

from elicitation import supports_url
from extension import Extension

extension = Extension()

URL_MODE_SDK = (1, 23, 1)
STATELESS_SDK = (2, 0, 0)


def sdk_version(text):
    """'1.23.1' -> ((1, 23, 1), True); '2.0.0b1' -> ((2, 0, 0), False); None si no se lee."""
    if not isinstance(text, str):
        return None
    match = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.(\d+))?((?:a|b|rc|\.dev|-)[0-9a-z.]*)?\s*", text)
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups()[:3]), match.group(4) is None


def at_least(version, minimum):
    numbers, final = version
    # una pre-release va antes de su versión final: 2.0.0b1 < 2.0.0
    return numbers > minimum or (numbers == minimum and final)


@extension.url_mode_guard
def allow_url_mode(sdk_version_text, protocol_version, client_capabilities):
    version = sdk_version(sdk_version_text)
    if version is None or not at_least(version, URL_MODE_SDK):
        return False
    if protocol_version == "2026-07-28":
        if not at_least(version, STATELESS_SDK):
            return False
    elif protocol_version != "2025-11-25":
        return False
    return supports_url(client_capabilities)  # elicitation.url declared (code/elicitation.py)
