"""The requestState hook through the session: every tool that asks at 2026-07-28 seals and opens
its state with the solution's sealer (`@extension.request_state`) or, without one, the server's
own; either way a token that fails is refused with -32602 before anything runs, and a sealer
that breaks never breaks the session.

The server's own sealer is checked for what it does (tampered and moved tokens refused) and for
what it deliberately does not do (a replay of a delete goes through: the challenge's point).
"""

import inspect
import json
import os

import pytest

from cli.demo import write_lesson_notes
from extension import Extension
from server import Config, NotesServer
from test_session_core import Peer, result_of

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"roots": {},
                                                           "elicitation": {"form": {}}}}
REFUSED = {"code": -32602, "message": "Invalid or expired requestState",
           "data": {"reason": "invalid_request_state"}}
PICK_7 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
PICK_3 = {"action": "accept", "content": {"note_id": "note-3", "confirm": True}}


@pytest.fixture
def home(tmp_path):
    base = os.path.realpath(tmp_path)
    write_lesson_notes(base)
    return base


class Recording:
    """A sealer that keeps every binding it saw and seals in clear JSON (the key is used)."""

    def __init__(self):
        self.seen = []

    def seal(self, payload, binding):
        self.seen.append(("seal", binding))
        return json.dumps({"k": binding.key.hex(), "t": binding.tool, "a": binding.arguments,
                           "p": payload})

    def open(self, token, binding):
        self.seen.append(("open", binding))
        body = json.loads(token)
        if (body["k"], body["t"], body["a"]) != (binding.key.hex(), binding.tool,
                                                 binding.arguments):
            raise ValueError("otra llamada")
        return body["p"]


class OneTime(Recording):
    """Recording, plus a ledger: a state of a one-time tool opens once."""

    def __init__(self):
        super().__init__()
        self.used = set()

    def open(self, token, binding):
        payload = super().open(token, binding)
        if binding.one_time:
            if token in self.used:
                raise ValueError("ya usado")
            self.used.add(token)
        return payload


def serve(home, sealer=None, **config):
    extension = None
    if sealer is not None:
        extension = Extension()
        extension.request_state(sealer)
    return NotesServer(Config(roots=[os.path.join(home, "Notas")], **config), extension)


class Rounds:
    """One 2026-07-28 client by hand: each round is one tools/call frame."""

    def __init__(self, server):
        self.peer = Peer(server)

    def send(self, name, arguments, state=None, responses=None):
        params = {"name": name, "arguments": arguments, "_meta": ENVELOPE}
        if state is not None:
            params["requestState"] = state
        if responses is not None:
            params["inputResponses"] = responses
        sent = self.peer.request("tools/call", params)
        answer = result_of(self.peer.take(), sent)
        return answer.get("error") or answer["result"]

    def roots(self, home):
        return {"roots": {"roots": [{"uri": f"file://{home}/Notas"}]}}

    def to_the_form(self, home, title="TPS report"):
        """Rounds 1 and 2 of notes_delete: (roots-round token, form-round token)."""
        first = self.send("notes_delete", {"title": title})
        second = self.send("notes_delete", {"title": title}, first["requestState"],
                           self.roots(home))
        assert second["inputRequests"]["ask-1"]["method"] == "elicitation/create"
        return first["requestState"], second["requestState"]


def notes(home):
    return sorted(name for name in os.listdir(os.path.join(home, "Notas")))


# -- the solution's sealer is the one used ------------------------------------------------------
def test_every_round_of_a_tool_that_asks_goes_through_the_solutions_sealer(home):
    sealer = Recording()
    rounds = Rounds(serve(home, sealer))
    _, form = rounds.to_the_form(home)
    done = rounds.send("notes_delete", {"title": "TPS report"}, form, {"ask-1": PICK_7})
    assert done["resultType"] == "complete" and "tps-2024.md" not in notes(home)
    assert [what for what, _ in sealer.seen] == ["seal", "open", "seal", "open"]


def test_the_binding_carries_the_servers_key_the_call_the_principal_and_the_clock(home):
    sealer = Recording()
    server = serve(home, sealer, subject="local:ana", state_ttl=120.0,
                   state_key="ab" * 32)
    Rounds(server).send("notes_delete", {"title": "TPS report"})
    [(_, binding)] = sealer.seen
    assert binding.key == bytes.fromhex("ab" * 32) and len(binding.key_id) == 8
    assert (binding.tool, binding.principal, binding.ttl) == ("notes_delete", "local:ana", 120.0)
    assert binding.arguments == __import__("request_state").digest({"title": "TPS report"})
    assert binding.one_time is True and binding.expires_at == binding.now + 120.0
    assert "ab" * 32 not in repr(binding)


