"""SIGTERM during a write: `code/main.py serve`, a real process, is killed by its PID while a
`notes_write` is in the middle of writing its temporary copy. It leaves no temporary file
behind, the note it was replacing is intact, and files of the user's that merely look like
temporary ones are never touched: only a name this process created itself (O_EXCL) and still
owns is removed.
"""

import json
import os
import signal
import subprocess
import time

import pytest

import store
from server_support import serve_argv, write_solution

SLOW_FSYNC = """
    import os
    import time

    from extension import Extension

    extension = Extension()
    real_fsync = os.fsync


    def slow_fsync(fd):  # the write stays in progress long enough to be interrupted
        time.sleep(60)
        real_fsync(fd)


    os.fsync = slow_fsync
"""


def frames(*messages):
    return "".join(json.dumps(m) + "\n" for m in messages).encode()


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix",
                    reason="a POSIX signal sent by PID")
def test_sigterm_during_a_write_leaves_no_temporary_file_and_the_old_note(tree, tmp_path):
    user_files = {".tmp-mio.md": "mío", f"{store.TEMP_PREFIX}a-mano.md": "también mío"}
    for name, content in user_files.items():
        (tree.notes / name).write_text(content)
    original = (tree.notes / "compra.md").read_bytes()
    solution = write_solution(tmp_path, SLOW_FSYNC)
    proc = subprocess.Popen(serve_argv("--root", tree.notes, "--solution", solution),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    proc.stdin.write(frames(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "notes_write", "arguments": {
                "uri": f"file://{tree.notes}/compra.md", "title": "Nueva", "body": "x"}}}))
    proc.stdin.flush()
    deadline = time.monotonic() + 20
    while not [n for n in os.listdir(tree.notes) if n.startswith(store.TEMP_PREFIX)
               and n not in user_files]:
        assert time.monotonic() < deadline, "the write never started"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    left = sorted(os.listdir(tree.notes))
    assert left == sorted(["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md",
                           *user_files])
    assert (tree.notes / "compra.md").read_bytes() == original
    for name, content in user_files.items():
        assert (tree.notes / name).read_text() == content


def test_only_temporaries_this_process_created_are_removed(tmp_path):
    (tmp_path / f"{store.TEMP_PREFIX}ajeno.md").write_text("de otro")
    with store.Folder.open(str(tmp_path)) as folder:
        fd = folder.create_new(f"{store.TEMP_PREFIX}propio.md")
        os.close(fd)
        store._temporaries.add((folder, f"{store.TEMP_PREFIX}propio.md"))
        store.remove_temporaries()
    assert os.listdir(tmp_path) == [f"{store.TEMP_PREFIX}ajeno.md"]
    assert store._temporaries == set()


class Stopped(BaseException):
    """What this test's SIGTERM handler raises (main.py's raises Terminated)."""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_sigterm_right_after_the_copy_is_created_still_finds_it(tmp_path, monkeypatch):
    """The instant between creating the copy and recording it as ours: a SIGTERM that lands
    there (seen under load) is held until the copy is recorded, so the handler removes it."""
    real_create = store.Folder.create_new

    def create_then_sigterm(self, name):
        fd = real_create(self, name)
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` would, right now
        return fd

    def stop(signum, frame):  # what main.py's handler does
        store.remove_temporaries()
        raise Stopped()

    monkeypatch.setattr(store.Folder, "create_new", create_then_sigterm)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with store.Folder.open(str(tmp_path)) as folder, pytest.raises(Stopped):
            store._write_in(folder, "nota.md", "texto")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert os.listdir(tmp_path) == []
    assert store._temporaries == set()
