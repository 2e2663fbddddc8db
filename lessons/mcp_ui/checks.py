"""The notebooks' checks: ✓/✗ lines a learner reads, and a failed cell in unattended runs.

`check` prints one verdict. The exercise helpers look at what a call really did, from the
call's record (the disk before and after, the questions asked and answered, the frames):
exercise 1's chosen note deleted (and nothing else; or, for a call stopped with its form open,
nothing at all), notebook 3's URL flow (consent, page,
completion notification, «configured»), exercise 3's guard asked about several situations in
real servers (`guard_table`), exercise 4's handles re-read after a roots change.

Deliberate simplifications: the checks read the lab's own records; they do not re-derive
anything from the server.
"""

from __future__ import annotations

import json

from cli.demo import LESSON_NOTES
from shared.protocol import (
    FORM_MODE,
    LATEST_HANDSHAKE,
    SIMULATED_SDK_VERSION,
    STATELESS_VERSION,
    URL_MODE,
)

from .env import scripted_mode

START_AGAIN = ("Para volver a empezar con las notas del principio, ejecuta otra vez la celda de "
               "ui.NotesLab() y la de lab.connect(...).")


# who cancelled a call (lab_client.CallRecord.stopped), as a sentence starts
STOPPED = {"cell": "Detuviste la celda", "client": "El cliente dejó de esperar"}


def check(ok: bool, good: str, bad: str) -> None:
    """Print ✓/✗. In unattended runs (LESSON_USER=scripted) a ✗ also fails the cell."""
    print(("✓ " + good) if ok else ("✗ " + bad))
    if not ok and scripted_mode():
        raise AssertionError(bad)


def check_chosen_note_deleted(conn) -> None:
    """Exercise 1: the note chosen in the form, and only it, disappeared from disk."""
    record = conn.last
    answers = [r for p, r in record.questions if p.get("mode", FORM_MODE) == FORM_MODE]
    gone = sorted(set(record.before) - set(record.after))
    added = sorted(set(record.after) - set(record.before))
    shown = [p for p in record.shown if p.get("mode", FORM_MODE) == FORM_MODE]
    if not answers and record.stopped and shown:  # ■ (or the client's timeout) with it open
        who = STOPPED.get(record.stopped, STOPPED["cell"])
        return check(not gone and not added,
                     f"{who} con el formulario abierto: el cliente canceló la llamada "
                     "(notifications/cancelled), el servidor retiró su pregunta y no se borró "
                     "nada. " + try_again(record.before),
                     f"Se tocó el disco tras cancelar la llamada: {gone or added}")
    if not answers:
        return check(False, "", "La llamada no mostró ningún formulario: ya no había varias "
                     "notas con ese título (¿la ejecutaste más de una vez?). " + START_AGAIN)
    answer = answers[-1]
    content = answer.get("content") or {}
    chosen = content.get("note_id")
    if answer.get("action") != "accept" or not content.get("confirm"):
        said = {"decline": "Rechazaste (decline)", "cancel": "Cancelaste (cancel)"}.get(
            answer.get("action"), "Aceptaste sin marcar la confirmación")
        return check(not gone and not added,
                     f"{said} y no se borró nada. " + try_again(record.before),
                     f"Se tocó el disco sin confirmación: {gone or added}")
    expected = [p for p, i in record.before.items() if i == chosen]
    return check(gone == expected and not added,
                 f"Elegiste {chosen} y solo desapareció {', '.join(gone)}: la respuesta volvió "
                 "a la misma llamada a notes_delete.",
                 f"Elegiste {chosen}, pero cambió: borradas {gone}, nuevas {added}.")


# the 2024 «TPS report» exercise 1 asks to delete
EXERCISE_1_NOTE = next(note_id for _, _, note_id, title, created in LESSON_NOTES
                       if title == "TPS report" and created.startswith("2024"))


def try_again(before: dict) -> str:
    """What to do after exercise 1's call deleted nothing: run it again while the note it asks
    for is there; once an earlier run deleted it, another «sí» would delete a second note, so
    start again instead (newcomer report, finding 3)."""
    if EXERCISE_1_NOTE in before.values():
        return ("Para ver el borrado, vuelve a ejecutar la celda y acepta con la confirmación "
                "marcada.")
    return "La nota de 2024 ya la borraste en una ejecución anterior. " + START_AGAIN


