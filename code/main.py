"""Entry point: `python3 code/main.py` runs the demo, `python3 code/main.py serve` the server.

    python3 code/main.py [demo] [--protocol 2025-11-25|2026-07-28] [--sdk-version V] [--full]
    python3 code/main.py serve [--root DIR]... [--solution PATH] [--sdk-version V]
                               [--demo-url-guard] [--setup-wait S] [--url-ttl S]
                               [--state-ttl S] [--state-key HEX] [--state-sealer solution|server]
                               [--user NAME] [--second-user NAME] [--setup-page http|rpc]
                               [--provider local|rpc] [--trace FILE] [--http [HOST:]PORT]
                               [--spent-states WHERE]

`serve` speaks MCP on stdin/stdout (one JSON-RPC message per line) and logs on stderr;
`serve --http 127.0.0.1:8000` speaks Streamable HTTP instead, at http://127.0.0.1:8000/mcp
(streamable_http.py: both revisions, loopback only unless you name another address; port 0
picks a free one, and the log says which). The
roots come from the client; `--root` sets them for clients that do not declare the roots
capability, and limits them for clients that do. `--sdk-version` (default: the
NOTES_SDK_VERSION variable, else 2.3.0; an empty value means "unknown") is the SDK version
this stdlib server pretends to run on: it only feeds the URL-mode guard.

A 2026-07-28 `requestState` is sealed with a key of this server: a new one at every start (a
restart invalidates every outstanding state), or `--state-key`, a fleet's shared key (64 hex
digits; it shows in the process list, so it is for tests and graders: a real fleet reads it from
its secret store); `--spent-states WHERE`, a store those workers share (a folder, an SQLite
file or a Redis URL), makes a state of a tool that changes things open once across all of them
(spent_states.py; the recipe is in docs/http-fleet.md). `--state-sealer server`
ignores a solution's `@extension.request_state` and always uses the server's own sealer.

The setup page of URL mode is served on 127.0.0.1 (a free port) by default. `--setup-page rpc`
opens no socket: the page is reached through the private request
`io.github.curso-mcp/setupPage` on the same pipe, params {"method": "GET"|"POST", "target":
"/connect?elicitation=...", "body": "<form data>"}, result {"status", "title", "body"} (the
page a browser would get). It is for graders' scripted browsers in sandboxes without a network:
whoever writes on the pipe can press the page's buttons, so never use it for real users.

`--provider rpc`, for graders only, puts exercise 3's Nube de Copias out of this process: the
server sends the private request `io.github.curso-mcp/provider` on the same pipe to exchange a
code or to make a copy, and the client (a grader, which also serves the provider's page to its
scripted browser) answers it. Default `local`: the provider runs inside the server.

`--user NAME` (or `--subject NAME`) names who uses the server: `ctx.user`, the principal a
requestState is bound to, and the identity exercise 3 binds a flow and a credential to (default
`local:<your login>`). `--second-user NAME`, for graders only,
hosts a second session of that other user on the same pipe: its frames travel wrapped in the
notification `io.github.curso-mcp/secondSession` {"frame": <frame>}, both ways (with
`--setup-page rpc`, its page requests are that user's browser). Off by default.

Deliberate simplifications: options only, no configuration file; the demo takes no input.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lesson.server import MAX_SETUP_WAIT, Config, NotesServer  # noqa: E402
from notes import store  # noqa: E402
from shared import wire  # noqa: E402
from shared.protocol import (  # noqa: E402
    LATEST_HANDSHAKE,
    PROVIDER_METHOD,
    SECOND_SESSION_METHOD,
    SETUP_PAGE_METHOD,
    SIMULATED_SDK_VERSION,
    STATELESS_VERSION,
)
from transports import transport  # noqa: E402

DEFAULTS = Config(roots=[])  # argparse takes its defaults from here: one home for each
RPC_PAGE_HELP = f"""\
serve --setup-page rpc: the setup page without any socket. The client (a grader's scripted
browser) sends the JSON-RPC request {SETUP_PAGE_METHOD} on the MCP pipe itself, at any
revision and without initialize:
  params {{"method": "GET" | "POST", "target": "/connect?elicitation=<id>",
          "body": "<application/x-www-form-urlencoded form, for POST>"}}
  result {{"status": <HTTP status>, "title": "<page title>", "body": "<the whole page>"}}
The elicitation URLs then start with http://notas-sync.localhost (nothing listens there):
send their path and query as "target"; a redirect's result also has "location". Whoever
writes on the pipe can press the page's buttons, so this is for tests only, never for real
users.

serve --second-user NAME (graders only): a second session, of the user NAME, on the same
pipe. Each of its frames travels as the notification
  {{"jsonrpc": "2.0", "method": "{SECOND_SESSION_METHOD}", "params": {{"frame": <frame>}}}}
in both directions; everything else is the first session's."""


def parse_args(argv):
    args = cached_parser().parse_args(argv)
    if args.sdk_version is None:  # read when asked, not when the parser was built
        args.sdk_version = default_sdk_version()
    return args


_PARSER = []


