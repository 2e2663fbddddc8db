"""Exercise 4: after roots/list_changed, open handles are re-checked at once and exactly.

Protocol 2025-11-25 (the revision with roots/list_changed). The main scenario is played once
per submission and several tests read different facts from it: the learner's roots
`Trabajo` and `Personal`, four open handles, then `Personal` is removed. Without a reaction
the server revokes every handle on any roots change (the coarse safe default), so every test
first requires, as observed behaviour, that the handles still inside the roots survived.
"""

import threading
import time

from grader.checks.harness import Broken, describe_changes
from grader.checks.plugin import graded

REVISION = "2025-11-25"
EVENTUALLY = 2.0  # how long a handle may take to stop working in the "eventually" checks


def open_handle(run, note_id):
    call = run.call("notes_open", {"note_id": note_id})
    handle = call.structured.get("handle")
    if call.is_error or not isinstance(handle, str):
        raise Broken(f"notes_open({note_id!r}) no devolvió un handle: {call.text()}")
    return handle


def readable(run, handle):
    return not run.call("notes_read", {"handle": handle}).is_error


def dying(run, handles, limit=EVENTUALLY):
    """Which of `handles` stop working within `limit` seconds (polled together)."""
    alive, deadline = set(handles), time.monotonic() + limit
    while True:
        alive = {h for h in alive if readable(run, h)}
        if not alive or time.monotonic() > deadline:
            return set(handles) - alive
        time.sleep(0.05)


def removal(lab):
    """Trabajo + Personal, four handles, then Personal is removed. Played once."""
    state = lab.state
    if state.roots_removal is not None:
        if isinstance(state.roots_removal, Broken):
            raise state.roots_removal
        return state.roots_removal
    try:
        state.roots_removal = play_removal(lab)
    except Broken as exc:
        state.roots_removal = exc
        raise
    return state.roots_removal


def reacted(lab, grade):
    """The removal's facts, gated on a reaction finer than the server's default one."""
    facts = removal(lab)
    grade.require(any(facts["survivors"].values()),
                  "tras quitar la root Personal también dejaron de funcionar los handles de "
                  "Trabajo: tu reacción revoca todos los handles, lo mismo que hace el "
                  "servidor sin @extension.on_roots_changed")
    return facts


def play_removal(lab):
    tree = lab.folders(("Trabajo", "t1.md", "n-t1", "Plan de trabajo"),
                       ("Trabajo/sub", "t2.md", "n-t2", "Actas"),
                       ("Personal", "p1.md", "n-p1", "Diario"),
                       ("Personal/sub", "p2.md", "n-p2", "Recetas"))
    run = lab.server(REVISION, roots=[tree.uri("Trabajo"), tree.uri("Personal")])
    handles = {note: open_handle(run, note) for note in ("n-t1", "n-t2", "n-p1", "n-p2")}
    if not all(readable(run, h) for h in handles.values()):
        raise Broken("un handle recién abierto ya no se podía leer antes de cambiar las roots")
    before = tree.snapshot()
    run.set_roots([tree.uri("Trabajo")])
    facts = {"at_once": {n: readable(run, h) for n, h in handles.items()}}
    dead = dying(run, [handles["n-p1"], handles["n-p2"]])
    facts["eventually"] = {n: handles[n] not in dead for n in ("n-p1", "n-p2")}
    facts["survivors"] = {n: readable(run, handles[n]) for n in ("n-t1", "n-t2")}
    facts["bodies"] = {n: run.call("notes_read", {"handle": handles[n]}).structured.get("body")
                       for n in ("n-t1", "n-t2")}
    facts["changes"] = describe_changes(before, tree.snapshot())
    return facts


def some_revocation(grade, facts):
    grade.require(not all(facts["eventually"].values()),
                  "tras quitar la root Personal, sus handles siguen funcionando: tu "
                  "reacción no revocó ninguno")


@graded("ejercicio4", 2, "al quitar una root, todos los handles abiertos bajo ella dejan de "
        "funcionar")
def test_handles_under_a_removed_root_stop_working(lab, grade):
    facts = reacted(lab, grade)
    for note, works in facts["eventually"].items():
        grade.check(not works, f"notes_read del handle de {note} (bajo Personal) da isError",
                    got="sigue leyendo la nota", expected="isError: true")


