"""Benchmark: the stdlib `serve` against the SDK's own MCPServer, side by side, same run.

Both servers run as stdio subprocesses driven by the official SDK client (2025-11-25,
`mode="legacy"`) and expose a tool named `notes_list` that does the same work: scan the same
notes folder inside the client's roots (both ask roots/list once). We time N round trips of
`notes_list` against each, alternating rounds so machine noise hits both alike, and print the
time per call as a ratio. Goal: serve costs at most half of MCPServer per call.

`--http` does the same over Streamable HTTP: `serve --http` against the SDK's MCPServer run
with its own Streamable HTTP transport (uvicorn), both on 127.0.0.1, each driven by the SDK
client over HTTP (one keep-alive connection pool per client). Same goal: at most half.

A third process sets the floor: a trivial stdlib responder that returns serve's exact result
and declares serve's exact outputSchema. Whatever it costs is the SDK client's own work (JSON
parsing, pydantic models, and re-validating structuredContent against outputSchema on every
call), paid equally by both servers. The second ratio compares what each server adds above it.

It also times the whole demo against a bare interpreter start of the same interpreter with
the same flags (`python -c pass`), as a learner runs it and isolated (`-I -S`).

Not a test: numbers on a shared 2-core machine are noisy, so nothing here asserts; the exit
status says whether the goal was met (`make bench` reads it, with `--json FILE`).
"""

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
ROOT = Path(__file__).resolve().parent.parent
MAIN = ROOT / "code" / "main.py"
CALLS, ROUNDS = 200, 5
GOAL = 0.5  # issue 21: serve costs at most half of MCPServer per call

SDK_SERVER = '''
import sys, warnings
sys.path.insert(0, {code!r})
warnings.simplefilter("ignore")
import store
from roots import RootSet
from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer, Context
server = MCPServer("notas-sdk")
cache = {{}}

class Note(BaseModel):
    id: str
    title: str
    created: str
    uri: str

class Listing(BaseModel):
    notes: list[Note]

@server.tool(name="notes_list")
async def notes_list(ctx: Context) -> Listing:
    if "roots" not in cache:
        result = await ctx.session.list_roots()
        cache["roots"] = RootSet.from_list_result(result.model_dump(mode="json"))
    return Listing(notes=[Note(**n.summary()) for n in store.scan(cache["roots"])])

server.run("stdio")
'''


TRIVIAL_SERVER = '''
import json, sys
tool, payload = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = {"initialize": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                             "serverInfo": {"name": "trivial", "version": "0"}},
              "tools/list": {"tools": [tool]}, "tools/call": payload}.get(msg["method"], {})
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
    sys.stdout.flush()
'''


SDK_HTTP_SERVER = SDK_SERVER.replace(
    'server = MCPServer("notas-sdk")', 'server = MCPServer("notas-sdk", log_level="WARNING")'
).replace('server.run("stdio")',
          'server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))')

# The floor over HTTP: a stdlib HTTP/1.1 server (keep-alive, no Nagle wait) that answers every
# request with serve's exact reply, and nothing else (no session, no roots, no GET stream).
TRIVIAL_HTTP_SERVER = '''
import json, socket, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
tool, payload = json.loads(sys.argv[1]), json.loads(sys.argv[2])
RESULTS = {"initialize": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "trivial", "version": "0"}},
           "tools/list": {"tools": [tool]}, "tools/call": payload}

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in msg or "method" not in msg:
            return self.reply(202, b"")
        self.reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                    "result": RESULTS.get(msg["method"], {})}).encode())

    def do_GET(self):
        self.reply(405, b"")

    do_DELETE = do_GET

    def reply(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"ready on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
server.serve_forever()
'''


def make_notes(folder):
    sys.path.insert(0, str(ROOT / "code"))
    import store
    for i in range(20):
        store.write_atomic(os.path.join(folder, f"n{i}.md"),
                           store.render(f"note-{i}", f"Nota {i}", "2025-01-01", "x" * 200))


async def time_calls(params, roots_uri):
    async def roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri=roots_uri)])

    async with Client(params, mode="legacy", list_roots_callback=roots) as client:
        await client.call_tool("notes_list", {})  # warm-up: roots fetched, caches filled
        start = time.perf_counter()
        for _ in range(CALLS):
            result = await client.call_tool("notes_list", {})
            assert not result.is_error and len(result.structured_content["notes"]) == 20
        return (time.perf_counter() - start) / CALLS


async def serve_reply(params, roots_uri):
    """serve's notes_list tool description and one of its results, as raw JSON."""
    async def roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri=roots_uri)])

    async with Client(params, mode="legacy", list_roots_callback=roots) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "notes_list")
        result = await client.call_tool("notes_list", {})
    dump = {"by_alias": True, "mode": "json", "exclude_none": True}
    payload = result.model_dump(**dump)
    payload.pop("resultType", None)
    return tool.model_dump(**dump), payload


