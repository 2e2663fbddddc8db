"""The lesson's client core with no I/O at all: lines in, frames and deferred calls out.

Each test plays the server's side by hand (the frames it would send), so what the client does
is read from the frames it gives, exactly as the server would see them.
"""

import json

import pytest

from client.client_core import ClientCore
from shared.protocol import REVISIONS

FORM = {"mode": "form", "message": "¿Cuál?", "requestedSchema": {
    "type": "object", "properties": {"note_id": {"type": "string"}}}}
PAGE = {"mode": "url", "message": "Conecta", "url": "http://127.0.0.1:1/connect?elicitation=e",
        "elicitationId": "e"}
PICK = {"action": "accept", "content": {"note_id": "note-7"}}


class Harness:
    """A core whose frames, deferred calls, questions and page visits are kept in lists."""

    def __init__(self, protocol="2026-07-28", **options):
        self.sent, self.deferred, self.questions, self.visits = [], [], [], []
        self.core = ClientCore(self.sent.append, self, self.questions.append,
                               self.visits.append, protocol=protocol, roots=["/casa/Notas"],
                               **options)

    def call_soon(self, fn):
        self.deferred.append(fn)

    def run_deferred(self):
        while self.deferred:
            self.deferred.pop(0)()

    def server_says(self, msg):
        self.core.receive(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")


def input_required(*requests, state="sellado"):
    return {"resultType": "input_required", "requestState": state,
            "inputRequests": dict(requests)}


def test_a_2026_retry_carries_every_answer_and_the_request_state_untouched():
    h = Harness()
    call = h.core.call_tool("notes_delete", {"title": "TPS report"})
    h.server_says({"id": 1, "result": input_required(
        ("r", {"method": "roots/list"}), ("q", {"method": "elicitation/create",
                                               "params": FORM}))})
    (question,) = h.questions
    assert len(h.sent) == 1  # nothing goes out before the user answered
    question.answer(PICK)
    retry = h.sent[-1]["params"]
    assert retry["name"] == "notes_delete" and retry["arguments"] == {"title": "TPS report"}
    assert retry["requestState"] == "sellado"
    assert retry["inputResponses"] == {"r": {"roots": [{"uri": "file:///casa/Notas",
                                                        "name": "Notas"}]}, "q": PICK}
    h.server_says({"id": 2, "result": {"content": [], "isError": False}})
    assert call.done and call.result == {"content": [], "isError": False}


def test_a_2026_request_the_client_cannot_answer_fails_the_call_before_asking_anything():
    h = Harness()
    call = h.core.call_tool("notes_delete")
    h.server_says({"id": 1, "result": input_required(
        ("q", {"method": "elicitation/create", "params": FORM}),
        ("s", {"method": "sampling/createMessage", "params": {}}))})
    assert call.done and call.error.code == -32601
    assert h.questions == [] and len(h.sent) == 1


def test_after_a_2026_consent_the_retry_waits_until_the_page_was_opened():
    h = Harness()
    h.core.call_tool("notes_setup")
    h.server_says({"id": 1, "result": input_required(
        ("u", {"method": "elicitation/create", "params": PAGE}))})
    h.questions[0].answer({"action": "accept"})
    assert len(h.sent) == 1 and h.visits == []
    h.run_deferred()
    assert h.visits == h.questions and len(h.sent) == 1
    h.questions[0].opened()
    assert h.sent[-1]["params"]["inputResponses"] == {"u": {"action": "accept"}}


def test_a_call_that_ran_out_of_time_sends_no_further_round():
    h = Harness()
    call = h.core.call_tool("notes_delete")
    h.server_says({"id": 1, "result": input_required(
        ("q", {"method": "elicitation/create", "params": FORM}))})
    h.core.forget(call)
    h.questions[0].answer(PICK)
    assert len(h.sent) == 1 and isinstance(call.error, TimeoutError)


def test_rounds_beyond_the_limit_end_the_call_with_an_error():
    h = Harness()
    call = h.core.call_tool("notes_list", max_rounds=2)
    for request_id in (1, 2):
        h.server_says({"id": request_id, "result": input_required(
            ("r", {"method": "roots/list"}))})
    assert isinstance(call.error, RuntimeError) and len(h.sent) == 2


def test_a_2025_consent_is_answered_first_and_the_page_opened_after():
    h = Harness(protocol="2025-11-25")
    h.server_says({"id": 7, "method": "elicitation/create", "params": PAGE})
    h.questions[0].answer({"action": "accept"})
    assert h.sent == [{"jsonrpc": "2.0", "id": 7, "result": {"action": "accept"}}]
    assert h.visits == []
    h.run_deferred()
    assert h.visits == h.questions


def test_a_2025_question_the_server_cancelled_gets_no_answer():
    h = Harness(protocol="2025-11-25")
    h.server_says({"id": 7, "method": "elicitation/create", "params": FORM})
    h.server_says({"method": "notifications/cancelled", "params": {"requestId": 7}})
    h.questions[0].answer(PICK)
    assert h.sent == []


@pytest.mark.parametrize("declared, mode", [({"form": {}}, "url"), ({"url": {}}, "form")])
def test_a_2025_question_in_a_mode_we_did_not_declare_is_refused_without_asking(declared, mode):
    h = Harness(protocol="2025-11-25", elicitation=declared)
    h.server_says({"id": 3, "method": "elicitation/create",
                   "params": PAGE if mode == "url" else FORM})
    assert h.questions == [] and h.sent[0]["error"]["code"] == -32602


def test_a_response_nobody_asked_for_is_dropped():
    h = Harness()
    outcome = h.core.request("tools/list", {})
    h.server_says({"id": 99, "result": {"tools": ["falsa"]}})
    assert not outcome.done
    h.server_says({"id": 1, "result": {"tools": []}})
    assert outcome.result == {"tools": []}


def test_the_2025_handshake_ends_once_the_server_asked_for_the_roots():
    h = Harness(protocol="2025-11-25")
    done = h.core.connect()
    h.server_says({"id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "serverInfo": {"name": "s", "version": "1"}}})
    assert h.sent[-1]["method"] == "notifications/initialized" and not done.done
    h.server_says({"id": "r1", "method": "roots/list"})
    assert done.done and h.sent[-1]["result"]["roots"][0]["uri"] == "file:///casa/Notas"


# -- SEP-1034 defaults and -32022 (issue 34) ----------------------------------------------------
DEFAULTS = {"mode": "form", "message": "Acepta con los valores por defecto", "requestedSchema": {
    "type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "note": {"type": "string"}}}}


@pytest.mark.parametrize("protocol", REVISIONS)
def test_an_accepted_form_carries_the_declared_default_of_every_field_left_out(protocol):
    h = Harness(protocol=protocol)
    if protocol == "2026-07-28":
        h.core.call_tool("t")
        h.server_says({"id": 1, "result": input_required(
            ("q", {"method": "elicitation/create", "params": DEFAULTS}))})
    else:
        h.server_says({"id": 7, "method": "elicitation/create", "params": DEFAULTS})
    (question,) = h.questions
    question.answer({"action": "accept", "content": {"age": 41}})
    sent = h.sent[-1]["params"]["inputResponses"]["q"] if protocol == "2026-07-28" \
        else h.sent[-1]["result"]
    assert sent == {"action": "accept", "content": {
        "name": "John Doe", "age": 41, "score": 95.5, "status": "active", "verified": True}}


@pytest.mark.parametrize("answer", [{"action": "decline"}, {"action": "cancel"}])
def test_a_form_that_is_not_accepted_gets_no_defaults(answer):
    h = Harness(protocol="2025-11-25")
    h.server_says({"id": 7, "method": "elicitation/create", "params": DEFAULTS})
    h.questions[0].answer(answer)
    assert h.sent[-1]["result"] == answer


def refused_version(msg_id, supported):
    return {"id": msg_id, "error": {"code": -32022, "message": "Unsupported protocol version",
                                    "data": {"supported": supported,
                                             "requested": "2026-07-28"}}}


def test_a_request_refused_with_minus_32022_is_retried_once_with_a_listed_version():
    h = Harness()
    listing = h.core.request("tools/list")
    h.server_says(refused_version(1, ["2026-07-28"]))
    retry = h.sent[-1]
    assert len(h.sent) == 2 and retry["id"] == 2 and retry["method"] == "tools/list"
    assert retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    h.server_says(refused_version(2, ["2026-07-28"]))
    assert len(h.sent) == 2  # once only
    assert listing.done and listing.error.code == -32022


def test_connect_to_a_server_of_older_revisions_falls_back_to_the_handshake_it_lists():
    h = Harness()
    connected = h.core.connect(wait_for_roots=False)
    h.server_says(refused_version(1, ["2025-06-18", "2025-11-25"]))
    initialize = h.sent[-1]
    assert initialize["method"] == "initialize"
    assert initialize["params"]["protocolVersion"] == "2025-11-25"
    assert initialize["params"]["capabilities"]["roots"] == {"listChanged": True}
    assert "_meta" not in initialize["params"]
    h.server_says({"id": initialize["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s",
                                                                             "version": "1"}}})
    assert connected.done and connected.error is None and not h.core.stateless


def test_a_minus_32022_listing_nothing_this_client_speaks_fails_the_connect():
    h = Harness()
    connected = h.core.connect()
    h.server_says(refused_version(1, ["2099-01-01"]))
    assert connected.done and connected.error.code == -32022 and len(h.sent) == 1
