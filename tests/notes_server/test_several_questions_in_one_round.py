"""Several input requests in one round: `ctx.ask_together` (issue 34).

At 2026-07-28 a tool that needs independent things (a form, a completion from the client's
model, the roots) asks them in one `input_required` result, named by the tool, as the official
conformance scenario `input-required-result-multiple-input-requests` expects; the retry must
bring every answer. At 2025-11-25 the same tool sends each as its own request, all at once, and
runs again once every one is answered; the roots are the session's and are not asked again.
"""

import pytest

from server import Config, NotesServer
from server_support import server_with
from test_session_core import CAPS, ENVELOPE, Peer, call, result_of

ALL_CAPS = {**CAPS, "sampling": {}}
ALL_ENVELOPE = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": ALL_CAPS}

TRES = """
from extension import Extension
extension = Extension()

@extension.tool("tres", description="pregunta tres cosas a la vez")
def tres(ctx):
    answers = ctx.ask_together(
        user_name=ctx.form_request("¿Cómo te llamas?", {"name": {"type": "string"}},
                                   required=["name"]),
        greeting=ctx.sampling_request("Escribe un saludo", max_tokens=50),
        client_roots=ctx.roots_request())
    name = answers["user_name"].content.get("name")
    said = answers["greeting"]["content"]["text"]
    return f"{name} · {said} · {answers['client_roots'].describe()} · {len(ctx.notes())}"
"""

NAME = {"action": "accept", "content": {"name": "Ana"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "¡Hola!"},
           "model": "prueba", "stopReason": "endTurn"}


@pytest.fixture
def home(one_note):
    return one_note


@pytest.fixture
def srv(tmp_path):
    return server_with(tmp_path, TRES)


def roots_of(home):
    return {"roots": [{"uri": f"file://{home}/Notas", "name": "Notas"}]}


def retry(peer, state, responses, meta=ALL_ENVELOPE):
    asked = peer.request("tools/call", {"name": "tres", "arguments": {}, "_meta": meta,
                                        "requestState": state, "inputResponses": responses})
    return result_of(peer.take(), asked)["result"]


def test_at_2026_three_kinds_of_input_request_go_in_one_result_under_their_names(srv, home):
    peer = Peer(srv)
    asked = call(peer, "tres", meta=ALL_ENVELOPE)
    first = result_of(peer.take(), asked)["result"]
    assert first["resultType"] == "input_required" and first["requestState"]
    requests = first["inputRequests"]
    assert {key: r["method"] for key, r in requests.items()} == {
        "user_name": "elicitation/create", "greeting": "sampling/createMessage",
        "client_roots": "roots/list"}
    assert requests["greeting"]["params"] == {"messages": [{"role": "user", "content": {
        "type": "text", "text": "Escribe un saludo"}}], "maxTokens": 50}
    done = retry(peer, first["requestState"], {"user_name": NAME, "greeting": SAMPLED,
                                               "client_roots": roots_of(home)})
    assert done["resultType"] == "complete" and done["isError"] is False
    # the roots answered in the batch are ctx.roots too: no round of their own
    assert done["content"][0]["text"] == f"Ana · ¡Hola! · file://{home}/Notas · 1"


def test_at_2026_a_retry_without_every_answer_asks_again_only_what_is_missing(srv, home):
    peer = Peer(srv)
    asked = call(peer, "tres", meta=ALL_ENVELOPE)
    first = result_of(peer.take(), asked)["result"]
    again = retry(peer, first["requestState"], {"user_name": NAME,
                                                "client_roots": roots_of(home)})
    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == ["greeting"]
    done = retry(peer, again["requestState"], {"greeting": SAMPLED})
    assert done["content"][0]["text"].startswith("Ana · ¡Hola!")


