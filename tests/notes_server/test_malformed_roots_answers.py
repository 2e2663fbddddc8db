"""A roots answer that is malformed in any way is refused with a reason in Spanish (RootError),
opens nothing, and never raises anything else: not from `RootSet.from_list_result`, not past
the session (2025-11-25: the answer to the server's roots/list; 2026-07-28: the roots in
`inputResponses`). Afterwards no file is touched and the server goes on serving.
"""

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roots import MAX_ROOTS, RootError, RootSet
from server_support import RawPipe

MALFORMED = [
    ({"roots": [{"uri": "file://["}]}, "mal formada"),
    ({"roots": [{"uri": "file://[::1/x"}]}, "mal formada"),
    ({"roots": [{"uri": "file:///tmp/\ud800"}]}, "no son texto válido"),
    ({"roots": [{"uri": "file:///tmp/\udcff"}]}, "no son texto válido"),
    ({"roots": [{"uri": "file:///tmp/\udfff"}]}, "no son texto válido"),  # the last surrogate
    ({"roots": [{"uri": "/tmp/\udcff"}]}, "deben ser URIs file://"),
    ({"roots": [{"uri": "file:///tmp/%ff%fe"}]}, "escape %xx que no es UTF-8"),
    ({"roots": [{"uri": "file:///tmp/a%00b"}]}, "NUL"),
    ({"roots": [{"uri": "file:///tmp", "name": 42}]}, "nombre de una root"),
    ({"roots": [{"uri": "file:///tmp", "name": ["Notas"]}]}, "nombre de una root"),
    ({"roots": [{"uri": "file:///tmp", "name": "\udcff"}]}, "nombre de una root"),
    ({"roots": [{"uri": "file:///tmp"}] * (MAX_ROOTS + 1)}, f"más de {MAX_ROOTS} roots"),
    ({"roots": [{"uri": "file://otra/tmp"}]}, "host remoto"),
    ({"roots": [{"uri": "https://example.com"}]}, "file://"),
    ({"roots": [None]}, "campo 'uri' de texto"),
    ({"roots": {"uri": "file:///tmp"}}, "no trae una lista 'roots'"),
]


def test_as_many_roots_as_the_limit_are_accepted(tmp_path):
    answer = {"roots": [{"uri": f"file://{tmp_path}"}] * MAX_ROOTS}
    assert len(RootSet.from_list_result(answer)) == MAX_ROOTS


@pytest.mark.parametrize("answer, reason", MALFORMED,
                         ids=[f"case-{i}" for i in range(len(MALFORMED))])
def test_a_malformed_roots_answer_is_a_root_error_with_its_reason(answer, reason):
    with pytest.raises(RootError, match=reason):
        RootSet.from_list_result(answer)


TEXT = st.one_of(st.text(), st.sampled_from([
    "file://[", "file:///tmp/\ud800", "file:///%ff", "file:///tmp/%2e%2e/x", "file://",
    "file:", "file:///tmp?x#y", "file://localhost/tmp", "/tmp", "tmp", "file:///\x00",
    "file:////tmp", "FILE:///TMP", "file://%5B/x"]))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["uri", "name", "roots", "x"]), inner,
                                      max_size=3), max_leaves=12)
ANSWERS = st.one_of(JSON, st.fixed_dictionaries({"roots": st.lists(
    st.one_of(JSON, st.fixed_dictionaries({"uri": TEXT}, optional={"name": JSON})),
    max_size=4)}))


@settings(max_examples=600, database=None, deadline=None)
@given(ANSWERS)
def test_no_roots_answer_raises_anything_but_a_root_error_or_opens_anything(answer):
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    try:
        roots = RootSet.from_list_result(answer)
    except RootError as exc:
        assert str(exc)
    else:
        assert all(root.path.startswith("/") for root in roots.roots)
        json.dumps([root.uri for root in roots.roots] + [r.name for r in roots.roots])
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


# -- on the wire ----------------------------------------------------------------------------
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                   "clientInfo": {"name": "raw", "version": "0"}}}
LIST = {"name": "notes_list", "arguments": {}}


@pytest.fixture
def pipe(trace):
    raw = RawPipe(trace=trace)
    yield raw
    assert raw.close() == 0


def still_serving(pipe, msg_id=99):
    pipe.send({"jsonrpc": "2.0", "id": msg_id, "method": "ping"})
    assert pipe.receive() == {"jsonrpc": "2.0", "id": msg_id, "result": {}}


@pytest.mark.parametrize("answer", [a for a, _ in MALFORMED[:8]],
                         ids=[f"case-{i}" for i in range(8)])
def test_2025_a_malformed_roots_list_answer_allows_no_folder_and_the_session_goes_on(
        pipe, tree, answer):
    before = tree.snapshot()
    pipe.send(INIT)
    pipe.receive()
    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    asked = pipe.receive()
    assert asked["method"] == "roots/list"
    pipe.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": LIST})
    listed = pipe.receive()
    assert listed["id"] == 2 and listed["result"]["isError"]
    assert "No pude leer tus roots" in listed["result"]["content"][0]["text"]
    still_serving(pipe)
    assert tree.snapshot() == before


STATELESS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}


@pytest.mark.parametrize("answer, reason", MALFORMED[:8], ids=[f"case-{i}" for i in range(8)])
def test_2026_malformed_roots_in_input_responses_are_a_tool_error_with_the_reason(
        pipe, tree, answer, reason):
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {**LIST, "_meta": STATELESS_META}})
    first = pipe.receive()["result"]
    assert first["resultType"] == "input_required" and "roots" in first["inputRequests"]
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {**LIST, "_meta": STATELESS_META, "inputResponses": {"roots": answer},
                          "requestState": first["requestState"]}})
    result = pipe.receive()["result"]
    assert result["isError"]
    assert "La lista de roots no es válida" in result["content"][0]["text"]
    still_serving(pipe)


def test_a_path_the_system_cannot_resolve_is_refused_with_a_reason(monkeypatch):
    def cannot(path):
        raise OSError(36, "File name too long")
    monkeypatch.setattr(os.path, "realpath", cannot)
    with pytest.raises(RootError, match="no pude resolver la ruta de la URI"):
        RootSet.from_list_result({"roots": [{"uri": "file:///tmp/x"}]})
