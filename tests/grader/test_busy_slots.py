"""`--jobs N` counts busy slots, not processes (grader/pool.py's `Slots`, grader/worker.py).

A worker lends its slot while its checks wait on the clock, another learner's grading runs
meanwhile, and the worker whose wait is over gets the next free slot before any new submission
starts. The time it waits for the slot is added to its budget. These tests drive the pool with
a stand-in worker (the same line protocol as grader.worker, no grading) that writes down when
it was busy, so what they check is the schedule, not the speed.
"""

import sys
import textwrap
import threading

import pytest

from grader import pool, runner
from grader.state import SubmissionState

FAKE_WORKER = textwrap.dedent('''
    import json, os, sys, time
    requests, answers = sys.stdin, sys.stdout
    def say(message):
        answers.write(json.dumps(message) + "\\n"); answers.flush()
    for line in requests:
        job = json.loads(line)
        busy = [[time.monotonic()]]
        time.sleep(job["work"])
        for wait in job["waits"]:
            busy[-1].append(time.monotonic())
            say({"slot": "free"})
            time.sleep(wait)
            say({"slot": "want"})
            if json.loads(requests.readline()).get("slot") != "yours":
                os._exit(1)
            busy.append([time.monotonic()])
            time.sleep(job["work"])
        busy[-1].append(time.monotonic())
        say({"submission": job["name"], "busy": busy})
''')


@pytest.fixture
def fake_workers(tmp_path, monkeypatch):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    monkeypatch.setattr(pool.Worker, "command", (sys.executable, str(script)))


def graded(names, slots, work=0.15, waits=(0.6,), alone=False):
    jobs = [{"path": "-", "name": name, "only": None, "budget": 30, "tests": "all",
             "host": "sandbox", "work": work, "waits": list(waits)} for name in names]
    return pool.grade_all(jobs, slots, alone=alone)


def most_busy_at_once(results):
    edges = sorted((moment, step) for result in results for start, end in result["busy"]
                   for moment, step in ((start, 1), (end, -1)))
    busy = most = 0
    for _, step in edges:
        busy += step
        most = max(most, busy)
    return most


def test_a_learner_whose_checks_wait_on_the_clock_lends_the_slot_to_the_next_learner(
        fake_workers):
    first, second = graded(["ana", "bea"], slots=1)
    assert [first["submission"], second["submission"]] == ["ana", "bea"]
    # bea started while ana waited, not after ana's grading ended
    assert second["busy"][0][0] < first["busy"][-1][1]


def test_no_more_learners_are_busy_at_once_than_there_are_slots(fake_workers):
    for slots in (1, 2):
        results = graded([f"p{n}" for n in range(6)], slots=slots)
        assert len({r["submission"] for r in results}) == 6
        assert most_busy_at_once(results) <= slots


def test_a_learner_back_from_a_wait_gets_the_slot_before_a_new_learner_starts(fake_workers):
    # one slot: ana works, waits (bea starts), wants it back while bea works; bea then waits,
    # and the slot goes to ana, not to carla, who has not started yet
    ana, bea, carla = graded(["ana", "bea", "carla"], slots=1, work=0.3, waits=(0.1, 2.0))
    assert ana["busy"][1][0] < carla["busy"][0][0]
    assert ana["busy"][1][0] < bea["busy"][1][0]


def test_in_plain_mode_no_learner_starts_while_another_waits_with_its_servers_up(fake_workers):
    # plain mode: no two learners' code at once, and a waiting learner's servers are still up
    results = graded(["ana", "bea", "carla"], slots=1, alone=True)
    spans = sorted((r["busy"][0][0], r["busy"][-1][1]) for r in results)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


def test_a_worker_that_says_anything_else_about_its_slot_is_a_crashed_job(tmp_path, monkeypatch):
    script = tmp_path / "rude_worker.py"
    script.write_text(textwrap.dedent('''
        import sys
        for line in sys.stdin:
            sys.stdout.write('{"slot": "mine forever"}\\n'); sys.stdout.flush()
    '''))
    monkeypatch.setattr(pool.Worker, "command", (sys.executable, str(script)))
    result, = graded(["ana"], slots=1)
    assert result["score"] == 0 and result["internal_errors"]


def test_the_time_spent_getting_the_slot_back_moves_the_budget_deadline():
    state = SubmissionState(budget=10.0)
    before = state.deadline
    state.idle = lambda seconds: 4.0  # slept, then waited 4 s for a slot
    state.rest(0.0)
    assert state.deadline == pytest.approx(before + 4.0)
    state.idle = lambda seconds: -1.0  # a clock that went backwards never shortens it
    state.rest(0.0)
    assert state.deadline == pytest.approx(before + 4.0)


def test_the_budget_watchdog_follows_a_deadline_that_moved_later():
    state = SubmissionState(budget=0.3)
    expired = threading.Event()
    state.expire = expired.set
    stop = threading.Event()
    watchdog = threading.Thread(target=runner.watch, args=(state, stop), daemon=True)
    watchdog.start()
    state.deadline += 1.2  # a slot was waited for: the budget moved
    assert not expired.wait(0.8)  # past the first deadline, still grading
    assert expired.wait(5)  # and it fires at the moved one
    stop.set()
    watchdog.join(5)
    assert not watchdog.is_alive()




def first_served():
    """One slot, busy; a new worker asks, then a returning one; the slot is freed: who got it."""
    slots, order = pool.Slots(1), []
    slots.take()

    def ask(name, returning):
        slots.take(returning)
        order.append(name)
        slots.give()

    new = threading.Thread(target=ask, args=("new", False))
    back = threading.Thread(target=ask, args=("back", True))
    new.start()
    while not slots.changed._waiters:  # the new worker waits first
        pass
    back.start()
    while slots.returning == 0:
        pass
    slots.give()
    new.join(5)
    back.join(5)
    return order


def test_a_freed_slot_goes_to_a_returning_worker_even_when_a_new_one_asked_first():
    # twenty rounds: without the priority, the new worker would win some of them
    assert all(first_served() == ["back", "new"] for _ in range(20))
