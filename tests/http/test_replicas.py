"""Two replicas for real: `serve --http` processes sharing `--state-key` (and `--spent-states`)
behind a round-robin front (lessons/mcp_ui/replicas.py), at 2026-07-28, where any replica may
serve any round of a call."""

import json
import secrets
import sys
from pathlib import Path

import pytest

from http_support import Served

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
if str(LESSONS) not in sys.path:
    sys.path.insert(0, str(LESSONS))

from mcp_ui.replicas import RoundRobin, last_frame  # noqa: E402

PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
DECLINE = {"action": "decline"}


@pytest.fixture
def fleet(tmp_path):
    """Start replicas behind a front: `fleet(key_a, key_b, spent=True)`; stopped after."""
    started = []

    def start(*keys, spent=True, users=()):
        replicas = [Served("--state-key", key, *(("--spent-states", tmp_path / "gastados")
                                                  if spent else ()),
                           *(("--user", users[i]) if users else ()), cwd=tmp_path)
                    for i, key in enumerate(keys)]
        front = RoundRobin([r.url for r in replicas])
        started.append((front, replicas))
        return front
    yield start
    for front, replicas in started:
        front.close()
        for replica in replicas:
            assert replica.stop() == 143, replica.log


def delete_through(front, tree, answer):
    from client import http_client
    from client.simulated_user import ScriptedUser
    from client.sync_client import Client
    with Client(*http_client.connect(front.url), protocol="2026-07-28", roots=[tree.notes],
                user=ScriptedUser(answer), timeout=20) as client:
        return client.call_tool("notes_delete", {"title": "TPS report"}, timeout=20)


def rounds(front):
    return [(index, json.loads(body), json.loads(last_frame(answer)))
            for index, body, _, _, answer in front.served]


def replay_last_round_on_the_other(front):
    index, body, headers, _, _ = front.served[-1]
    status, _, answer = front.forward(1 - index, body, headers, record=False)
    return status, json.loads(last_frame(answer))


def test_a_call_whose_rounds_alternate_between_two_replicas_succeeds(fleet, tree):
    key = secrets.token_hex(32)
    front = fleet(key, key)
    result = delete_through(front, tree, PICK_2024)
    assert result["structuredContent"]["deleted"]["id"] == "note-7"
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2025.md"]
    served = rounds(front)
    assert [index for index, _, _ in served] == [0, 1, 0]  # A, B, A
    assert [answer["result"]["resultType"] for _, _, answer in served] == [
        "input_required", "input_required", "complete"]


def test_a_token_replayed_on_the_other_replica_is_refused_and_changes_nothing(fleet, tree):
    """The round that deleted, sent again byte for byte to the other replica (an attacker who
    saw it pass): -32602, because the replicas share which states were spent. The fleet still
    serves the legitimate call that follows."""
    key = secrets.token_hex(32)
    front = fleet(key, key)
    delete_through(front, tree, PICK_2024)
    before = tree.snapshot()
    status, answer = replay_last_round_on_the_other(front)
    assert status == 400 and answer["error"]["code"] == -32602
    assert tree.snapshot() == before
    again = delete_through(front, tree, {"action": "accept", "content": {
        "note_id": "note-3", "confirm": True}})
    assert again["structuredContent"]["deleted"]["id"] == "note-3"


def test_a_no_replayed_as_a_yes_on_the_other_replica_is_refused(fleet, tree):
    """The user declined; the same last round sent to the other replica with an accept."""
    key = secrets.token_hex(32)
    front = fleet(key, key)
    before = tree.snapshot()
    declined = delete_through(front, tree, DECLINE)
    assert declined["structuredContent"]["reason"] == "declined" and tree.snapshot() == before
    index, body, headers, _, _ = front.served[-1]
    forged = json.loads(body)
    key_asked = next(iter(forged["params"]["inputResponses"]))
    forged["params"]["inputResponses"][key_asked] = PICK_2024
    status, _, answer = front.forward(1 - index, json.dumps(forged).encode(), headers,
                                      record=False)
    assert status == 400 and json.loads(answer)["error"]["code"] == -32602
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]


def test_without_the_shared_folder_the_other_replica_opens_the_replayed_token(fleet, tree):
    """What refuses the replay is the shared folder of spent states, not the seal: without it
    the other replica opens the token (only the note being gone stops a second deletion)."""
    key = secrets.token_hex(32)
    front = fleet(key, key, spent=False)
    delete_through(front, tree, PICK_2024)
    status, answer = replay_last_round_on_the_other(front)
    assert status == 200 and answer["result"]["isError"] is True
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2025.md"]


def test_without_the_same_key_the_other_replica_refuses_the_next_round(fleet, tree):
    front = fleet(secrets.token_hex(32), secrets.token_hex(32))
    with pytest.raises(Exception, match="Invalid or expired requestState"):
        delete_through(front, tree, PICK_2024)
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]


def test_a_state_sealed_for_one_user_is_refused_by_a_replica_serving_another(fleet, tree):
    """Two replicas with one key, serving two users (`--user`): the server's own sealer binds
    the principal, so the retry of Ana's call that reaches Bea's replica is -32602 and
    nothing changes; each user's replica alone still serves its user."""
    key = secrets.token_hex(32)
    front = fleet(key, key, users=("local:ana", "local:bea"))
    with pytest.raises(Exception, match="Invalid or expired requestState"):
        delete_through(front, tree, PICK_2024)
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]
    served = rounds(front)
    assert [index for index, _, _ in served] == [0, 1]
    assert served[1][2]["error"]["code"] == -32602
    only_ana = fleet(key, spent=False, users=("local:ana",))
    result = delete_through(only_ana, tree, PICK_2024)
    assert result["structuredContent"]["deleted"]["id"] == "note-7"
