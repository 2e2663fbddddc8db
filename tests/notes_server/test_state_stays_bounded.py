"""What a long-running server keeps stays bounded (issue 17): a URL flow lets go of its session
when it ends and its record is dropped once it expires; a cancelled timer leaves the clock's
heap promptly (it used to stay queued for the form's 600 s); a session forgets each flow it
waited for. Many flows and forms are run, then the sizes are read."""

import os
import threading

import pytest

from cli.demo import write_lesson_notes
from client.simulated_user import ScriptedUser
from client.sync_client import Client
from hand_client import Talk
from server import Config, NotesServer
from shared.protocol import REVISIONS
from transports.transport import Loopback, ThreadClock, TimerHeap
from urlflow.url_mode import FlowStore


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def home(tmp_path):
    base = os.path.realpath(tmp_path)
    write_lesson_notes(base)
    return base


# -- flow records ---------------------------------------------------------------------------------
@pytest.mark.parametrize("end", ["complete", "deny", "retire"])
def test_a_flow_that_ends_lets_go_of_its_session_at_once(end):
    flows, told = FlowStore(), []
    record = flows.start("s", "u", "p", on_complete=told.append)
    if end == "retire":
        flows.retire(record.elicitation_id)
    else:
        flows.complete(record.elicitation_id, record.nonce, "p", allowed=end == "complete")
    assert record.on_complete is None
    assert told == ([] if end == "retire" else [record.elicitation_id])


def test_an_ended_flow_still_says_how_it_ended_until_it_expires():
    clock = Clock()
    flows = FlowStore(ttl_seconds=10, clock=clock)
    record = flows.start("s", "u", "p")
    flows.complete(record.elicitation_id, record.nonce, "p")
    clock.now = 10.0
    assert flows.get(record.elicitation_id).status == "completed"
    clock.now = 10.5
    flows.start("s", "u", "p")
    assert flows.get(record.elicitation_id) is None


def test_flow_records_are_dropped_once_they_expire():
    clock = Clock()
    flows = FlowStore(ttl_seconds=10, clock=clock)
    for second in range(1000):
        clock.now = float(second)
        flows.start("s", "u", "p")
    assert len(flows) == 11  # the ones started in the last ten seconds, and this one


@pytest.mark.parametrize("protocol", REVISIONS)
def test_many_setups_leave_only_the_flows_that_have_not_expired(home, protocol):
    server = NotesServer(Config(demo_url_guard=True, roots=[f"{home}/Notas"], url_ttl=60))
    clock = server.flows.clock = Clock()
    talk = Talk(server, protocol, [f"{home}/Notas"])
    for minute in range(200):
        clock.now = minute * 60.0
        assert talk.call("notes_setup")[0] == "asks"
        kind, done = talk.answer({"action": "decline"})
        assert done["result"]["structuredContent"]["reason"] == "decline"
    assert len(server.flows) == 2
    assert talk.session.calls == {} and talk.session.cycle._flow_waiters == {}


def test_waits_that_run_out_leave_no_trace_in_the_session(home):
    server = NotesServer(Config(demo_url_guard=True, setup_wait=1))
    talk = Talk(server, "2025-11-25", [f"{home}/Notas"])
    for _ in range(50):
        talk.call("notes_setup")
        talk.answer({"action": "accept"})
        talk.peer.clock.advance(1)
        assert talk.outcome()[1]["result"]["structuredContent"] == {"status": "pending"}
    assert talk.session.cycle._flow_waiters == {} and talk.session.calls == {}
    assert [t for t in talk.peer.clock.timers if not t.cancelled] == []


@pytest.mark.parametrize("protocol", REVISIONS)
def test_a_call_cancelled_while_it_waits_for_the_page_is_forgotten_by_its_flow(home, protocol):
    server = NotesServer(Config(demo_url_guard=True, roots=[f"{home}/Notas"]))
    talk = Talk(server, protocol, [f"{home}/Notas"])
    talk.call("notes_setup")
    assert talk.answer({"action": "accept"})[0] == "waits"
    assert len(talk.session.cycle._flow_waiters) == 1
    talk.peer.notify("notifications/cancelled", {"requestId": talk.call_id})
    assert talk.session.cycle._flow_waiters == {} and talk.session.calls == {}


# -- timers -----------------------------------------------------------------------------------
def test_cancelled_timers_leave_the_heap_at_once_or_once_they_are_half_of_it():
    heap, live = TimerHeap(), []
    for number in range(1000):
        timer = heap.push(600 - number * 0.1, None, heap.forget_cancelled)
        if number % 10 == 0:
            live.append(timer)
        else:
            timer.cancel()
        cancelled = len(heap) - sum(1 for _ in live)
        assert cancelled <= len(live) + 1
    for timer in live:
        timer.cancel()
    assert len(heap) == 0


def test_a_timer_due_and_taken_can_still_be_cancelled_without_harm():
    heap = TimerHeap()
    timer = heap.push(0, lambda: None, heap.forget_cancelled)
    other = heap.push(60, lambda: None, heap.forget_cancelled)
    assert heap.pop_due(float("inf")) is timer
    timer.cancel()
    timer.cancel()
    assert len(heap) == 1 and heap.next_due() == other.due


def test_three_hundred_answered_forms_leave_no_timer_on_the_loopback(home):
    server = NotesServer(Config())
    loopback = Loopback(server)
    user = ScriptedUser(*[{"action": "decline"}] * 300)
    client = Client(loopback.send, loopback=loopback, roots=[f"{home}/Notas"], user=user)
    loopback.deliver = client._receive
    with client.connect():
        for _ in range(300):
            result = client.call_tool("notes_delete", {"title": "TPS report"})
            assert result["structuredContent"]["reason"] == "declined"
        assert loopback.pending() <= 1


def test_the_stdio_clock_drops_cancelled_timers_promptly():
    clock = ThreadClock(threading.RLock())
    try:
        keep = clock.call_later(600, lambda: None)
        for _ in range(1000):
            clock.call_later(600, lambda: None).cancel()
        assert clock.pending() <= 2
        keep.cancel()
        assert clock.pending() == 0
    finally:
        clock.stop()
