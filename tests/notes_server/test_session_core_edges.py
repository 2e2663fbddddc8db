"""The session core at its edges, driven frame by frame with a manual clock (the helpers of
test_session_core.py): calls that come before the roots are known, what a session tags its
flows with, and how each revision's requests, answers and timers are handled."""

import os

import pytest

import extension
from cli.demo import write_lesson_notes
from core.revisions import EMPTY_ROOTS, NO_OVERLAP, NO_ROOTS, ROOTS_FAILED
from server import Config, NotesServer
from shared.protocol import REVISIONS, SERVER_INFO, UNSUPPORTED_PROTOCOL_VERSION
from test_session_core import (
    CAPS,
    ENVELOPE,
    PICK_2024,
    Peer,
    Timer,
    call,
    questions,
    result_of,
    server,
)


@pytest.fixture
def home(tmp_path):
    base = os.path.realpath(tmp_path)
    write_lesson_notes(base)
    return base


def test_a_call_before_notifications_initialized_waits_for_the_roots(home):
    peer = Peer(server())
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS,
                                "clientInfo": {"name": "t", "version": "1"}})
    peer.take()
    listing = call(peer, "notes_list")
    assert result_of(peer.take(), listing) is None  # parked: the roots are not known yet
    peer.notify("notifications/initialized")
    [asked] = [f for f in peer.take() if f.get("method") == "roots/list"]
    peer.answer(asked["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    notes = result_of(peer.take(), listing)["result"]["structuredContent"]["notes"]
    assert len(notes) == 4


def test_each_flow_names_the_session_that_started_it(home):
    srv = server()
    peers = [Peer(srv).start([f"{home}/Notas"]) for _ in range(2)]
    started = []
    for peer in peers:
        call(peer, "notes_setup")
        [form] = questions(peer.take())
        started.append(srv.flows.get(form["params"]["elicitationId"]).session_id)
    assert started == [peer.session.id for peer in peers]
    assert started[0] != started[1]


def test_closing_a_session_drops_its_parked_calls_and_closes_its_handles(home):
    peer = Peer(server(elicit_timeout=5)).start([f"{home}/Notas"])
    opened = call(peer, "notes_open", {"note_id": "note-7"})
    handle = result_of(peer.take(), opened)["result"]["structuredContent"]["handle"]
    delete = call(peer, "notes_delete", {"title": "TPS report"})
    assert questions(peer.take())
    peer.session.close()
    peer.clock.advance(60)  # the form's timeout would have answered the call by now
    assert peer.take() == []
    assert peer.session.calls == {} and delete not in peer.session.calls
    assert peer.session.handles.live() == []
    assert handle not in {h.id for h in peer.session.handles.live()}


def test_a_bug_while_answering_a_request_is_an_internal_error_and_the_session_lives(home):
    logs = []
    srv = NotesServer(Config(), log=logs.append)
    peer = Peer(srv)

    def broken():
        raise RuntimeError("boom")
    srv.capabilities = broken
    first = peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS})
    assert result_of(peer.take(), first) == {
        "jsonrpc": "2.0", "id": first, "error": {"code": -32603, "message": "Internal error"}}
    ping = peer.request("ping")
    assert result_of(peer.take(), ping) == {"jsonrpc": "2.0", "id": ping, "result": {}}
    assert logs == ["internal error in initialize: RuntimeError: boom"]


def roots_requests(frames):
    return [f for f in frames if f.get("method") == "roots/list"]


def test_only_notifications_initialized_after_initialize_starts_the_session(home):
    peer = Peer(server())
    peer.notify("notifications/progress", {"progressToken": "x", "progress": 1})
    peer.notify("notifications/initialized")  # before initialize: ignored
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS,
                                "clientInfo": {"name": "t", "version": "1"}})
    peer.notify("notifications/roots/list_changed")  # not initialized yet: ignored
    peer.notify("notifications/progress", {"progressToken": "x", "progress": 2})
    assert roots_requests(peer.take()) == []
    peer.notify("notifications/initialized")
    assert len(roots_requests(peer.take())) == 1
    peer.notify("notifications/initialized")  # a second one changes nothing
    assert roots_requests(peer.take()) == []