def cached_parser():
    """The command line's parser, built once: a grader's sandbox builds it before it forks
    its servers, so that a server does not spend a third of its start-up on it."""
    if _PARSER:
        return _PARSER[0]
    import argparse  # imported here: the demo without options needs no parser
    parser = argparse.ArgumentParser(prog="main.py", description=__doc__.splitlines()[0],
                                     epilog=RPC_PAGE_HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="demo", choices=("demo", "serve"))
    parser.add_argument("--protocol", default=LATEST_HANDSHAKE,
                        choices=(LATEST_HANDSHAKE, STATELESS_VERSION), help="demo only")
    parser.add_argument("--full", action="store_true",
                        help="demo only: print each message's JSON, not a one-line summary")
    parser.add_argument("--sdk-version",
                        help="simulated MCP SDK version for the URL-mode guard (default: "
                             "NOTES_SDK_VERSION, else the course's)")
    parser.add_argument("--root", action="append", default=[], metavar="DIR")
    parser.add_argument("--demo-url-guard", action="store_true",
                        help="without a solution guard, use the demo's fixed URL-mode guard "
                             "(it ignores the SDK version); without any guard, no URL mode")
    parser.add_argument("--solution", metavar="PATH", help="a learner's solution file or folder")
    parser.add_argument("--setup-wait", type=setup_wait, default=DEFAULTS.setup_wait,
                        help="seconds a call waits for the setup page after consent "
                             f"(at most {MAX_SETUP_WAIT:g}: clients give up after 60)")
    parser.add_argument("--url-ttl", type=seconds, default=DEFAULTS.url_ttl,
                        help="seconds a URL elicitation stays valid")
    parser.add_argument("--state-ttl", type=seconds, default=DEFAULTS.state_ttl,
                        help="seconds a 2026-07-28 requestState stays valid")
    parser.add_argument("--state-key", metavar="HEX", type=state_key,
                        help="a fleet's shared key for requestState (at least 64 hex digits); "
                             "default: a new random key at every start")
    parser.add_argument("--spent-states", metavar="WHERE",
                        help="where replicas (with --state-key) record the spent requestStates "
                             "of tools that change things, so each opens once across all of "
                             "them: a folder (one machine), an SQLite file (PATH.sqlite or "
                             "sqlite:PATH; several processes of one machine) or a Redis URL "
                             "(redis://HOST:PORT/DB; several machines, needs the redis "
                             "package); see docs/http-fleet.md")
    parser.add_argument("--state-sealer", choices=("solution", "server"),
                        default=DEFAULTS.state_sealer,
                        help="who seals requestState: the solution's sealer when it brings one "
                             "(default), or always the server's own")
    parser.add_argument("--setup-page", choices=("http", "rpc"),
                        default=DEFAULTS.page_transport,
                        help="how the URL-mode setup page is served: http on 127.0.0.1 "
                             f"(default), or rpc: no socket, the private request "
                             f"{SETUP_PAGE_METHOD} on this same pipe, for graders' scripted "
                             "browsers only (whoever writes on the pipe can press its buttons)")
    parser.add_argument("--user", "--subject", dest="subject", metavar="NAME", type=name,
                        default=DEFAULTS.subject,
                        help="who uses this server: the principal a requestState is bound to, "
                             "and the identity a URL-mode flow and its credential are bound to "
                             "(default: local:<your login>)")
    parser.add_argument("--second-user", metavar="NAME", type=name,
                        help=f"graders only: a second session of the user NAME on the same "
                             f"pipe, its frames wrapped in {SECOND_SESSION_METHOD}")
    parser.add_argument("--http", metavar="[HOST:]PORT", type=http_address,
                        help="speak Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
                             "(HOST defaults to 127.0.0.1; port 0 picks a free one)")
    parser.add_argument("--provider", choices=("local", "rpc"), default=DEFAULTS.provider,
                        help="where exercise 3's Nube de Copias runs: in this server (default), "
                             f"or rpc: the client answers {PROVIDER_METHOD} on this same pipe "
                             "(graders only)")
    parser.add_argument("--trace", metavar="FILE",
                        help="append every frame, both directions, to FILE (JSON lines); it "
                             "includes the user's answers, so use it only to debug")
    _PARSER.append(parser)
    return parser


def default_sdk_version():
    return os.environ.get("NOTES_SDK_VERSION", SIMULATED_SDK_VERSION)


def state_key(text):
    import argparse

    from core.request_state import ServerKey
    try:
        ServerKey.from_hex(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def http_address(text):
    """`[HOST:]PORT` -> (host, port). HOST is an address to listen on (default 127.0.0.1);
    a wildcard (0.0.0.0, ::) is refused: name the one interface you mean."""
    import argparse
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if host in ("0.0.0.0", "::", "*"):
        raise argparse.ArgumentTypeError("listen on one address (127.0.0.1 by default), not on "
                                         "every interface: this server has no authentication")
    if not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"not a port: {port!r}")
    return ("127.0.0.1" if host == "localhost" else host), int(port)


def setup_wait(text):
    import argparse
    value = seconds(text)
    if not value <= MAX_SETUP_WAIT:
        raise argparse.ArgumentTypeError(f"between 0 and {MAX_SETUP_WAIT:g} seconds")
    return value


