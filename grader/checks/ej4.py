"""Exercise 4 (the reaction to `roots/list_changed`): scenarios of open handles and roots.

Protocol 2025-11-25 (the revision with roots/list_changed). A scenario lays out notes, starts a
server with some roots, opens one handle per note, changes the roots one or more times, and
then reads every handle once: the first call after the change must already see the right
answer. A handle whose note is still inside the roots must read its body; one whose note left
them must fail.

The main scenario (roots Trabajo and Personal, handles in each and in subfolders, Personal
removed) is played once per submission (a `RemovalFacts` in the submission state). Without a
reaction the server revokes every handle on any change (the coarse safe default) and a reaction
that does nothing revokes none: the main test needs exactly the right ones, and every other
exercise-4 test requires it.

Where the real path matters: some scenarios move a note's folder while its handle is open (and
may leave a link in its place) before the roots change, so the text a handle was opened with
(`handle.path`), that text resolved again, a root's URI or a text prefix say "inside" while the
file is really outside; only `handle.current_path()` compared by components with the new roots
(`RootSet.contains`) tells the truth.

Severity: a handle left alive whose note is outside the new roots is access outside the roots,
the exercise's serious mistake (`severe=True`: at most half of the exercise). A handle revoked
while still inside fails closed: it costs its test, nothing more. Every scenario test ends with
the legitimate action on its server (`still_reads`: the handles whose note stayed inside still
read it; where none stays, a new one opened after the roots are shared again survives the next
change), without which it scores 0: a reaction that was exact once and then revoked everything
gets nothing from the handles it killed.

Feedback names each handle's note by its file, where it was opened («la nota
Trabajo/sub/t2.md»), and says what happened to it, quoting the server's own message when a
handle died (for instance «la reacción al cambio de roots falló» when the learner's reaction
raised and the server revoked everything). Hidden scenarios say only how many handles went
wrong, and how.
"""

import re
from dataclasses import dataclass, field

from grader.checks.grading import Abort, Broken, short
from grader.checks.notes_tree import describe_changes
from server import NO_REACTION_REASON, REACTION_FAILED  # the server's own words (code/)
from shared.protocol import LATEST_HANDSHAKE

REVISION = LATEST_HANDSHAKE
MAIN = ("al quitar una root, sus handles (también en subcarpetas) dejan de funcionar en el acto "
        "y los que siguen dentro siguen leyendo su nota")
NO_REACTION = NO_REACTION_REASON
SEVERE = "no dejar vivo ningún handle cuya nota quedó fuera de las roots"
# how a handle revoked because the reaction raised says so (code/session.py): its exception type
RAISED = re.compile(re.escape(REACTION_FAILED) + r"(?: \((\w{1,60})\))?")


def raised(facts):
    """What the learner's reaction raised in a scenario, in words («una excepción (TypeError)»),
    when the server revoked every handle because of it; "" when it did not raise."""
    for fact in facts:
        found = RAISED.search(fact.text)
        if found:
            return "una excepción" + (f" ({found[1]})" if found[1] else "")
    return ""


def raised_note(facts):
    """The feedback for a scenario where the reaction raised: it names the exception instead of
    a hint about paths (the reaction never decided anything here)."""
    return (f"· tu reacción lanzó {raised(facts)} en este caso y el servidor revocó todos los "
            "handles (fallo seguro): mira qué valor de este caso no esperaba tu código (por "
            "ejemplo, handle.current_path() no da ninguna ruta cuando ya no se sabe dónde está el "
            "archivo)")


def body(note):
    return f"Cuerpo de {note}.\n"


def open_handle(run, note_id):
    call = run.call("notes_open", {"note_id": note_id})
    handle = call.structured.get("handle")
    if call.is_error or not isinstance(handle, str):
        raise Broken(f"notes_open({note_id!r}) no devolvió un handle: {short(call.text(), 200)}")
    return handle


def read(run, handle, note):
    """(alive, what it read or the server's message)."""
    call = run.call("notes_read", {"handle": handle})
    if call.is_error:
        return False, short(call.text(), 200)
    text = call.structured.get("body")
    return text == body(note), short(text, 120)


