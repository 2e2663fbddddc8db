"""Drive `serve` with the official `mcp` SDK client over stdio (both revisions)."""

import inspect
import warnings
from contextlib import asynccontextmanager

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPDeprecationWarning

from server_support import CODE, serve_argv

warnings.simplefilter("ignore", MCPDeprecationWarning)


class Answers:
    """Scripted answers for the SDK elicitation callback; records every request it saw.

    An answer is an ElicitResult dict, or a function (plain or async) of the request params
    that returns one."""

    def __init__(self, *answers, on_url=None):
        self.answers = list(answers)
        self.seen = []
        self.on_url = on_url

    async def __call__(self, ctx, params):
        self.seen.append(params)
        if isinstance(params, types.ElicitRequestURLParams) and self.on_url:
            self.on_url(params)
        answer = self.answers.pop(0) if self.answers else {"action": "cancel"}
        if callable(answer):
            answer = answer(params)
            if inspect.isawaitable(answer):
                answer = await answer
        return types.ElicitResult(**answer)


class Roots:
    """A mutable roots list for the SDK roots callback. With `error` set, the callback answers
    roots/list with that JSON-RPC error instead."""

    def __init__(self, *folders, error=None):
        self.folders = list(folders)
        self.error = error
        self.asked = 0

    async def __call__(self, ctx):
        self.asked += 1
        if self.error is not None:
            return types.ErrorData(**self.error)
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{f}", name=f.name)
                                            for f in self.folders])

    async def wait_asked(self, times, timeout=10):
        """Wait until the server has asked roots/list `times` times in all."""
        with anyio.fail_after(timeout):
            while self.asked < times:
                await anyio.sleep(0.01)


@asynccontextmanager
async def sdk_client(*serve_args, trace=None, mode="legacy", roots=None, answers=None,
                     form_only=False, messages=None, demo_guard=True, cwd=None):
    """An entered SDK Client talking to `python3 code/main.py serve --demo-url-guard` over
    stdio (the demo guard lets URL mode be tested without any exercise solution). `cwd` is
    the server's working directory (default: code/)."""
    argv = serve_argv(*(["--demo-url-guard"] if demo_guard else []), *serve_args, trace=trace)
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd or CODE))

    async def on_message(message):
        if messages is not None:
            messages.append(message)

    client = Client(params, mode=mode, list_roots_callback=roots, elicitation_callback=answers,
                    message_handler=on_message, read_timeout_seconds=30)
    if form_only:
        _declare_form_only(client)
    async with client:
        yield client


def _declare_form_only(client):
    """The SDK always declares form and url once there is a callback; shrink it to form only."""
    build = client._build_session

    async def build_form_only(exit_stack):
        session = await build(exit_stack)
        full = ClientSession._build_capabilities.__get__(session)
        session._build_capabilities = lambda version: full(version).model_copy(update={
            "elicitation": types.ElicitationCapability(form=types.FormElicitationCapability())})
        return session
    client._build_session = build_form_only


def text(result):
    return result.content[0].text


async def one_round(client, name, arguments, previous=None, responses=None):
    """One 2026-07-28 `tools/call` round, without the SDK's automatic retry loop: the first
    call, or (with `previous`, an InputRequiredResult) its retry carrying `responses`."""
    return await client.session.call_tool(
        name, arguments, input_responses=responses,
        request_state=previous.request_state if previous is not None else None,
        allow_input_required=True)


def roots_result(*folders):
    return types.ListRootsResult(roots=[types.Root(uri=f"file://{f}") for f in folders])


def asked(result, kind):
    """The keyed input requests of one kind (types.ListRootsRequest, types.ElicitRequest)."""
    return {key: request for key, request in (result.input_requests or {}).items()
            if isinstance(request, kind)}