def check_url_flow(conn) -> None:
    """Notebook 3: consent, page, completion notification and a configured result."""
    record = conn.last
    asked = [(p, r) for p, r in record.questions if p.get("mode") == URL_MODE]
    if not asked:
        return check(False, "", "La llamada no pidió ninguna URL: ¿el cliente declaró "
                     "elicitation.url y la guarda lo permite?")
    params, answer = asked[-1]
    eid = params.get("elicitationId")
    done = [m for d, m in conn.frames[record.frames[0]:record.frames[1]]
            if m.get("method") == "notifications/elicitation/complete"
            and (m.get("params") or {}).get("elicitationId") == eid]
    status = record.result.data.get("status") if record.result else None
    if answer.get("action") != "accept":
        return check(status != "configured", f"Respondiste {answer.get('action')}: no se "
                     "abrió nada y no se configuró nada.",
                     "Se configuró algo sin tu consentimiento.")
    return check(bool(done) and status == "configured",
                 "Consentimiento → página → notifications/elicitation/complete con el mismo "
                 "elicitationId → resultado «configured».",
                 f"El flujo no terminó (estado {status!r}; notificación "
                 f"{'recibida' if done else 'no recibida'}).")


async def read_handles(conn) -> None:
    """Exercise 4: notes_read on every handle this client opened; print what still works."""
    opened = {c.result.data.get("handle"): c.arguments["note_id"] for c in conn.calls
              if c.tool == "notes_open" and c.result and not c.result.is_error}
    for handle, note in opened.items():
        result = await conn.call("notes_read", {"handle": handle}, echo=False)
        where = next((f for f, _, i, _, _ in LESSON_NOTES if i == note), "?")
        text = "se puede leer" if not result.is_error else conn.lab.hide(result.text)
        print(f"  {handle} ({note}, en {where}/): {'✗' if result.is_error else '✓'} {text}")


BOTH_MODES = {FORM_MODE: {}, URL_MODE: {}}  # a client's elicitation: forms and URL mode
# (simulated SDK, protocol, declared elicitation, what the rules of exercise 3 say: URL?);
# SIMULATED_SDK_VERSION is 2.3.0, what the lesson's server says it runs on by default.
GUARD_CASES = (
    (SIMULATED_SDK_VERSION, LATEST_HANDSHAKE, BOTH_MODES, True),
    (SIMULATED_SDK_VERSION, LATEST_HANDSHAKE, {}, False),
    (SIMULATED_SDK_VERSION, STATELESS_VERSION, BOTH_MODES, True),
    ("1.23.1", LATEST_HANDSHAKE, BOTH_MODES, True),
    ("1.23.0", LATEST_HANDSHAKE, BOTH_MODES, False),
    ("1.30.0", STATELESS_VERSION, BOTH_MODES, False),
    ("2.0.0b1", STATELESS_VERSION, BOTH_MODES, False),
    ("2.0.0", STATELESS_VERSION, {URL_MODE: {}}, True),
    ("", LATEST_HANDSHAKE, BOTH_MODES, False),
    ("banana", LATEST_HANDSHAKE, BOTH_MODES, False),
)


async def guard_table(lab, solution, cases=GUARD_CASES) -> None:
    """Ask *your* URL-mode guard (inside real servers) about several situations.

    For each case a server starts with that simulated SDK version and your solution, a client
    with the given protocol and capabilities calls notes_setup, and the table says whether the
    server chose URL mode. The simulated user declines the page, so nothing is set up.
    """
    rows = []
    for number, (sdk, protocol, caps, expected) in enumerate(cases):
        conn = await lab.connect(protocol, elicitation=caps, solution=solution,
                                 sdk_version=sdk, quiet=True, report_errors=number == 0)
        await conn.call("notes_setup", simulate=True, echo=False,
                        scripted=[{"action": "decline"}])
        used_url = any(p.get("mode") == URL_MODE for p, _ in conn.last.questions)
        conn.close()
        lab.clients.remove(conn)
        rows.append((sdk, protocol, caps, "URL" if used_url else "manual",
                     "URL" if expected else "manual"))
    print(f"{'SDK simulado':<14}{'protocolo':<12}{'elicitation':<26}{'tu guarda':<11}regla")
    for sdk, protocol, caps, mine, rule in rows:
        shown = json.dumps(caps, separators=(",", ":"))
        print(f"{sdk or '(vacía)':<14}{protocol:<12}{shown:<26}{mine:<11}"
              f"{rule:<7}{'✓ bien' if mine == rule else '✗ falla'}")
