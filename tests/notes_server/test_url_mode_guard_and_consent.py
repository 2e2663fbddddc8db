"""URL mode is used only when the guard answers exactly `True`, and a declined URL consent ends
there: no page visit, no completion, nothing configured. In both revisions.

The guards are test-only solution files loaded with `serve --solution`; they answer a fixed
value and decide nothing about SDK versions (that decision is exercise 3)."""

import mcp.types as types
import pytest

from client.simulated_user import Browser, ScriptedUser
from client.sync_client import Client
from sdk_driver import Answers, Roots, sdk_client
from server_support import serve_argv, spawn, write_solution
from shared.protocol import REVISIONS

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=REVISIONS)
PROTOCOLS = pytest.mark.parametrize("protocol", REVISIONS)
DECLINE, CANCEL = {"action": "decline"}, {"action": "cancel"}
FAST = ("--setup-wait", 2)  # a server that wrongly waits for the page gives up quickly

GUARD = """
    from extension import Extension

    extension = Extension()


    @extension.url_mode_guard
    def allow_url_mode(sdk_version, protocol_version, client_capabilities):
        {body}
"""


def guard(tmp_path, body):
    return write_solution(tmp_path, GUARD.format(body=body), name="guarda_de_prueba.py")


# -- the guard's answer -------------------------------------------------------------------------
@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("body", ["return 1", "return 'yes'", "return [1]"],
                         ids=["1", "yes", "[1]"])
async def test_a_guard_answer_that_is_truthy_but_not_true_means_no_url_mode(
        tree, trace, tmp_path, mode, body):
    answers = Answers({"action": "accept"})
    async with sdk_client("--solution", guard(tmp_path, body), *FAST, trace=trace, mode=mode,
                          roots=Roots(tree.notes), answers=answers, demo_guard=False) as client:
        result = await client.call_tool("notes_setup", {})
    assert answers.seen == []
    assert result.structured_content["status"] == "manual"


@pytest.mark.anyio
async def test_a_guard_that_crashes_means_no_url_mode(tree, trace, tmp_path):
    answers = Answers({"action": "accept"})
    async with sdk_client("--solution", guard(tmp_path, "raise RuntimeError('guarda rota')"),
                          *FAST, trace=trace, roots=Roots(tree.notes), answers=answers,
                          demo_guard=False) as client:
        result = await client.call_tool("notes_setup", {})
    assert answers.seen == [] and result.structured_content["status"] == "manual"


@pytest.mark.anyio
@MODES
async def test_a_guard_answering_true_sends_the_url_request(tree, trace, tmp_path, mode):
    answers = Answers(DECLINE)
    async with sdk_client("--solution", guard(tmp_path, "return True"), *FAST, trace=trace,
                          mode=mode, roots=Roots(tree.notes), answers=answers,
                          demo_guard=False) as client:
        result = await client.call_tool("notes_setup", {})
    assert [type(p) for p in answers.seen] == [types.ElicitRequestURLParams]
    assert result.structured_content["status"] == "not_configured"


@pytest.mark.anyio
async def test_a_solutions_guard_wins_over_the_demo_guard(tree, trace, tmp_path):
    answers = Answers({"action": "accept"})
    async with sdk_client("--solution", guard(tmp_path, "return False"), *FAST, trace=trace,
                          roots=Roots(tree.notes), answers=answers, demo_guard=True) as client:
        result = await client.call_tool("notes_setup", {})
    assert answers.seen == [] and result.structured_content["status"] == "manual"


# -- a declined consent -------------------------------------------------------------------------
@pytest.mark.anyio
@MODES
async def test_a_declined_url_consent_configures_nothing_now_or_later(tree, trace, mode):
    messages = []
    answers = Answers(DECLINE, CANCEL)
    async with sdk_client(*FAST, trace=trace, mode=mode, roots=Roots(tree.notes),
                          answers=answers, messages=messages) as client:
        declined = await client.call_tool("notes_setup", {})
        later = await client.call_tool("notes_setup", {})
    assert declined.structured_content == {"status": "not_configured", "reason": "decline"}
    assert later.structured_content == {"status": "not_configured", "reason": "cancel"}
    assert [type(p) for p in answers.seen] == [types.ElicitRequestURLParams] * 2
    assert answers.seen[0].url != answers.seen[1].url  # a new flow, the old one not reused
    assert not any(isinstance(m, types.ElicitCompleteNotification) for m in messages)


class RecordingBrowser(Browser):
    """The lesson's scripted browser, recording every page it is asked to open."""

    def __init__(self):
        super().__init__()
        self.visited = []

    def visit(self, url):
        self.visited.append(url)
        super().visit(url)


@PROTOCOLS
def test_the_lesson_client_opens_no_page_after_a_decline(tree, trace, protocol):
    browser = RecordingBrowser()
    user = ScriptedUser(DECLINE, DECLINE, browser=browser)
    send, lines, close, _ = spawn(serve_argv("--demo-url-guard", *FAST, trace=trace))
    with Client(send, lines, close, roots=[tree.notes], user=user,
                protocol=protocol).connect() as client:
        declined = client.call_tool("notes_setup")
        later = client.call_tool("notes_setup")
    assert [p["mode"] for p in user.seen] == ["url", "url"]
    assert browser.visited == []
    assert declined["structuredContent"] == {"status": "not_configured", "reason": "decline"}
    assert later["structuredContent"]["status"] == "not_configured"
