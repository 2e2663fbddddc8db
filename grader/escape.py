"""Learner data is data: how anything a submission controls is shown to people.

Wire frames, `_meta`, tool texts, a server's stderr, file and zip entry names and notebook
contents all come from a submission and all end up in reports. Whatever they contain:

- `clean(text)`: lone surrogates become U+FFFD; C0 controls but the newline, DEL, C1 controls,
  bidirectional overrides and isolates, U+2028/U+2029 and the BOM become visible escapes
  (`\\x1b`, `\\u202e`), so no terminal moves its cursor, changes colour or reorders text.
- `one_line(text)`: the same, and newlines too: for text that sits inside one line of a
  report, so it can never start a line of its own ("Puntuación: 42 / 42").
- `csv_cell(text)`: one line, and a cell that a spreadsheet would read as a formula (it starts
  with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading apostrophe.
- `json_text(value)`: always valid JSON on one line; never a raw control character, never a
  lone surrogate, never NaN.
- `file_name(text)`: a name that is safe as one path component of a report file.

None of these raise for any string.

Every function reads its input once, in linear time; `one_line(text, limit)` reads only the
first `limit` + 1 characters.

Deliberate simplifications: escapes are ASCII (`\\xNN`, `\\uNNNN`); only `one_line` truncates
(the harness caps what it keeps).
"""

import json
import math
import re

_INVISIBLE = ("\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
              "\u2066-\u2069\ufeff")
_KEEP_NEWLINES = re.compile(f"[{_INVISIBLE}]")
_ONE_LINE = re.compile(f"[{_INVISIBLE}\n]")
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                       "\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escape(match):
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def text_of(value):
    """`value` as a str (a str as is; anything else through str(), or its type name)."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # a learner's object with a broken __str__ is never ours to trust
        return f"<{type(value).__name__}>"


def has_surrogates(text):
    return _SURROGATE.search(text) is not None


def no_surrogates(value):
    return _SURROGATE.sub("\ufffd", text_of(value))


def clean(value):
    """Printable text: every line break kept, every other control made visible."""
    return _KEEP_NEWLINES.sub(_escape, no_surrogates(value))


def one_line(value, limit=None):
    """Printable text on one line (newlines escaped too), cut at `limit` characters. With a
    limit only its first `limit` + 1 characters are read (escaping never shortens text)."""
    text = text_of(value)
    if limit is not None:
        text = text[:limit + 1]
    text = _ONE_LINE.sub(_escape, no_surrogates(text))
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return text


def csv_cell(value):
    text = one_line(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def file_name(value, limit=80):
    """One safe path component: letters, digits, `.`, `_` and `-`; never empty, never hidden."""
    text = re.sub(r"[^\w.\-]+", "_", one_line(value)).strip("._")[:limit].strip("._")
    return text or "entrega"


def json_safe(value, depth=0):
    """A copy of a JSON-like value that json.dumps always accepts and never makes invalid:
    str keys, no lone surrogates, no NaN or infinity, no cycles (depth capped at 64)."""
    if depth > 64:
        return None
    if isinstance(value, str):
        return no_surrogates(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {no_surrogates(key): json_safe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item, depth + 1) for item in value]
    return no_surrogates(value)


def json_text(value, indent=None):
    text = json.dumps(json_safe(value), ensure_ascii=False, indent=indent, allow_nan=False)
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