def test_at_2026_a_request_type_the_client_did_not_declare_is_never_sent(srv):
    peer = Peer(srv)
    asked = call(peer, "tres", meta=ENVELOPE)  # no sampling capability
    error = result_of(peer.take(), asked)["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}


def sent(frames, method):
    return [f for f in frames if f.get("method") == method]


def test_at_2025_each_is_its_own_request_sent_together_and_the_tool_waits_for_all(srv, home):
    peer = Peer(srv).start([f"{home}/Notas"], caps=ALL_CAPS)
    asked = call(peer, "tres")
    frames = peer.take()
    [form], [sampling] = sent(frames, "elicitation/create"), sent(frames, "sampling/createMessage")
    assert sent(frames, "roots/list") == []  # the session's roots: not asked again
    peer.answer(sampling["id"], SAMPLED)
    assert peer.take() == []  # one answer of two: the tool does not run yet
    peer.answer(form["id"], NAME)
    done = result_of(peer.take(), asked)["result"]
    assert done["content"][0]["text"] == f"Ana · ¡Hola! · file://{home}/Notas · 1"


def test_at_2025_when_one_question_fails_the_call_ends_and_the_other_is_withdrawn(srv, home):
    peer = Peer(srv).start([f"{home}/Notas"], caps=ALL_CAPS)
    asked = call(peer, "tres")
    frames = peer.take()
    [form], [sampling] = sent(frames, "elicitation/create"), sent(frames, "sampling/createMessage")
    peer.send({"id": sampling["id"], "error": {"code": -32603, "message": "sin modelo"}})
    frames = peer.take()
    assert sent(frames, "notifications/cancelled") == [{
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": form["id"],
                   "reason": "La llamada que hacía esta pregunta ya terminó."}}]
    done = result_of(frames, asked)["result"]
    assert done["isError"] is True
    assert done["content"][0]["text"] == "El cliente no pudo responder: sin modelo"


TERCO = """
from extension import Extension
from tooling import ToolError
extension = Extension()

@extension.tool("terco", description="si una pregunta falla, sigue con la otra")
def terco(ctx):
    nombre = ctx.form_request("¿Cómo te llamas?", {"name": {"type": "string"}},
                              required=["name"])
    try:
        ctx.ask_together(nombre=nombre, saludo=ctx.sampling_request("Escribe un saludo"))
    except ToolError:
        pass  # no greeting: the name is enough
    return ctx.ask_together(nombre=nombre)["nombre"].content["name"]
"""


def test_at_2025_a_question_still_waiting_for_its_answer_is_never_sent_again(tmp_path, home):
    peer = Peer(server_with(tmp_path, TERCO)).start([f"{home}/Notas"], caps=ALL_CAPS)
    asked = call(peer, "terco")
    frames = peer.take()
    [form], [sampling] = sent(frames, "elicitation/create"), sent(frames, "sampling/createMessage")
    peer.send({"id": sampling["id"], "error": {"code": -32603, "message": "sin modelo"}})
    assert peer.take() == []  # the tool ran again and asks for the name: still waiting for it
    peer.answer(form["id"], NAME)
    assert result_of(peer.take(), asked)["result"]["content"][0]["text"] == "Ana"


CUENTA = """
from extension import Extension
extension = Extension()
RUNS = []

@extension.tool("cuenta", description="cuenta las veces que corre")
def cuenta(ctx):
    RUNS.append(1)
    ctx.ask_together(nombre=ctx.form_request("¿Cómo te llamas?", {"name": {"type": "string"}},
                                             required=["name"]),
                     saludo=ctx.sampling_request("Escribe un saludo"))
    return str(len(RUNS))
"""


def test_at_2025_the_tool_runs_again_once_when_the_last_answer_of_its_round_arrives(
        tmp_path, home):
    # not once per answer: the code before the questions runs twice in all, never three times
    peer = Peer(server_with(tmp_path, CUENTA)).start([f"{home}/Notas"], caps=ALL_CAPS)
    asked = call(peer, "cuenta")
    frames = peer.take()
    [form], [sampling] = sent(frames, "elicitation/create"), sent(frames, "sampling/createMessage")
    peer.answer(sampling["id"], SAMPLED)
    assert peer.take() == []
    peer.answer(form["id"], NAME)
    assert result_of(peer.take(), asked)["result"]["content"][0]["text"] == "2"


