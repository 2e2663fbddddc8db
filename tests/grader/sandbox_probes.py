"""Small helpers for the tests that run a probe "solution" in the sandbox
(tests/grader/test_sandbox.py, test_sandbox_ahead.py).

- `solution_folder(tmp_path)`: an empty solution folder the sandbox's uids may read.
- `reported(box, marker)`: start one test's server, wait for the line its solution writes
  after `marker` on stderr, end the server and release its test; returns the rest of the line.
- `need_the_full_sandbox()`: skip (fail under CI=true) where the sandbox's root mode is not
  available.
"""

import os
import time

import pytest

from grader.hosts.sandbox import detect_mode


def need_the_full_sandbox():
    if detect_mode() != "root":
        message = f"needs the full sandbox (root on Linux); mode here: {detect_mode()}"
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: " + message)
        pytest.skip(message)


def solution_folder(tmp_path):
    folder = tmp_path / "solucion"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(folder, 0o755)
    return folder


def reported(box, marker, seconds=60):
    identity = box.identity()
    server = box.spawn(["serve", "--solution", box.inner("solution")], (), identity)
    try:
        deadline = time.monotonic() + seconds
        while marker not in server.stderr() and time.monotonic() < deadline:
            time.sleep(0.02)
        line = next(x for x in server.stderr().splitlines() if x.startswith(marker))
    finally:
        server.kill()
        box.release(identity)
    return line[len(marker):]
