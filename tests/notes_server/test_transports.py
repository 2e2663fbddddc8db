"""The same core behind every transport: a loopback in one thread, asyncio, and no threads.

stdio (`serve`) is covered by the SDK and raw-pipe tests; here the in-process transports the
demo, the notebooks and the browser use.
"""

import asyncio
import os
import queue
import threading
import time

import pytest

from cli.demo import write_lesson_notes
from client.async_client import AsyncClient
from client.simulated_user import Browser, ScriptedUser
from client.sync_client import Client
from server import Config, NotesServer
from shared.protocol import REVISIONS

PICK_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}


@pytest.fixture
def home(tmp_path):
    base = os.path.realpath(tmp_path)
    write_lesson_notes(base)
    return base


@pytest.mark.parametrize("protocol", REVISIONS)
def test_the_loopback_client_deletes_exactly_the_chosen_note(home, protocol):
    server = NotesServer(Config())
    with Client.local(server, roots=[f"{home}/Notas"], protocol=protocol,
                      user=ScriptedUser(PICK_2024)) as client:
        client.connect()
        result = client.call_tool("notes_delete", {"title": "TPS report"})
    assert result["structuredContent"]["deleted"]["id"] == "note-7"
    assert sorted(os.listdir(f"{home}/Notas")) == ["compra.md", "tps-2023.md", "tps-2025.md"]


@pytest.mark.parametrize("protocol", REVISIONS)
def test_the_whole_url_flow_runs_with_no_thread_and_no_socket(home, protocol, monkeypatch):
    """What the browser (Pyodide) needs: thread start refused, the page drawn in-process."""
    def refuse(self):
        raise AssertionError("a thread was started")
    monkeypatch.setattr(threading.Thread, "start", refuse)
    server = NotesServer(Config(demo_url_guard=True, page_transport="inline"))
    page = server.page()
    user = ScriptedUser({"action": "accept"}, PICK_2024, browser=Browser(fetch=page.fetch))
    with Client.local(server, roots=[f"{home}/Notas"], protocol=protocol, user=user) as client:
        client.connect()
        setup = client.call_tool("notes_setup")
        synced = client.call_tool("notes_sync")
        deleted = client.call_tool("notes_delete", {"title": "TPS report"})
        client.set_roots([f"{home}/Trabajo"])
        listed = client.call_tool("notes_list")
    assert setup["structuredContent"] == {"status": "configured"}
    assert synced["structuredContent"]["synced"] == 4
    assert user.browser.pages[-1]["status"] == 200
    assert deleted["structuredContent"]["deleted"]["id"] == "note-7"
    assert [n["id"] for n in listed["structuredContent"]["notes"]] == ["note-21"]
    if protocol == "2025-11-25":
        assert [n["method"] for n in client.notifications] == [
            "notifications/elicitation/complete"]


class AsyncUser:
    def __init__(self, *answers):
        self.answers, self.seen = list(answers), []

    async def elicit(self, params, question_id=None):
        self.seen.append(params)
        await asyncio.sleep(0)
        return self.answers.pop(0) if self.answers else {"action": "cancel"}

    async def open_url(self, url):
        self.seen.append(url)


@pytest.mark.parametrize("protocol", REVISIONS)
def test_the_async_client_answers_on_the_event_loop(home, protocol):
    async def scenario():
        server = NotesServer(Config())
        user = AsyncUser(PICK_2024)
        client = AsyncClient.local(server, roots=[f"{home}/Notas"], protocol=protocol,
                                   user=user)
        await client.connect()
        result = await client.call_tool("notes_delete", {"title": "TPS report"})
        await client.set_roots([f"{home}/Trabajo"])
        listed = await client.call_tool("notes_list")
        client.close()
        return user, result, listed
    user, result, listed = asyncio.run(scenario())
    assert len(user.seen) == 1 and result["structuredContent"]["deleted"]["id"] == "note-7"
    assert [n["id"] for n in listed["structuredContent"]["notes"]] == ["note-21"]


def test_stopping_an_async_call_cancels_it_on_the_wire(home):
    async def scenario():
        server = NotesServer(Config())
        asked = asyncio.Event()

        class NeverAnswers(AsyncUser):
            async def elicit(self, params, question_id=None):
                asked.set()
                await asyncio.Event().wait()

        frames = []
        client = AsyncClient.local(server, roots=[f"{home}/Notas"], user=NeverAnswers(),
                                   on_frame=lambda d, m: frames.append((d, m)))
        await client.connect()
        task = asyncio.ensure_future(client.call_tool("notes_delete", {"title": "TPS report"}))
        await asked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(5):
            await asyncio.sleep(0)
        client.close()
        return frames
    frames = asyncio.run(scenario())
    sent = [m.get("method") for d, m in frames if d == "→"]
    received = [m.get("method") for d, m in frames if d == "←"]
    assert sent[-1] == "notifications/cancelled"
    assert received[-1] == "notifications/cancelled"  # the server withdrew its question
    assert os.path.exists(f"{home}/Notas/tps-2024.md")


def test_the_stream_client_survives_a_hostile_server():
    """Unsolicited responses are dropped, a frame nested too deep is ignored, and an answer
    to a server that went away does not kill the worker that sends it."""
    inbox, sent = queue.Queue(), []

    def lines():
        while (line := inbox.get()) is not None:
            yield line

    def send(data):
        sent.append(data)
        if b'"result"' in data and b'"roots"' in data:
            raise OSError("broken pipe")  # our answer to roots/list finds the server gone
    client = Client(send, lines(), lambda: inbox.put(None), roots=["/tmp"], workers=1,
                    timeout=2)
    inbox.put(b'{"jsonrpc":"2.0","id":999,"result":{}}\n')          # nobody asked
    inbox.put(b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}\n')   # answer fails to send
    inbox.put(b"[" * 100_000 + b"\n")                                # too deep to read
    inbox.put(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')         # the worker still works
    deadline = time.monotonic() + 5
    while not any(b'"id":2' in data for data in sent):
        assert time.monotonic() < deadline, sent
        time.sleep(0.01)
    assert client._reader.is_alive()
    client.close()
