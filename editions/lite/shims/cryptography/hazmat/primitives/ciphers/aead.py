"""AES-GCM that refuses to run: there is no AES in the browser's Python here (see
cryptography/__init__.py)."""

REFUSED = ("AES-GCM no está disponible en JupyterLite (el paquete cryptography no tiene versión "
           "WebAssembly en PyPI): un MCPServer en el navegador no puede sellar el requestState "
           "de 2026-07-28. Usa mode=\"legacy\" (2025-11-25), que no sella nada, o ejecuta el "
           "cuaderno en JupyterLab.")


class AESGCM:
    def __init__(self, key: bytes):
        if len(key) not in (16, 24, 32):
            raise ValueError("AESGCM key must be 128, 192, or 256 bits.")

    def encrypt(self, nonce, data, associated_data):
        raise NotImplementedError(REFUSED)

    def decrypt(self, nonce, data, associated_data):
        raise NotImplementedError(REFUSED)
