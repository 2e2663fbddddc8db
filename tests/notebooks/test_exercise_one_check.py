"""Notebook 2's exercise 1 check (mcp_ui.checks.check_chosen_note_deleted) never sends a
learner to a run that deletes a second note (newcomer report, finding 3)."""

from __future__ import annotations

from notebook_helpers import import_mcp_ui, lab_run

checks = import_mcp_ui().checks


def refuse_then_check(answers, capsys):
    """Exercise 1's call answered with each of `answers` in turn; what the last check said."""
    async def body(lab):
        conn = await lab.connect(quiet=True)
        for answer in answers:
            await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                            scripted=[answer], echo=False)
        capsys.readouterr()
        checks.check_chosen_note_deleted(conn)
        return capsys.readouterr().out
    return lab_run(body)


def test_a_refusal_while_the_2024_note_is_there_invites_another_run(capsys):
    said = refuse_then_check([{"action": "cancel"}], capsys)
    assert said.startswith("✓ Cancelaste (cancel) y no se borró nada.")
    assert "vuelve a ejecutar la celda y acepta" in said


def test_a_refusal_after_the_2024_note_was_deleted_says_how_to_start_again(capsys):
    chose_2024 = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
    said = refuse_then_check([chose_2024, {"action": "decline"}], capsys)
    assert said.startswith("✓ Rechazaste (decline) y no se borró nada.")
    assert "ya la borraste" in said and "ui.NotesLab()" in said
    assert "acepta" not in said
