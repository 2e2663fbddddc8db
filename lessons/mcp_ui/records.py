"""What a lab connection keeps and reads back: each call's record and result, and the frames.

`ToolResult` is what `await conn.call(...)` returns (the tool's result, or the protocol error it
got); `CallRecord` is what the lab remembers of one call (its questions, who stopped it, which
frames are its own). `Recorded` is what LabClient (lab_client.py) can say about the frames that
crossed: the transcripts (all of them, or the last call's), one frame whole, the last URL-mode
link and how often the setup page was loaded.

Deliberate simplifications: everything is kept in memory for as long as the connection lives
(a lesson's connection sees a few dozen frames).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from client.client_core import questions_in
from shared.protocol import URL_MODE

from .pages import PAGES
from .transcript import frame_json, summarize_frame
from .users import CallPanel


@dataclass
class ToolResult:
    """What a tools/call returned (or the protocol error it got, or that it still waits)."""

    raw: dict
    error: dict | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None or bool(self.raw.get("isError"))

    @property
    def text(self) -> str:
        if self.error is not None:
            return f"error {self.error['code']}: {self.error['message']}"
        content = self.raw.get("content") or [{}]
        return str(content[0].get("text", ""))

    @property
    def data(self) -> dict:
        return self.raw.get("structuredContent") or {}

    def _ipython_display_(self):
        """Nothing: `LabClient.call` already printed it. Use .text, .data or .raw."""


@dataclass
class CallRecord:
    tool: str
    arguments: dict
    before: dict
    after: dict = field(default_factory=dict)
    questions: list = field(default_factory=list)  # (params, result) pairs
    shown: list = field(default_factory=list)      # params of every question drawn
    stopped: str = ""   # who cancelled the call, when it was: "cell" or "client"
    result: ToolResult | None = None
    frames: tuple[int, int] = (0, 0)
    panel: CallPanel | None = None


class Recorded:
    """The frames a LabClient saw, read back. The client has `frames` ((direction, frame)
    pairs), `last` (its last CallRecord), `log`, `lab` (its `hide`), `server` and `_busy()`."""

    def transcript_lines(self, last_call: bool = False, full: bool = False,
                         start: int = 0, end: int | None = None) -> list[str]:
        if last_call:
            start, end = self.last.frames[0], None if self._busy() else self.last.frames[1]
        frames = self.frames[start:end]
        if full:
            return [frame_json(d, m, hide=self.lab.hide) for d, m in frames]
        return [summarize_frame(d, m, hide=self.lab.hide) for d, m in frames]

    def transcript(self, last_call: bool = False, full: bool = False) -> None:
        """Print the frames that crossed (the last call's only, if asked)."""
        for line in self.transcript_lines(last_call, full):
            print(line)

    def show_frame(self, index: int, last_call: bool = True) -> None:
        """Print one frame (of the last call, by default) as indented JSON, whole: nothing in
        it is shortened (the transcripts shorten long tokens with …)."""
        start, end = (self.last.frames[0], None if self._busy() else self.last.frames[1]) \
            if last_call else (0, None)
        direction, msg = self.frames[start:end][index]
        print(frame_json(direction, msg, indent=2, hide=self.lab.hide, whole=True))

    def last_url(self) -> str | None:
        """The URL of the most recent URL-mode elicitation this client received."""
        urls = [q.get("url") for q in questions_in(self.frames) if q.get("mode") == URL_MODE]
        return urls[-1] if urls else None

    def page_visits(self) -> int:
        """How many times this server's setup page was loaded (GET): its HTTP log, or the
        loads of its simulated page."""
        served = sum("setup page: GET /connect" in line for line in self.log)
        return served + PAGES.visits_of(self.server)
