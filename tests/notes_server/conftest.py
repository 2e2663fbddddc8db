"""Fixtures for the notes server tests (helpers live in server_support.py)."""

import pytest

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
def anyio_backend():
    return "asyncio"
