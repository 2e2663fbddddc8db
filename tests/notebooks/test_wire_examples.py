"""Every JSON-RPC example written for people (notebook markdown, README, skill) is valid MCP.

An example says which revision it is written for in its fence, so that nothing drifts:

    ```json mcp-2025-11-25 server                      one frame, written by the server
    ```json mcp-2025-11-25 server result-of=tools/call the answer to a tools/call
    ```json mcp-2026-07-28 client                      one frame, written by the client
    ```json mcp-2026-07-28 def=ElicitResult            a value of one schema definition
    ```text mcp-2025-11-25 wire                        one frame per line, "C→S {...}" or
                                                        "S→C {...}"; an answer is checked as
                                                        the result of the request it answers

Each one is checked against the official JSON schema of that revision (tests/vendor/mcp-schema, via
tests/mcp_schema.py) and against what the schema cannot say but the 2026-07-28 text does:
−32042 is retired (SPEC_RULES 93), URL elicitations have no `elicitationId` (91) and the roots
capability has no `listChanged` (83). A block or inline span that contains `"jsonrpc"` but
names no revision fails: an unmarked example could drift without anyone noticing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from notebook_helpers import NOTEBOOKS, REPO, read

from mcp_schema import SCHEMA_REVISIONS, validate_def, validate_frame

FENCE = re.compile(r"^[ \t]*```([\w-]*)[ \t]*([^\n]*)\n(.*?)^[ \t]*```[ \t]*$", re.M | re.S)
INLINE = re.compile(r"`([^`\n]+)`")
WIRE_LINE = re.compile(r"^(C→S|S→C)\s+(\{.*\})\s*$")
MARK = re.compile(r"\bmcp-(\S+)")
# the learners' and the maintainers' guides (the instructors', PROFESORADO.md, is not in the
# student edition: tests/instructor/test_instructors_guide_examples.py checks it the same way)
GUIDES = ("README.md", "MAINTAINERS.md")
SKILL = REPO / "outputs" / "skill-elicitation-form-designer.md"
STATELESS = "2026-07-28"


@dataclass(frozen=True)
class Example:
    source: str      # where it was written: "02_formularios.ipynb cell 21", "README.md"...
    language: str
    info: str        # the rest of the fence line
    body: str

    @property
    def label(self) -> str:
        return f"{self.source}: {self.language} {self.info}".strip()


def blocks_in(text: str, source: str) -> list[Example]:
    return [Example(source, lang, info.strip(), body) for lang, info, body in FENCE.findall(text)]


def documents(guides=GUIDES) -> list[tuple[str, str]]:
    """(source, markdown text) of everything people read: the notebooks, the guides (the
    learners' README and the maintainers') and the skill."""
    found = []
    for name in NOTEBOOKS:
        for index, cell in enumerate(read(name).cells):
            if cell.cell_type == "markdown":
                found.append((f"{name} cell {index}", cell.source))
    for guide in guides:
        found.append((guide, (REPO / guide).read_text(encoding="utf-8")))
    found.append((SKILL.name, SKILL.read_text(encoding="utf-8")))
    return found


def all_blocks() -> list[Example]:
    return [b for source, text in documents() for b in blocks_in(text, source)]


def marked(blocks) -> list[Example]:
    return [b for b in blocks if MARK.search(b.info)]


# -- the checker ------------------------------------------------------------------------------
def retired_in_2026(frame: object, where: str = "$") -> list[str]:
    """What 2026-07-28 removed but its JSON schema still lets through."""
    problems = []
    if isinstance(frame, dict):
        error = frame.get("error")
        if where == "$" and isinstance(error, dict) and error.get("code") == -32042:
            problems.append("−32042 is retired at 2026-07-28 and must not be emitted")
        for key, value in frame.items():
            if key == "elicitationId":
                problems.append(f"{where}.elicitationId: removed at 2026-07-28")
            if key == "roots" and isinstance(value, dict) and "listChanged" in value:
                problems.append(f"{where}.roots.listChanged: removed at 2026-07-28")
            problems += retired_in_2026(value, f"{where}.{key}")
    elif isinstance(frame, list):
        for number, item in enumerate(frame):
            problems += retired_in_2026(item, f"{where}[{number}]")
    return problems


def check_frame(frame: dict, revision: str, writer: str, result_of: str | None = None) -> None:
    validate_frame(frame, revision, writer, result_of=result_of)
    if revision == STATELESS:
        problems = retired_in_2026(frame)
        assert not problems, "; ".join(problems)


def check(example: Example) -> int:
    """Validate one marked example; returns how many frames or values it held."""
    words = example.info.split()
    revision = MARK.search(example.info)[1]
    assert revision in SCHEMA_REVISIONS, \
        f"unknown revision {revision!r} (known: {SCHEMA_REVISIONS})"
    options = dict(w.split("=", 1) for w in words if "=" in w)
    if "wire" in words:
        frames = []
        for line in example.body.strip().splitlines():
            match = WIRE_LINE.match(line)
            assert match, f"a wire line must be 'C→S {{...}}' or 'S→C {{...}}': {line[:80]!r}"
            frames.append(("client" if match[1] == "C→S" else "server", json.loads(match[2])))
        asked: dict[tuple[str, object], str] = {}
        for writer, frame in frames:
            if "method" in frame and "id" in frame:
                asked[(writer, frame["id"])] = frame["method"]
            peer = "server" if writer == "client" else "client"
            answered = asked.get((peer, frame.get("id"))) if "method" not in frame else None
            check_frame(frame, revision, writer, result_of=answered if "result" in frame else None)
        return len(frames)
    value = json.loads(example.body)
    if "def" in options:
        validate_def(value, revision, options["def"])
        if revision == STATELESS:
            problems = retired_in_2026(value)
            assert not problems, "; ".join(problems)
        return 1
    writers = [w for w in words if w in ("client", "server")]
    assert len(writers) == 1, "say who writes the frame: client or server"
    check_frame(value, revision, writers[0], options.get("result-of"))
    return 1


# -- the tests --------------------------------------------------------------------------------
EXAMPLES = marked(all_blocks())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.label)
def test_marked_example_is_valid_mcp_at_the_revision_it_names(example):
    assert check(example) >= 1


def test_there_are_examples_of_both_revisions_in_the_lesson():
    revisions = {MARK.search(e.info)[1] for e in EXAMPLES}
    assert {"2025-11-25", STATELESS} <= revisions
    sources = {e.source.split(" cell ")[0] for e in EXAMPLES}
    assert SKILL.name in sources
    assert len({s for s in sources if s.endswith(".ipynb")}) >= 3


def unmarked_examples(documents) -> list[str]:
    """The JSON-RPC examples (fenced or inline) of these documents that name no revision."""
    unmarked = []
    for source, text in documents:
        for block in blocks_in(text, source):
            if '"jsonrpc"' in block.body and not MARK.search(block.info):
                unmarked.append(block.label)
        prose = FENCE.sub("", text)
        unmarked += [f"{source}: `{span[:60]}`" for span in INLINE.findall(prose)
                     if '"jsonrpc"' in span]
    return unmarked


def test_every_json_rpc_example_names_its_revision():
    assert unmarked_examples(documents()) == []


# The checker itself: it must catch the drift it exists for.
DRIFTED = {
    "a 2026 URL elicitation that still carries elicitationId":
        ('json', 'mcp-2026-07-28 server result-of=tools/call',
         '{"jsonrpc": "2.0", "id": 2, "result": {"resultType": "input_required", '
         '"inputRequests": {"a": {"method": "elicitation/create", "params": {"mode": "url", '
         '"message": "m", "url": "https://x.example/c", "elicitationId": "e1"}}}, '
         '"requestState": "s"}}'),
    "−32042 claimed for 2026-07-28":
        ('json', 'mcp-2026-07-28 server',
         '{"jsonrpc": "2.0", "id": 2, "error": {"code": -32042, "message": "URL elicitation '
         'required", "data": {"elicitations": []}}}'),
    "a 2026 request without _meta":
        ('json', 'mcp-2026-07-28 client',
         '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", '
         '"arguments": {}}}'),
    "a server-sent elicitation/create at 2026-07-28":
        ('text', 'mcp-2026-07-28 wire',
         'S→C {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {"mode": '
         '"form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}}}'),
    "a 2025 URL elicitation without elicitationId":
        ('json', 'mcp-2025-11-25 server',
         '{"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {"mode": "url", '
         '"message": "m", "url": "https://x.example/c"}}'),
    "an accept answer that is not an ElicitResult":
        ('text', 'mcp-2025-11-25 wire',
         'S→C {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {"mode": '
         '"form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}}}\n'
         'C→S {"jsonrpc": "2.0", "id": 4, "result": {"action": "ok"}}'),
    "a 2026 roots capability with listChanged":
        ('json', 'mcp-2026-07-28 def=ClientCapabilities', '{"roots": {"listChanged": true}}'),
}


@pytest.mark.parametrize("name", sorted(DRIFTED))
def test_the_checker_refuses_a_drifted_example(name):
    language, info, body = DRIFTED[name]
    with pytest.raises(AssertionError):
        check(Example("fixture", language, info, body))


def test_the_checker_accepts_a_correct_wire_exchange_and_reads_answers_in_context():
    body = (
        'C→S {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "n", '
        '"arguments": {}}}\n'
        'S→C {"jsonrpc": "2.0", "id": 7, "result": {"content": [], "isError": false}}\n')
    assert check(Example("fixture", "text", "mcp-2025-11-25 wire", body)) == 2
    wrong = body.replace('"content": [], ', "")  # a tools/call result needs content
    with pytest.raises(AssertionError):
        check(Example("fixture", "text", "mcp-2025-11-25 wire", wrong))


def test_an_unmarked_json_rpc_block_is_found():
    text = 'Texto.\n\n```json\n{"jsonrpc": "2.0", "method": "x"}\n```\n'
    found = [b for b in blocks_in(text, "fixture") if '"jsonrpc"' in b.body
             and not MARK.search(b.info)]
    assert len(found) == 1


def test_documents_cover_every_notebook_the_two_shipped_guides_and_the_skill():
    sources = {s.split(" cell ")[0] for s, _ in documents()}
    assert sources == {*NOTEBOOKS, *GUIDES, SKILL.name}
    assert all(Path(REPO / "lessons" / n).exists() for n in NOTEBOOKS)