@graded("ejercicio4", 1, "los handles que siguen dentro de las nuevas roots siguen funcionando")
def test_handles_inside_the_new_roots_keep_working(lab, grade):
    facts = reacted(lab, grade)
    some_revocation(grade, facts)
    for note, works in facts["survivors"].items():
        grade.check(works and facts["bodies"][note] == f"Cuerpo de {note}.\n",
                    f"el handle de {note} (bajo Trabajo) sigue leyendo su nota",
                    got="isError" if not works else facts["bodies"][note],
                    expected=f"'Cuerpo de {note}.'")


@graded("ejercicio4", 1, "la revocación es inmediata: la primera llamada tras el cambio ya "
        "falla")
def test_revocation_is_immediate(lab, grade):
    facts = reacted(lab, grade)
    some_revocation(grade, facts)
    for note in ("n-p1", "n-p2"):
        grade.check(not facts["at_once"][note], f"la primera lectura de {note} tras cambiar "
                    "las roots ya da isError", got="leyó la nota (se revocó más tarde)",
                    expected="isError: true en la primera llamada")


@graded("ejercicio4", 1, "revocar no toca ningún archivo")
def test_revocation_changes_nothing_on_disk(lab, grade):
    facts = reacted(lab, grade)
    some_revocation(grade, facts)
    grade.check(not facts["changes"], "las notas siguen igual en disco",
                got=facts["changes"], expected="ningún cambio")


@graded("ejercicio4", 1, "compara rutas por componentes: Notes no contiene a Notes-evil")
def test_a_sibling_sharing_a_prefix_is_another_root(lab, grade):
    some_revocation(grade, reacted(lab, grade))
    tree = lab.folders(("Notes", "a.md", "n-a", "Alfa"), ("Notes-evil", "b.md", "n-b", "Beta"))
    both = [tree.uri("Notes"), tree.uri("Notes-evil")]
    run = lab.server(REVISION, roots=both)
    for removed, kept in (("Notes-evil", "Notes"), ("Notes", "Notes-evil")):
        run.set_roots(both)
        handles = {"Notes": open_handle(run, "n-a"), "Notes-evil": open_handle(run, "n-b")}
        run.set_roots([tree.uri(kept)])
        died = handles[removed] in dying(run, [handles[removed]])
        lives = readable(run, handles[kept])
        grade.check(died and lives, f"roots Notes y Notes-evil, se quita {removed}: el handle "
                    f"de {removed} muere y el de {kept} sigue vivo",
                    got=f"{removed}: {'muere' if died else 'sigue vivo'}; "
                        f"{kept}: {'sigue vivo' if lives else 'muere'}",
                    expected=f"{removed}: muere; {kept}: sigue vivo")


@graded("ejercicio4", 1, "durante el cambio de roots ninguna llamada ve un conjunto a medias")
def test_concurrent_calls_never_see_a_half_swapped_boundary(lab, grade):
    some_revocation(grade, reacted(lab, grade))
    tree = lab.folders(*[("A", f"a{i}.md", f"n-a{i}", f"Nota A{i}") for i in range(3)],
                       *[("B", f"b{i}.md", f"n-b{i}", f"Nota B{i}") for i in range(2)])
    run = lab.server(REVISION, roots=[tree.uri("A")])
    handle = open_handle(run, "n-a0")
    seen, errors = [], []
    start = threading.Barrier(9)

    def lister():
        start.wait()
        for _ in range(3):
            try:
                call = run.call("notes_list")
                seen.append(frozenset(n.get("id") for n in call.structured.get("notes", [])
                                      if isinstance(n, dict)))
            except Broken as exc:
                errors.append(str(exc))

    threads = [threading.Thread(target=lister) for _ in range(8)]
    for thread in threads:
        thread.start()
    start.wait()
    run.set_roots([tree.uri("B")])
    for thread in threads:
        thread.join(timeout=30)
    after = frozenset(n.get("id") for n in run.call("notes_list").structured.get("notes", []))
    grade.require(dying(run, [handle]), "tras cambiar las roots de A a B, el handle de A "
                  "siguió funcionando: tu reacción no lo revocó")
    if errors:
        raise Broken(errors[0])
    a, b = frozenset(f"n-a{i}" for i in range(3)), frozenset(f"n-b{i}" for i in range(2))
    mixed = [sorted(s) for s in seen if s not in (a, b)]
    grade.check(not mixed and len(seen) == 24, "cada notes_list concurrente ve las notas de A o "
                "las de B, nunca una mezcla", got=mixed or f"{len(seen)} respuestas",
                expected="24 listas, cada una igual a A o a B")
    grade.check(after == b, "después del cambio, notes_list muestra las notas de B",
                got=sorted(after), expected=sorted(b))
