"""A path is bounded (length and depth) before anything resolves it, in one place (issue 34).

Resolving a path costs its length times its depth: a `notes_write` uri of 3.8 MB with 1.9
million names, or a root like it in a roots/list answer, fits in one frame and used to hold the
server for minutes. Now such a path is refused at once, saying why, and the session goes on.
The timeout marks only turn a server that is stuck into a failure instead of a long wait; the
assertions are about what the server answers.
"""

import os

import pytest

from roots import MAX_PATH_BYTES, MAX_PATH_NAMES, MAX_URI_CHARS, RootError, RootSet, uri_to_path
from test_session_core import ENVELOPE, Peer, call, result_of, server

HUGE_NAMES = 1_900_000  # "/a" 1.9 million times: 3.8 MB, under the 4 MB frame limit


@pytest.fixture
def notes(tmp_path):
    folder = os.path.realpath(tmp_path / "Notas")
    os.mkdir(folder)
    return folder


def huge_uri(folder):
    return f"file://{folder}" + "/a" * HUGE_NAMES + "/nota.md"


def text_of(frames, msg_id):
    result = result_of(frames, msg_id)["result"]
    assert result["isError"] is True
    return result["content"][0]["text"]


@pytest.mark.timeout(60)
def test_a_write_to_a_uri_of_millions_of_names_is_refused_at_once(notes):
    peer = Peer(server()).start([notes])
    write = call(peer, "notes_write", {"uri": huge_uri(notes), "title": "T", "body": "x"})
    assert text_of(peer.take(), write) == (
        f"No escribí nada: la URI es demasiado larga (más de {MAX_URI_CHARS} caracteres)")
    assert os.listdir(notes) == []
    ping = peer.request("ping")
    assert result_of(peer.take(), ping)["result"] == {}


def test_a_write_to_a_path_deeper_than_any_real_one_is_refused_saying_so(notes):
    peer = Peer(server()).start([notes])
    deep = f"file://{notes}" + "/a" * MAX_PATH_NAMES + "/nota.md"
    write = call(peer, "notes_write", {"uri": deep, "title": "T", "body": "x"})
    assert text_of(peer.take(), write) == (
        f"No escribí nada: la ruta es demasiado profunda (más de {MAX_PATH_NAMES} carpetas)")


def test_a_path_longer_than_the_system_allows_is_refused_in_bytes_not_characters(notes):
    # 1,400 characters of "ñ" are 2,800 bytes; twice that is over the limit
    with pytest.raises(RootError, match=f"más de {MAX_PATH_BYTES} bytes"):
        uri_to_path(f"{notes}/" + "ñ" * 1400 + "/" + "ñ" * 1400)
    assert uri_to_path(f"{notes}/" + "ñ" * 1400) == f"{notes}/" + "ñ" * 1400


def test_a_path_of_exactly_the_byte_limit_passes_and_one_byte_more_does_not(notes):
    longest = f"{notes}/" + "a" * (MAX_PATH_BYTES - len(notes.encode()) - 1)
    assert len(longest.encode()) == MAX_PATH_BYTES
    assert uri_to_path(longest) == longest
    with pytest.raises(RootError, match=f"más de {MAX_PATH_BYTES} bytes"):
        uri_to_path(longest + "a")


def test_a_path_of_exactly_the_depth_limit_passes_and_one_name_more_does_not(notes):
    deepest = notes + "/a" * (MAX_PATH_NAMES - notes.count("/"))
    assert deepest.count("/") == MAX_PATH_NAMES
    assert uri_to_path(deepest) == deepest
    with pytest.raises(RootError, match=f"más de {MAX_PATH_NAMES} carpetas"):
        uri_to_path(deepest + "/a")


def test_a_uri_of_exactly_the_character_limit_is_refused_for_its_path_not_its_length(notes):
    # no URI that long names a path within the byte limit (each byte is 3 characters at most):
    # the limit on characters is only the first, cheap cut, and the reason names the path
    start = f"file://{notes}/"
    uri = start + "%61" * ((MAX_URI_CHARS - len(start)) // 3)
    uri += "a" * (MAX_URI_CHARS - len(uri))
    assert len(uri) == MAX_URI_CHARS
    with pytest.raises(RootError, match=f"la ruta es demasiado larga \\(más de {MAX_PATH_BYTES}"):
        uri_to_path(uri)


@pytest.mark.timeout(60)
def test_a_2025_roots_answer_with_a_root_of_millions_of_names_allows_no_folder(notes):
    peer = Peer(server())
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {
        "roots": {"listChanged": True}}})
    peer.notify("notifications/initialized")
    [asked] = [f for f in peer.take() if f.get("method") == "roots/list"]
    peer.answer(asked["id"], {"roots": [{"uri": f"file://{notes}"}, {"uri": huge_uri(notes)}]})
    listing = call(peer, "notes_list")
    assert text_of(peer.take(), listing) == \
        "No pude leer tus roots (roots/list falló): no toco ningún archivo."


@pytest.mark.timeout(60)
def test_a_2026_roots_answer_with_a_root_of_millions_of_names_is_refused_saying_why(notes):
    peer = Peer(server())
    first = call(peer, "notes_list", meta=ENVELOPE)
    state = result_of(peer.take(), first)["result"]["requestState"]
    retry = peer.request("tools/call", {
        "name": "notes_list", "arguments": {}, "_meta": ENVELOPE, "requestState": state,
        "inputResponses": {"roots": {"roots": [{"uri": huge_uri(notes)}]}}})
    assert text_of(peer.take(), retry) == ("La lista de roots no es válida: la URI es demasiado "
                                           f"larga (más de {MAX_URI_CHARS} caracteres)")


def test_the_server_s_own_root_folders_go_through_the_same_bound(notes):
    with pytest.raises(RootError, match="demasiado profunda"):
        RootSet.from_paths([notes + "/a" * MAX_PATH_NAMES])
