"""The wire's limits, the same both ways: how deep a frame may nest (judged in linear time,
brackets inside strings not counted), what the server may send (strict JSON within the frame
size), and a checked response that is written exactly as any other frame would be."""

import json

import pytest

from shared import wire
from shared.wire import MAX_DEPTH, Checked, NotJSON, check_json, encode, too_deep


@pytest.mark.parametrize("text, deep", [
    ("[" * MAX_DEPTH + "]" * MAX_DEPTH, False),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), True),
    ("{\"a\":" * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1), True),
    ("[" * (MAX_DEPTH + 1), True),                              # never closed
    ("[]" * 10_000, False),                                     # many, side by side
    (json.dumps(["[" * 500]), False),                           # inside a string
    (json.dumps(['\\"' + "[" * 500, "\\\\"]), False),           # escaped quotes, backslashes
    ('["\\\\"' + ",[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 2), True),  # "\\" ends its string
])
def test_nesting_is_judged_outside_strings(text, deep):
    assert too_deep(text) is deep
    assert too_deep(text.encode()) is deep


def test_a_million_brackets_are_judged_without_recursion():
    assert too_deep(b"[" * 1_000_000)


@pytest.mark.parametrize("value, kind", [
    ({1}, "type"), ({"a": object()}, "type"), (float("nan"), "number"),
    ([float("-inf")], "number"), ("x" * 2000, "size"), ("ñ" * 600, "size"),
    (json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)), "depth"),
])
def test_what_the_server_would_send_is_checked_as_strict_json(value, kind):
    with pytest.raises(NotJSON) as refused:
        check_json(value, limit=1024)
    assert refused.value.kind == kind


def test_a_value_within_the_limits_comes_back_encoded():
    value = {"texto": "ñ" * 400, "números": [1, 2.5, None, True]}
    assert check_json(value, limit=1024) == json.dumps(value, ensure_ascii=False,
                                                      separators=(",", ":"))


def test_a_value_deeper_than_python_can_encode_is_too_deep():
    value = []
    for _ in range(5000):
        value = [value]
    with pytest.raises(NotJSON) as refused:
        check_json(value)
    assert refused.value.kind == "depth"


@pytest.mark.parametrize("msg_id", [7, -3, "texto", 'comillas "y" \\ barras', "ñandú"])
@pytest.mark.parametrize("result", [{}, {"a": "ñ", "b": [1, {"c": None}]},
                                    {"solo": "\ud800 mitad de un par"}])
def test_a_checked_response_is_written_like_any_other_frame(msg_id, result):
    frame = Checked(msg_id, result, check_json(result))
    assert frame == wire.response(msg_id, result)
    assert encode(frame) == encode(dict(wire.response(msg_id, result)))
    assert json.loads(encode(frame)) == {"jsonrpc": "2.0", "id": msg_id, "result": result}
