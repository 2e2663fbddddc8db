"""The stores a fleet keeps its spent requestStates in (`serve --spent-states`): a folder, an
SQLite file and Redis (a real redis-server, started here on 127.0.0.1 and stopped by its PID).

Each store lets exactly one of two racing replicas spend a state, in two processes and in two
`serve --http` replicas racing the round that deletes; a store that is not one, or cannot be
reached, stops a replica from starting with a one-line reason; a store lost while serving
refuses the state (fail closed) and nothing changes."""

import json
import os
import secrets
import subprocess
import sys
import threading

import pytest

from http_support import Served, stateless
from server_support import CODE, NotesTree

KINDS = ["folder", "sqlite", "redis"]
PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
CAPS = {"roots": {}, "elicitation": {"form": {}}}
RACER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from core import spent_states
store = spent_states.open_store(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps([n for n in range(int(sys.argv[3])) if store.spend(f"estado-{n}", 60.0)]),
      flush=True)
"""


def where(kind, tmp_path, request, database):
    """The --spent-states value of a store of this kind, new for the test (Redis: one
    `database` of the module's server for each test)."""
    if kind == "folder":
        return str(tmp_path / "gastados")
    if kind == "sqlite":
        return str(tmp_path / "gastados.sqlite")
    base = request.getfixturevalue("redis_url")
    return f"{base[:-2]}/{database}"


@pytest.mark.parametrize("kind", KINDS)
def test_two_processes_racing_each_state_spend_it_exactly_once(kind, tmp_path, request):
    spec, count = where(kind, tmp_path, request, 1), 300
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(CODE), spec, str(count)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    try:
        for racer in racers:
            if racer.stdout.readline().strip() != "ready":  # it could not open the store: why
                racer.wait(30)
                pytest.fail(f"a racer did not open the store: {racer.stderr.read()[-2000:]}")
        for racer in racers:  # both start as close together as two writes allow
            racer.stdin.write("go\n")
            racer.stdin.flush()
        won = [json.loads(racer.stdout.readline()) for racer in racers]
    finally:
        for racer in racers:
            racer.stdin.close()
            racer.wait(30)
    assert sorted(won[0] + won[1]) == list(range(count))  # each once, by exactly one of them
    assert not set(won[0]) & set(won[1])


def rounds_up_to_the_delete(replica, tree):
    """notes_delete('TPS report') at 2026-07-28 up to its last round: the body of that round,
    which deletes note-7 (its requestState is one-time: notes_delete changes things)."""
    params = {"name": "notes_delete", "arguments": {"title": "TPS report"}}
    first = stateless(replica, "tools/call", params, capabilities=CAPS).frame["result"]
    second = stateless(replica, "tools/call", {
        **params, "requestState": first["requestState"],
        "inputResponses": {"roots": {"roots": [{"uri": tree.notes.as_uri()}]}}},
        msg_id=2, capabilities=CAPS).frame["result"]
    (question,) = second["inputRequests"]
    return {**params, "requestState": second["requestState"],
            "inputResponses": {question: PICK_2024}}


@pytest.mark.parametrize("kind", KINDS)
def test_two_replicas_racing_the_round_that_deletes_serve_it_exactly_once(kind, tmp_path,
                                                                         request):
    tree, spec, key = NotesTree(tmp_path / "casa"), where(kind, tmp_path, request, 2), \
        secrets.token_hex(32)
    replicas = [Served("--state-key", key, "--spent-states", spec, cwd=tmp_path)
                for _ in range(2)]
    try:
        last = rounds_up_to_the_delete(replicas[0], tree)
        answers, start = [None, None], threading.Barrier(2)

        def send(index):
            start.wait()
            answers[index] = stateless(replicas[index], "tools/call", last, msg_id=3,
                                       capabilities=CAPS)
        racers = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(60)
        outcomes = sorted((a.status, json.dumps(a.frame)) for a in answers)
        (ok_status, ok_frame), (refused_status, refused_frame) = outcomes
        assert ok_status == 200 and json.loads(ok_frame)["result"]["structuredContent"][
            "deleted"]["id"] == "note-7"
        assert refused_status == 400 and json.loads(refused_frame)["error"]["code"] == -32602
        assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2025.md"]
    finally:
        for replica in replicas:
            assert replica.stop() == 143, replica.log


@pytest.mark.parametrize("spec, reason", [
    ("afile", "not a folder"),
    ("una-carpeta.sqlite", "a folder, not an SQLite file"),
    ("texto.db", "not a usable SQLite file"),
    ("redis://127.0.0.1:{closed}/0", "Connection refused"),
    ("ftp://ejemplo/x", "unknown kind of URL"),
], ids=["a file", "a folder named .sqlite", "a text file named .db", "nothing listening",
        "another scheme"])
def test_a_store_that_is_not_one_or_cannot_be_reached_stops_the_start_with_one_line(
        tmp_path, spec, reason):
    (tmp_path / "afile").write_text("no soy una carpeta\n")
    (tmp_path / "una-carpeta.sqlite").mkdir()
    (tmp_path / "texto.db").write_text("no soy una base de datos\n" * 100)
    with __import__("socket").socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    run = subprocess.run([sys.executable, "-I", str(CODE / "main.py"), "serve", "--http",
                          "127.0.0.1:0", "--spent-states", spec.format(closed=closed)],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and "--spent-states" in lines[0], lines
    assert "Traceback" not in run.stderr


def test_a_redis_lost_while_serving_refuses_the_state_and_changes_nothing(tmp_path):
    from http_support import start_redis
    redis = start_redis(tmp_path / "redis")
    tree = NotesTree(tmp_path / "casa")
    replica = Served("--state-key", secrets.token_hex(32), "--spent-states", redis.url,
                     cwd=tmp_path)
    try:
        last = rounds_up_to_the_delete(replica, tree)
        before = tree.snapshot()
        redis.stop()
        refused = stateless(replica, "tools/call", last, msg_id=3, capabilities=CAPS)
        assert refused.status == 400 and refused.frame["error"]["code"] == -32602
        assert tree.snapshot() == before
        line = replica.wait_log(r"refused requestState: cannot record the spent state")
        assert "--spent-states redis://127.0.0.1" in line.string
    finally:
        assert replica.stop() == 143, replica.log
        redis.stop()


def test_spent_markers_are_swept_once_their_states_expired(tmp_path):
    from core import spent_states
    from request_state import StateError

    class States:  # what SpentStates wraps: here, every token opens
        ttl = 600.0

        def open(self, token, tool, arguments, principal):
            return {"token": token}

    class Tool:
        annotations = {"destructiveHint": True}
    now = [1000.0]
    folder = tmp_path / "gastados"
    spent = spent_states.SpentStates(States(), spent_states.open_store(
        str(folder), clock=lambda: now[0]))
    spent.open("viejo", Tool(), {}, "local")
    with pytest.raises(StateError):
        spent.open("viejo", Tool(), {}, "local")
    old = next(folder.iterdir())
    os.utime(old, (100.0, 100.0))  # written before now - ttl: that state has expired
    spent.open("nuevo", Tool(), {}, "local")
    spent.sweep()
    left = list(folder.iterdir())
    assert len(left) == 1 and left[0] != old
    with pytest.raises(StateError):  # the live marker still refuses its replay
        spent.open("nuevo", Tool(), {}, "local")
