"""No temporary file survives a signal: a write is stopped at each of its steps, and none of
them leaves a `.tmp-notas-*` copy behind; the note it was replacing is either as it was or
entirely the new one; files of the user's that merely look like temporary ones are never
touched (only a name this process made itself, with O_EXCL or a link that fails on an
existing name, and still owns, is removed).

The steps are controlled, not timed: the write is held at a step (a patched call that says
so and waits) and the stop comes exactly there, three ways: a signal to `code/main.py serve`,
a real process, whose writer is its main thread (stdio) or a connection's thread (--http); the
server's stop (`store.stop_writes`) from another thread, in this process; and a signal
handler that runs in the writing thread itself."""

import json
import os
import re
import signal
import socket
import subprocess
import threading

import pytest

from notes import store  # the module itself: these tests set its limits and state
from server_support import serve_argv, write_solution

POINTS = ["before-writing", "synced", "named", "renamed"]
OLD = "cuerpo de note-1"

# A solution that holds the write at one step (NOTAS_PAUSE_AT): it writes PAUSED on stderr and
# waits there for ever, sleeping in Python so that a signal's handler can run in that thread.
HOLD = """
    import os
    import sys
    import time

    from notes import dirfd
    from extension import Extension

    extension = Extension()
    POINT = os.environ["NOTAS_PAUSE_AT"]


    def hold(point):
        if point == POINT:
            print(f"PAUSED {point}", file=sys.stderr, flush=True)
            while True:
                time.sleep(0.05)


    real_write, real_fsync, real_rename = os.write, os.fsync, dirfd.Folder.rename


    def write(fd, data):
        if len(data) > 100_000:  # the note's copy, not the wire
            hold("before-writing")
        return real_write(fd, data)


    def fsync(fd):
        real_fsync(fd)
        hold("synced")


    def rename(self, name, target, target_name):
        if name.startswith(".tmp-notas-"):
            hold("named")  # the copy has its name, the note is not replaced yet
        real_rename(self, name, target, target_name)
        if name.startswith(".tmp-notas-"):
            hold("renamed")


    os.write, os.fsync, dirfd.Folder.rename = write, fsync, rename
"""


def write_call(tree, msg_id=2):
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": {
        "name": "notes_write", "arguments": {
            "uri": f"file://{tree.notes}/compra.md", "title": "Nueva", "body": "y" * 300_000}}}


def left_behind(folder, mine=()):
    return [n for n in os.listdir(folder) if n.startswith(store.TEMP_PREFIX) and n not in mine]


def the_note_is_old_or_new(tree):
    text = (tree.notes / "compra.md").read_text()
    assert text.endswith(OLD + "\n") or text.endswith("y" * 300_000), text[:200]
    return "old" if OLD in text else "new"


