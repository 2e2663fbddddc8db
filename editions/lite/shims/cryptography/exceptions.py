"""`cryptography.exceptions`, as far as the MCP SDK uses it (see the package's doc)."""


class InvalidTag(Exception):
    """A sealed value failed authentication."""
