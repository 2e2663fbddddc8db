"""The session core on its own: frames in, frames and timers out, no thread and no wait.

Each test feeds frames to a `Session` by hand, reads every frame it writes, and moves a manual
clock, so timeouts, cancellation and parked calls are checked exactly and instantly.
"""

import json
import os
import threading

import pytest

from cli.demo import write_lesson_notes
from core.session import Session
from server import Config, NotesServer

CAPS = {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}
PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": CAPS}


class ManualClock:
    def __init__(self):
        self.now, self.timers = 0.0, []

    def call_later(self, seconds, fn):
        timer = Timer(self.now + seconds, fn)
        self.timers.append(timer)
        return timer

    def call_soon(self, fn):
        return self.call_later(0, fn)

    def advance(self, seconds=0.0):
        """Move time forward, firing every timer in due order at its own time."""
        end = self.now + seconds
        while due := sorted((t for t in self.timers if t.due <= end and not t.cancelled),
                            key=lambda t: t.due):
            self.now = max(self.now, due[0].due)
            due[0].cancelled = True
            due[0].fn()
        self.now = end


class Timer:
    def __init__(self, due, fn):
        self.due, self.fn, self.cancelled = due, fn, False

    def cancel(self):
        self.cancelled = True


class Peer:
    """The client side, by hand: what it sends and everything the session wrote back."""

    def __init__(self, server):
        self.clock = ManualClock()
        self.out = []
        self.session = Session(server, self.out.append, self.clock)
        self.next_id = 100

    def send(self, msg):
        self.session.receive(json.dumps({"jsonrpc": "2.0", **msg}).encode())

    def request(self, method, params=None):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params or {}})
        return self.next_id

    def notify(self, method, params=None):
        self.send({"method": method, **({"params": params} if params else {})})

    def answer(self, msg_id, result):
        self.send({"id": msg_id, "result": result})

    def take(self):
        frames, self.out[:] = list(self.out), []
        return frames

    def start(self, roots, caps=CAPS):
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": caps,
                                    "clientInfo": {"name": "t", "version": "1"}})
        self.notify("notifications/initialized")
        asked = [f for f in self.take() if f.get("method") == "roots/list"]
        if "roots" in caps:
            self.answer(asked[0]["id"], {"roots": [{"uri": f"file://{r}"} for r in roots]})
        return self


@pytest.fixture
def home(tmp_path):
    base = os.path.realpath(tmp_path)
    write_lesson_notes(base)
    return base


def server(**config):
    return NotesServer(Config(**{"demo_url_guard": True, **config}))


def call(peer, name, arguments=None, meta=None):
    params = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return peer.request("tools/call", params)


def result_of(frames, msg_id):
    found = [f for f in frames if f.get("id") == msg_id and ("result" in f or "error" in f)]
    assert len(found) <= 1
    return found[0] if found else None


def questions(frames):
    return [f for f in frames if f.get("method") == "elicitation/create"]


