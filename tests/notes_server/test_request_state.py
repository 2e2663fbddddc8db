"""The sealed 2026-07-28 requestState: bound to the tool, its arguments and an expiry."""

import pytest

from request_state import Sealer, StateError


class Clock:
    now = 1000.0

    def __call__(self):
        return self.now


def test_a_sealed_state_opens_for_the_same_call():
    sealer = Sealer()
    token = sealer.seal("notes_delete", {"title": "TPS"}, {"answers": {"a": 1}})
    assert sealer.open(token, "notes_delete", {"title": "TPS"}) == {"answers": {"a": 1}}


def test_argument_order_does_not_matter():
    sealer = Sealer()
    token = sealer.seal("t", {"a": 1, "b": 2}, {})
    assert sealer.open(token, "t", {"b": 2, "a": 1}) == {}


@pytest.mark.parametrize("tool, arguments", [("notes_archive", {"title": "TPS"}),
                                             ("notes_delete", {"title": "Otra"})])
def test_a_state_is_refused_for_another_tool_or_arguments(tool, arguments):
    sealer = Sealer()
    token = sealer.seal("notes_delete", {"title": "TPS"}, {})
    with pytest.raises(StateError, match="another request"):
        sealer.open(token, tool, arguments)


def test_a_flipped_bit_breaks_the_seal():
    sealer = Sealer()
    version, payload, tag = sealer.seal("t", {}, {"answers": {}}).split(".")
    forged = payload[:-1] + ("A" if payload[-1] != "A" else "B")
    with pytest.raises(StateError):
        sealer.open(f"{version}.{forged}.{tag}", "t", {})


def test_a_state_from_another_server_key_is_refused():
    token = Sealer().seal("t", {}, {})
    with pytest.raises(StateError, match="seal"):
        Sealer().open(token, "t", {})


def test_an_expired_state_is_refused():
    clock = Clock()
    sealer = Sealer(ttl_seconds=60, clock=clock)
    token = sealer.seal("t", {}, {})
    clock.now += 61
    with pytest.raises(StateError, match="expired"):
        sealer.open(token, "t", {})


@pytest.mark.parametrize("token", ["", "v1", "v1.a.b.c", None, 42, "v1.!!!.???"])
def test_malformed_states_are_refused(token):
    with pytest.raises(StateError):
        Sealer().open(token, "t", {})


@pytest.mark.parametrize("value", [float("nan"), {"x": [float("inf")]}])
def test_a_digest_refuses_what_is_not_json(value):
    from request_state import digest
    with pytest.raises(ValueError):
        digest(value)


def test_a_digest_reads_a_lone_surrogate_and_tells_it_from_its_replacement():
    from request_state import digest
    assert digest("nota \udcff") != digest("nota \ufffd")
    assert len(digest("nota \udcff")) == 32


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_a_question_with_a_lone_surrogate_is_asked_at_both_revisions(tmp_path, protocol):
    from extension import Extension
    from hand_client import Talk
    from server import Config, NotesServer
    from tooling import ok

    extension = Extension()

    @extension.tool("pregunta", description="x")
    def pregunta(ctx):
        answer = ctx.elicit_form("¿Borro «nota \udcff»?", {"ok": {"type": "boolean"}})
        return ok(answer.action)
    talk = Talk(NotesServer(Config(roots=[str(tmp_path)]), extension), protocol,
                [str(tmp_path)])
    kind, asked = talk.call("pregunta")
    assert kind == "asks" and asked["message"] == "¿Borro «nota \udcff»?"
    assert talk.answer({"action": "decline"})[1]["result"]["content"][0]["text"] == "decline"
