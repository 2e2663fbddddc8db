"""The reference solutions of exercises 3 and 4, loaded as a learner's solution would be."""

import pytest

import extension
from client.sync_client import Client
from conftest import REFERENCE
from roots import RootSet
from server import Config, NotesServer, RootsChange
from server_support import NotesTree
from store import Handles, read_note
from transports.transport import start_in_process

URL = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture(scope="module")
def reference():
    loaded = extension.load(str(REFERENCE))
    assert not loaded.errors, loaded.errors
    return loaded


@pytest.mark.parametrize("sdk, protocol, capabilities, allowed", [
    ("2.3.0", "2025-11-25", URL, True),
    ("1.23.1", "2025-11-25", URL, True),
    ("1.23", "2025-11-25", URL, False),        # 1.23.0: shipped URL mode, negotiated 2025-06-18
    ("1.23.0", "2025-11-25", URL, False),
    ("1.22.0", "2025-11-25", URL, False),
    ("1.9.0", "2025-11-25", URL, False),       # "1.9.0" > "1.23.1" only as strings
    ("1.100.0", "2025-11-25", URL, True),
    ("1.23.1rc1", "2025-11-25", URL, False),
    ("1.23.2rc1", "2025-11-25", URL, True),
    (None, "2025-11-25", URL, False),
    ("", "2025-11-25", URL, False),
    ("garbage", "2025-11-25", URL, False),
    ("v2.3.0", "2025-11-25", URL, False),
    (230, "2025-11-25", URL, False),
    ("2.3.0", "2025-06-18", URL, False),
    ("2.3.0", "2025-11-25", {"elicitation": {}}, False),
    ("2.3.0", "2025-11-25", {"elicitation": {"form": {}}}, False),
    ("2.3.0", "2025-11-25", {}, False),
    ("2.3.0", "2025-11-25", None, False),
    ("2.3.0", "2026-07-28", URL, True),
    ("2.0.0", "2026-07-28", {"elicitation": {"url": {}}}, True),
    ("2.0.0b1", "2026-07-28", URL, False),
    ("1.30.0", "2026-07-28", URL, False),      # no 1.x speaks 2026-07-28
    ("2.3.0", "2099-01-01", URL, False),
])
def test_the_reference_guard_needs_sdk_protocol_and_capability(reference, sdk, protocol,
                                                                capabilities, allowed):
    assert reference.url_guard(sdk, protocol, capabilities) is allowed


def _change(tmp_path, old, new, notes):
    handles = Handles()
    opened = []
    with RootSet.from_paths([tmp_path]) as everything:
        for folder, name in notes:
            path = tmp_path / folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"id: {name}\ntitle: t\n\ncuerpo")
            opened.append(handles.open(everything, read_note(str(path))))
    roots = [RootSet.from_paths([str(tmp_path / f) for f in folders]) for folders in (old, new)]
    return RootsChange(roots[0], roots[1], handles.live()), opened


@pytest.mark.parametrize("old, new, survivors", [
    (["Notes", "Notes-evil"], ["Notes"], {"a.md", "sub-a.md"}),
    (["Notes", "Notes-evil"], ["Notes-evil"], {"b.md"}),
    (["Notes", "Notes-evil", "Otros"], ["Notes", "Otros"], {"a.md", "sub-a.md", "c.md"}),
    (["Notes", "Notes-evil"], [], set()),
])
def test_the_reference_reaction_revokes_exactly_what_left_the_roots(reference, tmp_path, old,
                                                                     new, survivors):
    for folder in ("Notes", "Notes-evil", "Otros"):
        (tmp_path / folder).mkdir()
    change, opened = _change(tmp_path, old, new, [("Notes", "a.md"), ("Notes/sub", "sub-a.md"),
                                                  ("Notes-evil", "b.md"), ("Otros", "c.md")])
    reference.roots_reaction(change)
    kept = {h.note_id for h in opened if h.id not in change.revoked}
    assert kept == survivors & {h.note_id for h in opened}


def test_the_reference_reaction_keeps_a_sibling_sharing_the_prefix_apart(reference, tmp_path):
    tree = NotesTree(tmp_path / "casa")
    server = NotesServer(Config(), extension=reference)
    with Client(*start_in_process(server), roots=[str(tree.notes), str(tree.private)]) as client:
        client.connect()
        in_notes = client.call_tool("notes_open", {"note_id": "note-3"})
        in_private = client.call_tool("notes_open", {"note_id": "note-99"})
        handles = [r["structuredContent"]["handle"] for r in (in_notes, in_private)]
        client.set_roots([str(tree.notes)])
        read = [client.call_tool("notes_read", {"handle": h})["isError"] for h in handles]
    server.close()
    assert read == [False, True]


@pytest.mark.anyio
@pytest.mark.parametrize("version, used_url", [("1.23.0", False), ("", False),
                                               ("no-es-una-version", False), ("1.23.1", True)])
async def test_the_reference_guard_decides_inside_serve(tree, version, used_url):
    from sdk_driver import Answers, Roots, sdk_client
    answers = Answers({"action": "decline"})
    async with sdk_client("--sdk-version", version, "--solution", REFERENCE / "ejercicio3a.py",
                          roots=Roots(tree.notes), answers=answers, demo_guard=False) as client:
        result = await client.call_tool("notes_setup", {})
    assert bool(answers.seen) is used_url
    assert result.structured_content["status"] == ("not_configured" if used_url else "manual")


@pytest.fixture
def tree(tmp_path):
    return NotesTree(tmp_path / "casa")


@pytest.fixture
def anyio_backend():
    return "asyncio"
