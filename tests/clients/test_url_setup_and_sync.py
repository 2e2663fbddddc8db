"""URL mode with clients nobody here wrote (issue 10): the setup call never outlives a client's
request timeout, the page's completion arrives as notifications/elicitation/complete, and
notes_sync teaches -32042 (2025-11-25) and input_required (2026-07-28) on the wire.

The servers run with `--demo-url-guard` (without a guard there is no URL mode). Times are
scaled down so `make test` stays fast: the client gives up after 2 s, the server waits
`--setup-wait 1` s, and the user finishes the page 3 s after consenting, later than the
client's timeout would allow if the call were held open. NOTES_FULL_SCALE=1 runs the same
shape at full scale: the SDK's default 60 s timeout, the server's default --setup-wait, and a
user who finishes the page 90 s after consenting."""

import json
import os
import time

import mcp.types as types
import pytest
from clients_support import (
    REPO,
    Driver,
    complete_setup_page,
    run_driver,
    scenario,
    text_of,
)
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

from server_support import serve_argv

FULL_SCALE = os.environ.get("NOTES_FULL_SCALE") == "1"
SETUP_WAIT = 10 if FULL_SCALE else 1            # the server's bound (--setup-wait)
CLIENT_TIMEOUT_MS = None if FULL_SCALE else 2000  # None: the SDK's default (60 s)
PAGE_AFTER = 90 if FULL_SCALE else 3            # seconds from consent to the page's submit
SERVE = ["--demo-url-guard"] + ([] if FULL_SCALE else ["--setup-wait", SETUP_WAIT])
BOTH_MODES = {"form": {}, "url": {}}
URL_ELICITATION_REQUIRED = -32042


def setup_steps():
    first = {"op": "callTool", "name": "notes_setup"}
    if CLIENT_TIMEOUT_MS:
        first["timeoutMs"] = CLIENT_TIMEOUT_MS
    return [first,
            {"op": "waitFor", "method": "notifications/elicitation/complete",
             "timeoutMs": (PAGE_AFTER + 30) * 1000},
            {"op": "callTool", "name": "notes_setup"},
            {"op": "callTool", "name": "notes_sync"}]


@pytest.mark.timeout(PAGE_AFTER + 180)
@pytest.mark.parametrize("sdk", ["v1", "v2"])
def test_a_setup_finished_after_the_client_timeout_ends_configured_with_no_error(
        node, tree, trace, tmp_path, sdk):
    driver = Driver(scenario(sdk=sdk, serve=SERVE, trace=trace, roots=[tree.notes],
                             elicitation=BOTH_MODES, answers=[{"action": "accept"}],
                             steps=setup_steps()), tmp_path, timeout=PAGE_AFTER + 120)
    try:
        consent = driver.wait(lambda e: e["event"] == "elicitation", timeout=30)
        consented_at = time.monotonic()
        assert consent["mode"] == "url" and consent["params"]["elicitationId"]
        first = driver.wait(lambda e: e["event"] == "step" and e["index"] == 0,
                            timeout=SETUP_WAIT + 10)
        assert first["ok"], first
        assert first["ms"] < (SETUP_WAIT + 2) * 1000, "notes_setup held the call open"
        assert first["result"]["structuredContent"]["status"] == "pending"
        assert text_of(first["result"]).strip()
        time.sleep(max(0.0, consented_at + PAGE_AFTER - time.monotonic()))
        assert "Listo" in complete_setup_page(consent["params"]["url"])
        report = driver.report()
    finally:
        driver.stop()
    assert PAGE_AFTER * 1000 > (CLIENT_TIMEOUT_MS or report.data["defaultTimeoutMs"])
    done = report.step(1)
    assert done["ok"] and done["result"]["elicitationId"] == consent["params"]["elicitationId"]
    assert report.step(2)["result"]["structuredContent"]["status"] == "configured"
    assert report.step(3)["ok"] and not report.step(3)["result"].get("isError")
    assert all(step["ok"] for step in report.steps), "the user saw an error"
    assert report.data["clientErrors"] == []


