"""Start a notes server whose own options come in on its standard input, not its command line.

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

Deliberate simplifications: a line over 64 KiB or that is not a list of strings stops the
server (exit 2): only the grader writes it.
"""

import json
import os
import sys

MAX_LINE = 65536


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


def main():
    code, common = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, code)
    sys.argv = [os.path.join(code, "main.py"), *common]
    import main as server_main  # the course's server, not the solution: it loads in main()
    warm_up(server_main)
    try:
        private = private_options()
    except ValueError as exc:
        sys.stderr.write(f"[launch] {exc}\n")
        return 2
    return server_main.main([*common, *private])


if __name__ == "__main__":
    sys.exit(main())