def seconds(text):
    """A number of seconds: finite and not negative."""
    import argparse
    import math
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"not a number of seconds (finite, at least 0): "
                                         f"{text!r}")
    return value


def name(text):
    """A user's name: visible text, not empty."""
    import argparse
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"a user's name is visible text, not {text!r}")
    return text


def serve(args):
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed (a learner's print()) goes to stderr, not the wire
    sys.stdout = sys.stderr

    def log(text):
        print(f"[notas] {text}", file=sys.stderr, flush=True)

    for root in args.root:
        if not os.path.isdir(root):
            log(f"--root {root}: not a folder")
            return 2
    config = Config(roots=args.root, sdk_version=args.sdk_version or None,
                    demo_url_guard=args.demo_url_guard,
                    setup_wait=args.setup_wait, url_ttl=args.url_ttl, state_ttl=args.state_ttl,
                    state_key=args.state_key, state_sealer=args.state_sealer,
                    subject=args.subject, page_transport=args.setup_page,
                    second_user=args.second_user or None, provider=args.provider)
    solution = None
    if args.solution:
        from lesson import extension
        solution = extension.load(args.solution)
    if solution is not None:
        for file, problem in solution.errors.items():
            log(f"solution {file} not loaded: {problem}")
    trace = None
    if args.trace:
        try:
            trace = open(args.trace, "ab", buffering=0)
        except OSError as exc:
            log(f"--trace {args.trace}: {exc.strerror}")
            return 2
    server = NotesServer(config, solution, log=log)
    if args.spent_states:
        from core import spent_states
        try:
            shared = spent_states.open_store(args.spent_states)
        except spent_states.StoreUnavailable as exc:
            log(str(exc))
            return 2
        server.states = spent_states.SpentStates(server.states, shared)
    for signum in STOP_SIGNALS:  # a clean stop: a write in progress removes its copy
        signal.signal(signum, stop)
    if args.http:
        return serve_http(server, args, log, trace)
    log(f"ready on stdio (simulated SDK {config.sdk_version or 'unknown'}, "
        f"--root {args.root or 'none'})")
    lines, write = wire.read_lines(sys.stdin.buffer), wire_out.write
    if trace is not None:
        lines, write = wire.traced(lines, write, trace)
    try:
        transport.serve_stdio(server, lines, lambda data: (write(data), wire_out.flush()))
    except KeyboardInterrupt:
        pass
    except Terminated as stopped:
        return 128 + stopped.signum
    finally:
        store.stop_writes()
        server.close()
    return 0


def serve_http(server, args, log, trace=None):
    """`serve --http`: Streamable HTTP until SIGINT or SIGTERM (streamable_http.py)."""
    import ipaddress

    from transports import streamable_http
    if args.second_user:
        log("--second-user is for the stdio pipe only")
        return 2
    host, port = args.http

    def ready(http):
        def stop_soon(signum, frame):  # the stop happens between two turns of the server loop
            store.stop_writes()  # at once: a write in another thread names no copy from now on
            http.stop_soon(KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum))
        for signum in (signal.SIGINT, *STOP_SIGNALS):
            signal.signal(signum, stop_soon)
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        log(f"ready on {http.url} (simulated SDK {server.config.sdk_version or 'unknown'}, "
            f"--root {args.root or 'none'})" + ("" if loopback else
                                               "; WARNING: not loopback, and no authentication"))
    if server.config.page_transport == "http":
        server.serve_page_http()
    try:
        streamable_http.serve(server, host, port, log, trace, ready)
    except KeyboardInterrupt:
        pass
    except Terminated as stopped:
        return 128 + stopped.signum
    except OSError as exc:
        log(f"--http {host}:{port}: {exc}")
        return 2
    finally:
        store.stop_writes()
        server.close()
        if trace is not None:
            trace.close()
    return 0


# Every signal whose default would end the process and that a process can catch (SIGINT is
# Ctrl-C, KeyboardInterrupt): each stops the server cleanly, exit status 128 + its number.
STOP_SIGNALS = tuple(getattr(signal, name) for name in (
    "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF",
    "SIGXCPU", "SIGIO", "SIGPWR") if hasattr(signal, name))


class Terminated(BaseException):
    """A stopping signal (SIGTERM...), unwinding like Ctrl-C through every `finally` on the way
    out. Not a SystemExit: the session core turns a tool's SystemExit into a tool error and
    goes on."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def stop(signum, frame):
    """A stopping signal: no write names a copy any more and those named are removed (while
    their folders are still open), then leave (Terminated)."""
    store.stop_writes()
    raise Terminated(signum)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in ([], ["demo"]):  # the demo without options: nothing to parse
        return run_demo(LATEST_HANDSHAKE, default_sdk_version())
    args = parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return run_demo(args.protocol, args.sdk_version, args.full)


def run_demo(protocol, sdk_version, full=False):
    from cli import demo  # imported here: `serve` never needs it
    try:
        return demo.run(protocol=protocol, sdk_version=sdk_version or None, full=full)
    except BrokenPipeError:  # `| head` or `| less` stopped reading: nothing left to show
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
