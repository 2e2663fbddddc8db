"""The naive server of the core's weak-vs-right predictions (mcp_ui/naive.py) takes each
shortcut the notebooks say it takes, and the lesson's server beside it does not."""

from __future__ import annotations

from notebook_helpers import import_mcp_ui, lab_run

ui = import_mcp_ui()
ATTEMPTS = ("Notas-privadas/robo.md", "Notas/%2e%2e/Notas-privadas/robo.md",
            "Notas/atajo/robo.md")


def accept(note_id, confirm=True):
    return {"action": "accept", "content": {"note_id": note_id, "confirm": confirm}}


async def write_outside(lab, conn):
    """The three notebook-1 attempts aimed at Notas-privadas/: the files they left there."""
    if not (lab.base / "Notas" / "atajo").exists():
        lab.symlink("Notas/atajo", "Notas-privadas")
    before = set(lab.snapshot())
    for target in ATTEMPTS:
        await conn.call("notes_write", {"uri": lab.uri() + "/" + target, "title": "Robo",
                                        "body": "x"}, echo=False)
    return sorted(set(lab.snapshot()) - before)


def test_the_naive_server_writes_outside_the_roots_through_a_prefix_a_dot_dot_and_a_link():
    async def body(lab):
        naive = await write_outside(lab, await ui.naive.connect(lab))
        (lab.base / "Notas-privadas" / "robo.md").unlink()
        return naive, await write_outside(lab, await lab.connect(quiet=True))
    naive, lesson = lab_run(body)
    assert naive == ["Notas-privadas/robo.md"] and lesson == []


def removed_on_each_server(act):
    """{"lesson": [...], "naive": [...]}: the files `await act(lab, conn)` removed from disk on
    the lesson's server, then on the naive one, in the same lab."""
    async def body(lab):
        outcome = {}
        for name, conn in (("lesson", await lab.connect(quiet=True)),
                           ("naive", await ui.naive.connect(lab))):
            before = set(lab.snapshot())
            await act(lab, conn)
            outcome[name] = sorted(before - set(lab.snapshot()))
        return outcome
    return lab_run(body)


def test_the_naive_server_takes_an_accept_without_confirm_as_a_yes():
    async def refuse(lab, conn):
        for answer in ({"action": "decline"}, {"action": "cancel"},
                       accept("note-3", confirm=False)):
            await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                            scripted=[answer], echo=False)
    assert removed_on_each_server(refuse) == {"lesson": [], "naive": ["Notas/tps-2023.md"]}


def test_the_naive_server_deletes_by_path_whatever_a_swapped_folder_names_now():
    async def swap_then_accept(lab, conn):
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True, echo=False,
                        scripted=[lab.swap_during_form("Notas", then=accept("note-7"))])
        lab.restore_folder("Notas")
    assert removed_on_each_server(swap_then_accept) == {"lesson": [],
                                                        "naive": ["Fuera/tps-2024.md"]}


def test_the_naive_servers_revocations_land_only_after_the_next_call():
    async def body(lab):
        conn = await ui.naive.connect(lab, roots=["Notas", "Trabajo"])
        await conn.call("notes_open", {"note_id": "note-21"}, echo=False)
        await conn.client.set_roots([lab.path("Notas")])
        return [await conn.call("notes_read", {"handle": "h-1"}, echo=False)
                for _ in range(2)]
    first, second = lab_run(body)
    assert not first.is_error and "note-21" in first.text
    assert second.is_error and ui.naive.LATE in second.text
