"""Clients that can do less: a 2025-06-18 client (form mode only, the old enum shape) and a
client that declares nothing. Frames are validated against the revision they negotiated."""

from client.simulated_user import ScriptedUser
from client.sync_client import Client
from server_support import serve_argv, spawn

PICK = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


def connect(tree, trace, **options):
    send, lines, close, _ = spawn(serve_argv(trace=trace))
    return Client(send, lines, close, roots=[tree.notes], **options).connect()


def test_a_2025_06_18_client_negotiates_its_revision(tree, trace):
    with connect(tree, trace, protocol="2025-06-18", elicitation={}) as client:
        assert client.server_info["protocolVersion"] == "2025-06-18"


def test_a_2025_06_18_client_gets_the_form_without_mode_and_with_enum_names(tree, trace):
    user = ScriptedUser(PICK)
    with connect(tree, trace, protocol="2025-06-18", elicitation={}, user=user) as client:
        result = client.call_tool("notes_delete", {"title": "TPS report"})
    request = user.seen[0]
    assert "mode" not in request
    note_id = request["requestedSchema"]["properties"]["note_id"]
    assert note_id["enum"] == ["note-3", "note-7", "note-14"] and "oneOf" not in note_id
    assert result["structuredContent"]["deleted"]["id"] == "note-7"


def test_a_2025_06_18_client_never_gets_url_mode_even_if_it_claims_it(tree, trace):
    user = ScriptedUser()
    with connect(tree, trace, protocol="2025-06-18", elicitation={"form": {}, "url": {}},
                 user=user) as client:
        result = client.call_tool("notes_setup")
    assert user.seen == [] and result["structuredContent"]["status"] == "manual"


def test_an_unknown_requested_version_gets_the_latest_handshake_revision(tree, trace):
    with connect(tree, trace, protocol="1999-01-01") as client:
        assert client.server_info["protocolVersion"] == "2025-11-25"


def test_a_client_without_elicitation_is_never_sent_a_form(tree, trace):
    user = ScriptedUser(PICK)
    with connect(tree, trace, elicitation=False, user=user) as client:
        result = client.call_tool("notes_delete", {"title": "TPS report"})
    assert user.seen == [] and result["isError"]
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]