def play(lab, notes, before, steps, survivors, layout=None):
    """notes: [(folder, file, id)]; `before`: the first roots; `steps`: the roots it changes to,
    in order; `survivors`: the notes whose handles must still work; `layout(tree)`, when given,
    changes the folders once the handles are open and before the roots change, and returns
    {note id: the folder its file is in now, or None when it deleted the note's file}.
    Returns the `Scenario` (its [HandleFacts], what changed on disk meanwhile, and its
    server). A root given as "A->B" is a link A to the
    folder B (B may be "C/D")."""
    links = [step for step in before if "->" in step]
    tree = lab.folders(*[(folder, file, note, f"Nota {note}") for folder, file, note in notes])
    for link in links:
        name, target = link.split("->")
        tree.link(name, target)

    def uris(folders):
        return [tree.uri(folder.split("->")[0]) for folder in folders]

    run = lab.server(REVISION, roots=uris(before))
    handles = {note: open_handle(run, note) for _, _, note in notes}
    if not all(read(run, handle, note)[0] for note, handle in handles.items()):
        raise Broken("un handle recién abierto ya no se podía leer antes de cambiar las roots")
    # (a snapshot refuses links: none is taken when the scenario has or makes one)
    snapshot = tree.snapshot() if not links and layout is None else None
    moved = layout(tree) if layout is not None else {}
    for roots in steps:
        run.set_roots(uris(roots))
    facts = []
    for folder, file, note in notes:
        alive, text = read(run, handles[note], note)
        now = moved.get(note, "")
        facts.append(HandleFacts(note, folder, note in survivors, alive, text,
                                 now=now or "", file=file, deleted=now is None))
    changes = describe_changes(snapshot, tree.snapshot()) if snapshot is not None else ""
    return Scenario(facts, changes, run, uris, notes)


@dataclass
class Scenario:
    """A scenario played: what each handle read after the change (`handles`), what changed on
    disk meanwhile, and its server, roots and notes (what `still_reads` goes on with)."""
    handles: list
    changes: str
    run: object
    uris: object   # folders -> their URIs in this scenario's tree
    notes: list    # [(folder, file, id)]


def still_reads(grade, played, reshare=None):
    """The legitimate action that ends an exercise-4 test, on the same server: the handles
    whose note stayed inside the roots still read it. When none stayed, `reshare` (the roots
    shared again, the first of them kept in the next change): a new handle on a note of that
    first root survives a change that removes the others."""
    inside = [f for f in played.handles if f.should_live]
    if inside or reshare is None:
        works = all(f.alive for f in inside)
        return grade.still_works(works, "los handles que siguen dentro de las roots siguen "
                                 "leyendo su nota" if works else "algún handle que seguía "
                                 "dentro de las roots dejó de funcionar: una prueba de lo que "
                                 "debe morir también pide que lo demás siga vivo")
    folder, _, note = next(n for n in played.notes if n[0] == reshare[0])
    played.run.set_roots(played.uris(reshare))
    handle = open_handle(played.run, note)
    played.run.set_roots(played.uris(reshare[:1]))
    works, text = read(played.run, handle, note)
    where = "una root" if grade.hidden else f"{folder}/"
    return grade.still_works(works, f"al volver a compartir las roots, un handle nuevo en "
                             f"{where} sigue leyendo su nota tras quitar las demás" if works
                             else f"al volver a compartir las roots, un handle nuevo en {where} "
                             "dejó de funcionar al quitar otra root" +
                             ("" if grade.hidden else f" (notes_read respondió: «{text}»)"))


def sentence(fact):
    """What happened to one handle, in one Spanish sentence naming its note by its file."""
    where = f"la nota {fact.shown}" + (
        " (se borró con el handle abierto: handle.current_path() no da ninguna ruta)"
        if fact.deleted else
        f" (con el handle abierto, su carpeta se movió: el archivo está ahora en {fact.now}/)"
        if fact.now else "")
    if fact.alive == fact.should_live:
        return f"{where}: {'sigue leyendo su nota' if fact.alive else 'su handle ya no funciona'}"
    if fact.should_live:
        return (f"{where} sigue dentro de las roots pero su handle dejó de funcionar "
                f"(notes_read respondió: «{fact.text}»)")
    if fact.deleted:
        return (f"{where}: su handle siguió leyendo la nota en la primera llamada tras el cambio; "
                "sin saber dónde está el archivo no se puede decir que esté dentro, y se revoca")
    return (f"{where} quedó fuera de las roots pero su handle siguió leyendo la nota en la "
            "primera llamada tras el cambio")


