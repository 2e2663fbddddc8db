"""Shared by tests/rendered: where the repository is, and how a missing tool is reported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def require(reason: str):
    """Skip with ``reason``, or fail under CI=true (where nothing may be missing)."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)
