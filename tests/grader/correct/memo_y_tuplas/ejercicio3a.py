"""Ejercicio 3A, otro estilo: la versión como tupla (mayor, menor, parche, final) y una tabla
de mínimos por protocolo."""
import re

from extension import Extension

extension = Extension()
VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?:(a|b|rc)(\d+))?")
MINIMUM = {"2025-11-25": (1, 23, 1, 1), "2026-07-28": (2, 0, 0, 1)}


def parse(text):
    match = VERSION.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    major, minor, patch = (int(part or 0) for part in match.groups()[:3])
    return (major, minor, patch, 1 if match.group(4) is None else 0)


@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    version = parse(sdk_version)
    needed = MINIMUM.get(protocol_version)
    if version is None or needed is None or version < needed:
        return False
    elicitation = (client_capabilities or {}).get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)
