"""Tests that wait on the clock (grader/checks/later.py): overlapped, never shortened, and run
again from the start when a sweep killed their servers.

Each test here drives the real `@graded` wrapper, `open_lab`/`close_lab` and later.py the way
both runners do (later.run_due before each test's lab opens, later.finish after the last),
with graded functions that start no server: what they record is the order things happened in.
"""

import time

import pytest

from grader.checks import grading, later
from grader.checks.grading import graded
from grader.checks.lab import close_lab, open_lab
from grader.state import OUT_OF_TIME, SubmissionState

WAIT = 0.3


class Host:
    """What close_lab and a wait need of a host: a sweep, counted, and `lend`, recorded."""

    def __init__(self):
        self.sweeps = 0
        self.lent = []

    def sweep(self):
        self.sweeps += 1

    def lend(self, lending):
        self.lent.append(lending)


def new_state(budget=60.0):
    return SubmissionState(budget=budget, host=Host())


def spec_of(function, hidden=None):
    spec = grading.spec_for(function, "/checks/test_x.py")
    return spec if hidden is None else {**spec, "hidden": hidden}


def run(state, tests):
    """What direct.run does with (spec, function) pairs: run_due, one lab each, finish."""
    for spec, function in later.waiting_first(tests, lambda test: test[0]):
        later.run_due(state)
        grade = grading.new_grade(spec)
        lab = open_lab(state, spec, spec["id"])
        exc = None
        try:
            function(lab=lab, grade=grade)
        except Exception as raised:
            exc = raised
        finally:
            close_lab(state, lab)
        if not lab.waiting:
            state.results[spec["id"]] = grading.score(state, spec, grade, exc)
    later.finish(state)


def result_of(state, function):
    """Run one graded test alone and return its result."""
    spec = spec_of(function)
    run(state, [(spec, function)])
    return state.results[spec["id"]]


def waiting_test(events, seconds=WAIT, name="espera"):
    @graded("ejercicio3b", 2, name)
    def test_waits(lab, grade):
        events.append((name, "set up", time.monotonic(), lab))
        yield seconds
        events.append((name, "checked", time.monotonic(), lab))
        grade.check(True, "comprobado tras la espera")
    return test_waits


def plain_test(events, name="otra", dirty=False):
    @graded("ejercicio3b", 1, name)
    def test_plain(lab, grade):
        events.append((name, "ran", time.monotonic(), lab))
        if dirty:
            lab.state.dirty = True  # as a server that died would
        grade.check(True, "hecho")
    return test_plain


def steps(events):
    return [(name, what) for name, what, *_ in events]


def test_the_tests_after_a_waiting_test_run_during_its_wait():
    events = []
    state = new_state()
    waits, other = waiting_test(events), plain_test(events)
    run(state, [(spec_of(other), other), (spec_of(waits), waits)])
    assert steps(events) == [("espera", "set up"), ("otra", "ran"), ("espera", "checked")]


def test_a_waiting_test_goes_on_no_sooner_than_its_wait():
    events = []
    state = new_state()
    waits = waiting_test(events)
    run(state, [(spec_of(waits), waits)])
    (_, _, set_up, _), (_, _, checked, _) = events
    assert checked - set_up >= WAIT


def test_a_waiting_test_is_scored_from_what_it_checked_after_the_wait():
    events = []
    state = new_state()
    result = result_of(state, waiting_test(events))
    assert (result["score"], result["status"]) == (2, "passed")
    assert "comprobado tras la espera" in result["output"]


def test_a_waiting_test_keeps_its_lab_until_it_is_finished():
    events = []
    state = new_state()
    waits, other = waiting_test(events), plain_test(events)
    closed = []
    for spec, function in ((spec_of(waits), waits), (spec_of(other), other)):
        lab = open_lab(state, spec, spec["id"])
        lab.close = lambda title=spec["title"]: closed.append(title)
        function(lab=lab, grade=grading.new_grade(spec))
        close_lab(state, lab)
    assert closed == ["otra"]
    later.finish(state)
    assert closed == ["otra", "espera"]


def test_a_test_that_waits_several_times_goes_on_after_each_wait():
    events = []
    state = new_state()

    @graded("ejercicio3b", 2, "a tramos")
    def test_in_steps(lab, grade):
        for step in range(3):
            events.append(("a tramos", f"paso {step}", time.monotonic(), lab))
            yield WAIT / 2
        grade.check(True, "comprobado tras las esperas")

    other = plain_test(events)
    run(state, [(spec_of(other), other), (spec_of(test_in_steps), test_in_steps)])
    assert steps(events) == [("a tramos", "paso 0"), ("otra", "ran"), ("a tramos", "paso 1"),
                             ("a tramos", "paso 2")]
    times = [when for name, _, when, _ in events if name == "a tramos"]
    assert all(b - a >= WAIT / 2 for a, b in zip(times, times[1:], strict=False))
    assert state.results[spec_of(test_in_steps)["id"]]["status"] == "passed"


