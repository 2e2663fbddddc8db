"""A shared server (`serve --second-user`) keeps each user's state apart (issue 34).

Two sessions of one server, of two users, as `serve --second-user` hosts them: the principal a
2026-07-28 requestState is bound to is the user of the session that sealed it, and one user's
Notas Sync authorization is never used for the other, nor can the other complete it.
"""

import pytest

from core.session import Session
from server import Config, NotesServer
from server_support import server_with
from test_session_core import ENVELOPE, Peer, call, questions, result_of

ANA, BETO = "local:ana", "local:beto"

PRINCIPAL_SEALER = """
import json
from extension import Extension
extension = Extension()

@extension.request_state
class PorUsuario:
    '''Seals the principal with the payload and opens only for the same principal.'''
    seen = []

    def seal(self, payload, binding):
        PorUsuario.seen.append(("seal", binding.principal))
        return json.dumps({"principal": binding.principal, "payload": payload})

    def open(self, token, binding):
        PorUsuario.seen.append(("open", binding.principal))
        sealed = json.loads(token)
        if sealed["principal"] != binding.principal:
            raise ValueError("otro usuario")
        return sealed["payload"]
"""


@pytest.fixture
def home(one_note):
    return one_note


def peer_of(srv, user):
    """A Peer whose session belongs to `user`, as `serve --second-user` makes the second."""
    peer = Peer(srv)
    peer.session = Session(srv, peer.out.append, peer.clock, user=user)
    return peer


def sealer_server(tmp_path):
    return server_with(tmp_path, PRINCIPAL_SEALER, subject=ANA, second_user=BETO)


def test_a_request_state_is_bound_to_the_user_of_the_session_that_sealed_it(tmp_path, home):
    srv = sealer_server(tmp_path)
    beto = peer_of(srv, BETO)
    first = call(beto, "notes_list", meta=ENVELOPE)
    state = result_of(beto.take(), first)["result"]["requestState"]
    retry = beto.request("tools/call", {
        "name": "notes_list", "arguments": {}, "_meta": ENVELOPE, "requestState": state,
        "inputResponses": {"roots": {"roots": [{"uri": f"file://{home}/Notas"}]}}})
    assert result_of(beto.take(), retry)["result"]["structuredContent"]["notes"]
    sealer = type(srv.states.sealer)
    assert sealer.seen == [("seal", BETO), ("open", BETO)]


def test_a_state_sealed_for_one_user_is_refused_in_the_other_users_session(tmp_path, home):
    srv = sealer_server(tmp_path)
    beto, ana = peer_of(srv, BETO), peer_of(srv, ANA)
    first = call(beto, "notes_list", meta=ENVELOPE)
    state = result_of(beto.take(), first)["result"]["requestState"]
    stolen = ana.request("tools/call", {
        "name": "notes_list", "arguments": {}, "_meta": ENVELOPE, "requestState": state,
        "inputResponses": {"roots": {"roots": [{"uri": f"file://{home}/Notas"}]}}})
    assert result_of(ana.take(), stolen)["error"]["code"] == -32602


def configure_sync(peer, srv):
    """The user of `peer` authorizes Notas Sync on its page, from their own browser."""
    setup = call(peer, "notes_setup")
    [consent] = questions(peer.take())
    peer.answer(consent["id"], {"action": "accept"})
    record = srv.flows.get(consent["params"]["elicitationId"])
    page = srv.page()
    done = page.handle("POST", "/connect", f"elicitation={record.elicitation_id}&"
                       f"state={record.nonce}&decision=allow", user=peer.session.user)
    assert done.status == 200
    peer.clock.advance()
    assert result_of(peer.take(), setup)["result"]["structuredContent"] == {
        "status": "configured"}


def shared_server():
    return NotesServer(Config(demo_url_guard=True, subject=ANA, second_user=BETO,
                              page_transport="rpc"))


def test_one_users_notas_sync_authorization_is_never_used_for_the_other(home):
    srv = shared_server()
    ana = peer_of(srv, ANA).start([f"{home}/Notas"])
    beto = peer_of(srv, BETO).start([f"{home}/Notas"])
    configure_sync(ana, srv)
    synced = call(beto, "notes_sync")
    refused = result_of(beto.take(), synced)
    assert refused["error"]["code"] == -32042  # beto must authorize first, for himself
    setup = call(beto, "notes_setup")
    assert questions(beto.take()), "beto is asked to authorize, not told it is done"
    assert setup in beto.session.calls


def test_a_flow_one_user_started_cannot_be_completed_from_the_other_users_browser(home):
    srv = shared_server()
    beto = peer_of(srv, BETO).start([f"{home}/Notas"])
    call(beto, "notes_setup")
    [consent] = questions(beto.take())
    record = srv.flows.get(consent["params"]["elicitationId"])
    done = srv.page().handle(
        "POST", "/connect", f"elicitation={record.elicitation_id}&state={record.nonce}&"
        "decision=allow", user=ANA)
    assert done.status == 400 and "otra persona" in done.html
    assert record.status == "pending"
    assert not srv.flows.is_configured(ANA, "notas-sync")
    assert not srv.flows.is_configured(BETO, "notas-sync")


def test_each_user_of_a_2026_request_has_their_own_authorization(home):
    srv = shared_server()
    ana = peer_of(srv, ANA).start([f"{home}/Notas"])
    configure_sync(ana, srv)
    beto = peer_of(srv, BETO)
    synced = call(beto, "notes_sync", meta=ENVELOPE)
    asked = result_of(beto.take(), synced)["result"]
    assert asked["resultType"] == "input_required"  # the URL to authorize, for beto
    assert "url" in [r["params"].get("mode") for r in asked["inputRequests"].values()]
