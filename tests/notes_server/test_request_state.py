"""The server's own sealer (request_state.Sealer): signed with the server's key, bound to the tool,
its arguments, the principal and an expiry, and read back only in its exact spelling."""

import pytest

from request_state import Binding, Sealer, ServerKey, StateError, digest
from shared.protocol import REVISIONS

KEY = ServerKey.new()


def binding(tool="notes_delete", arguments=None, key=KEY, now=1000.0, ttl=600.0,
            principal="local:ana"):
    return Binding(key=key.secret, key_id=key.id, tool=tool,
                   arguments=digest({"title": "TPS"} if arguments is None else arguments),
                   principal=principal, now=now, ttl=ttl, one_time=True)


def test_a_sealed_state_opens_for_the_same_call():
    token = Sealer().seal({"answers": {"a": 1}}, binding())
    assert Sealer().open(token, binding()) == {"answers": {"a": 1}}


def test_argument_order_does_not_matter():
    token = Sealer().seal({}, binding("t", {"a": 1, "b": 2}))
    assert Sealer().open(token, binding("t", {"b": 2, "a": 1})) == {}


@pytest.mark.parametrize("tool, arguments", [("notes_archive", {"title": "TPS"}),
                                             ("notes_delete", {"title": "Otra"})])
def test_a_state_is_refused_for_another_tool_or_arguments(tool, arguments):
    token = Sealer().seal({}, binding())
    with pytest.raises(StateError, match="another request"):
        Sealer().open(token, binding(tool, arguments))


def test_a_state_sealed_for_one_user_is_refused_for_another_with_the_same_key():
    token = Sealer().seal({"answers": {}}, binding(principal="local:ana"))
    with pytest.raises(StateError, match="another user"):
        Sealer().open(token, binding(principal="local:bea"))
    assert Sealer().open(token, binding(principal="local:ana")) == {"answers": {}}


def test_a_flipped_bit_breaks_the_seal():
    version, payload, tag = Sealer().seal({"answers": {}}, binding()).split(".")
    forged = payload[:-3] + ("A" if payload[-3] != "A" else "B") + payload[-2:]
    with pytest.raises(StateError):
        Sealer().open(f"{version}.{forged}.{tag}", binding())


def test_a_state_from_another_server_key_is_refused():
    token = Sealer().seal({}, binding())
    with pytest.raises(StateError, match="seal"):
        Sealer().open(token, binding(key=ServerKey.new()))


def test_an_expired_state_is_refused():
    token = Sealer().seal({}, binding(ttl=60))
    with pytest.raises(StateError, match="expired"):
        Sealer().open(token, binding(now=1061.0))


def test_a_state_lives_its_whole_ttl_even_when_sealed_late_in_a_second():
    # sealed at 1000.9 for 1 s: still good at 1001.8 (a whole-second expiry would end at 1001)
    token = Sealer().seal({"n": 1}, binding(now=1000.9, ttl=1.0))
    assert Sealer().open(token, binding(now=1001.8, ttl=1.0)) == {"n": 1}
    with pytest.raises(StateError, match="expired"):
        Sealer().open(token, binding(now=1002.0, ttl=1.0))


@pytest.mark.parametrize("respell", [
    lambda t: t + "=", lambda t: t + "==", lambda t: t[:10] + "\n" + t[10:], lambda t: t + " ",
    lambda t: t.replace("-", "+").replace("_", "/") if ("-" in t or "_" in t) else t + "+",
    lambda t: t[:-1] + {"A": "B", "Q": "R", "g": "h", "w": "x"}.get(t[-1], "!"),
])
def test_the_same_state_spelled_another_way_is_refused(respell):
    token = Sealer().seal({"answers": {}}, binding())
    assert respell(token) != token
    with pytest.raises(StateError, match="malformed"):
        Sealer().open(respell(token), binding())


@pytest.mark.parametrize("token", ["", "v1", "v1.a.b.c", None, 42, "v1.!!!.???"])
def test_malformed_states_are_refused(token):
    with pytest.raises(StateError):
        Sealer().open(token, binding())


def test_a_key_id_is_public_and_stable_and_the_key_never_shows():
    assert KEY.id == ServerKey(KEY.secret).id != ServerKey.new().id and len(KEY.id) == 8
    assert KEY.secret.hex() not in repr(KEY) + repr(binding())


@pytest.mark.parametrize("text", ["ab" * 31, "no es hex", ""])
def test_a_fleet_key_needs_32_bytes_of_hex(text):
    with pytest.raises(ValueError):
        ServerKey.from_hex(text)


@pytest.mark.parametrize("value", [float("nan"), {"x": [float("inf")]}])
def test_a_digest_refuses_what_is_not_json(value):
    with pytest.raises(ValueError):
        digest(value)


def test_a_digest_reads_a_lone_surrogate_and_tells_it_from_its_replacement():
    assert digest("nota \udcff") != digest("nota \ufffd")
    assert len(digest("nota \udcff")) == 32


@pytest.mark.parametrize("protocol", REVISIONS)
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


def test_the_key_and_a_binding_never_show_the_secret_when_printed():
    shown = repr(KEY) + repr(binding()) + str(binding())
    assert KEY.secret.hex() not in shown and repr(KEY.secret) not in shown
    assert KEY.id in shown and "notes_delete" in shown  # what is public still shows
