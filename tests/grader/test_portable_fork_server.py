"""The portable host's fork server (grader/hosts/forks.py, `launch.py --fork-server`): where the
system has fork, every server is forked from one warm process, and nothing else changes.

- the servers come from the fork server (its children), one per spawn, and so does the one
  started ahead for the next test;
- every server sees the same command line as a launched one, and gets its own options;
- no descriptor of the fork server (its socket, its pipe) is open in a server;
- a server's exit status and its kill are reported as for a launched server;
- sweep ends every server; close ends them and the fork server;
- when the fork server is gone, servers are launched instead, and the check goes on;
- the warm helper's fork server, started ahead, serves its one host only, and ends with the
  helper when no host took it.
"""

import json
import os
import stat
import subprocess
import sys
import time

import pytest
from mutants import REFERENCE

from grader.hosts import forks, portable
from grader.hosts.forks import ForkedProcess
from grader.hosts.portable import PortableHost, PortableProcess
from grader.paths import CODE_DIR, REPO_DIR

pytestmark = pytest.mark.skipif(not forks.POSSIBLE, reason="no fork here (Windows)")

EJ2 = os.path.join(REFERENCE, "ejercicio2.py")
# A solution that writes what its server sees to a file named after its pid, in its folder
PROBE = """
import json, os, stat, sys
fds = {}
for fd in range(1024):
    try:
        info = os.fstat(fd)
        fds[fd] = [stat.S_IFMT(info.st_mode), info.st_ino]
    except OSError:
        pass
with open(f"probe-{os.getpid()}.json", "w") as out:
    json.dump({"argv": sys.argv, "ppid": os.getppid(), "cwd": os.getcwd(), "fds": fds}, out)
"""
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"}}}).encode() + b"\n"


