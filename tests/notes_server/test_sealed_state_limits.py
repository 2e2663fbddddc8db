"""The sealed 2026-07-28 requestState at its limits: the exact expiry second, the default
lifetime, and a refusal that names its reason (the server logs it)."""

import pytest

from request_state import Sealer, StateError


class Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_a_state_opens_until_its_expiry_second_and_not_after():
    clock = Clock()
    sealer = Sealer(ttl_seconds=60, clock=clock)
    token = sealer.seal("t", {}, {"answers": {}})
    clock.now = 1060.0
    assert sealer.open(token, "t", {}) == {"answers": {}}
    clock.now = 1060.5
    with pytest.raises(StateError, match="expired"):
        sealer.open(token, "t", {})


def test_a_state_lives_ten_minutes_by_default():
    clock = Clock()
    sealer = Sealer(clock=clock)
    token = sealer.seal("t", {}, {})
    clock.now = 1600.0
    assert sealer.open(token, "t", {}) == {}
    clock.now = 1600.5
    with pytest.raises(StateError, match="expired"):
        sealer.open(token, "t", {})


def forged(sealer):
    version, payload, tag = sealer.seal("t", {}, {}).split(".")
    return f"{version}.{payload}.{tag[:-2]}{'AA' if tag[-2:] != 'AA' else 'BB'}"


def expired(sealer):
    token = sealer.seal("t", {}, {})
    sealer.clock.now += 3600
    return token


@pytest.mark.parametrize("make, reason", [
    (lambda sealer: "v1.only-two-parts", "malformed"),
    (lambda sealer: 42, "malformed"),
    (forged, "seal"),
    (lambda sealer: "v2." + sealer.seal("t", {}, {}).split(".", 1)[1], "seal"),
    (expired, "expired"),
    (lambda sealer: sealer.seal("t", {"a": 1}, {}), "bound to another request"),
])
def test_a_refused_state_names_exactly_why(make, reason):
    sealer = Sealer(clock=Clock())
    token = make(sealer)
    with pytest.raises(StateError) as refused:
        sealer.open(token, "t", {})
    assert str(refused.value) == reason
