"""The server's own sealer at its limits: the exact expiry second, and a refusal that names its
reason (the server logs it)."""

import pytest

from request_state import Binding, Sealer, ServerKey, StateError, digest

KEY = ServerKey.new()


def binding(now=1000.0, ttl=600.0, arguments=None):
    return Binding(key=KEY.secret, key_id=KEY.id, tool="t", arguments=digest(arguments or {}),
                   principal="local:ana", now=now, ttl=ttl, one_time=False)


def test_a_state_opens_until_its_expiry_second_and_not_after():
    token = Sealer().seal({"answers": {}}, binding(ttl=60))
    assert Sealer().open(token, binding(now=1060.0)) == {"answers": {}}
    with pytest.raises(StateError, match="expired"):
        Sealer().open(token, binding(now=1060.5))


def forged():
    version, payload, tag = Sealer().seal({}, binding()).split(".")
    return f"{version}.{payload}.{tag[:-3]}{'AA' if tag[-3:-1] != 'AA' else 'BB'}{tag[-1]}"


@pytest.mark.parametrize("make, opened_at, reason", [
    (lambda: "v1.only-two-parts", 1000.0, "malformed"),
    (lambda: 42, 1000.0, "malformed"),
    (forged, 1000.0, "seal"),
    (lambda: "v2." + Sealer().seal({}, binding()).split(".", 1)[1], 1000.0, "seal"),
    (lambda: Sealer().seal({}, binding()), 4600.0, "expired"),
    (lambda: Sealer().seal({}, binding(arguments={"a": 1})), 1000.0,
     "bound to another request"),
])
def test_a_refused_state_names_exactly_why(make, opened_at, reason):
    with pytest.raises(StateError) as refused:
        Sealer().open(make(), binding(now=opened_at))
    assert str(refused.value) == reason