# -- parked calls ---------------------------------------------------------------------------
def test_a_question_parks_the_call_and_the_answer_runs_it_again(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    call_id = call(peer, "notes_delete", {"title": "TPS report"})
    frames = peer.take()
    assert result_of(frames, call_id) is None and len(questions(frames)) == 1
    peer.answer(questions(frames)[0]["id"], PICK_2024)
    done = result_of(peer.take(), call_id)
    assert done["result"]["structuredContent"]["deleted"]["id"] == "note-7"
    assert not os.path.exists(f"{home}/Notas/tps-2024.md")


def test_the_session_never_starts_a_thread(home, monkeypatch):
    def refuse(self):
        raise AssertionError("the core started a thread")
    monkeypatch.setattr(threading.Thread, "start", refuse)
    peer = Peer(server(page_transport="inline")).start([f"{home}/Notas"])
    call_id = call(peer, "notes_delete", {"title": "TPS report"})
    peer.answer(questions(peer.take())[0]["id"], PICK_2024)
    assert result_of(peer.take(), call_id)["result"]["isError"] is False
    setup = call(peer, "notes_setup")
    peer.answer(questions(peer.take())[0]["id"], {"action": "accept"})
    peer.clock.advance(10)
    assert result_of(peer.take(), setup)["result"]["structuredContent"] == {"status": "pending"}


def test_a_call_after_list_changed_waits_for_the_new_roots(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    peer.notify("notifications/roots/list_changed")
    asked = [f for f in peer.take() if f.get("method") == "roots/list"]
    listing = call(peer, "notes_list")
    assert result_of(peer.take(), listing) is None  # parked until the roots are known
    peer.answer(asked[0]["id"], {"roots": [{"uri": f"file://{home}/Trabajo"}]})
    notes = result_of(peer.take(), listing)["result"]["structuredContent"]["notes"]
    assert [n["id"] for n in notes] == ["note-21"]


def test_a_roots_change_while_the_form_is_open_never_acts_on_a_note_outside(home):
    peer = Peer(server()).start([f"{home}/Notas", f"{home}/Trabajo"])
    call_id = call(peer, "notes_delete", {"title": "TPS report"})
    form = questions(peer.take())[0]
    peer.notify("notifications/roots/list_changed")
    asked = [f for f in peer.take() if f.get("method") == "roots/list"]
    peer.answer(asked[0]["id"], {"roots": [{"uri": f"file://{home}/Trabajo"}]})
    peer.answer(form["id"], PICK_2024)
    done = result_of(peer.take(), call_id)
    assert done["result"]["isError"] is True and "fuera de las roots" in json.dumps(done)
    assert os.path.exists(f"{home}/Notas/tps-2024.md")


# -- cancellation ---------------------------------------------------------------------------
def test_a_cancelled_call_gets_no_response_and_changes_nothing(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    call_id = call(peer, "notes_delete", {"title": "TPS report"})
    form = questions(peer.take())[0]
    peer.notify("notifications/cancelled", {"requestId": call_id, "reason": "timeout"})
    assert peer.take() == [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": form["id"], "reason": "La llamada que hacía esta pregunta se canceló."}}]
    peer.answer(form["id"], PICK_2024)  # the user answers late
    peer.clock.advance(3600)
    assert peer.take() == []
    assert os.path.exists(f"{home}/Notas/tps-2024.md")
    listing = call(peer, "notes_list")
    assert result_of(peer.take(), listing)["result"]["isError"] is False


def test_cancelling_an_unknown_or_finished_call_does_nothing(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    listing = call(peer, "notes_list")
    peer.take()
    for request_id in (listing, 99999, None, 1.5):
        peer.notify("notifications/cancelled", {"requestId": request_id})
    assert peer.take() == []


def test_a_cancelled_call_waiting_for_the_page_is_never_answered(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup")
    peer.answer(questions(peer.take())[0]["id"], {"action": "accept"})
    peer.notify("notifications/cancelled", {"requestId": setup})
    peer.clock.advance(60)
    assert result_of(peer.take(), setup) is None


# -- timeouts are timers ---------------------------------------------------------------------
def test_a_form_nobody_answers_ends_the_call_and_is_withdrawn(home):
    peer = Peer(server(elicit_timeout=5)).start([f"{home}/Notas"])
    call_id = call(peer, "notes_delete", {"title": "TPS report"})
    form = questions(peer.take())[0]
    peer.clock.advance(4.9)
    assert peer.take() == []
    peer.clock.advance(0.2)
    frames = peer.take()
    assert frames[0]["method"] == "notifications/cancelled"
    assert frames[0]["params"]["requestId"] == form["id"]
    assert result_of(frames, call_id)["result"]["content"][0]["text"] == \
        "Nadie respondió a tiempo; no hice nada."


def test_roots_that_never_come_fail_closed(home):
    peer = Peer(server(roots_timeout=3))
    peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": CAPS})
    peer.notify("notifications/initialized")
    peer.take()  # roots/list, never answered
    write = call(peer, "notes_write", {"uri": f"file://{home}/Notas/x.md", "title": "x",
                                       "body": "x"})
    peer.clock.advance(3)
    done = result_of(peer.take(), write)
    assert done["result"]["isError"] is True and not os.path.exists(f"{home}/Notas/x.md")


# -- URL mode answers promptly ----------------------------------------------------------------
def test_consent_without_the_page_answers_pending_within_the_setup_wait(home):
    peer = Peer(server(setup_wait=7)).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup")
    peer.answer(questions(peer.take())[0]["id"], {"action": "accept"})
    peer.clock.advance(6.9)
    assert result_of(peer.take(), setup) is None
    peer.clock.advance(0.2)
    assert result_of(peer.take(), setup)["result"]["structuredContent"] == {"status": "pending"}


def test_the_page_finishing_later_notifies_and_a_new_call_reports_configured(home):
    srv = server(setup_wait=1)
    peer = Peer(srv).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup")
    form = questions(peer.take())[0]
    peer.answer(form["id"], {"action": "accept"})
    peer.clock.advance(1)
    assert result_of(peer.take(), setup)["result"]["structuredContent"]["status"] == "pending"
    record = srv.flows.get(form["params"]["elicitationId"])
    srv.flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    peer.clock.advance()
    assert peer.take() == [{"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                            "params": {"elicitationId": record.elicitation_id}}]
    again = call(peer, "notes_setup")
    assert result_of(peer.take(), again)["result"]["structuredContent"]["status"] == "configured"


def test_the_page_finishing_during_the_wait_notifies_then_answers(home):
    srv = server()
    peer = Peer(srv).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup")
    form = questions(peer.take())[0]
    peer.answer(form["id"], {"action": "accept"})
    record = srv.flows.get(form["params"]["elicitationId"])
    srv.flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    peer.clock.advance()
    frames = peer.take()
    assert [f.get("method", f.get("id")) for f in frames] == [
        "notifications/elicitation/complete", setup]
    assert frames[1]["result"]["structuredContent"] == {"status": "configured"}


def test_progress_is_reported_while_the_call_waits_for_the_page(home):
    peer = Peer(server(setup_wait=5)).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup", meta={"progressToken": "p-1"})
    peer.answer(questions(peer.take())[0]["id"], {"action": "accept"})
    peer.clock.advance(4.5)
    ticks = [f["params"] for f in peer.take() if f.get("method") == "notifications/progress"]
    assert [t["progressToken"] for t in ticks] == ["p-1"] * 3
    assert [t["progress"] for t in ticks] == sorted({t["progress"] for t in ticks})
    assert all(t["total"] == 5 for t in ticks)
    peer.clock.advance(1)
    frames = peer.take()
    assert not [f for f in frames if f.get("method") == "notifications/progress"]
    assert result_of(frames, setup)["result"]["structuredContent"] == {"status": "pending"}


# -- notes_sync and -32042 ---------------------------------------------------------------------
def test_sync_before_setup_is_url_elicitation_required_at_2025_11_25(home):
    peer = Peer(server()).start([f"{home}/Notas"])
    sync = call(peer, "notes_sync")
    error = result_of(peer.take(), sync)["error"]
    assert error["code"] == -32042
    [wanted] = error["data"]["elicitations"]
    assert wanted["mode"] == "url" and wanted["elicitationId"] and wanted["url"]


def test_sync_without_url_mode_is_a_tool_error_not_32042(home):
    peer = Peer(server(demo_url_guard=False)).start([f"{home}/Notas"])
    sync = call(peer, "notes_sync")
    done = result_of(peer.take(), sync)
    assert done["result"]["isError"] is True and "modo URL" in json.dumps(done)


def test_sync_before_setup_asks_in_band_with_the_roots_in_one_round_at_2026_07_28(home):
    srv = server()
    peer = Peer(srv)
    sync = call(peer, "notes_sync", meta=ENVELOPE)
    first = result_of(peer.take(), sync)["result"]
    assert first["resultType"] == "input_required"
    requests = first["inputRequests"]
    assert list(requests) == ["consent", "roots"] and requests["roots"]["method"] == "roots/list"
    consent = requests["consent"]["params"]
    assert consent["mode"] == "url" and "elicitationId" not in consent
    eid = consent["url"].rsplit("=", 1)[1]
    record = srv.flows.get(eid)
    srv.flows.complete(eid, record.nonce, "notas-sync")
    peer.clock.advance()
    retry = peer.request("tools/call", {"name": "notes_sync", "arguments": {}, "_meta": ENVELOPE,
                                        "requestState": first["requestState"],
                                        "inputResponses": {
                                            "consent": {"action": "accept"},
                                            "roots": {"roots": [
                                                {"uri": f"file://{home}/Notas"}]}}})
    done = result_of(peer.take(), retry)["result"]
    assert done["structuredContent"]["synced"] == 4


# -- the boundary says why it is empty --------------------------------------------------------
def test_an_empty_roots_list_is_refused_with_how_to_share_a_folder(home):
    peer = Peer(server()).start([])
    listing = call(peer, "notes_list")
    text = result_of(peer.take(), listing)["result"]["content"][0]["text"]
    assert "no compartió ninguna carpeta" in text and "--root" in text


def test_roots_outside_every_root_option_say_so(home):
    peer = Peer(server(roots=[f"{home}/Trabajo"])).start([f"{home}/Notas"])
    listing = call(peer, "notes_list")
    text = result_of(peer.take(), listing)["result"]["content"][0]["text"]
    assert "dentro de las carpetas de --root" in text


def test_a_tool_that_changes_its_question_every_run_is_stopped(home, tmp_path):
    solution = tmp_path / "cambiante.py"
    solution.write_text(
        "import itertools\nfrom extension import Extension\nextension = Extension()\n"
        "counter = itertools.count()\n"
        "@extension.tool('pregunta_cambiante', description='x')\n"
        "def pregunta(ctx):\n"
        "    ctx.elicit_form(f'Pregunta {next(counter)}', {'ok': {'type': 'boolean'}})\n"
        "    return 'hecho'\n")
    import extension
    srv = NotesServer(Config(), extension.load(str(solution)))
    peer = Peer(srv).start([f"{home}/Notas"])
    call_id = call(peer, "pregunta_cambiante")
    for _ in range(5):
        frames = peer.take()
        if result_of(frames, call_id):
            break
        peer.answer(questions(frames)[0]["id"], {"action": "accept", "content": {"ok": True}})
    text = result_of(frames, call_id)["result"]["content"][0]["text"]
    assert "cambia su pregunta en cada ejecución" in text


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_url_consent_kills_its_link(home, action):
    srv = server(page_transport="inline")
    peer = Peer(srv).start([f"{home}/Notas"])
    setup = call(peer, "notes_setup")
    form = questions(peer.take())[0]
    peer.answer(form["id"], {"action": action})
    assert result_of(peer.take(), setup)["result"]["structuredContent"]["status"] == \
        "not_configured"
    record = srv.flows.get(form["params"]["elicitationId"])
    page = srv.page()
    assert page.fetch(form["params"]["url"])["status"] == 410
    posted = page.fetch(page.base + "/connect", "POST",
                        f"elicitation={record.elicitation_id}&state={record.nonce}"
                        "&decision=allow")
    assert posted["status"] == 400 and not srv.flows.is_configured(srv.config.subject,
                                                                    "notas-sync")


def test_a_2026_retry_may_answer_only_the_question_of_its_last_round(home):
    peer = Peer(server())
    first = call(peer, "notes_list", meta=ENVELOPE)
    state = result_of(peer.take(), first)["result"]["requestState"]
    retry = peer.request("tools/call", {"name": "notes_list", "arguments": {}, "_meta": ENVELOPE,
                                        "requestState": state, "inputResponses": {
                                            "roots": {"roots": [{"uri": f"file://{home}/Notas"}]}}})
    listed = result_of(peer.take(), retry)["result"]["structuredContent"]["notes"]
    assert len(listed) == 4
    delete = call(peer, "notes_delete", {"title": "TPS report"}, meta=ENVELOPE)
    state = result_of(peer.take(), delete)["result"]["requestState"]
    rounds = peer.request("tools/call", {
        "name": "notes_delete", "arguments": {"title": "TPS report"}, "_meta": ENVELOPE,
        "requestState": state, "inputResponses": {
            "roots": {"roots": [{"uri": f"file://{home}/Notas"}]}}})
    form_round = result_of(peer.take(), rounds)["result"]
    assert list(form_round["inputRequests"]) == ["ask-1"]
    sneaky = peer.request("tools/call", {  # answers the form and swaps its roots answer
        "name": "notes_delete", "arguments": {"title": "TPS report"}, "_meta": ENVELOPE,
        "requestState": form_round["requestState"], "inputResponses": {
            "ask-1": PICK_2024, "roots": {"roots": [{"uri": f"file://{home}/Trabajo"}]}}})
    done = result_of(peer.take(), sneaky)["result"]
    assert done["structuredContent"]["deleted"]["id"] == "note-7"  # the sealed roots held
