"""The official MCP SDK (notebook 05) next to the lesson's server, in JupyterLab and JupyterLite.

- `await install_sdk()`: nothing in Python on a computer (`mcp` is in requirements.txt); in
  JupyterLite it installs the SDK's pinned wheels from the site itself (`course_lite.
  sdk_requirements()`: pure-Python wheels, PyPI's WebAssembly pydantic-core, and stand-ins for
  `rpds` and the part of `cryptography` that `import mcp` needs: editions/lite/shims/).
- `memory_transport(server)`: an SDK `Transport` (an async context manager giving the read and
  write streams) to a NotesServer in this kernel, over its single-threaded session core on the
  kernel's loop. The SDK's messages cross as JSON text, exactly the lines `main.py serve` reads
  and writes on stdio; only the pipe is memory. `NotesLab.sdk_target()` picks this in the
  browser (no processes there) and `stdio_server()` (a real process) elsewhere.

Deliberate simplifications: one session per transport; a line the SDK cannot parse reaches it
as an exception on its read stream, as stdio_client does.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys


async def install_sdk() -> None:
    """Make `import mcp` work here (see the module's doc)."""
    if sys.platform != "emscripten":
        return
    import course_lite
    import piplite

    await piplite.install(course_lite.sdk_requirements(), deps=False)


@contextlib.asynccontextmanager
async def memory_transport(server):
    """Read and write streams of SessionMessages between the SDK and `server`'s session."""
    import anyio
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    from transports.transport import AsyncLoopback

    to_sdk, read_stream = anyio.create_memory_object_stream(0)
    write_stream, from_sdk = anyio.create_memory_object_stream(0)
    lines: asyncio.Queue = asyncio.Queue()
    loopback = AsyncLoopback(server, asyncio.get_running_loop(), deliver=lines.put_nowait)

    async def sdk_to_server():
        async with from_sdk:
            async for message in from_sdk:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                loopback.send((text + "\n").encode())

    async def server_to_sdk():
        async with to_sdk:
            while True:
                line = await lines.get()
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # what stdio_client does with a bad line
                    await to_sdk.send(exc)
                    continue
                await to_sdk.send(SessionMessage(message))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sdk_to_server)
        tasks.start_soon(server_to_sdk)
        try:
            yield read_stream, write_stream
        finally:
            tasks.cancel_scope.cancel()
            loopback.close()
