"""Exercise 2 (`notes_archive`): the scenarios its public and hidden tests share.

The positive scenario decides whether anything of the exercise counts: two notes titled
"Informe TPS" in two roots (Notas and Otros), the user picks the one in Otros, accepts and
confirms; that note, and only it, must end up intact in Otros/.archive/, and the form must have
come before any note changed on disk. It is played once per submission and revision (its facts
are an `ArchiveFacts` in the submission state) and every other exercise-2 test requires it, so a
tool that asks and never acts, or acts without asking, scores nothing: the tests of what must
NOT happen (decline, cancel, `confirm: false`, a bad answer...) only count once the tool is
seen doing what it should. When it is not shown, the positive test says why, once; the others
say only that they need it (grading.NEEDS).

A tool that behaved once and then never acted again would pass every test of what must not
happen; so each of them (`must_not=True`) ends on its own server with the legitimate action
(`still_archives`: the user picks a note, accepts and confirms; it must land in its root's
.archive/), without which it scores 0. Every test starts its own server: nothing a tool keeps
in memory outlives its test.

One cause, one test: what the form looks like is graded once (the positive scenario's form),
folders made before the answer once, a refusal once per kind; other tests observe their own
behaviour without depending on the form's shape, so a free-text `note_id` costs the form test
and nothing else.

Severity (grader/README.md, *Points follow severity*): the checks that see the tool act
without or against the user's decision (no question, decline, cancel, `confirm` not true, an
answer that does not fit, a note nobody chose, an archived note overwritten) or touch what is
outside the roots (a note offered from outside, a note whose root stopped being shared, or
whose folder was swapped for a link, while the form was open) are `severe=True`.

Titles here are exact ("Informe TPS"); one public test checks that titles match ignoring case
and surrounding spaces, as the statement says, and only whole titles.

What changed on disk is told apart by content: a note that did not move is not "another note
that changed", and the chosen note in the wrong place is said as that (`changes_besides`).
"""

import json
from dataclasses import dataclass

from grader.checks.grading import Abort, Broken, short
from grader.checks.notes_tree import describe_changes
from shared.protocol import STATELESS_VERSION

TOOL = "notes_archive"
TITLE = "Informe TPS"                      # both matches, exactly
TWO_IDS = ("n-inf-a", "n-inf-b")
ONE_TITLE, ONE_ID = "Lista de la compra", "n-compra"
EVIL_ID = "n-inf-evil"
CHOSEN, CHOSEN_FILE, CHOSEN_ROOT = "n-inf-b", "Otros/informe-b.md", "Otros"
CHOSEN_TARGET = "Otros/.archive/informe-b.md"
POSITIVE = ("con varias coincidencias ofrece exactamente esas notas y archiva solo la elegida, "
            "en la .archive de su root")
ONE_MATCH = "anuncia notes_archive como destructiva y pide confirmación con una sola coincidencia"
SEVERE_DECISION = "no actuar sin la decisión del usuario, ni contra ella"
SEVERE_ROOTS = "no tocar ni enseñar nada de fuera de las roots"


def notes(lab, *extra):
    return lab.folders(("Notas", "informe-a.md", "n-inf-a", TITLE),
                       ("Otros", "informe-b.md", "n-inf-b", TITLE),
                       ("Notas", "compra.md", ONE_ID, ONE_TITLE),
                       ("Notas-privadas", "secreto.md", "n-secreto", "Plan secreto"), *extra)


def roots(tree, folders=("Notas", "Otros")):
    return [tree.uri(folder) for folder in folders]


def accept(note_id, confirm=True):
    return {"action": "accept", "content": {"note_id": note_id, "confirm": confirm}}


def called(title):
    return f"notes_archive con el título «{title}»"


def offered(prompt):
    """The note ids a form offers in `note_id`, or None when it is not a single-select."""
    schema = prompt.get("requestedSchema") if isinstance(prompt, dict) else None
    prop = (schema or {}).get("properties", {}).get("note_id") if isinstance(schema, dict) \
        else None
    if not isinstance(prop, dict) or prop.get("type") != "string":
        return None
    values = [o.get("const") for o in prop.get("oneOf", []) if isinstance(o, dict)]
    values += list(prop.get("enum", [])) if isinstance(prop.get("enum"), list) else []
    return sorted(values, key=str) if values else None


