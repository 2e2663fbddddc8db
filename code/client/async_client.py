"""The asyncio driver of the lesson's client (client_core.py): the notebooks, in-process.

`AsyncClient.local(server)` puts a new session of `server` on the running event loop
(transport.AsyncLoopback: the loop is the clock, nothing is ever re-entered) and the core next
to it. Each question goes to the user in a task of its own, so a form waiting for a click
blocks nothing else. The user has the contract of client_core.py; here `elicit` and
`open_url` may also be coroutines (a person answering in a widget).

A call interrupted while it waits (the cell was stopped) is cancelled on the wire too:
`notifications/cancelled` for the request in flight, whose reason is the cancellation's message
(`task.cancel("why")`), or STOPPED.

Deliberate simplifications: in-process only (the notebooks need no stream); an exception in
`open_url` after a 2025-11-25 consent is dropped (the answer was already sent).
"""

import asyncio
import inspect

from client.client_core import CANCEL, ClientCore, Driver
from shared import wire

STOPPED = "La persona detuvo la celda."


class AsyncClient(Driver):
    """The client on an asyncio loop, in-process (`AsyncClient.local(server)`)."""

    def __init__(self, loopback, *, user=None, **options):
        self.user = user
        self._loopback, self._loop = loopback, loopback.loop
        self._tasks = set()
        self.core = ClientCore(lambda msg: loopback.send(wire.encode(msg)), loopback,
                               self._ask, self._visit, **options)
        loopback.deliver = self.core.receive

    @classmethod
    def local(cls, server, loop=None, **options):
        from transports.transport import AsyncLoopback
        return cls(AsyncLoopback(server, loop or asyncio.get_running_loop()), **options)

    # -- the user ------------------------------------------------------------------------------
    def _ask(self, question):
        self._spawn(self._answer(question))

    async def _answer(self, question):
        try:
            result = CANCEL if self.user is None else await _maybe_await(
                self.user.elicit(question.params, question.request_id))
        except Exception as exc:  # the core turns it into the protocol's answer
            question.fail(exc)
        else:
            question.answer(result)

    def _visit(self, question):
        self._spawn(self._open(question))

    async def _open(self, question):
        try:
            await _maybe_await(self.user.open_url(question.url))
        except Exception as exc:
            question.opened(exc)
        else:
            question.opened()

    def _spawn(self, coroutine):
        task = self._loop.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- waiting -------------------------------------------------------------------------------
    async def _wait(self, outcome, timeout=None):
        future = self._loop.create_future()

        def settled(outcome):
            if not future.done():
                if outcome.error is not None:
                    future.set_exception(outcome.error)
                else:
                    future.set_result(outcome.result)
        outcome.then(settled)
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.CancelledError as exc:  # its message, if any, says why
            reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else STOPPED
            self.core.abandon(outcome, reason)
            raise
        except asyncio.TimeoutError:
            self.core.forget(outcome)
            raise

    # -- the MCP operations --------------------------------------------------------------------
    async def request(self, method, params=None, timeout=None):
        return await self._wait(self.core.request(method, params), timeout)

    def notify(self, method, params=None):
        self.core.notify(method, params)

    async def connect(self):
        await self._wait(self.core.connect())
        return self

    async def list_tools(self):
        return (await self.request("tools/list", {}))["tools"]

    async def call_tool(self, name, arguments=None, max_rounds=10):
        return await self._wait(self.core.call_tool(name, arguments, max_rounds))

    async def set_roots(self, roots):
        await self._wait(self.core.set_roots(roots))

    def close(self):
        self._loopback.close()


async def _maybe_await(value):
    return await value if inspect.isawaitable(value) else value
