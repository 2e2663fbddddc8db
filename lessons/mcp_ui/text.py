"""Small text helpers shared by the widgets and the transcripts: escaping, short JSON, and the
words a person would read on an HTML page.

Deliberate simplifications: `visible_text` keeps the text of every element except `<title>`,
`<style>` and `<script>` (or the ones it is told to hide), collapsing spaces; it lays nothing
out beyond one separator between blocks (« — » after a heading).
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def short_json(value, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def abbrev(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
BLOCKS = {"p", "div", "li", "ul", "ol", "br", "tr", "table", "form", "section", "header",
          "footer", "body"}
HEADING_END, BLOCK_END = "\x00h", "\x00b"  # marks between chunks, never in a page's text


class _Words(HTMLParser):
    def __init__(self, hidden):
        super().__init__()
        self.hidden, self.parts, self._hidden = hidden, [], 0

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in self.hidden
        if tag in HEADINGS or tag in BLOCKS:
            self.parts.append(BLOCK_END)

    def handle_endtag(self, tag):
        self._hidden -= tag in self.hidden and self._hidden > 0
        if tag in HEADINGS:
            self.parts.append(HEADING_END)
        elif tag in BLOCKS:
            self.parts.append(BLOCK_END)

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(data)


def visible_text(page: str, hidden=("title", "style", "script")) -> str:
    """The words a person would read on an HTML page (no tags, styles or title), in one line:
    text that touches stays together (`<b>x</b>.` is «x.»), a heading is followed by « — »
    and the next block, other blocks by a space. Elements named in `hidden` are left out with
    everything inside them."""
    parser = _Words(set(hidden))
    parser.feed(page or "")
    parser.close()
    text, pending = "", ""
    for chunk in re.split(f"({HEADING_END}|{BLOCK_END})", "".join(parser.parts)):
        if chunk == HEADING_END:
            pending = " — " if text else ""
        elif chunk == BLOCK_END:
            pending = pending or (" " if text else "")
        elif chunk.split():
            text += pending + " ".join(chunk.split())
            pending = ""
    return text
