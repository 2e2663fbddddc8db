"""Small text helpers shared by the widgets and the transcripts: escaping, short JSON, and the
words a person would read on an HTML page.

Deliberate simplifications: `visible_text` keeps the text of every element except `<title>`,
`<style>` and `<script>` (or the ones it is told to hide), collapsing spaces; it does not lay
anything out.
"""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def short_json(value, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def abbrev(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class _Words(HTMLParser):
    def __init__(self, hidden):
        super().__init__()
        self.hidden, self.words, self._hidden = hidden, [], 0

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in self.hidden

    def handle_endtag(self, tag):
        self._hidden -= tag in self.hidden and self._hidden > 0

    def handle_data(self, data):
        if not self._hidden:
            self.words += data.split()


def visible_text(page: str, hidden=("title", "style", "script")) -> str:
    """The words a person would read on an HTML page (no tags, styles or title); elements
    named in `hidden` are left out with everything inside them."""
    parser = _Words(set(hidden))
    parser.feed(page or "")
    parser.close()
    return " ".join(parser.words)
