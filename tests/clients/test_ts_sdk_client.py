"""The official TypeScript SDK client (v1 `@modelcontextprotocol/sdk` and v2
`@modelcontextprotocol/client`, both revisions) on one session: list, a disambiguation delete
answered by a scripted user, a roots change. Every frame the server wrote validates against the
official schema."""

import pytest
from clients_support import require_node, run_driver, scenario, text_of

from server_support import NotesTree, validate_trace

CLIENTS = [("v1", "legacy"), ("v2", "legacy"), ("v2", "2026-07-28")]
CHOSEN = {"note_id": "note-7", "confirm": True}


@pytest.fixture(scope="module", params=CLIENTS, ids=["-".join(c) for c in CLIENTS])
def session(request, tmp_path_factory):
    """One driver run per client: list, delete "TPS report" (3 matches), share Trabajo instead
    of Notas, list again."""
    require_node()
    sdk, era = request.param
    base = tmp_path_factory.mktemp(f"{sdk}-{era}")
    tree = NotesTree(base / "casa")
    trace = base / "wire.jsonl"
    report = run_driver(scenario(
        sdk=sdk, era=era, trace=trace, roots=[tree.notes], elicitation={"form": {}},
        answers=[{"action": "accept", "content": CHOSEN, "delayMs": 200}],
        steps=[{"op": "listTools"},
               {"op": "callTool", "name": "notes_list"},
               {"op": "callTool", "name": "notes_delete", "arguments": {"title": "TPS report"}},
               {"op": "setRoots", "roots": [tree.work.as_uri()]},
               {"op": "callTool", "name": "notes_list"}]), base)
    return {"report": report, "tree": tree, "trace": trace, "era": era}


def test_the_client_negotiates_the_revision_it_asked_for(session):
    expected = "2026-07-28" if session["era"] == "2026-07-28" else "2025-11-25"
    assert session["report"].data["protocolVersion"] == expected
    assert session["report"].data["clientErrors"] == []


def test_tools_list_offers_the_lesson_tools(session):
    tools = session["report"].step(0)["result"]
    assert {"notes_list", "notes_write", "notes_delete", "notes_setup"} <= set(tools)


def test_notes_list_shows_the_notes_inside_the_shared_folder(session):
    step = session["report"].step(1)
    assert step["ok"], step
    notes = step["result"]["structuredContent"]["notes"]
    assert [n["id"] for n in notes] == ["note-1", "note-3", "note-7", "note-14"]
    assert text_of(step["result"]).startswith("4 nota(s)")


def test_several_matches_ask_one_form_and_delete_exactly_the_chosen_note(session):
    report, tree = session["report"], session["tree"]
    step = report.step(2)
    assert step["ok"] and not step["result"].get("isError"), step
    assert step["result"]["structuredContent"]["deleted"]["id"] == "note-7"
    [form] = report.elicitations()
    assert form["mode"] == "form"
    offered = form["params"]["requestedSchema"]["properties"]["note_id"]
    ids = [o["const"] for o in offered.get("oneOf", [])] or offered.get("enum")
    assert sorted(ids) == ["note-14", "note-3", "note-7"]
    assert tree.files(tree.notes) == ["compra.md", "tps-2023.md", "tps-2025.md"]


def test_a_roots_change_moves_the_boundary(session):
    report, tree = session["report"], session["tree"]
    assert report.step(3)["ok"], report.step(3)
    step = report.step(4)
    assert [n["id"] for n in step["result"]["structuredContent"]["notes"]] == ["note-21"]
    if session["era"] == "legacy":  # list_changed made the server ask roots/list again
        assert report.step(3)["result"] == {"rootsAsked": 2, "notified": True}
    assert tree.files(tree.work) == ["plan.md"]


def test_every_frame_the_server_wrote_validates_against_the_schema(session):
    assert validate_trace(session["trace"]) > 5
