"""A stand-in for the parts of `cryptography` the official MCP SDK imports, for JupyterLite only.

`mcp.server.request_state` (imported by `import mcp`) imports AES-GCM, HKDF and SHA-256 from
`cryptography` to seal 2026-07-28 `requestState` values. `cryptography` is compiled code, and
PyPI has no WebAssembly build of it (Pyodide builds one, but the course site takes packages only
from PyPI and npm, pinned). This package, packed by editions/lite/build.py into the wheel
`course-lite-shims` and installed only by `ui.install_sdk()` in the browser, gives:

- `hazmat.primitives.kdf.hkdf.HKDF` with `hashes.SHA256`: the real RFC 5869 HKDF, from the
  standard library's hmac (what MCPServer derives its key with when it starts);
- `hazmat.primitives.ciphers.aead.AESGCM`: it can be built, but `encrypt` and `decrypt` refuse
  with an error that says why, so an MCPServer in the page works at 2025-11-25 (which seals
  nothing) and says plainly that it cannot seal a 2026-07-28 requestState here;
- `exceptions.InvalidTag`.

Deliberate simplifications: only these names; never installed outside the browser, where the
real package is a dependency of mcp.
"""

__version__ = "0+course-lite"