def mentions(prompt, text):
    """Does `text` appear anywhere in the question (its message, titles, options)?"""
    try:
        return text in json.dumps(prompt, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return False


def listed_ids(run):
    call = run.call("notes_list")
    return frozenset(n.get("id") for n in call.structured.get("notes", []) if isinstance(n, dict))


def folders_of(tree):
    """(files, folders) of the tree now: an empty folder is seen too."""
    folders = set()
    return tree.snapshot(folders=folders), folders


def new_folders(before, after):
    """Spanish list of the folders in `after` that were not in `before` ('' when none)."""
    return ", ".join(f"{folder}/" for folder in sorted(set(after) - set(before)))


def changes_besides(before, after, path):
    """What changed on disk to notes other than the one at `path` in `before` (Spanish, ''
    when nothing): that note is left out wherever it is now (its content tells it), so a note
    that did not move, or went to the wrong place, is never said to be another note."""
    content = before[path][0]
    return describe_changes({k: v for k, v in before.items() if v[0] != content},
                            {k: v for k, v in after.items() if v[0] != content})


def moved_from(before, after, path):
    """What happened to the note at `path` (Spanish, '' when it is still there, intact): where
    its content went, or that it is gone."""
    if after.get(path) == before[path]:
        return ""
    went = next((k for k, v in sorted(after.items()) if v[0] == before[path][0]), "")
    return f"{path} pasó a {went}" if went and went != path else \
        f"{path} cambió" if went else f"{path} desapareció"


def archived_path(path):
    """Where a note at `path` ("Otros/2023/x.md") lands: the .archive/ of its root."""
    root, _, rest = path.partition("/")
    return f"{root}/.archive/{rest.rpartition('/')[2]}"


def share(run, tree, folders):
    """The user now shares `folders` of `tree` (between two calls): at 2025-11-25 the client
    says its roots changed and the server asks them again; at 2026-07-28 each request asks."""
    if run.revision == STATELESS_VERSION:
        run.client.roots = roots(tree, folders)
    else:
        run.set_roots(roots(tree, folders))


LEGIT = ((CHOSEN, TITLE), ("n-inf-a", TITLE), (ONE_ID, ONE_TITLE))  # still_archives' choices


def still_archives(grade, run, tree, *choices):
    """The legitimate action that ends a must-not test (grading.Grade.still_works): on the same
    server the user picks a note, accepts and confirms, and it must land, intact, in its root's
    .archive/. The note is the first of `choices` ((note id, title) pairs; by default `LEGIT`)
    still in its place with its archive name free: what a mistake of the test's own moved is
    that test's to report, never a reason for this action to fail."""
    before = tree.snapshot()
    free = [(note, title) for note, title in choices or LEGIT
            if tree.ids[note] in before and archived_path(tree.ids[note]) not in before]
    if not free:
        return grade.still_works(False, "después, en el mismo servidor, ya no quedaba ninguna "
                                 "nota con la que comprobar que archivar sigue funcionando")
    note, title = free[0]
    path = tree.ids[note]
    target = archived_path(path)
    run.answer_with(accept(note))
    call = run.call(TOOL, {"title": title})
    after = tree.snapshot()
    moved = path not in after and after.get(target, (None,))[0] == before[path][0]
    if moved and not call.forms():  # nobody chose it: that is no legitimate archive
        grade.check(False, "después, en el mismo servidor, " + (
            "" if grade.hidden else f"{called(title)} ") + "archivó una nota sin preguntar",
            severe=grade.severe is not None)
        moved = False
    if grade.hidden:  # nothing of this test's notes, titles or folders
        return grade.still_works(moved, "después, en el mismo servidor, archivar una nota "
                                 "elegida con accept y confirm verdadero " +
                                 ("funcionó" if moved else "no la llevó a la .archive de su "
                                  "root"))
    said = f"después, en el mismo servidor, {called(title)}: el usuario eligió {note} con " \
           "accept y confirm verdadero"
    return grade.still_works(moved, f"{said} y la nota pasó a {target}" if moved else
                             f"{said}, y la nota no llegó a {target} (respondió: "
                             f"{short(call.text(), 160)}; en disco: "
                             f"{describe_changes(before, after) or 'nada cambió'})")


@dataclass
class ArchiveFacts:
    """Exercise 2's positive scenario in one revision: two notes titled alike in two roots, the
    user picks the one in the second root, accepts and confirms."""
    asked: bool = False               # a form arrived during the call
    changed_before_asking: str = ""   # which notes had changed on disk when the form arrived
    folders_before_asking: str = ""   # folders that had appeared by then (an empty .archive/)
    form: dict | None = None          # the first form's params (as the server sent them)
    offered: list | None = None       # the note ids the first form offered
    prompts: int = 0                  # questions asked during the call
    moved: bool = False               # the chosen note, intact, is now in its root's .archive/
    landed: str = ""                  # where the chosen note's content is now ("" if nowhere)
    other_changes: str = ""           # any change besides the expected move
    changes: str = ""                 # every change the call made
    listed: frozenset = frozenset()   # note ids notes_list shows afterwards
    tool: dict | None = None          # what tools/list says of notes_archive
    reply: str = ""                   # what the tool answered (escaped, short)
    is_error: bool = False

    @property
    def shown(self):
        return self.asked and not self.changed_before_asking and self.moved


# -- the positive scenario ------------------------------------------------------------------------
def positive(lab, revision):
    """The positive scenario's facts in `revision` (played once per submission). Raises what
    ended it (the tool is missing: Abort; the server broke: Broken)."""
    return lab.once(("ejercicio2", revision), lambda: play_positive(lab, revision))


def play_positive(lab, revision):
    lab.require_tool(TOOL)
    tree = notes(lab)
    before, folders_before = folders_of(tree)
    seen = {}

    def user(params):  # the form has arrived: has anything changed on disk already?
        if "at_question" not in seen:
            try:
                seen["at_question"] = folders_of(tree)
            except Broken as exc:
                seen["broken"] = exc
        return accept(CHOSEN)

    run = lab.server(revision, roots=roots(tree), answers=[user])
    call = run.call(TOOL, {"title": TITLE})
    if "broken" in seen:
        raise seen["broken"]
    after = tree.snapshot()
    facts = ArchiveFacts(asked=bool(call.forms()), prompts=len(call.prompts),
                         reply=short(call.text(), 200), is_error=call.is_error)
    if "at_question" in seen:
        files_then, folders_then = seen["at_question"]
        facts.changed_before_asking = describe_changes(before, files_then)
        facts.folders_before_asking = new_folders(folders_before, folders_then)
    if call.forms():
        facts.form = call.forms()[0]
        facts.offered = offered(facts.form)
    content = before[CHOSEN_FILE][0]
    facts.moved = CHOSEN_FILE not in after and after.get(CHOSEN_TARGET, ("",))[0] == content
    facts.landed = next((path for path, (digest, _) in sorted(after.items())
                         if digest == content), "")
    facts.other_changes = changes_besides(before, after, CHOSEN_FILE)
    facts.changes = describe_changes(before, after)
    facts.listed = listed_ids(run)
    facts.tool = run.tools().get(TOOL)
    return facts


def why_not_shown(facts):
    """One Spanish sentence: why the positive scenario did not show the behaviour."""
    asked = f"{called(TITLE)}, con dos notas con ese título en dos roots,"
    if not facts.asked:
        done = f" y aun así cambió el disco ({facts.changes})" if facts.changes else ""
        return (f"{asked} no envió ningún formulario{done} (respondió: {facts.reply}); sin "
                "preguntar antes no cuenta nada de este ejercicio")
    if facts.changed_before_asking:
        return (f"{asked} cambió el disco antes de preguntar ({facts.changed_before_asking}): "
                "hay que preguntar antes de tocar nada")
    if facts.landed == CHOSEN_FILE:
        return (f"tras elegir {CHOSEN} (en la root {CHOSEN_ROOT}) con accept y confirm "
                f"verdadero, la nota siguió en {CHOSEN_FILE} (respondió: {facts.reply})")
    if not facts.landed:
        return (f"tras elegir {CHOSEN} con accept y confirm verdadero, {CHOSEN_FILE} "
                f"desapareció sin llegar a {CHOSEN_TARGET} (¿la borraste en vez de moverla?)")
    return (f"tras elegir {CHOSEN} con accept y confirm verdadero, la nota acabó en "
            f"{facts.landed} y no en {CHOSEN_TARGET}, la carpeta .archive de su root "
            f"({CHOSEN_ROOT})")


def acted_without_asking(grade, facts):
    """Severe: notes changed with no question, or before it (the positive test's check)."""
    if not facts.asked and facts.changes:
        grade.check(False, f"{called(TITLE)} cambió notas sin preguntar ({facts.changes})",
                    severe=True)
    elif facts.changed_before_asking:
        grade.check(False, f"{called(TITLE)} cambió notas antes de preguntar "
                    f"({facts.changed_before_asking})", severe=True)


def require_positive(lab, grade, revision):
    """Gate: the positive scenario showed the behaviour (asked first, then archived). Its
    cause is reported once, by the positive test; here only that it is needed."""
    try:
        facts = positive(lab, revision)
    except (Broken, Abort):
        raise Abort("", gate=POSITIVE) from None
    grade.require(facts.shown, "", gate=POSITIVE)
    return facts


def start(lab, grade, revision, tree, *answers, folders=("Notas", "Otros")):
    """This test's server on `tree` (its `folders` are the roots), once the positive scenario
    is shown; its scripted user plays `answers` (then `still_archives` its own)."""
    require_positive(lab, grade, revision)
    return lab.server(revision, roots=roots(tree, folders), answers=answers)


def asked(grade, call, title, tree=None, before=None, gate=None):
    """Gate: the call asked. When it did not and `tree` changed since `before`, that is the
    severe mistake of acting without asking (the test must be declared severe)."""
    if call.forms():
        return
    if tree is not None:
        changes = describe_changes(before, tree.snapshot())
        if changes:
            grade.check(False, f"{called(title)} cambió notas sin preguntar ({changes})",
                        severe=True)
    grade.require(False, f"{called(title)} no envió ningún formulario de confirmación "
                  f"(respondió: {short(call.text(), 200)})", gate=gate)


def unchanged(grade, tree, before, what, severe=False):
    changes = describe_changes(before, tree.snapshot())
    grade.check(not changes, f"{what}: ningún archivo cambia" if not changes else
                f"{what} cambió el disco ({changes}), y no debía tocar nada", severe=severe)


class During:
    """What a scripted user does while the form is open (change the roots, swap a folder),
    then its answer. Something that broke meanwhile is raised after the call (`check`)."""

    def __init__(self, action, answer):
        self.action, self.answer, self.broken, self.done = action, answer, None, False

    def __call__(self, params):
        if not self.done:
            self.done = True
            try:
                self.action()
            except Broken as exc:
                self.broken = exc
        return self.answer

    def check(self):
        if self.broken is not None:
            raise self.broken
