"""Stand-in subpackage (see cryptography/__init__.py)."""
