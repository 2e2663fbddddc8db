"""Checks that wait on the real clock, overlapped with the checks that run meanwhile.

Some tests must let a lifetime pass: a link's (exercise 3; the reto makes expired copies of its
tokens with the server's key instead of waiting). Such a
test is a generator (grader/checks/grading.py): it sets its scenario up, `yield`s the seconds
to wait, then checks; it may wait several times (each `yield` is one more wait: a test that
keeps its server busy while a lifetime passes, or that acts in the middle of a lifetime).
Run one after another, those waits added up to most of a learner's
grading time. Instead, the runner starts the test up to its `yield` (its lab and servers stay
open: `Lab.wait_then`) and goes on with the next tests; before each test starts, `run_due`
finishes every waiting test whose time has come, and at the end `finish` sleeps only for what
is still left. The waiting tests run first (`waiting_first`), so each wait overlaps the tests
that follow; within each group the order is shuffled, public and hidden tests interleaved (no
position tells them apart; grader/runner.py seeds it); the report keeps the files' order.

What a test observes does not change: the same servers, the same folders, at least the same
wait (and at most about one test's duration more). A sweep of the sandbox (after a
misbehaving server every process in it is killed) kills the waiting tests' servers too: such
a test is run again from the start, waiting inline, so a learner never loses a point to the
grader's scheduling.

Deliberate simplifications: a waiting test goes on between two tests, never while one runs
(no threads: the same code runs in Pyodide), so a wait may last about one test more than asked.
"""

import random
import time

from grader.checks import grading
from grader.checks.grading import Broken
from grader.checks.lab import close_lab, open_lab
from grader.state import OUT_OF_TIME


def waiting_first(entries, spec_of, order=None):
    """`entries` (tests) in the order they run: the tests that wait first, then the others,
    each group shuffled by `order` (a random.Random; the runner seeds it with the submission
    and the grading files, grader/runner.py `shuffled_order`; by default the operating system's
    entropy): public and hidden tests interleaved, so that nothing a server
    could count (its test's position, the numbers the file system gave its folders) tells a
    public test from a hidden one. The report keeps the files' order."""
    order = order or random.SystemRandom()
    waiting = [entry for entry in entries if spec_of(entry).get("waits")]
    others = [entry for entry in entries if not spec_of(entry).get("waits")]
    order.shuffle(waiting)
    order.shuffle(others)
    return waiting + others


def run_due(state):
    """Finish every waiting test whose wait is over (call it between tests)."""
    now = time.monotonic()
    for waiting in [w for w in state.pending if w.deadline <= now]:
        complete(state, waiting)


def finish(state):
    """Finish every waiting test, in the order their waits end (call it after the last test)."""
    while state.pending:
        waiting = min(state.pending, key=lambda w: w.deadline)
        if not state.broken:
            pause(state, waiting.deadline - time.monotonic())
        complete(state, waiting)


def complete(state, waiting):
    """Run one waiting test on to its next wait (it waits again), or to its end, and score it
    (or run all of it again, after a sweep)."""
    state.pending.remove(waiting)
    if waiting.sweeps != state.sweeps and not state.broken:
        waiting.steps.close()
        release(state, waiting.lab)
        state.results[waiting.key] = again(state, waiting)
        return
    state.hidden_now = waiting.spec["hidden"]
    exc = None
    try:
        if state.broken:
            raise Broken(state.broken)
        seconds = next(waiting.steps, None)
        if seconds is not None:  # one more wait: its lab stays open
            if state.left() <= seconds:
                raise Broken(OUT_OF_TIME)
            state.pending.append(waiting._replace(deadline=time.monotonic() + seconds))
            return
    except Exception as raised:
        exc = raised
    waiting.steps.close()
    release(state, waiting.lab)
    state.results[waiting.key] = grading.score(state, waiting.spec, waiting.grade, exc)


def again(state, waiting):
    """The whole test once more, in a fresh lab, its wait slept inline."""
    grade = grading.new_grade(waiting.spec)
    try:
        lab = open_lab(state, waiting.spec, waiting.key)
    except Exception as exc:
        return grading.score(state, waiting.spec, grade, exc)
    exc = None
    try:
        steps = waiting.steps_of(lab=lab, grade=grade, **waiting.arguments)
        seconds = next(steps, None)
        while seconds is not None:
            if state.left() <= seconds:
                raise Broken(OUT_OF_TIME)
            pause(state, seconds)
            seconds = next(steps, None)
        steps.close()
    except Exception as raised:
        exc = raised
    finally:
        close_lab(state, lab)
    return grading.score(state, waiting.spec, grade, exc)


def release(state, lab):
    lab.waiting = False
    close_lab(state, lab)


def pause(state, seconds):
    """Sleep `seconds` (nothing if not positive), never past the submission's budget."""
    if seconds > 0:
        state.rest(min(seconds, state.left()))
