"""Notebook 6's deliberately weak sealers fall to the attack the notebook runs on each, and the
server's own sealer answers the same attack as the notebook says.

Each weak sealer (lessons/mcp_ui/weak_sealers.py) is plugged into a lab server the way the
notebook does (`lab.connect(..., sealer=...)`), and the attack of lessons/mcp_ui/attacks.py is
played on the 2026-07-28 wire: it must change the notes (or read them) with the weak sealer,
while with `request_state.Sealer` it is refused with -32602 and nothing changes. Where the
notebook says the server's sealer falls too (the state is readable, a used round replays), the
test pins that as well: it is what the challenge asks the learner to close.
"""

import asyncio

import pytest
from notebook_helpers import against_both, import_mcp_ui, lab_run

ui = import_mcp_ui()
NEW = "2026-07-28"
attacks, weak = ui.attacks, ui.weak_sealers




def refused_and_nothing_changed(outcome):
    return outcome.refused and not outcome.changes


@pytest.mark.parametrize("sealer", [weak.EncodedOnly, weak.UnkeyedHash, weak.KeyedButUnbound,
                                    weak.ForeverReusable, weak.SpendsFirst],
                         ids=lambda s: s.__name__)
def test_each_weak_sealer_still_seals_a_legitimate_delete(sealer):
    async def body(lab):
        conn = await lab.connect(NEW, sealer=sealer(), quiet=True)
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True, echo=False,
                        scripted=[attacks.pick("note-14")])
        return conn.last
    record = lab_run(body)
    assert record.result.text.startswith("Borrada la nota note-14")
    assert attacks.changes(record.before, record.after) == ["desapareció Notas/tps-2025.md"]


def test_an_encoded_only_state_is_read_without_a_key_and_so_is_the_servers_signed_one():
    broken, server = against_both(attacks.read, weak.EncodedOnly())
    for outcome in (broken, server):
        assert "note-3 en …/Notas/tps-2023.md" in outcome.revealed
        assert not outcome.changes


def test_an_encoded_only_state_is_forged_into_a_delete_nobody_chose_and_the_server_refuses():
    broken, server = against_both(attacks.forge, weak.EncodedOnly())
    assert broken.changes == ["desapareció Notas/tps-2023.md"]
    assert refused_and_nothing_changed(server)


def test_an_unkeyed_hash_is_computed_again_by_the_forger_and_the_server_refuses_the_forgery():
    broken, server = against_both(attacks.forge, weak.UnkeyedHash())
    assert broken.changes == ["desapareció Notas/tps-2023.md"]
    assert refused_and_nothing_changed(server)


def test_an_unbound_state_moved_to_other_arguments_deletes_another_note_and_the_server_refuses():
    broken, server = against_both(attacks.move, weak.KeyedButUnbound())
    assert broken.changes == ["desapareció Notas/tps-2023.md"]  # a TPS report, not the list
    assert refused_and_nothing_changed(server)


def test_a_state_that_never_expires_deletes_when_used_late_and_the_server_refuses_it_expired():
    broken, server = against_both(attacks.expired, weak.ForeverReusable(), state_ttl=1)
    assert broken.changes == ["desapareció Notas/tps-2025.md"]
    assert refused_and_nothing_changed(server)


def test_the_expiry_attack_holds_when_the_honest_rounds_take_longer_than_the_lifetime(
        monkeypatch):
    # a busy machine or browser: every frame takes 1.2 s, more than the 1-second lifetime
    send = attacks.Rounds.send

    async def slow_send(self, *args, **kwargs):
        await asyncio.sleep(1.2)
        return await send(self, *args, **kwargs)
    monkeypatch.setattr(attacks.Rounds, "send", slow_send)
    broken, server = against_both(attacks.expired, weak.ForeverReusable(), state_ttl=1)
    assert broken.changes == ["desapareció Notas/tps-2025.md"]
    assert refused_and_nothing_changed(server) and "expired" in server.text


def test_a_declined_round_replayed_as_a_yes_deletes_with_the_weak_sealer_and_the_servers_too():
    broken, server = against_both(attacks.replay, weak.ForeverReusable())
    assert broken.changes == server.changes == ["desapareció Notas/tps-2024.md"]


def test_a_token_rewritten_without_the_key_keeps_its_keyed_tag():
    body = {"memos": {"matches": [["note-3"], ["note-7"]]}}
    token = weak.KeyedButUnbound().seal(body, type("B", (), {"key": b"k" * 32,
                                                              "expires_at": 9e9})())
    forged = attacks.rewrite(token, attacks.keep_only("note-3"))
    assert forged.split(".")[1] == token.split(".")[1]
    assert attacks.readable(forged)["data"]["memos"]["matches"] == [["note-3"]]


def test_a_sealer_that_notes_a_token_before_checking_it_lets_a_forged_try_spend_the_users():
    broken, server = against_both(attacks.lockout, weak.SpendsFirst())
    assert broken.refused and not broken.changes  # the user's own answer, refused
    assert server.changes == ["desapareció Notas/tps-2024.md"]  # no one-time use: it goes on