def test_waits_overlap_each_other():
    events = []
    state = new_state()
    first, second = waiting_test(events, name="a"), waiting_test(events, name="b")
    run(state, [(spec_of(first), first), (spec_of(second), second)])
    done = steps(events)
    started = [name for name, step in done[:2] if step == "set up"]
    assert sorted(started) == ["a", "b"]  # both set up before either is checked
    assert done[2:] == [(started[0], "checked"), (started[1], "checked")]  # equal waits


def test_while_the_checks_wait_on_the_clock_the_host_lends_and_then_works_again():
    events, seen = [], []
    state = new_state()
    state.idle = lambda seconds: seen.append(list(state.host.lent)) or 0.0
    first = waiting_test(events)
    run(state, [(spec_of(first), first)])
    assert seen == [[True]]  # lent during the wait itself
    assert state.host.lent == [True, False]  # and working again before its checks go on
    assert steps(events)[-1] == ("espera", "checked")


def test_a_sweep_during_the_wait_runs_the_waiting_test_again_from_the_start():
    events = []
    state = new_state()
    waits, crash = waiting_test(events), plain_test(events, dirty=True)
    spec = spec_of(waits)
    run(state, [(spec, waits), (spec_of(crash), crash)])
    assert steps(events) == [("espera", "set up"), ("otra", "ran"), ("espera", "set up"),
                             ("espera", "checked")]
    first_lab, again_lab = events[0][3], events[2][3]
    assert again_lab is not first_lab and events[3][3] is again_lab
    assert state.host.sweeps == 1
    assert state.results[spec["id"]]["score"] == 2


def test_a_wait_the_budget_cannot_cover_is_out_of_time():
    events = []
    state = new_state(budget=WAIT / 2)
    result = result_of(state, waiting_test(events))
    assert (result["score"], result["status"]) == (0, "error")
    assert OUT_OF_TIME in result["output"]
    assert steps(events) == [("espera", "set up")] and not state.pending


def test_what_a_waiting_test_raises_after_its_wait_is_scored_like_any_test():
    state = new_state()

    @graded("ejercicio3b", 2, "espera y falla")
    def test_fails_late(lab, grade):
        yield 0.01
        grade.require(False, "el enlace seguía valiendo")

    result = result_of(state, test_fails_late)
    assert (result["score"], result["status"]) == (0, "failed")
    assert "el enlace seguía valiendo" in result["output"]


def labelled_tests(shape):
    events, names, tests = [], {}, []
    for label, hidden, waits in shape:
        function = waiting_test(events, name=label) if waits else plain_test(events, name=label)
        spec = spec_of(function, hidden)
        names[id(spec)] = label
        tests.append((spec, function))
    return names, tests


def test_waiting_tests_start_first_public_and_hidden_alike():
    names, tests = labelled_tests((("p1", False, False), ("pw", False, True), ("h1", True, False),
                                   ("hw", True, True), ("h2", True, False)))
    for _ in range(20):
        ordered = [names[id(spec)] for spec, _ in later.waiting_first(tests, lambda t: t[0])]
        assert set(ordered[:2]) == {"pw", "hw"} and set(ordered[2:]) == {"p1", "h1", "h2"}


def test_public_and_hidden_tests_run_interleaved_in_a_fresh_random_order_each_time():
    """No position tells a public test from a hidden one: hidden tests do not come last, and
    the order changes from one grading to the next."""
    shape = [(f"p{i}", False, False) for i in range(12)] + \
        [(f"h{i}", True, False) for i in range(12)]
    names, tests = labelled_tests(shape)
    orders = [[names[id(spec)] for spec, _ in later.waiting_first(tests, lambda t: t[0])]
              for _ in range(5)]
    assert len({tuple(order) for order in orders}) > 1
    # 24 tests: that all of a run's hidden ones come after all its public ones is 1 in 2.7e6
    assert any(order.index(next(x for x in order if x.startswith("h"))) < 12
               for order in orders)
    assert all(sorted(order) == sorted(names.values()) for order in orders)


def test_a_waiting_test_is_marked_as_one_and_a_plain_test_is_not():
    events = []
    assert waiting_test(events).grading["waits"] is True
    assert plain_test(events).grading["waits"] is False


@pytest.mark.parametrize("hidden", [False, True])
def test_a_waiting_test_is_redacted_as_its_own_kind_when_it_goes_on(hidden):
    state = new_state()
    seen = []

    @graded("ejercicio3b", 1, "espera", hidden=hidden)
    def test_sees(lab, grade):
        yield 0.01
        seen.append(lab.state.hidden_now)
        grade.check(True, "hecho")

    run(state, [(spec_of(test_sees, hidden), test_sees)])
    assert seen == [hidden]
