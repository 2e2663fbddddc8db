"""Fixtures for the foreign-client tests (helpers live in clients_support.py)."""

import pytest
from clients_support import require_node

from server_support import NotesTree, validate_trace


@pytest.fixture
def tree(tmp_path):
    return NotesTree(tmp_path / "casa")


@pytest.fixture
def trace(tmp_path):
    """A trace file for `serve --trace`; after the test every frame the server wrote is
    validated against the official schema of the revision each exchange used."""
    path = tmp_path / "wire.jsonl"
    yield path
    assert path.exists(), "the server wrote no trace"
    validate_trace(path)


@pytest.fixture
def node():
    """The pinned Node clients are installed (skips, or fails under CI, otherwise)."""
    require_node()


@pytest.fixture
def anyio_backend():
    return "asyncio"