def test_a_server_started_again_has_another_key(home):
    first, second = Recording(), Recording()
    Rounds(serve(home, first)).send("notes_delete", {"title": "TPS report"})
    Rounds(serve(home, second)).send("notes_delete", {"title": "TPS report"})
    assert first.seen[0][1].key != second.seen[0][1].key
    assert first.seen[0][1].key_id != second.seen[0][1].key_id


def test_a_tool_that_does_not_change_things_is_not_one_time(home):
    sealer = Recording()
    server = serve(home, sealer, demo_url_guard=True)
    rounds = Rounds(server)
    envelope = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {"form": {}, "url": {}}}}
    rounds.peer.request("tools/call", {"name": "notes_setup", "arguments": {},
                                       "_meta": envelope})
    [(_, binding)] = sealer.seen
    assert binding.tool == "notes_setup" and binding.one_time is False


def test_state_sealer_server_ignores_the_solutions_sealer(home):
    sealer = Recording()
    server = serve(home, sealer, state_sealer="server")
    first = Rounds(server).send("notes_delete", {"title": "TPS report"})
    assert first["requestState"].startswith("v1.") and sealer.seen == []
    assert "request_state" not in server.solution["hooks"]


def test_a_solution_reports_its_sealer_among_its_hooks(home):
    assert serve(home, Recording()).solution["hooks"] == ["request_state"]


def test_a_solution_reports_which_class_and_which_open_it_installed(home):
    reported = serve(home, Recording()).solution["sealer"]
    assert reported == {"class": "Recording", "file": "test_request_state_hook.py",
                        "line": inspect.getsourcelines(Recording.open)[1]}


# -- what a refusal is -------------------------------------------------------------------------
@pytest.mark.parametrize("make_sealer", [Recording, None], ids=["solution", "server"])
@pytest.mark.parametrize("tamper", [lambda t: t[:-1], lambda t: t + "A", lambda t: "x" + t[1:],
                                    lambda t: t.replace("e", "f", 1), lambda t: ""])
def test_a_tampered_token_is_refused_and_changes_nothing(home, make_sealer, tamper):
    rounds = Rounds(serve(home, make_sealer() if make_sealer else None))
    _, form = rounds.to_the_form(home)
    before = notes(home)
    answer = rounds.send("notes_delete", {"title": "TPS report"}, tamper(form),
                         {"ask-1": PICK_7})
    assert answer == REFUSED and notes(home) == before


@pytest.mark.parametrize("make_sealer", [Recording, None], ids=["solution", "server"])
@pytest.mark.parametrize("name, arguments", [("notes_delete", {"title": "tps report"}),
                                             ("notes_list", {})])
def test_a_token_moved_to_another_tool_or_arguments_is_refused(home, make_sealer, name,
                                                                arguments):
    rounds = Rounds(serve(home, make_sealer() if make_sealer else None))
    _, form = rounds.to_the_form(home)
    before = notes(home)
    answer = rounds.send(name, arguments, form, {"ask-1": PICK_7})
    assert answer == REFUSED and notes(home) == before


@pytest.mark.parametrize("state", [42, None, ["v1"], {"v": 1}])
def test_a_token_that_is_not_text_never_reaches_the_sealer(home, state):
    sealer = Recording()
    rounds = Rounds(serve(home, sealer))
    params = {"name": "notes_delete", "arguments": {"title": "TPS report"}, "_meta": ENVELOPE,
              "requestState": state}
    sent = rounds.peer.request("tools/call", params)
    assert result_of(rounds.peer.take(), sent)["error"] == REFUSED and sealer.seen == []


def test_inputresponses_of_the_wrong_shape_are_refused_before_the_sealer_spends_a_state(home):
    sealer = OneTime()
    rounds = Rounds(serve(home, sealer))
    first = rounds.send("notes_delete", {"title": "TPS report"})
    bad = rounds.send("notes_delete", {"title": "TPS report"}, first["requestState"], ["roots"])
    assert bad["code"] == -32602 and bad["message"] == "inputResponses must be an object"
    assert [what for what, _ in sealer.seen] == ["seal"]
    again = rounds.send("notes_delete", {"title": "TPS report"}, first["requestState"],
                        rounds.roots(home))
    assert again["resultType"] == "input_required"


# -- the server's own sealer, and what the challenge adds ----------------------------------------
def test_the_servers_own_sealer_lets_a_delete_be_replayed(home):
    """Its documented gap: the same retry, sent again, runs the tool again (the second time it
    answers with the other note chosen, and that note is deleted too)."""
    rounds = Rounds(serve(home))
    _, form = rounds.to_the_form(home)
    rounds.send("notes_delete", {"title": "TPS report"}, form, {"ask-1": PICK_7})
    replay = rounds.send("notes_delete", {"title": "TPS report"}, form, {"ask-1": PICK_3})
    assert replay["resultType"] == "complete" and "tps-2023.md" not in notes(home)


