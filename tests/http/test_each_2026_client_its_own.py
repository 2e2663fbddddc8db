"""At 2026-07-28 over HTTP each client has what it made: its handles, its questions (the
requestStates it was given) and its flows, never another client's; its limits are its own,
and a client that goes away frees them (code/transports/client_spaces.py).

A client is told apart by the cookie the server sets (the lesson's client and the Python SDK
keep it), or, when it keeps none, by what it carries back (a handle id, a requestState)."""

import re
import secrets
import threading
import time

import pytest

from http_support import stateless

PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
ROOTS_AND_FORMS = {"roots": {}, "elicitation": {"form": {}}}


class Client:
    """A raw 2026-07-28 client that keeps the cookie the server sets (or not: `keeps`)."""

    def __init__(self, server, keeps=True):
        self.server, self.keeps, self.cookie = server, keeps, None

    def call(self, name, arguments=None, capabilities=None, **params):
        headers = {"Cookie": self.cookie} if self.cookie else {}
        answer = stateless(self.server, "tools/call",
                           {"name": name, "arguments": arguments or {}, **params},
                           msg_id=secrets.randbelow(1000), headers=headers,
                           capabilities=capabilities)
        if self.keeps and "Set-Cookie" in answer.headers:
            self.cookie = answer.headers["Set-Cookie"].split(";")[0]
        return answer

    def result(self, name, arguments=None, **params):
        answer = self.call(name, arguments, **params)
        assert answer.status == 200, answer.frames
        return answer.frame["result"]


def text(result):
    return result["content"][0]["text"]


@pytest.fixture
def notes(serve, tree):
    """A server whose roots are Notas/ (--root: clients need not send theirs)."""
    return serve("--root", tree.notes)


def test_a_second_client_can_neither_read_nor_close_the_first_ones_handle(notes):
    ana, bea = Client(notes), Client(notes)
    opened = ana.result("notes_open", {"note_id": "note-3"})
    handle = opened["structuredContent"]["handle"]
    assert re.fullmatch(r"h-1\.c[\w-]{22}", handle) and ana.cookie
    for tried in ("h-1", handle):  # the plain name, and the first client's very id
        for tool in ("notes_read", "notes_close"):
            refused = bea.result(tool, {"handle": tried})
            assert refused["isError"] is True and "no hay ningún handle" in text(refused)
    read = ana.result("notes_read", {"handle": handle})  # still the first one's, open
    assert read["isError"] is False and "cuerpo de note-3" in read["structuredContent"]["body"]
    assert ana.result("notes_close", {"handle": handle})["isError"] is False


def test_a_client_without_cookies_reaches_its_handle_by_its_id_and_nobody_guesses_it(notes):
    """Nothing else tells two clients without cookies apart: the id it was given (which
    names its space) is what reaches its note; a guessed name does not."""
    lone, other = Client(notes, keeps=False), Client(notes, keeps=False)
    handle = lone.result("notes_open", {"note_id": "note-3"})["structuredContent"]["handle"]
    guessed = other.result("notes_read", {"handle": "h-1"})
    assert guessed["isError"] is True
    assert "cuerpo de note-3" in lone.result("notes_read", {"handle": handle})[
        "structuredContent"]["body"]


def test_one_client_at_its_limit_of_open_notes_locks_out_no_other(notes):
    from notes import handles
    ana, bea = Client(notes), Client(notes)
    for _ in range(handles.MAX_OPEN_HANDLES):
        assert ana.result("notes_open", {"note_id": "note-3"})["isError"] is False
    full = ana.result("notes_open", {"note_id": "note-3"})
    assert full["isError"] is True and f"ya tienes {handles.MAX_OPEN_HANDLES}" in text(full)
    other = bea.result("notes_open", {"note_id": "note-3"})
    assert other["isError"] is False and other["structuredContent"]["handle"].startswith("h-1.")


def test_a_question_given_to_one_client_is_refused_to_another(serve, tree):
    """The requestState of Ana's call, sent by Bea (as it came, and with Bea's name put in
    front of it), is -32602 and deletes nothing; Ana's retry still works."""
    server = serve()
    ana, bea = Client(server), Client(server)
    params = {"name": "notes_delete", "arguments": {"title": "TPS report"}}
    first = ana.result(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS)
    roots = {"roots": {"roots": [{"uri": tree.notes.as_uri()}]}}
    second = ana.result(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS,
                        requestState=first["requestState"], inputResponses=roots)
    (question,) = second["inputRequests"]
    state = second["requestState"]
    bea.call("notes_list", capabilities={"roots": {}})  # Bea has a name of her own now
    assert bea.cookie and bea.cookie != ana.cookie and state.startswith("c")
    for forged in (state, "cAAAAAAAAAAAAAAAAAAAAAA~" + state.split("~", 1)[1]):
        refused = bea.call(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS,
                           requestState=forged, inputResponses={question: PICK_2024})
        assert refused.status == 400 and refused.frame["error"]["code"] == -32602
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2024.md", "tps-2025.md"]
    done = ana.result(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS,
                      requestState=state, inputResponses={question: PICK_2024})
    assert done["structuredContent"]["deleted"]["id"] == "note-7"