def test_accepting_and_never_opening_the_page_is_answered_within_the_bound(node, tree, trace,
                                                                           tmp_path):
    report = run_driver(scenario(serve=SERVE, trace=trace, roots=[tree.notes],
                                 elicitation=BOTH_MODES, answers=[{"action": "accept"}],
                                 steps=[{"op": "callTool", "name": "notes_setup"},
                                        {"op": "sleep", "ms": 500}]), tmp_path)
    step = report.step(0)
    assert step["ok"] and step["ms"] < (SETUP_WAIT + 2) * 1000, step
    assert step["result"]["structuredContent"]["status"] == "pending"
    assert report.received("notifications/elicitation/complete") == []


def test_a_setup_that_still_waits_reports_progress_to_a_client_that_asked(node, tree, trace,
                                                                          tmp_path):
    report = run_driver(scenario(serve=["--demo-url-guard", "--setup-wait", "3"], trace=trace,
                                 roots=[tree.notes], elicitation=BOTH_MODES,
                                 answers=[{"action": "accept"}],
                                 steps=[{"op": "callTool", "name": "notes_setup",
                                         "progress": True}]), tmp_path)
    step = report.step(0)
    assert step["ok"] and step["result"]["structuredContent"]["status"] == "pending", step
    assert [e for e in report.events if e["event"] == "progress"], "no notifications/progress"


# -- notes_sync before the setup ---------------------------------------------------------------
def python_client(tree, trace, *serve, mode="legacy", seen=None):
    async def roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri=tree.notes.as_uri(), name="Notas")])

    async def user(ctx, params):
        if seen is not None:
            seen.append(params)
        return types.ElicitResult(action="decline")

    argv = serve_argv(*serve, trace=trace)
    return Client(StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO)),
                  mode=mode, list_roots_callback=roots, elicitation_callback=user)


@pytest.mark.anyio
async def test_python_sdk_sync_before_setup_raises_url_elicitation_required(tree, trace):
    async with python_client(tree, trace, "--demo-url-guard") as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("notes_sync", {})
    assert raised.value.error.code == URL_ELICITATION_REQUIRED
    [needed] = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
    assert needed.mode == "url" and needed.elicitation_id
    assert needed.url.startswith("http://127.0.0.1:")


def test_typescript_sdk_sync_before_setup_gets_minus_32042_with_the_url(node, tree, trace,
                                                                      tmp_path):
    report = run_driver(scenario(serve=["--demo-url-guard"], trace=trace, roots=[tree.notes],
                                 elicitation=BOTH_MODES,
                                 steps=[{"op": "callTool", "name": "notes_sync"}]), tmp_path)
    error = report.step(0)["error"]
    assert error["code"] == URL_ELICITATION_REQUIRED, error
    [needed] = error["data"]["elicitations"]
    assert needed["mode"] == "url" and needed["elicitationId"] and needed["url"]
    assert report.elicitations() == [], "-32042 replaces the elicitation/create request"


@pytest.mark.anyio
async def test_python_sdk_sync_at_2026_07_28_is_input_required_without_elicitation_id(tree, trace):
    seen = []
    async with python_client(tree, trace, "--demo-url-guard", mode="auto", seen=seen) as client:
        await client.call_tool("notes_sync", {})
    assert [type(p) for p in seen] == [types.ElicitRequestURLParams]
    frames = [json.loads(e["frame"]) for e in map(json.loads, trace.read_text().splitlines())
              if e["dir"] == "out"]
    asked = [f["result"] for f in frames if f.get("result", {}).get("resultType")
             == "input_required"]
    url_requests = [r["params"] for result in asked for r in result["inputRequests"].values()
                    if r["method"] == "elicitation/create" and r["params"].get("mode") == "url"]
    assert url_requests and all("elicitationId" not in p for p in url_requests)
    assert not any(f.get("error", {}).get("code") == URL_ELICITATION_REQUIRED for f in frames)


@pytest.mark.anyio
async def test_without_a_url_guard_sync_is_a_tool_error_not_a_url(tree, trace):
    seen = []
    async with python_client(tree, trace, seen=seen) as client:
        result = await client.call_tool("notes_sync", {})
    assert result.is_error and result.content[0].text.strip()
    assert "http" not in result.content[0].text and seen == []
