"""Exercise 2 (`notes_archive`): the scenarios its public and hidden tests share.

The positive scenario decides whether anything of the exercise counts: two notes titled
"Informe TPS" in two roots (Notes and Otros), the user picks the one in Otros, accepts and
confirms; that note, and only it, must end up intact in Otros/.archive/, and the form must have
come before anything changed on disk. It is played once per submission and revision (its facts
are an `ArchiveFacts` in the submission state) and every other exercise-2 test requires it, so a
tool that asks and never acts, or acts without asking, scores nothing: the tests of what must
NOT happen (decline, cancel, `confirm: false`, a bad answer...) only count once the tool is
seen doing what it should.

Titles here are exact ("Informe TPS"); one public test checks that titles match ignoring case
and surrounding spaces, as the statement says.
"""

from grader.checks.grading import Broken, short
from grader.checks.notes_tree import describe_changes
from grader.state import ArchiveFacts

TOOL = "notes_archive"
TITLE = "Informe TPS"                      # both matches, exactly
TWO_IDS = ("n-inf-a", "n-inf-b")
ONE_TITLE, ONE_ID = "Lista de la compra", "n-compra"
CHOSEN, CHOSEN_FILE, CHOSEN_ROOT = "n-inf-b", "Otros/informe-b.md", "Otros"
CHOSEN_TARGET = "Otros/.archive/informe-b.md"
POSITIVE = ("con varias coincidencias ofrece exactamente esas notas y archiva solo la elegida, "
            "en la .archive de su root")


def notes(lab, *extra):
    return lab.folders(("Notes", "informe-a.md", "n-inf-a", TITLE),
                       ("Otros", "informe-b.md", "n-inf-b", TITLE),
                       ("Notes", "compra.md", ONE_ID, ONE_TITLE),
                       ("Notes-evil", "secreto.md", "n-secreto", "Plan secreto"), *extra)


def roots(tree, folders=("Notes", "Otros")):
    return [tree.uri(folder) for folder in folders]


def accept(note_id, confirm=True):
    return {"action": "accept", "content": {"note_id": note_id, "confirm": confirm}}


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


def listed_ids(run):
    call = run.call("notes_list")
    return frozenset(n.get("id") for n in call.structured.get("notes", []) if isinstance(n, dict))


# -- the positive scenario ------------------------------------------------------------------------
def positive(lab, revision):
    """The positive scenario's facts in `revision` (played once per submission)."""
    memo = lab.state.archive_shown
    if revision not in memo:
        try:
            memo[revision] = play_positive(lab, revision)
        except Broken as exc:
            memo[revision] = exc
    if isinstance(memo[revision], Broken):
        raise memo[revision]
    return memo[revision]


def play_positive(lab, revision):
    lab.require_tool(TOOL)
    tree = notes(lab)
    before = tree.snapshot()
    seen = {}

    def user(params):  # the form has arrived: has anything changed on disk already?
        if "at_question" not in seen:
            try:
                seen["at_question"] = tree.snapshot()
            except Broken as exc:
                seen["broken"] = exc
        return accept(CHOSEN)

    run = lab.shared_server(revision, roots=roots(tree), answers=[user])
    call = run.call(TOOL, {"title": TITLE})
    if "broken" in seen:
        raise seen["broken"]
    after = tree.snapshot()
    facts = ArchiveFacts(asked=bool(call.forms()), prompts=len(call.prompts),
                         reply=short(call.text(), 200), is_error=call.is_error)
    facts.changed_before_asking = describe_changes(before, seen["at_question"]) \
        if "at_question" in seen else ""
    if call.forms():
        facts.offered = offered(call.forms()[0])
    content = before[CHOSEN_FILE][0]
    facts.moved = CHOSEN_FILE not in after and after.get(CHOSEN_TARGET, ("",))[0] == content
    facts.landed = next((path for path, (digest, _) in sorted(after.items())
                         if digest == content), "")
    expected = {k: v for k, v in before.items() if k != CHOSEN_FILE}
    rest = {k: v for k, v in after.items() if k != CHOSEN_TARGET}
    facts.other_changes = describe_changes(expected, rest)
    facts.changes = describe_changes(before, after)
    facts.listed = listed_ids(run)
    return facts


def why_not_shown(facts):
    """One Spanish sentence: why the positive scenario did not show the behaviour."""
    asked = f"notes_archive({{'title': {TITLE!r}}}), con dos notas con ese título en dos roots,"
    if not facts.asked:
        done = f" y aun así cambió el disco ({facts.changes})" if facts.changes else ""
        return (f"{asked} no envió ningún formulario{done} (respondió: {facts.reply}); sin "
                "preguntar antes no cuenta nada de este ejercicio")
    if facts.changed_before_asking:
        return (f"{asked} cambió el disco antes de preguntar ({facts.changed_before_asking}): "
                "hay que preguntar antes de tocar nada")
    if facts.landed == CHOSEN_FILE:
        return (f"tras elegir {CHOSEN} (en la root {CHOSEN_ROOT}) con accept y confirm: true, "
                f"la nota siguió en {CHOSEN_FILE} (respondió: {facts.reply})")
    if not facts.landed:
        return (f"tras elegir {CHOSEN} con accept y confirm: true, {CHOSEN_FILE} desapareció sin "
                f"llegar a {CHOSEN_TARGET} (¿la borraste en vez de moverla?)")
    return (f"tras elegir {CHOSEN} con accept y confirm: true, la nota acabó en {facts.landed} y "
            f"no en {CHOSEN_TARGET}, la carpeta .archive de su root ({CHOSEN_ROOT})")


def require_positive(lab, grade, revision):
    """Gate: the positive scenario showed the behaviour (asked first, then archived)."""
    facts = positive(lab, revision)
    grade.require(facts.shown, why_not_shown(facts), gate=POSITIVE)
    return facts


def start(lab, grade, revision, tree, *answers, folders=("Notes", "Otros")):
    """The shared server pointed at `tree` (its `folders` are the roots), once the positive
    scenario is shown."""
    require_positive(lab, grade, revision)
    return lab.shared_server(revision, roots=roots(tree, folders), answers=answers)


def asked(grade, call, title):
    grade.require(call.forms(), f"notes_archive({{'title': {title!r}}}) no envió ningún "
                  f"formulario de confirmación (respondió: {short(call.text(), 200)})")


def unchanged(grade, tree, before, what):
    changes = describe_changes(before, tree.snapshot())
    grade.check(not changes, f"{what}: ningún archivo cambia" if not changes else
                f"{what} cambió el disco ({changes}), y no debía tocar nada")
