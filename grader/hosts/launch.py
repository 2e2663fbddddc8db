"""Start a notes server whose own options come in on its standard input, not its command line;
or, where the system has fork, a fork server that starts them.

The portable self-check host (grader/hosts/portable.py) runs every server of a submission as

    python -I grader/hosts/launch.py CODE_DIR serve --solution ... (the same for every server)

and writes this test's own options (grader/checks/lab.py's `private`: the simulated SDK version,
the reto's sealer options) as the first line of the server's standard input, a JSON list of
strings. This launcher imports the course's server (code/main.py, which loads no solution until
it runs), so that a server the host starts ahead of its test (its spare) has paid that while
the previous test ran; it then reads that line byte by byte (nothing of the MCP frames that
follow is read ahead), and runs `main.main` with both, leaving in `sys.argv` only the common
part: what the learner's code can read of its command line is the same in every test, as in
the sandbox, where the zygote does the same in-process (grader/hosts/zygote.py `_run_server`).

Where the system has fork (Linux, macOS), the host starts one fork server instead:

    python -I grader/hosts/launch.py CODE_DIR --fork-server   (its standard input: a socket)

It imports and warms up the course's server as above, runs no learner code, and serves
requests on that socket (a stream socketpair the host holds the other end of): each request
is a 4-byte length, a JSON object {"argv": the common command line, "cwd": the working folder}
and, passed with it (SCM_RIGHTS, as multiprocessing's forkserver does), the server's standard
input, output and error. It forks a child, answers {"pid": N}, and later {"exit": N,
"status": code} when that child ends (the code as subprocess gives it: -signal when killed).
The child closes every descriptor of the fork server (its socket, its wake-up pipe), takes the
three it was sent as 0, 1 and 2, moves to its folder, and goes on exactly as a launched server:
`sys.argv` the common part, its options read from its standard input, `main.main`. When the
socket ends (the host closed it, or died), the fork server kills every child still running,
reaps them and exits.

Deliberate simplifications: a line over 64 KiB or that is not a list of strings stops the
server (exit 2): only the grader writes it; a request the fork server cannot read ends it (the
host falls back to launched servers); the children's own children are not tracked.
"""

import json
import os
import sys

MAX_LINE = 65536
FORK_SERVER = "--fork-server"
MAX_REQUEST = 1 << 20


def private_options():
    line = bytearray()
    while len(line) <= MAX_LINE:
        byte = os.read(0, 1)
        if byte in (b"", b"\n"):
            break
        line += byte
    options = json.loads(line.decode("utf-8"))
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise ValueError("the private options are not a list of strings")
    return options


def warm_up(server_main):
    """What a server's start-up needs before its options and the solution, as the sandbox's
    zygote does it before it forks (grader/hosts/zygote.py): the setup page's HTTP server
    (imported lazily there) and the command line's parser (built once, cached)."""
    from http import server as _http_server  # noqa: F401

    server_main.parse_args(["serve"])


# what a solution's import commonly needs, as the sandbox's zygote preloads (its PRELOAD)
PRELOAD = ("sealkit", "nube_copias", "dataclasses", "secrets", "hmac", "hashlib", "base64",
           "datetime", "pathlib", "unicodedata", "urllib.parse", "uuid", "typing", "enum")
WARM_UP_SOLUTION = "from extension import Extension\n\nextension = Extension()\n"


def warm_up_for_forks():
    """The fork server's deeper warm-up, paid once for all its servers, as the zygote's: the
    modules solutions commonly import, and loading a solution once (a trusted file of its own,
    in a private temporary folder, removed at once), so that each forked server finds those
    paths warm. A module this Python lacks is skipped."""
    import gc
    import importlib
    import tempfile

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import extension
    with tempfile.TemporaryDirectory(prefix="launch-") as folder:
        path = os.path.join(folder, "warm_up_solution.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(WARM_UP_SOLUTION)
        extension.load(path)
    gc.collect()
    gc.freeze()  # fewer copy-on-write faults in the forked servers


def _receive(control, socket):
    """One request: (its JSON object, the descriptors sent with it), or (None, []) at the
    socket's end or on a request that cannot be read."""
    head, fds, _flags, _address = socket.recv_fds(control, 4, 3)
    while head and len(head) < 4:
        more = control.recv(4 - len(head))
        if not more:
            break
        head += more
    size = int.from_bytes(head, "big") if len(head) == 4 else MAX_REQUEST + 1
    body = bytearray()
    while size <= MAX_REQUEST and len(body) < size:
        more = control.recv(size - len(body))
        if not more:
            break
        body += more
    try:
        request = json.loads(bytes(body).decode("utf-8"))
        argv, cwd = request["argv"], request["cwd"]
        if len(fds) != 3 or not isinstance(cwd, str) or not isinstance(argv, list) \
                or not all(isinstance(arg, str) for arg in argv):
            raise ValueError("not a request")
    except (ValueError, KeyError, TypeError):
        for fd in fds:
            os.close(fd)
        return None, []
    return request, fds


def fork_server():
    """Serve fork requests on the socket at standard input until it ends. Returns only in a
    forked child: its common command line, once it holds its own descriptors."""
    import select
    import signal
    import socket

    control = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # descriptor 0 stays taken, by nothing of the socket
    os.close(null)
    wake_read, wake_write = os.pipe()  # SIGCHLD wakes select
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    children = set()

    def tell(message):
        try:
            control.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass  # the host is gone: the end of the socket says so next

    def reap(block=False):
        while children:
            try:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                children.clear()
                return
            if pid == 0:
                return
            if pid in children:
                children.discard(pid)
                tell({"exit": pid, "status": os.waitstatus_to_exitcode(status)})

    while True:
        ready, _, _ = select.select([control, wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 4096)
            reap()
        if control not in ready:
            continue
        request, fds = _receive(control, socket)
        if request is None:
            break
        pid = os.fork()
        if pid == 0:  # the child: nothing of the fork server stays open in it
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(control.detach())
            os.close(wake_read)
            os.close(wake_write)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            for fd in fds:
                os.close(fd)
            try:
                os.chdir(request["cwd"])
            except OSError as exc:
                sys.stderr.write(f"[launch] {exc}\n")
                sys.stderr.flush()
                os._exit(2)
            return request["argv"]
        for fd in fds:
            os.close(fd)
        children.add(pid)
        tell({"pid": pid})
    for pid in children:  # the host is gone: so are its servers
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    reap(block=True)
    control.close()
    return None


def main():
    code, common = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, code)
    sys.argv = [os.path.join(code, "main.py"), *common]
    import main as server_main  # the course's server, not the solution: it loads in main()
    warm_up(server_main)
    if common == [FORK_SERVER]:
        warm_up_for_forks()
        common = fork_server()
        if common is None:
            return 0
        sys.argv = [os.path.join(code, "main.py"), *common]  # a forked server's own
    try:
        private = private_options()
    except ValueError as exc:
        sys.stderr.write(f"[launch] {exc}\n")
        return 2
    return server_main.main([*common, *private])


if __name__ == "__main__":
    sys.exit(main())
