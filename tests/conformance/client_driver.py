"""The lesson's client (code/client/: sync_client.py over http_client.py) as the suite's client.

`conformance client --command "python client_driver.py"` starts a small MCP server per scenario
and runs this with its URL as the last argument, the scenario in MCP_CONFORMANCE_SCENARIO, the
revision in MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios, what to call in
MCP_CONFORMANCE_CONTEXT. What to do in each scenario follows the suite's own everything-client
(examples/clients/typescript/everything-client.ts in modelcontextprotocol/conformance); every
frame is the client core's, every header and stream the HTTP driver's. Exit 0 when the
scenario's steps ran, 1 when one failed (the suite judges what it saw on the wire either way),
2 for a scenario this client does not play (expectations.py says which and why).
"""

import json
import os
import sys
import threading
from pathlib import Path

CODE = Path(os.environ.get("NOTES_CODE_DIR") or Path(__file__).resolve().parents[2] / "code")
sys.path.insert(0, str(CODE))

from client import http_client  # noqa: E402
from client.sync_client import Client  # noqa: E402

STATELESS = "2026-07-28"


class User:
    """Accepts every form with `content`; `before` runs first (in the client's worker)."""

    def __init__(self, content, before=None):
        self.content, self.before = content, before

    def elicit(self, params, question_id=None):
        if self.before is not None:
            self.before()
        return {"action": "accept", "content": self.content}

    def open_url(self, url):
        pass


def connected(url, protocol, **options):
    client = Client(*http_client.connect(url), protocol=protocol, timeout=20, roots=None,
                    **options)
    return client.connect()


def basic(client, context):
    tools = client.list_tools()
    if tools:
        client.call_tool(tools[0]["name"], {"a": 2, "b": 3}, timeout=20)


def list_only(client, context):
    client.list_tools()


def preserve_schema(client, context):
    focal = next(t for t in client.list_tools() if t["name"] == "json_schema_2020_12_tool")
    client.call_tool("json_schema_echo", {"schema": focal["inputSchema"]}, timeout=20)


def client_defaults(client, context):
    client.list_tools()
    client.call_tool("test_client_elicitation_defaults", {}, timeout=20)


def request_state(client, context):
    client.list_tools()
    unrelated = threading.Event()

    def call_unrelated_first():  # a parallel call between a round and its retry
        if not unrelated.is_set():
            unrelated.set()
            client.call_tool("test_mrtr_unrelated", {}, timeout=20)
    client.user = User({"confirmed": True}, before=call_unrelated_first)
    client.call_tool("test_mrtr_echo_state", {}, timeout=20)
    client.user = User({"confirmed": True})
    client.call_tool("test_mrtr_no_state", {}, timeout=20)
    client.call_tool("test_mrtr_no_result_type", {}, timeout=20)


def call_what_it_lists(client, context):
    """The header scenarios: the calls the scenario asks for, else every tool listed (a tool
    the HTTP driver left out for its broken x-mcp-header marks is never called)."""
    listed = {t["name"] for t in client.list_tools()}
    calls = context.get("toolCalls") or [{"name": name, "arguments": {}} for name in sorted(listed)]
    for call in calls:
        if call["name"] in listed:
            client.call_tool(call["name"], call.get("arguments", {}), timeout=20)


SCENARIOS = {  # scenario -> (what to do, client options)
    "initialize": (basic, {}),
    "tools_call": (basic, {}),
    "sse-retry": (basic, {}),
    "json-schema-ref-no-deref": (list_only, {}),
    "json-schema-2020-12-preservation": (preserve_schema, {}),
    "request-metadata": (list_only, {}),
    "elicitation-sep1034-client-defaults": (client_defaults, {"elicitation": {"form": {}}}),
    "sep-2322-client-request-state": (request_state, {"elicitation": {"form": {}}}),
    "http-standard-headers": (call_what_it_lists, {}),
    "http-custom-headers": (call_what_it_lists, {}),
    "http-invalid-tool-headers": (call_what_it_lists, {}),
}


def main():
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario not in SCENARIOS:
        print(f"client_driver: this client does not play {scenario!r}", file=sys.stderr)
        return 2
    protocol = STATELESS if os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") == STATELESS \
        else "2025-11-25"
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    steps, options = SCENARIOS[scenario]
    user = User({}) if "elicitation" in options else None
    with connected(sys.argv[-1], protocol, user=user, **options) as client:
        try:
            steps(client, context)
        except Exception as exc:  # the suite reads the wire; say what stopped us
            print(f"client_driver: {scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
