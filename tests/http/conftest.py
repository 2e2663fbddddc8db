"""Fixtures for the `serve --http` tests (helpers live in tests/http_support.py)."""

import pytest

from http_support import Served
from server_support import NotesTree, validate_trace


@pytest.fixture
def tree(tmp_path):
    return NotesTree(tmp_path / "casa")


@pytest.fixture
def serve(tmp_path):
    """Start `serve --http` processes: `serve(*args)`. After the test each is stopped by its
    PID (SIGTERM must end it cleanly, 128 + 15) and every frame it wrote, in every session and
    exchange, is validated against the official schema of its revision."""
    started = []

    def start(*args, **options):
        trace = tmp_path / f"wire-{len(started)}.jsonl"
        server = Served(*args, trace=trace, cwd=tmp_path, **options)
        started.append((server, trace))
        return server
    yield start
    for server, trace in started:
        if server.proc.poll() is None:
            assert server.stop() == 143, server.log
        if trace.exists() and trace.stat().st_size:
            validate_trace(trace)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A real `redis-server` (Debian's package, which `make test` installs) on 127.0.0.1, on a
    free port, for this module's tests; stopped by its PID. Without it the tests skip, except
    under CI=true, where `make test` must have installed it."""
    from http_support import start_redis
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server.url
    server.stop()