class HttpServer:
    """A server process on 127.0.0.1 for the HTTP benchmark: `url` once it listens (its
    stdout or stderr says so, or, for the SDK's uvicorn, its port answers); stopped by its
    PID."""

    def __init__(self, argv, port=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        if port is None:
            for line in self.proc.stdout:
                found = re.search(r"ready on (http://\S+/mcp)", line)
                if found:
                    self.url = found[1]
                    break
            else:
                raise RuntimeError(f"{argv[-1]}: no 'ready on' line")
            threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drained
            return
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self.url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 120
        while True:  # uvicorn says nothing at WARNING: its port answering is the sign
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the SDK's HTTP server did not start") from None
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_main(args, tmp, notes):
    """`--http`: the same calls over Streamable HTTP, serve --http against the SDK's."""
    uri = f"file://{notes}"
    sdk_script = os.path.join(tmp, "sdk_http_server.py")
    Path(sdk_script).write_text(SDK_HTTP_SERVER.format(code=str(ROOT / "code")))
    trivial_script = os.path.join(tmp, "trivial_http_server.py")
    Path(trivial_script).write_text(TRIVIAL_HTTP_SERVER)
    servers = {"serve --http": HttpServer([sys.executable, "-I", str(MAIN), "serve", "--http",
                                           "127.0.0.1:0"]),
               "MCPServer": HttpServer([sys.executable, sdk_script, str(port := free_port())],
                                       port)}
    try:
        tool, payload = asyncio.run(serve_reply(servers["serve --http"].url, uri))
        servers["floor"] = HttpServer([sys.executable, "-I", trivial_script, json.dumps(tool),
                                       json.dumps(payload)])
        timings = {name: [] for name in servers}
        for _ in range(ROUNDS):
            for name, server in servers.items():
                timings[name].append(asyncio.run(time_calls(server.url, uri)))
    finally:
        for server in servers.values():
            server.stop()
    met = report(args, timings, "serve --http", "over Streamable HTTP ",
                 "serve --http / the SDK's Streamable HTTP MCPServer, per call")
    return 0 if met else 1


def report(args, timings, ours, over, goal):
    """Print the medians, `ours` / MCPServer and what each adds above the client's floor;
    write them to `--json` for `make bench`. Whether the goal was met."""
    per_call = {name: statistics.median(values) for name, values in timings.items()}
    print(f"notes_list round trips {over}through the SDK client ({ROUNDS} rounds x {CALLS} "
          "calls, median per call):")
    width = max(map(len, per_call))
    for name, seconds in per_call.items():
        print(f"  {name:{width}s} {seconds * 1e3:7.3f} ms/call  ({1 / seconds:7.0f} calls/s)")
    ratio = per_call[ours] / per_call["MCPServer"]
    met = ratio <= args.goal
    print(f"  {ours} / MCPServer {over}time per call = {ratio:.2f}  (goal: <= {args.goal:.2f}) "
          f"{'OK' if met else 'MISSED'}")
    floor = per_call["floor"]
    own = {name: max(per_call[name] - floor, 1e-9) for name in (ours, "MCPServer")}
    print(f"  above the SDK client's own floor ({floor * 1e3:.3f} ms/call): {ours} adds "
          f"{own[ours] * 1e3:.3f} ms, MCPServer adds {own['MCPServer'] * 1e3:.3f} ms, "
          f"ratio {own[ours] / own['MCPServer']:.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"goal": goal, "value": ratio, "limit": args.goal, "unit": "", "met": met,
                       "detail": f"{ours} {per_call[ours] * 1e3:.2f} ms/call, MCPServer "
                                 f"{per_call['MCPServer'] * 1e3:.2f} ms/call, SDK client floor "
                                 f"{floor * 1e3:.2f} ms/call",
                       "cause": "" if met else (
                           f"above the SDK client's floor {ours} adds {own[ours] * 1e3:.2f} "
                           f"ms/call, MCPServer {own['MCPServer'] * 1e3:.2f}")}, out)
    return met


def bare_start(args):
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal", type=float, default=GOAL)
    parser.add_argument("--json", metavar="FILE", help="also write the result there (make bench)")
    parser.add_argument("--no-demo", action="store_true",
                        help="skip the demo's start-up timing (benchmarks/demo_bench.py has it)")
    parser.add_argument("--http", action="store_true",
                        help="serve --http against the SDK's Streamable HTTP server instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        notes = os.path.join(tmp, "Notas")
        os.mkdir(notes)
        make_notes(notes)
        if args.http:
            return http_main(args, tmp, notes)
        sdk_script = os.path.join(tmp, "sdk_server.py")
        Path(sdk_script).write_text(SDK_SERVER.format(code=str(ROOT / "code")))
        uri = f"file://{notes}"
        servers = {
            "serve": StdioServerParameters(command=sys.executable,
                                           args=["-I", str(MAIN), "serve"]),
            "MCPServer": StdioServerParameters(command=sys.executable, args=[sdk_script])}
        tool, payload = asyncio.run(serve_reply(servers["serve"], uri))
        trivial_script = os.path.join(tmp, "trivial_server.py")
        Path(trivial_script).write_text(TRIVIAL_SERVER)
        servers["floor"] = StdioServerParameters(
            command=sys.executable,
            args=["-I", trivial_script, json.dumps(tool), json.dumps(payload)])
        timings = {name: [] for name in servers}
        for _ in range(ROUNDS):
            for name, params in servers.items():
                timings[name].append(asyncio.run(time_calls(params, uri)))
    met = report(args, timings, "serve", "", "serve / the SDK's MCPServer, per notes_list call")
    if args.no_demo:
        return 0 if met else 1
    for label, flags in (("as a learner runs it", []), ("isolated, -I -S", ["-I", "-S"])):
        bare = statistics.median(bare_start([*flags, "-c", "pass"]) for _ in range(10))
        demo = statistics.median(bare_start([*flags, str(MAIN)]) for _ in range(10))
        print(f"demo ({label}): {demo * 1e3:.0f} ms vs a bare interpreter start "
              f"{bare * 1e3:.0f} ms = {demo / bare:.1f} start-ups")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
