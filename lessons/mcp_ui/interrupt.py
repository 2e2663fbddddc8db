"""■ in JupyterLab stops a call that waits for a click, at once.

Pressing ■ sends the kernel SIGINT. ipykernel 7 turns it into a cancellation of the running
cell, but its signal handler only queues that cancellation on the event loop (a plain
`call_soon`, not the thread-safe kind that wakes a sleeping loop). A call waiting on a form
leaves the loop asleep in `select()` with nothing else to do, so the cancellation ran only when
something else woke it: the next click on the form, or, for `await asyncio.sleep(60)`, the end
of the minute. `waking_on_interrupt(loop)` puts a handler in front of the kernel's while a call
is awaited: it runs the kernel's own handler, then wakes the loop (`call_soon_threadsafe`
writes to its wake-up pipe), so the queued cancellation runs at once and the call is cancelled
on the wire as the notebook says.

Deliberate simplifications: only in the main thread (the only one that can set a signal
handler; elsewhere nothing changes), only while a lab call is awaited; the handler in force
when the call started is put back when it ends, unless someone replaced ours meanwhile.
"""

from __future__ import annotations

import contextlib
import signal
import threading


def _nothing() -> None:
    """A callback whose only effect is that the loop woke up to run it."""


@contextlib.contextmanager
def waking_on_interrupt(loop):
    """While inside, SIGINT also wakes `loop` (see the module's doc)."""
    if threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "SIGINT"):
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIG_IGN, SIG_DFL or a handler not set from Python: leave it
        yield
        return

    def wake(signum, frame):
        try:
            previous(signum, frame)  # the kernel's: it queues the cell's cancellation
        finally:
            loop.call_soon_threadsafe(_nothing)
    try:
        signal.signal(signal.SIGINT, wake)
    except (ValueError, OSError):  # no signals here after all (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is wake:
            signal.signal(signal.SIGINT, previous)