class Server:
    """`serve` with the holding solution, over stdio or HTTP; `paused()` waits for its line."""

    def __init__(self, tree, tmp_path, point, http):
        solution = write_solution(tmp_path, HOLD)
        argv = serve_argv("--root", tree.notes, "--solution", solution,
                          *(("--http", "127.0.0.1:0") if http else ()))
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE,
                                     env={**os.environ, "NOTAS_PAUSE_AT": point})
        self.lines = []
        self.url = self.wait(r"ready on (\S+)|ready on stdio")[1] if http else None
        if not http:
            self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                write_call(tree))))
            self.proc.stdin.flush()
        else:
            host, port = re.match(r"http://([\d.]+):(\d+)/mcp", self.url).groups()
            body = json.dumps({**write_call(tree), "params": {
                **write_call(tree)["params"], "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
            self.connection = socket.create_connection((host, int(port)), timeout=30)
            self.connection.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\n"
                b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
                b"Mcp-Name: notes_write\r\n" + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body)

    def wait(self, pattern):
        for line in self.proc.stderr:
            line = line.decode("utf-8", "replace").rstrip()
            self.lines.append(line)
            found = re.search(pattern, line)
            if found:
                return found
        raise AssertionError(f"no line like {pattern!r}: {self.lines[-5:]}")


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals sent by PID")
@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGTERM", "SIGHUP"])
def test_a_signal_at_each_step_of_a_write_leaves_no_temporary_file(tree, tmp_path, point,
                                                                    http, signum):
    user_files = {".tmp-mio.md": "mío", f"{store.TEMP_PREFIX}a-mano.md": "también mío"}
    for name, content in user_files.items():
        (tree.notes / name).write_text(content)
    server = Server(tree, tmp_path, point, http)
    try:
        server.wait(f"PAUSED {point}")
        os.kill(server.proc.pid, signum)
        assert server.proc.wait(timeout=30) == 128 + signum, server.lines
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert left_behind(tree.notes, user_files) == []
    assert the_note_is_old_or_new(tree) == ("new" if point == "renamed" else "old")
    for name, content in user_files.items():
        assert (tree.notes / name).read_text() == content


# -- in this process: the stop at each step, from another thread or from the writer's own -----
@pytest.fixture
def held(monkeypatch, tree):
    """Hold a write of compra.md at one step: `held(point)` starts it in a thread and returns
    once it is there; `release()` lets it go on; `outcome` is what it ended with."""
    monkeypatch.setattr(store, "_stopped", False)  # this test's stop ends with the test

    class Held:
        point, outcome = None, None
        there, go = threading.Event(), threading.Event()

        def hold(self, point):
            if point == self.point:
                self.there.set()
                assert self.go.wait(30)

        def start(self, point):
            self.point = point
            self.thread = threading.Thread(target=self.write)
            self.thread.start()
            assert self.there.wait(30)

        def write(self):
            roots = store_roots(tree)
            try:
                store.write_note(roots, str(tree.notes / "compra.md"), "Nueva", "2025-06-01",
                                 "y" * 300_000)
                self.outcome = "written"
            except (store.StoreError, OSError) as exc:
                self.outcome = exc
            finally:
                roots.close()

        def release(self):
            self.go.set()
            self.thread.join(30)
    state = Held()
    patch_steps(monkeypatch, state.hold)
    return state


def store_roots(tree):
    from roots import RootSet
    return RootSet.from_paths([str(tree.notes)]).open({})


def patch_steps(monkeypatch, hold):
    """`hold(step)` runs at each step of a write (the same steps as HOLD's)."""
    from notes import dirfd
    real_write, real_fsync, real_rename = os.write, os.fsync, dirfd.Folder.rename

    def write(fd, data):
        if len(data) > 100_000:
            hold("before-writing")
        return real_write(fd, data)

    def fsync(fd):
        real_fsync(fd)
        hold("synced")

    def rename(self, name, target, target_name):
        hold("named")
        real_rename(self, name, target, target_name)
        hold("renamed")
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(dirfd.Folder, "rename", rename)


@pytest.mark.parametrize("point", POINTS)
def test_the_servers_stop_from_another_thread_at_each_step_leaves_no_temporary_file(
        tree, held, point):
    held.start(point)
    store.stop_writes()  # what a signal's handler does, in the main thread
    assert left_behind(tree.notes) == []  # the process may end right here
    held.release()
    assert left_behind(tree.notes) == [] and store._temporaries == set()
    if point == "renamed":
        assert held.outcome == "written" and the_note_is_old_or_new(tree) == "new"
    else:  # a write stopped before its rename fails and changes nothing
        assert isinstance(held.outcome, (store.StoreError, OSError))
        assert the_note_is_old_or_new(tree) == "old"
    with pytest.raises(store.StoreError, match="deteniendo"):  # nor does any later one
        store.write_note(store_roots(tree), str(tree.notes / "otra.md"), "Otra", "", "z")
    assert left_behind(tree.notes) == []


def test_a_stop_that_waits_for_a_copy_being_named_still_removes_it(tree, monkeypatch):
    """The stop comes while another thread is naming its copy, inside the lock that guards
    the names: it waits for that name and then removes it."""
    monkeypatch.setattr(store, "_stopped", False)
    naming, stop_waits, go = threading.Event(), threading.Event(), threading.Event()

    class Lock:  # store's lock, telling when another thread starts waiting for it
        def __init__(self, real):
            self.real, self.owner = real, None

        def __enter__(self):
            if self.owner is not None and self.owner != threading.get_ident():
                stop_waits.set()
            self.real.acquire()
            self.owner = threading.get_ident()

        def __exit__(self, *exc):
            self.owner = None
            self.real.release()
    monkeypatch.setattr(store, "_temporaries_lock", Lock(store._temporaries_lock))
    from notes import dirfd
    real_name, real_create = dirfd.Folder.name_file, dirfd.Folder.create_new

    def slow(real):
        def make(self, *args):
            naming.set()
            assert go.wait(30)
            return real(self, *args)
        return make
    monkeypatch.setattr(dirfd.Folder, "name_file", slow(real_name))
    monkeypatch.setattr(dirfd.Folder, "create_new", slow(real_create))
    stopped, real_rename = threading.Event(), dirfd.Folder.rename

    def rename_after_the_stop(self, *args):  # the name is made: the stop comes first
        assert stopped.wait(30)
        return real_rename(self, *args)
    monkeypatch.setattr(dirfd.Folder, "rename", rename_after_the_stop)
    outcome = []
    writer = threading.Thread(target=lambda: outcome.append(try_write(tree)))
    writer.start()
    assert naming.wait(30)
    stopper = threading.Thread(target=store.stop_writes)
    stopper.start()
    assert stop_waits.wait(30)  # the stop is waiting for the name being made
    go.set()
    stopper.join(30)
    stopped.set()
    writer.join(30)
    assert left_behind(tree.notes) == [] and store._temporaries == set()
    assert isinstance(outcome[0], (store.StoreError, OSError))
    assert the_note_is_old_or_new(tree) == "old"


def try_write(tree):
    roots = store_roots(tree)
    try:
        return store.write_note(roots, str(tree.notes / "compra.md"), "Nueva", "2025-06-01",
                                "y" * 300_000)
    except (store.StoreError, OSError) as exc:
        return exc
    finally:
        roots.close()


class Stopped(BaseException):
    """What this test's handler raises (main.py's raises Terminated)."""


@pytest.mark.parametrize("point", POINTS)
def test_a_handler_running_in_the_writing_thread_at_each_step_leaves_no_temporary_file(
        tree, monkeypatch, point):
    """A signal's handler runs in the thread that writes (stdio: the main thread), between
    any two steps: it stops the writes and unwinds through the write."""
    monkeypatch.setattr(store, "_stopped", False)

    def handler_here(at):
        if at == point:
            store.stop_writes()  # what main.py's handler does
            raise Stopped()
    patch_steps(monkeypatch, handler_here)
    with pytest.raises(Stopped):
        try_write(tree)
    assert left_behind(tree.notes) == [] and store._temporaries == set()
    assert the_note_is_old_or_new(tree) == ("new" if point == "renamed" else "old")


def test_only_temporaries_this_process_created_are_removed(tmp_path):
    (tmp_path / f"{store.TEMP_PREFIX}ajeno.md").write_text("de otro")
    with store.Folder.open(str(tmp_path)) as folder:
        fd = folder.create_new(f"{store.TEMP_PREFIX}propio.md")
        os.close(fd)
        store._temporaries.add((folder, f"{store.TEMP_PREFIX}propio.md"))
        store.remove_temporaries()
    assert os.listdir(tmp_path) == [f"{store.TEMP_PREFIX}ajeno.md"]
    assert store._temporaries == set()
