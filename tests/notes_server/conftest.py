"""Fixtures for the notes server tests (helpers live in server_support.py).

Every test runs under `the_core_needs_no_safety_net`: an in-process server given no log of its
own logs into a list, and after the test no frame, timer or page completion may have reached
the guarded entry's safety net (a log line "internal error ..."). The core must handle what
it is sent by design; the net only stops what nobody foresaw from ending the process. A test
that provokes the net on purpose gives the server its own log and reads it.
"""

import os

import pytest

from server_support import NotesTree, validate_trace


@pytest.fixture
def tree(tmp_path):
    return NotesTree(tmp_path / "casa")


@pytest.fixture
def one_note(tmp_path):
    """A real base folder holding Notas/a.md (note-a, «A»); returns the base."""
    base = os.path.realpath(tmp_path)
    os.makedirs(f"{base}/Notas")
    with open(f"{base}/Notas/a.md", "w") as out:
        out.write("id: note-a\ntitle: A\n\ncuerpo\n")
    return base


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


@pytest.fixture(autouse=True)
def the_core_needs_no_safety_net(monkeypatch):
    import server
    logged = []
    made = server.NotesServer.__init__

    def with_a_log(self, config=None, extension=None, log=None):
        made(self, config, extension, log=log or logged.append)
    monkeypatch.setattr(server.NotesServer, "__init__", with_a_log)
    yield logged
    assert [line for line in logged if line.startswith("internal error")] == []