def summary(facts, change):
    """Why a scenario failed, in one sentence that claims only what happened."""
    died = [f for f in facts if f.should_live and not f.alive]
    lived = [f for f in facts if not f.should_live and f.alive]
    outside = [f for f in facts if not f.should_live]
    if lived and len(lived) == len(outside) and not died:
        return (f"{change}, ningún handle de los que quedaron fuera dejó de funcionar: tu "
                "reacción no revocó ninguno")
    if died and all(not f.alive for f in facts):
        texts = " ".join(f.text for f in facts)
        cause = (f": el servidor los revocó todos porque tu reacción lanzó {raised(facts)} («"
                 f"{REACTION_FAILED}»)" if REACTION_FAILED in texts else
                 ": es lo que hace el servidor sin @extension.on_roots_changed (¿se cargó tu "
                 "reacción?)" if NO_REACTION in texts else
                 ": tu reacción revoca también los que siguen dentro")
        return f"{change}, dejaron de funcionar todos los handles, también los de dentro{cause}"
    parts = []
    if died:
        parts.append("murieron handles que debían seguir vivos (los de "
                     + ", ".join(f.shown for f in died) + ")")
    if lived:
        parts.append("siguieron vivos handles que debían morir (los de "
                     + ", ".join(f.shown for f in lived) + ")")
    return f"{change}, " + " y ".join(parts)


def verdict(grade, facts, change, hidden=False):
    """One check per handle (public) or per kind of mistake (hidden); returns exactness."""
    exact = all(f.alive == f.should_live for f in facts)
    if hidden:  # what kind of mistake, never which handle or how many
        died = any(f.should_live and not f.alive for f in facts)
        lived = any(not f.should_live and f.alive for f in facts)
        grade.check(not died, "los handles que siguen dentro de las roots siguen funcionando"
                    if not died else "algún handle que seguía dentro de las roots dejó de "
                    "funcionar")
        grade.check(not lived, "los handles que quedaron fuera dejan de funcionar en el acto"
                    if not lived else "algún handle que quedó fuera de las roots siguió "
                    "funcionando tras el cambio (acceso fuera de las roots: mira dónde está "
                    "el archivo ahora y compáralo carpeta a carpeta con las roots nuevas)",
                    severe=True)
        return exact
    for fact in facts:  # a handle alive outside the roots is the serious mistake
        grade.check(fact.alive == fact.should_live, sentence(fact),
                    severe=not fact.should_live)
    return exact


@dataclass
class HandleFacts:
    """One open handle in an exercise-4 scenario and what the first read after the change gave."""
    note: str         # the note's id
    where: str        # its folder, as the learner sees it ("Trabajo/sub")
    should_live: bool
    alive: bool
    text: str         # the body it read, or the server's error message (escaped, short)
    now: str = ""     # the folder its file was moved to with the handle open ("" if not)
    file: str = ""    # its file's name ("t2.md"): feedback names a note by where it is
    deleted: bool = False  # its file was deleted with the handle open (current_path() is None)

    @property
    def shown(self):
        """How feedback names the note: by its file, where it was opened."""
        return f"{self.where}/{self.file}" if self.file else self.note


@dataclass
class RemovalFacts:
    """Exercise 4's main scenario: roots Trabajo + Personal, four handles, Personal removed."""
    handles: list = field(default_factory=list)   # [HandleFacts]
    changes: str = ""                              # what changed on disk meanwhile

    @property
    def exact(self):
        return bool(self.handles) and all(h.alive == h.should_live for h in self.handles)


# -- the main scenario --------------------------------------------------------------------------
MAIN_NOTES = [("Trabajo", "t1.md", "n-t1"), ("Trabajo/sub", "t2.md", "n-t2"),
              ("Personal", "p1.md", "n-p1"), ("Personal/sub", "p2.md", "n-p2")]
MAIN_CHANGE = "tras quitar la root Personal (quedó solo Trabajo)"


def main_scenario(lab):
    """Trabajo + Personal, four handles, then Personal is removed. Played once; raises what
    ended it (Broken, or the Abort of a submission that cannot run) in the main test."""
    return lab.once(("ejercicio4", "main"), lambda: play_main(lab))


def play_main(lab):
    played = play(lab, MAIN_NOTES, ["Trabajo", "Personal"], [["Trabajo"]], {"n-t1", "n-t2"})
    return RemovalFacts(played.handles, played.changes)


def require_main(lab, grade):
    """Gate: the main scenario came out exact. Its cause is reported once, by the main test;
    here only that it is needed (grading.NEEDS)."""
    try:
        facts = main_scenario(lab)
    except (Broken, Abort):
        raise Abort("", gate=MAIN) from None
    grade.require(facts.exact, "", gate=MAIN)
    return facts
