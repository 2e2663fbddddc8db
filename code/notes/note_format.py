"""A note as text: the header and body of one `.md` file, and the Note a listing makes of it.

A note is a `.md` file that starts with a header, a blank line, then the body:

    id: note-14
    title: TPS report
    created: 2025-03-02

    Body text...

`render` writes that text (refusing a header value that would break it); `note_from` reads
a Note back from the first bytes of a file, and says when the title does not fit in them
(`TITLE_CUT`: a title is never shown cut). A file whose header has no valid id is a
hand-written note: it gets an id derived from its path (`derived_id`). Nothing here opens a
file: the store and the handles read through held folders and descriptors, then hand the
bytes to this module.

Deliberate simplifications: three header fields (id, title, created) and no escaping, so a
title or date with a line break of any kind is refused rather than encoded; only the header
must be UTF-8; a header is looked for in the first HEADER_BYTES of a file.
"""

import codecs
import datetime
import hashlib
import re
from collections import namedtuple

from notes.roots import RootError, bounded, path_to_uri

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SUFFIX = ".md"
HEADER_BYTES = 4096
TITLE_CUT = "title cut"        # what a header read finds when its title goes past HEADER_BYTES
MAX_TITLE_CHARS = 500          # a title the server writes (so its header always fits)
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # every break str.splitlines() knows
NOT_A_NOTE = "eso no es una nota de la lista (id, título, fecha, ruta y qué archivo es)"


class StoreError(Exception):
    """A note operation that could not be done; nothing was changed. Its text says why."""


class Note(namedtuple("Note", "id title created path dev ino ctime_ns")):
    """A note as it was listed: which file it is and where it was then.

    `id`, `title` and `created` (YYYY-MM-DD) come from its header; `path` is its real path
    when it was listed (text: for showing and finding its root). The file is its device and
    inode (`dev`, `ino`), and the time its inode last changed (`ctime_ns`): an inode number
    freed by a deletion may be given to the next file created, so the number alone could
    mistake a replacement for the original. A tuple, so `list(note)` can go through
    `ctx.memo` and `Note(*fields)` rebuilds it.
    """

    __slots__ = ()

    def file(self) -> tuple[int, int, int]:
        """Which file this is: (device, inode, inode change time)."""
        return self.dev, self.ino, self.ctime_ns

    @property
    def uri(self) -> str:
        """The note's `file://` URI (from its path when listed)."""
        return path_to_uri(self.path)

    def summary(self) -> dict[str, str]:
        """What a tool result shows of a note: id, title, created and uri."""
        return {"id": self.id, "title": self.title, "created": self.created, "uri": self.uri}


def file_of(st):
    """Which file a stat result describes (see Note.file)."""
    return st.st_dev, st.st_ino, st.st_ctime_ns


def as_note(value):
    """A Note from a Note or its fields (as `ctx.memo` gives them back); StoreError if not."""
    try:
        note = value if isinstance(value, Note) else Note(*value)
    except TypeError:
        note = None
    if note is None or not all(isinstance(v, str) for v in note[:4]) or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in note[4:]):
        raise StoreError(NOT_A_NOTE)
    try:
        bounded(note.path)
    except RootError:
        raise StoreError(NOT_A_NOTE) from None
    return note


# -- reading ------------------------------------------------------------------------------------
def parse_header(text):
    """(fields, body): the header's `key: value` lines, split at "\\n" only."""
    header, _, body = text.partition("\n\n")
    fields = {}
    for line in header.split("\n"):
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields, body


def _one_line(text):
    return "".join(" " if c in LINE_BREAKS else c for c in text)


def derived_id(path):
    """The id of a note whose header has none (a hand-written file): stable for its path."""
    return "note-" + hashlib.sha256(path.encode()).hexdigest()[:8]


def note_from(data, path, st):
    """The Note in these first bytes of the file at `path` (whose stat is `st`); None if it is
    no note, TITLE_CUT if its title does not fit in the HEADER_BYTES read (a title is never
    shown cut)."""
    head, blank, _ = data.partition(b"\n\n")  # only the header must be UTF-8
    cut = not blank and len(data) >= HEADER_BYTES  # the header may go on past what was read
    if cut:  # so its last line may be cut: it is never used
        head, _, last = head.rpartition(b"\n")
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=bool(blank))
    except UnicodeDecodeError:
        return None
    fields, _ = parse_header(text)
    if "title" not in fields:
        return TITLE_CUT if cut and last.lstrip().lower().startswith(b"title") else None
    note_id = fields.get("id", "")
    if not ID_PATTERN.fullmatch(note_id):  # a hand-written file: derive a stable id
        note_id = derived_id(path)
    return Note(note_id, _one_line(fields["title"]), _one_line(fields.get("created", "")),
                path, *file_of(st))


# -- writing ------------------------------------------------------------------------------------
def valid_date(text):
    """Is `text` a real calendar day written YYYY-MM-DD?"""
    try:
        return datetime.date.fromisoformat(text).isoformat() == text
    except (TypeError, ValueError):
        return False


def render(note_id, title, created, body):
    """The text of a note; a header value with a line break of any kind is refused, and so
    is a title longer than MAX_TITLE_CHARS (kept as written or not at all: never cut)."""
    for value in (title, created):
        if any(c in LINE_BREAKS for c in value):
            raise StoreError("el título y la fecha van en una sola línea (sin saltos de línea "
                             "de ningún tipo)")
    if len(title) > MAX_TITLE_CHARS:
        raise StoreError(f"el título tiene {len(title)} caracteres y el máximo es "
                         f"{MAX_TITLE_CHARS}; no lo recorto: escribe uno más corto")
    return f"id: {note_id}\ntitle: {title}\ncreated: {created}\n\n{body}"
