"""Hash algorithm names, as far as the MCP SDK uses them (see cryptography/__init__.py)."""


class SHA256:
    name = "sha256"
    digest_size = 32