@pytest.mark.parametrize("params", [["requestId", 101], "101", 101])
def test_a_notification_with_params_that_are_not_an_object_is_ignored(home, params):
    peer = Peer(server()).start([f"{home}/Notas"])
    delete = call(peer, "notes_delete", {"title": "TPS report"})
    peer.take()
    peer.send({"method": "notifications/cancelled", "params": params})
    assert peer.take() == [] and delete in peer.session.calls
    ping = peer.request("ping")
    assert result_of(peer.take(), ping)["result"] == {}


def test_server_discover_needs_no_handshake():
    peer = Peer(server())
    asked = peer.request("server/discover", {"_meta": ENVELOPE})
    result = result_of(peer.take(), asked)["result"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["resultType"] == "complete"


@pytest.mark.parametrize("params", [
    {},
    {"_meta": {"io.modelcontextprotocol/clientCapabilities": CAPS}},
    {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
], ids=["no-meta", "no-protocol-version", "no-client-capabilities"])
def test_server_discover_without_what_its_meta_requires_is_invalid_params(params):
    # the 2026-07-28 schema makes _meta, its protocolVersion and its clientCapabilities
    # required on every request, server/discover included
    peer = Peer(server())
    asked = peer.request("server/discover", params)
    assert result_of(peer.take(), asked)["error"]["code"] == -32602


def test_server_discover_without_a_version_in_its_meta_is_told_what_its_meta_needs():
    peer = Peer(server())
    asked = peer.request("server/discover", {"_meta": {}})
    assert result_of(peer.take(), asked)["error"]["message"] == (
        "server/discover needs _meta with io.modelcontextprotocol/protocolVersion and "
        "io.modelcontextprotocol/clientCapabilities")


@pytest.mark.parametrize("method", ["server/discover", "tools/list"])
def test_minus_32022_lists_only_the_versions_that_path_accepts_and_a_retry_as_told_works(
        method):
    peer = Peer(server())
    asked = peer.request(method, {"_meta": {**ENVELOPE, "io.modelcontextprotocol/"
                                            "protocolVersion": "2025-11-25"}})
    error = result_of(peer.take(), asked)["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    [version] = error["data"]["supported"]
    again = peer.request(method, {"_meta": {
        **ENVELOPE, "io.modelcontextprotocol/protocolVersion": version}})
    assert "result" in result_of(peer.take(), again)


def test_a_call_that_waits_out_the_roots_timeout_while_the_roots_keep_changing_fails_closed(
        home):
    peer = Peer(server(roots_timeout=30)).start([f"{home}/Notas"])
    peer.notify("notifications/roots/list_changed")
    [second] = roots_requests(peer.take())
    peer.notify("notifications/roots/list_changed")  # while the second is unanswered
    assert roots_requests(peer.take()) == []  # one roots/list at a time
    peer.clock.advance(10)
    listing = call(peer, "notes_list")
    peer.clock.advance(10)
    peer.answer(second["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    frames = peer.take()
    [third] = roots_requests(frames)  # the roots changed meanwhile: asked again
    assert result_of(frames, listing) is None
    peer.clock.advance(19.9)  # the call has waited 29.9 s
    assert peer.take() == []
    peer.clock.advance(0.2)
    done = result_of(peer.take(), listing)["result"]
    assert done["isError"] is True
    assert done["content"][0]["text"] == \
        "El cliente no respondió a roots/list a tiempo: no toco ningún archivo."
    peer.answer(third["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    assert result_of(peer.take(), listing) is None  # answered once, never again


WAITING = "Esperando a que termines en la página de configuración…"


def test_progress_ticks_carry_the_seconds_waited_the_wait_and_a_message(home):
    peer = Peer(server(setup_wait=5)).start([f"{home}/Notas"])
    call(peer, "notes_setup", meta={"progressToken": "p-1"})
    peer.answer(questions(peer.take())[0]["id"], {"action": "accept"})
    peer.clock.advance(4.5)
    ticks = [f["params"] for f in peer.take() if f.get("method") == "notifications/progress"]
    assert ticks == [{"progressToken": "p-1", "progress": waited, "total": 5,
                      "message": WAITING} for waited in (0.0, 2.0, 4.0)]


@pytest.mark.parametrize("token", [1.5, True, None, {"t": 1}])
def test_a_progress_token_that_is_no_valid_id_gets_no_progress(home, token):
    peer = Peer(server(setup_wait=3)).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup", meta={"progressToken": token})
    peer.answer(questions(peer.take())[0]["id"], {"action": "accept"})
    peer.clock.advance(3)
    frames = peer.take()
    assert not [f for f in frames if f.get("method") == "notifications/progress"]
    assert result_of(frames, setup)["result"]["structuredContent"] == {"status": "pending"}


def test_a_form_nobody_answers_is_withdrawn_saying_why(home):
    peer = Peer(server(elicit_timeout=5)).start([f"{home}/Notas"])
    call(peer, "notes_delete", {"title": "TPS report"})
    form = questions(peer.take())[0]
    peer.clock.advance(5.1)
    assert peer.take()[0] == {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": form["id"], "reason": "Nadie respondió a tiempo."}}


def test_a_2026_flow_ending_in_a_2025_session_sends_no_completion_notification(home):
    srv = server()
    peer = Peer(srv).start([f"{home}/Notas"])
    sync = call(peer, "notes_sync", meta=ENVELOPE)
    request = result_of(peer.take(), sync)["result"]["inputRequests"]["consent"]
    eid = request["params"]["url"].rsplit("=", 1)[1]
    srv.flows.complete(eid, srv.flows.get(eid).nonce, "notas-sync")
    peer.clock.advance()
    assert peer.take() == []


def test_a_form_answered_with_an_error_ends_the_call_saying_so(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    delete = call(peer, "notes_delete", {"title": "TPS report"})
    form = questions(peer.take())[0]
    peer.send({"id": form["id"], "error": {"code": -32603, "message": "se cerró la ventana"}})
    done = result_of(peer.take(), delete)["result"]
    assert done["isError"] is True
    assert done["content"][0]["text"] == "El cliente no pudo responder: se cerró la ventana"
    assert sorted(os.listdir(f"{home}/Notas")) == [
        "compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]


def test_a_client_without_roots_and_a_server_without_root_folders_is_told_so(home):
    peer = Peer(server()).start([], caps={"elicitation": {"form": {}}})
    listing = call(peer, "notes_list")
    done = result_of(peer.take(), listing)["result"]
    assert done["isError"] is True and done["content"][0]["text"] == NO_ROOTS


def test_initialize_reports_what_a_solution_brought(home, tmp_path):
    solution = tmp_path / "solucion.py"
    solution.write_text("from extension import Extension\nextension = Extension()\n"
                        "@extension.tool('saludo', description='x')\n"
                        "def saludo(ctx):\n    return 'hola'\n")
    srv = NotesServer(Config(), extension.load(str(solution)))
    peer = Peer(srv)
    init = peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS})
    result = result_of(peer.take(), init)["result"]
    assert result["_meta"] == {"io.github.curso-mcp/solution": srv.solution}
    assert srv.solution["tools"] == ["saludo"]


def test_a_roots_timeout_that_fires_after_its_answer_changes_nothing(home):
    peer = Peer(server(roots_timeout=30)).start([f"{home}/Notas"])
    peer.notify("notifications/roots/list_changed")
    [asked] = roots_requests(peer.take())
    peer.clock.advance(1)
    peer.answer(asked["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    peer.session._roots_timer.cancelled = False  # it fired while the answer was handled
    peer.clock.advance(30)
    listing = call(peer, "notes_list")
    assert len(result_of(peer.take(), listing)["result"]["structuredContent"]["notes"]) == 4


def test_after_a_roots_list_timeout_a_roots_change_asks_again(home):
    peer = Peer(server(roots_timeout=30))
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS})
    peer.notify("notifications/initialized")
    assert len(roots_requests(peer.take())) == 1  # never answered
    peer.clock.advance(30)
    failed = call(peer, "notes_list")
    assert result_of(peer.take(), failed)["result"]["isError"] is True
    peer.notify("notifications/roots/list_changed")
    [again] = roots_requests(peer.take())
    peer.answer(again["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    listing = call(peer, "notes_list")
    assert len(result_of(peer.take(), listing)["result"]["structuredContent"]["notes"]) == 4


@pytest.mark.parametrize("answer", [
    {"error": {"code": -32603, "message": "no puedo"}},
    {"result": {"roots": "no es una lista"}},
    {"result": {"roots": [{"uri": "https://example.com/Notas"}]}},
], ids=["error", "not-a-list", "not-a-file-uri"])
def test_roots_that_cannot_be_read_are_explained_as_such(home, answer):
    peer = Peer(server())
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS})
    peer.notify("notifications/initialized")
    [asked] = roots_requests(peer.take())
    peer.send({"id": asked["id"], **answer})
    listing = call(peer, "notes_list")
    done = result_of(peer.take(), listing)["result"]
    assert done["isError"] is True and done["content"][0]["text"] == ROOTS_FAILED


@pytest.mark.parametrize("config, shared, expected", [
    ({}, [], EMPTY_ROOTS),
    ({"roots": ["Trabajo"]}, ["Notas"], NO_OVERLAP),
], ids=["empty", "no-overlap"])
def test_an_empty_boundary_says_which_way_it_is_empty(home, config, shared, expected):
    config = {k: [f"{home}/{f}" for f in v] for k, v in config.items()}
    peer = Peer(server(**config)).start([f"{home}/{f}" for f in shared])
    listing = call(peer, "notes_list")
    assert result_of(peer.take(), listing)["result"]["content"][0]["text"] == expected


def test_server_discover_reports_what_a_solution_brought(home, tmp_path):
    solution = tmp_path / "solucion.py"
    solution.write_text("from extension import Extension\nextension = Extension()\n")
    srv = NotesServer(Config(), extension.load(str(solution)))
    peer = Peer(srv)
    asked = peer.request("server/discover", {"_meta": ENVELOPE})
    meta = result_of(peer.take(), asked)["result"]["_meta"]
    assert meta["io.github.curso-mcp/solution"] == srv.solution


def test_a_2026_tools_list_names_the_server_in_its_meta(home):
    peer = Peer(server())
    listing = peer.request("tools/list", {"_meta": ENVELOPE})
    result = result_of(peer.take(), listing)["result"]
    assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": SERVER_INFO}


def test_a_2026_request_whose_version_is_null_is_refused_as_unsupported(home):
    peer = Peer(server())
    envelope = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": None}
    listing = peer.request("tools/list", {"_meta": envelope})
    error = result_of(peer.take(), listing)["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"]["requested"] == "None"


def test_an_unknown_method_at_2026_07_28_is_method_not_found_naming_it(home):
    peer = Peer(server())
    asked = peer.request("resources/list", {"_meta": ENVELOPE})
    error = result_of(peer.take(), asked)["error"]
    assert error == {"code": -32601, "message": "Method not found at 2026-07-28: resources/list"}


def test_a_tampered_request_state_is_refused_as_invalid_params_with_its_reason(home):
    peer = Peer(server())
    retry = peer.request("tools/call", {"name": "notes_list", "arguments": {}, "_meta": ENVELOPE,
                                        "requestState": "v1.manipulado.firma",
                                        "inputResponses": {}})
    error = result_of(peer.take(), retry)["error"]
    assert error == {"code": -32602, "message": "Invalid or expired requestState",
                     "data": {"reason": "invalid_request_state"}}


@pytest.mark.parametrize("responses", [["roots"], "roots", 42])
def test_input_responses_that_are_not_an_object_are_invalid_params(home, responses):
    peer = Peer(server())
    retry = peer.request("tools/call", {"name": "notes_list", "arguments": {}, "_meta": ENVELOPE,
                                        "inputResponses": responses})
    error = result_of(peer.take(), retry)["error"]
    assert error == {"code": -32602, "message": "inputResponses must be an object"}


def test_a_call_that_needs_more_than_64_runs_is_stopped_saying_so(home, tmp_path):
    # every answer runs the tool again from the start: a tool that asks 70 questions in a row
    # is stopped at its 65th run, after its 64th question
    solution = tmp_path / "preguntona.py"
    solution.write_text(
        "from extension import Extension\nextension = Extension()\n"
        "@extension.tool('preguntona', description='x')\n"
        "def preguntona(ctx):\n"
        "    for i in range(70):\n"
        "        ctx.elicit_form(f'Pregunta {i}', {'ok': {'type': 'boolean'}})\n"
        "    return 'hecho'\n")
    peer = Peer(NotesServer(Config(), extension.load(str(solution)))).start([f"{home}/Notas"])
    call_id = call(peer, "preguntona")
    asked = []
    while True:
        frames = peer.take()
        if result_of(frames, call_id):
            break
        [question] = questions(frames)
        asked.append(question["params"]["message"])
        peer.answer(question["id"], {"action": "accept", "content": {"ok": True}})
    assert asked == [f"Pregunta {i}" for i in range(64)]
    done = result_of(frames, call_id)["result"]
    assert done["isError"] is True
    assert done["content"][0]["text"] == "La herramienta se ejecutó demasiadas veces sin terminar."


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_call_without_arguments_runs_the_tool_with_none(home, protocol):
    peer = Peer(server())
    if protocol == "2026-07-28":  # accepted: the call goes on to ask for the roots
        listing = peer.request("tools/call", {"name": "notes_list", "_meta": ENVELOPE})
        assert result_of(peer.take(), listing)["result"]["resultType"] == "input_required"
    else:
        peer.start([f"{home}/Notas"])
        listing = peer.request("tools/call", {"name": "notes_list"})
        assert "structuredContent" in result_of(peer.take(), listing)["result"]


@pytest.mark.parametrize("name", [["notes_list"], {"n": 1}, 7, None])
def test_a_tool_name_that_is_not_text_is_an_unknown_tool(home, name):
    peer = Peer(server()).start([f"{home}/Notas"])
    asked = peer.request("tools/call", {"name": name, "arguments": {}})
    error = result_of(peer.take(), asked)["error"]
    assert error == {"code": -32602, "message": f"Unknown tool: {name!r}"}


@pytest.mark.parametrize("arguments", [["a"], "a", 3])
def test_arguments_that_are_not_an_object_are_invalid_params(home, arguments):
    peer = Peer(server()).start([f"{home}/Notas"])
    asked = peer.request("tools/call", {"name": "notes_list", "arguments": arguments})
    error = result_of(peer.take(), asked)["error"]
    assert error == {"code": -32602, "message": "arguments must be an object"}


NO_ROOTS_2026 = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {}}


def test_a_2026_client_without_roots_uses_the_servers_root_folders(home):
    peer = Peer(server(roots=[f"{home}/Notas"]))
    listing = peer.request("tools/call", {"name": "notes_list", "arguments": {},
                                          "_meta": NO_ROOTS_2026})
    result = result_of(peer.take(), listing)["result"]
    assert result["resultType"] == "complete" and result["structuredContent"]["notes"]


def test_a_2026_client_without_roots_and_no_root_folders_is_told_which_capability(home):
    peer = Peer(server())
    listing = peer.request("tools/call", {"name": "notes_list", "arguments": {},
                                          "_meta": NO_ROOTS_2026})
    error = result_of(peer.take(), listing)["error"]
    assert error == {"code": -32021, "message": NO_ROOTS,
                     "data": {"requiredCapabilities": {"roots": {}}}}


def test_a_2026_roots_answer_that_cannot_be_read_is_explained(home):
    peer = Peer(server())
    first = peer.request("tools/call", {"name": "notes_list", "arguments": {}, "_meta": ENVELOPE})
    state = result_of(peer.take(), first)["result"]["requestState"]
    retry = peer.request("tools/call", {"name": "notes_list", "arguments": {}, "_meta": ENVELOPE,
                                        "requestState": state,
                                        "inputResponses": {"roots": {"roots": "todas"}}})
    result = result_of(peer.take(), retry)["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("La lista de roots no es válida: ")


# -- a tool that waits for a page and then asks a form ---------------------------------------
WAIT_THEN_ASK = """
from extension import Extension
extension = Extension()

@extension.tool('espera_y_pregunta', description='x')
def espera_y_pregunta(ctx):
    flows = ctx.server.flows
    flow_id = ctx.memo('flow', lambda: flows.start(
        ctx.session.id, 'yo', 'proveedor', ctx.session.flow_listener(ctx.stateless)
    ).elicitation_id)
    status = ctx.wait_flow(flows.get(flow_id), 10)
    answer = ctx.elicit_form('¿Seguimos?', {'ok': {'type': 'boolean'}})
    return f'{status} {answer.action}'
"""


def test_when_the_page_ends_the_wait_its_timer_and_progress_end_with_it(home, tmp_path):
    solution = tmp_path / "espera.py"
    solution.write_text(WAIT_THEN_ASK)
    srv = NotesServer(Config(), extension.load(str(solution)))
    peer = Peer(srv).start([f"{home}/Notas"])
    call_id = call(peer, "espera_y_pregunta", meta={"progressToken": "p"})
    flow_id = peer.session.calls[call_id].memos["flow"]
    peer.clock.advance(3)
    assert [f["method"] for f in peer.take()] == ["notifications/progress"] * 2
    srv.flows.complete(flow_id, srv.flows.get(flow_id).nonce, "proveedor")
    peer.clock.advance()
    [form] = questions(peer.take())
    peer.clock.advance(30)  # past the page's wait: nothing more while the form is open
    assert peer.take() == []
    peer.answer(form["id"], {"action": "accept", "content": {"ok": True}})
    done = result_of(peer.take(), call_id)["result"]
    assert done["content"][0]["text"] == "completed accept"


# -- what a tool's outcome becomes ------------------------------------------------------------
OUTCOMES = """
from extension import Extension
from tooling import URLElicitationRequired
extension = Extension()

@extension.tool('texto', description='x')
def texto(ctx):
    return 'hola'

@extension.tool('rota', description='x')
def rota(ctx):
    raise ValueError('detalle interno')

@extension.tool('dict_sin_content', description='x')
def dict_sin_content(ctx):
    return {'x': 1}

@extension.tool('pide_url', description='x')
def pide_url(ctx):
    raise URLElicitationRequired([])
"""


@pytest.mark.parametrize("tool, protocol, text", [
    ("texto", "2025-11-25", "hola"),
    ("rota", "2025-11-25", "Error interno en la herramienta rota."),
    ("dict_sin_content", "2025-11-25", "La herramienta dict_sin_content devolvió un resultado no "
                                       "válido."),
    # -32042 is retired at 2026-07-28: never sent, and the tool error says why
    ("pide_url", "2026-07-28", "La herramienta pide_url intentó responder el error -32042, que "
                               "la revisión 2026-07-28 retiró (no debe emitirse): en 2026-07-28 "
                               "el modo URL se pide dentro de input_required (ctx.elicit_url). "
                               "No se envió."),
])
def test_what_a_tool_returns_or_raises_becomes_its_result(home, tmp_path, tool, protocol, text):
    solution = tmp_path / "resultados.py"
    solution.write_text(OUTCOMES)
    peer = Peer(NotesServer(Config(), extension.load(str(solution))))
    if protocol == "2026-07-28":
        asked = peer.request("tools/call", {"name": tool, "arguments": {}, "_meta": ENVELOPE})
    else:
        asked = call(peer.start([f"{home}/Notas"]), tool)
    result = result_of(peer.take(), asked)["result"]
    assert result["content"] == [{"type": "text", "text": text}]
    assert result["isError"] is (tool != "texto")


def test_url_elicitation_required_at_2025_11_25_is_error_32042_with_its_message(home, tmp_path):
    solution = tmp_path / "resultados.py"
    solution.write_text(OUTCOMES)
    peer = Peer(NotesServer(Config(), extension.load(str(solution)))).start([f"{home}/Notas"])
    asked = call(peer, "pide_url")
    error = result_of(peer.take(), asked)["error"]
    assert error == {"code": -32042, "message": "URL elicitation required",
                     "data": {"elicitations": []}}


# -- ending one call never touches another ---------------------------------------------------
def test_a_call_reusing_the_id_of_a_call_in_progress_is_refused(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    first = call(peer, "notes_delete", {"title": "TPS report"})
    peer.take()
    peer.send({"id": first, "method": "tools/call",
               "params": {"name": "notes_list", "arguments": {}}})
    assert peer.take() == [{"jsonrpc": "2.0", "id": first, "error": {
        "code": -32600, "message": "Request id already used by a call in progress"}}]


def test_cancelling_one_call_leaves_the_form_of_another_working(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    first = call(peer, "notes_delete", {"title": "TPS report"})
    first_form = questions(peer.take())[0]
    second = call(peer, "notes_delete", {"title": "TPS report"})
    second_form = questions(peer.take())[0]
    peer.notify("notifications/cancelled", {"requestId": first})
    assert [f["params"]["requestId"] for f in peer.take()] == [first_form["id"]]
    peer.answer(second_form["id"], PICK_2024)
    frames = peer.take()
    assert result_of(frames, second)["result"]["structuredContent"]["deleted"]["id"] == "note-7"
    assert not os.path.exists(f"{home}/Notas/tps-2024.md")


def test_a_call_cancelled_while_it_waits_for_the_roots_never_runs(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    peer.notify("notifications/roots/list_changed")
    [asked] = [f for f in peer.take() if f.get("method") == "roots/list"]
    listing = call(peer, "notes_list")
    peer.notify("notifications/cancelled", {"requestId": listing})
    assert peer.take() == []
    peer.answer(asked["id"], {"roots": [{"uri": f"file://{home}/Notas"}]})
    peer.clock.advance(3600)
    assert result_of(peer.take(), listing) is None


def wait_for_page(peer, srv):
    setup = call(peer, "notes_setup")
    form = questions(peer.take())[0]
    peer.answer(form["id"], {"action": "accept"})
    return setup, srv.flows.get(form["params"]["elicitationId"])


def test_cancelling_one_wait_for_a_page_leaves_another_waiting(home):
    srv = server(setup_wait=10)
    peer = Peer(srv).start([f"{home}/Notas"])
    first, _ = wait_for_page(peer, srv)
    second, record = wait_for_page(peer, srv)
    peer.notify("notifications/cancelled", {"requestId": first})
    srv.flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    peer.clock.advance()
    done = result_of(peer.take(), second)["result"]
    assert done["structuredContent"] == {"status": "configured"}


def test_one_wait_running_out_leaves_another_waiting(home):
    srv = server(setup_wait=10)
    peer = Peer(srv).start([f"{home}/Notas"])
    first, _ = wait_for_page(peer, srv)
    peer.clock.advance(5)
    second, record = wait_for_page(peer, srv)
    peer.clock.advance(5)
    assert result_of(peer.take(), first)["result"]["structuredContent"] == {"status": "pending"}
    srv.flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    peer.clock.advance()
    done = result_of(peer.take(), second)["result"]
    assert done["structuredContent"] == {"status": "configured"}


def test_a_timer_that_fired_as_its_call_ended_does_nothing(home, monkeypatch):
    # a real clock may already have started a timer when the call ends: the call is done
    monkeypatch.setattr(Timer, "cancel", lambda self: None)
    peer = Peer(server(setup_wait=10)).start([f"{home}/Notas"])
    setup, _ = wait_for_page(peer, peer.session.server)
    peer.notify("notifications/cancelled", {"requestId": setup})
    peer.clock.advance(60)
    assert result_of(peer.take(), setup) is None


@pytest.mark.parametrize("request_id", [[1], {"id": 1}, True])
def test_a_cancellation_whose_request_id_is_no_id_is_ignored(home, request_id):
    peer = Peer(server()).start([f"{home}/Notas"])
    delete = call(peer, "notes_delete", {"title": "TPS report"})
    peer.take()
    peer.notify("notifications/cancelled", {"requestId": request_id})
    assert peer.take() == [] and delete in peer.session.calls


def test_when_a_wait_for_the_page_runs_out_its_progress_ends_with_it(home, tmp_path):
    solution = tmp_path / "espera.py"
    solution.write_text(WAIT_THEN_ASK)
    peer = Peer(NotesServer(Config(), extension.load(str(solution)))).start([f"{home}/Notas"])
    call_id = call(peer, "espera_y_pregunta", meta={"progressToken": "p"})
    peer.clock.advance(10)  # the page never came: the tool goes on to its form
    [form] = questions(peer.take())
    peer.clock.advance(30)
    assert peer.take() == []
    peer.answer(form["id"], {"action": "accept", "content": {"ok": True}})
    assert result_of(peer.take(), call_id)["result"]["content"][0]["text"] == "pending accept"