def test_a_sealer_with_a_ledger_refuses_the_replay_and_nothing_more_is_deleted(home):
    rounds = Rounds(serve(home, OneTime()))
    _, form = rounds.to_the_form(home)
    rounds.send("notes_delete", {"title": "TPS report"}, form, {"ask-1": PICK_7})
    left = notes(home)
    replay = rounds.send("notes_delete", {"title": "TPS report"}, form, {"ask-1": PICK_3})
    assert replay == REFUSED and notes(home) == left and "tps-2023.md" in left


def test_the_servers_own_state_can_be_read_by_anyone(home):
    import base64
    rounds = Rounds(serve(home))
    _, form = rounds.to_the_form(home)
    body = form.split(".")[1]
    assert b"tps-2024.md" in base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


# -- a sealer that breaks never breaks the session ------------------------------------------------
class Raising:
    def __init__(self, where, error=None):
        self.where, self.error = where, error or RuntimeError("roto")

    def seal(self, payload, binding):
        if self.where == "seal":
            raise self.error
        return json.dumps(payload)

    def open(self, token, binding):
        if self.where == "open":
            raise self.error
        return json.loads(token)


@pytest.mark.parametrize("error", [RuntimeError("roto"), SystemExit(3), KeyError("x")])
def test_a_sealer_that_raises_in_open_is_a_refusal_and_the_session_goes_on(home, error):
    server = serve(home, Raising("open", error))
    logged = []
    server.log = logged.append
    rounds = Rounds(server)
    first = rounds.send("notes_delete", {"title": "TPS report"})
    assert rounds.send("notes_delete", {"title": "TPS report"}, first["requestState"],
                       rounds.roots(home)) == REFUSED
    assert any(line.startswith("refused requestState:") for line in logged)
    assert not any("internal error" in line for line in logged)
    assert rounds.send("notes_list", {})["resultType"] == "input_required"


@pytest.mark.parametrize("sealer", [Raising("seal"), Raising("seal", SystemExit(1))])
def test_a_sealer_that_raises_in_seal_ends_the_call_with_a_tool_error_and_asks_nothing(
        home, sealer):
    rounds = Rounds(serve(home, sealer))
    answer = rounds.send("notes_delete", {"title": "TPS report"})
    assert answer["isError"] is True and "inputRequests" not in answer
    assert "No pude sellar el estado de notes_delete" in answer["content"][0]["text"]


class Gives:
    def __init__(self, token=None, payload=None):
        self.token, self.payload = token, payload

    def seal(self, payload, binding):
        return self.token

    def open(self, token, binding):
        return self.payload


@pytest.mark.parametrize("token", [None, 42, b"bytes", "", ["x"]])
def test_a_sealer_that_gives_no_text_token_ends_the_call_with_a_tool_error(home, token):
    answer = Rounds(serve(home, Gives(token=token))).send("notes_delete",
                                                          {"title": "TPS report"})
    assert answer["isError"] is True and "inputRequests" not in answer


@pytest.mark.parametrize("payload", [None, "texto", [], {}, {"answers": [], "asked": {},
                                                             "memos": {}},
                                     {"answers": {}, "asked": {}, "memos": {}, "pending": 3},
                                     {"answers": {}, "asked": {}, "memos": {}, "pending": [3]}])
def test_a_sealer_that_opens_something_never_sealed_is_a_refusal(home, payload):
    rounds = Rounds(serve(home, Gives(token="t", payload=payload)))
    assert rounds.send("notes_delete", {"title": "TPS report"}, "t",
                       rounds.roots(home)) == REFUSED


def test_a_sealer_gets_its_own_copy_of_the_payload(home):
    class Mutating(Recording):
        def seal(self, payload, binding):
            token = super().seal(payload, binding)
            payload.clear()
            return token
    rounds = Rounds(serve(home, Mutating()))
    _, form = rounds.to_the_form(home)
    done = rounds.send("notes_delete", {"title": "TPS report"}, form, {"ask-1": PICK_7})
    assert done["resultType"] == "complete" and "tps-2024.md" not in notes(home)


@pytest.mark.parametrize("source, error", [
    ("@extension.request_state\nclass S:\n    def seal(self, p, b): return ''\n",
     "métodos seal(payload, binding) y open(token, binding)"),
    ("@extension.request_state\nclass S:\n    def __init__(self): raise ValueError('no')\n",
     "ValueError"),
])
def test_a_sealer_without_seal_and_open_or_that_fails_to_start_is_reported(tmp_path, source,
                                                                            error):
    import extension as loader
    path = tmp_path / "reto.py"
    path.write_text("from extension import Extension\nextension = Extension()\n" + source)
    loaded = loader.load(str(path))
    assert loaded.state_sealer is None and error in loaded.errors["reto.py"]