MAL = """
from extension import Extension
extension = Extension()

@extension.tool("mal", description="x")
def mal(ctx):
    ctx.ask_together(roots=ctx.form_request("¿Sí?", {"ok": {"type": "boolean"}}))
"""


def test_a_name_that_is_no_identifier_or_roots_for_something_else_is_refused(tmp_path, home):
    peer = Peer(server_with(tmp_path, MAL)).start([f"{home}/Notas"])
    asked = call(peer, "mal")
    done = result_of(peer.take(), asked)["result"]
    assert done["isError"] is True and "'roots' se reserva" in done["content"][0]["text"]


def test_the_lessons_client_answers_a_round_of_several_requests_in_one_retry(home):
    from client.simulated_user import ScriptedUser
    from client.sync_client import Client
    srv = NotesServer(Config(demo_url_guard=True))
    frames = []
    client = Client.local(srv, protocol="2026-07-28", roots=[f"{home}/Notas"],
                          user=ScriptedUser({"action": "decline"}),
                          on_frame=lambda direction, msg: frames.append((direction, msg)))
    client.connect()
    result = client.call_tool("notes_sync")
    assert result["structuredContent"] == {"synced": None, "reason": "decline"}
    calls = [msg for direction, msg in frames if direction == "→"
             and msg.get("method") == "tools/call"]
    assert len(calls) == 2  # the consent and the roots were answered together
    assert set(calls[1]["params"]["inputResponses"]) == {"consent", "roots"}
    client.close()
    srv.close()


def test_every_frame_of_a_round_of_several_requests_validates_at_both_revisions(
        tmp_path, home, trace):
    from server_support import RawPipe, write_solution
    pipe = RawPipe("--solution", write_solution(tmp_path, TRES), trace=trace)
    try:
        pipe.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "tres", "arguments": {}, "_meta": ALL_ENVELOPE}})
        first = pipe.receive()["result"]
        pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "tres", "arguments": {}, "_meta": ALL_ENVELOPE,
            "requestState": first["requestState"], "inputResponses": {
                "user_name": NAME, "greeting": SAMPLED, "client_roots": roots_of(home)}}})
        assert pipe.receive()["result"]["isError"] is False
        pipe.send({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": ALL_CAPS,
            "clientInfo": {"name": "t", "version": "1"}}})
        pipe.receive()
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        asked = pipe.receive()
        pipe.send({"jsonrpc": "2.0", "id": asked["id"], "result": roots_of(home)})
        pipe.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "tres", "arguments": {}}})
        for _ in range(2):
            question = pipe.receive()
            pipe.send({"jsonrpc": "2.0", "id": question["id"], "result": SAMPLED
                       if question["method"] == "sampling/createMessage" else NAME})
        assert pipe.receive()["result"]["isError"] is False
    finally:
        pipe.close()


MAL_SAMPLING = """
from extension import Extension
extension = Extension()

@extension.tool("pide_mal", description="x", input_schema={"type": "object", "properties": {
    "caso": {"type": "string"}}})
def pide_mal(ctx, caso):
    args = {"tokens": ("hola", 1.5, None), "sin-texto": (["hola"], 10, None),
            "rol": ([{"role": "system", "content": {"type": "text", "text": "x"}}], 10, None),
            "vacio": ([], 10, None), "sistema": ("hola", 10, 3)}[caso]
    ctx.ask_together(respuesta=ctx.sampling_request(*args))
"""


@pytest.mark.parametrize("case", ["tokens", "sin-texto", "rol", "vacio", "sistema"])
def test_a_sampling_request_the_schema_would_refuse_is_never_sent(tmp_path, case):
    peer = Peer(server_with(tmp_path, MAL_SAMPLING))
    asked = call(peer, "pide_mal", {"caso": case}, meta=ALL_ENVELOPE)
    refused = result_of(peer.take(), asked)["result"]
    assert refused["isError"] is True and "inputRequests" not in refused
    assert refused["content"][0]["text"].startswith("ctx.sampling_request necesita un texto")