def test_a_folder_swapped_between_two_rounds_is_refused_for_a_client_without_cookies(
        serve, tree):
    """What a root URI named in the first round travels sealed with the call: the round that
    deletes, sent after Notas/ was replaced by another folder, is refused, whatever space
    or replica serves it."""
    server = serve()
    lone = Client(server, keeps=False)
    params = {"name": "notes_delete", "arguments": {"title": "TPS report"}}
    first = lone.result(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS)
    roots = {"roots": {"roots": [{"uri": tree.notes.as_uri()}]}}
    second = lone.result(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS,
                         requestState=first["requestState"], inputResponses=roots)
    (question,) = second["inputRequests"]
    tree.notes.rename(tree.base / "Notas-de-verdad")
    (tree.base / "Notas-de-verdad").rename(tree.base / "movida")
    tree.private.rename(tree.notes)  # another folder now answers to the same URI
    before = tree.snapshot()
    third = lone.result(params["name"], params["arguments"], capabilities=ROOTS_AND_FORMS,
                        requestState=second["requestState"],
                        inputResponses={question: PICK_2024})
    assert third["isError"] is True and tree.snapshot() == before


def test_a_client_that_goes_away_frees_its_handles_and_its_place(tmp_path, tree,
                                                                 monkeypatch):
    """Unused for CLIENT_IDLE_SECONDS, a client's space is ended: its descriptors closed. A
    client whose space holds nothing is not kept at all."""
    import os

    from server import Config, NotesServer
    from transports import streamable_http
    http = streamable_http.StreamableHttp(NotesServer(Config(roots=[str(tree.notes)])),
                                          "127.0.0.1", 0)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        served = type("Here", (), {"host": "127.0.0.1", "port": http.port})()
        ana, bea = Client(served), Client(served)
        bea.result("notes_list")  # nothing kept: no space
        handle = ana.result("notes_open", {"note_id": "note-3"})["structuredContent"]["handle"]
        deadline = time.monotonic() + 10  # bea's space goes right after its answer was written
        while len(http.clients) != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(http.clients) == 1
        (space,) = http.clients.table.values()
        fd = space.session.handles.get(handle).fd
        os.fstat(fd)
        later = time.monotonic() + streamable_http.CLIENT_IDLE_SECONDS + 1
        monkeypatch.setattr(http.clients, "clock", lambda: later)
        http._reap()
        assert len(http.clients) == 0
        with pytest.raises(OSError):
            os.fstat(fd)  # closed with its space
        gone = ana.result("notes_read", {"handle": handle})
        assert gone["isError"] is True
    finally:
        http.close()
        thread.join(10)


@pytest.fixture
def in_process(tree):
    """A StreamableHttp in this process (its limits, monkeypatched first, can be small),
    roots Notas/."""
    from server import Config, NotesServer
    from transports import streamable_http

    def start():
        http = streamable_http.StreamableHttp(NotesServer(Config(roots=[str(tree.notes)])),
                                              "127.0.0.1", 0)
        thread = threading.Thread(target=http.serve_forever, daemon=True)
        thread.start()
        started.append((http, thread))
        return http, type("Here", (), {"host": "127.0.0.1", "port": http.port})()
    started = []
    yield start
    for http, thread in started:
        http.close()
        thread.join(10)


def test_a_table_full_of_live_clients_refuses_a_new_one_with_503_and_keeps_them(
        in_process, monkeypatch):
    from transports import streamable_http
    monkeypatch.setattr(streamable_http, "MAX_CLIENTS", 2)
    http, served = in_process()
    ana, bea, cai = Client(served), Client(served), Client(served)
    handles = [c.result("notes_open", {"note_id": "note-3"})["structuredContent"]["handle"]
               for c in (ana, bea)]
    refused = cai.call("notes_open", {"note_id": "note-3"})
    assert refused.status == 503 and refused.headers["Retry-After"] == "1"
    assert refused.frame["error"]["code"] == -32603
    for client, handle in zip((ana, bea), handles, strict=True):  # the live ones were not taken
        assert client.result("notes_read", {"handle": handle})["isError"] is False
    assert ana.result("notes_close", {"handle": handles[0]})["isError"] is False
    assert cai.result("notes_open", {"note_id": "note-3"})["isError"] is False