@pytest.fixture
def host(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    host = PortableHost(REFERENCE, str(workspace)).start()
    yield host
    host.close()


@pytest.fixture
def probe(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return str(path)


def answered(process):
    """The server answers an initialize (its solution is loaded by then)."""
    process.send(INITIALIZE)
    return b'"result"' in process.read(30.0)


def seen(host, process):
    """What the probe solution wrote in the server `process`."""
    with open(os.path.join(host.root, "work", f"probe-{process.pid}.json")) as handle:
        return json.load(handle)


def eventually(condition, limit=60.0):
    """True as soon as `condition()` is (checked until `limit` seconds have passed)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_servers_are_forked_by_the_fork_server_where_the_system_has_fork(host, probe):
    argv = ["serve", "--solution", probe]
    first, second = host.spawn(argv), host.spawn(argv)
    ahead = host._spare[1]  # the next test's, forked while this one runs
    assert all(isinstance(p, ForkedProcess) for p in (first, second, ahead))
    assert answered(first) and answered(second) and first.pid != second.pid
    launcher = host.forks.process
    assert launcher.args[-2:] == [CODE_DIR, "--fork-server"]  # no solution: no learner code
    assert seen(host, first)["ppid"] == seen(host, second)["ppid"] == launcher.pid


def test_every_server_sees_the_common_command_line_and_gets_its_own_options(tmp_path, host,
                                                                            probe):
    argv = ["serve", "--solution", probe]
    forked = [host.spawn(argv, ["--sdk-version", version]) for version in ("9.1.0", "9.2.0")]
    workspace = tmp_path / "launched"
    workspace.mkdir()
    plain = PortableHost(REFERENCE, str(workspace), fork_server=False).start()
    try:
        launched = plain.spawn(argv, ["--sdk-version", "9.3.0"])
        assert isinstance(launched, PortableProcess) and plain.forks is None
        assert all(answered(p) for p in (*forked, launched))
        command_lines = [seen(host, p)["argv"] for p in forked] + [seen(plain, launched)["argv"]]
        assert command_lines[0] == command_lines[1] == command_lines[2]
        assert command_lines[0][1:] == argv and "9.1.0" not in str(command_lines)
        assert [seen(host, p)["cwd"] for p in forked] == [os.path.join(host.root, "work")] * 2
        for process, version in zip((*forked, launched), ("9.1.0", "9.2.0", "9.3.0"),
                                    strict=True):
            assert eventually(lambda p=process, v=version: f"simulated SDK {v}" in p.stderr())
    finally:
        plain.close()


def test_no_descriptor_of_the_fork_server_is_open_in_a_server(host, probe):
    server = host.spawn(["serve", "--solution", probe])
    assert answered(server)
    pipes = {os.fstat(end.fileno()).st_ino for end in (server._in, server._out, server._err)}
    fds = {int(fd): tuple(what) for fd, what in seen(host, server)["fds"].items()}
    assert {0, 1, 2} <= set(fds)  # and 3: the server keeps its protocol's stdout aside
    assert {kind for kind, _ in fds.values()} == {stat.S_IFIFO}  # no socket
    assert {inode for _, inode in fds.values()} == pipes  # its own pipes, nothing else


def test_a_forked_servers_exit_status_and_its_kill_are_reported(host):
    argv = ["serve", "--solution", EJ2]
    ending, killed = host.spawn(argv), host.spawn(argv)
    assert answered(ending) and answered(killed)
    assert ending.status() is None and killed.status() is None
    ending.close_input()  # the end of its input: the server stops by itself
    assert ending.status(wait=60.0) == 0 and ending.read(1.0) == b""
    killed.kill()
    assert killed.status(wait=60.0) == -9
    early = host.forks.spawn(argv, os.path.join(host.root, "work"), wait=False)
    early.kill()  # most likely before its pid came: killed when it comes
    assert early.status(wait=60.0) == -9 and early.pid is not None
    bad = host.spawn(argv, ["--no-such-option"])  # argparse refuses it: exit 2
    assert bad.status(wait=60.0) == 2 and "--no-such-option" in bad.stderr()


def test_sweep_ends_every_server_and_close_ends_the_fork_server_too(host):
    argv = ["serve", "--solution", EJ2]
    servers = [host.spawn(argv) for _ in range(3)]
    assert all(answered(p) for p in servers)
    servers.append(host._spare[1])  # the one forked ahead for the next test
    host.sweep()
    assert [p.status(wait=60.0) for p in servers] == [-9, -9, -9, -9]
    launcher = host.forks.process
    assert launcher.poll() is None  # it serves the next test
    later = host.spawn(argv)
    assert answered(later)
    host.close()
    assert later.status(wait=60.0) is not None and launcher.poll() is not None


def test_when_the_fork_server_is_gone_servers_are_launched_and_the_forked_ones_end(host):
    argv = ["serve", "--solution", EJ2]
    forked = host.spawn(argv)
    assert answered(forked)
    host.forks.process.kill()
    host.forks.process.wait()
    assert forked.status(wait=60.0) is not None  # none of its servers outlives it
    launched = host.spawn(argv, ["--sdk-version", "9.4.0"])
    assert isinstance(launched, PortableProcess) and answered(launched)
    assert eventually(lambda: "simulated SDK 9.4.0" in launched.stderr())


def test_a_fork_server_that_cannot_start_leaves_servers_launched(tmp_path, monkeypatch):
    monkeypatch.setattr("grader.hosts.portable.CODE_DIR", str(tmp_path / "no-code-here"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    host = PortableHost(REFERENCE, str(workspace)).start()
    try:
        assert host.forks is not None  # started, and about to fail: there is no main.py
        assert host.forks.spawn(["serve"], str(tmp_path)) is None and host.forks.lost
    finally:
        host.close()


def test_a_fork_server_started_ahead_serves_the_next_host_only(tmp_path):
    portable.start_ahead()
    ahead = portable._ahead[-1]
    hosts = []
    try:
        for name in ("first", "second"):
            (tmp_path / name).mkdir()
            hosts.append(PortableHost(REFERENCE, str(tmp_path / name)).start())
        first, second = hosts
        assert first.forks is ahead and second.forks is not ahead and not portable._ahead
        assert answered(first.spawn(["serve", "--solution", EJ2]))
    finally:
        for host in hosts:
            host.close()
    assert ahead.process.poll() is not None


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_a_fork_server_started_ahead_and_never_used_ends_with_its_process():
    helper = subprocess.run(
        [sys.executable, "-c", "from grader.hosts import portable\n"
         "portable.start_ahead()\nprint(portable._ahead[0].process.pid)"],
        cwd=REPO_DIR, capture_output=True, text=True, timeout=120)
    assert helper.returncode == 0, helper.stderr
    assert eventually(lambda: gone(int(helper.stdout)))
