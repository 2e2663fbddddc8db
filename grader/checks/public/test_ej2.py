"""Exercise 2, public tests: `notes_archive` asks once, archives only the chosen note on a real yes.

Every test runs under both protocol revisions and, except the positive scenario's own test,
first requires that scenario (grader/checks/ej2.py): a tool that never archives, or archives
without asking, scores nothing here. The notes: "Informe TPS" in the roots Notes and Otros,
"Lista de la compra" in Notes, and a sibling folder "Notes-evil" that is never a root.
"""

import elicitation
from grader.checks import ej2
from grader.checks.ej2 import ONE_ID, ONE_TITLE, TITLE, TOOL, TWO_IDS, accept, asked, offered
from grader.checks.grading import REVISIONS, graded, short
from grader.checks.notes_tree import describe_changes


@graded("ejercicio2", 2, ej2.POSITIVE, revisions=REVISIONS)
def test_archives_only_the_chosen_note(lab, grade, revision):
    facts = ej2.positive(lab, revision)
    grade.require(facts.shown, ej2.why_not_shown(facts))
    grade.check(facts.prompts == 1 and facts.offered == sorted(TWO_IDS),
                "una sola elicitación que ofrece exactamente las dos notas con ese título" if
                facts.prompts == 1 and facts.offered == sorted(TWO_IDS) else
                f"se esperaba una sola elicitación que ofreciera exactamente {sorted(TWO_IDS)} "
                f"(las dos notas «{TITLE}» de las roots) y hubo {facts.prompts}, la primera con "
                f"{facts.offered}")
    grade.check(not facts.other_changes, "ninguna otra nota cambia (n-inf-a sigue en Notes/)"
                if not facts.other_changes else
                f"además de archivar n-inf-b cambió esto: {facts.other_changes}")
    shows = "n-inf-b" not in facts.listed and "n-inf-a" in facts.listed
    grade.check(shows, "notes_list muestra n-inf-a y ya no n-inf-b" if shows else
                f"después, notes_list mostraba {sorted(facts.listed, key=str)}: se esperaba "
                "n-inf-a sí y n-inf-b no")


@graded("ejercicio2", 1, "anuncia notes_archive como destructiva y pide confirmación con una "
        "sola coincidencia", revisions=REVISIONS)
def test_asks_to_confirm_even_with_one_match(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, {"action": "cancel"})
    before = tree.snapshot()
    call = run.call(TOOL, {"title": ONE_TITLE})
    asked(grade, call, ONE_TITLE)
    tool = run.tools().get(TOOL, {})
    annotations = tool.get("annotations") or {}
    grade.check(annotations.get("destructiveHint") is True
                and annotations.get("readOnlyHint") is False,
                "tools/list anuncia destructiveHint: true y readOnlyHint: false",
                got=annotations, expected="{'destructiveHint': True, 'readOnlyHint': False}")
    schema = tool.get("inputSchema") or {}
    grade.check(((schema.get("properties") or {}).get("title") or {}).get("type") == "string"
                and "title" in (schema.get("required") or []),
                "inputSchema pide 'title' (string, obligatorio)", got=schema,
                expected="title: string en properties y en required")
    form = call.forms()[0]
    required = (form.get("requestedSchema") or {}).get("required") or []
    props = (form.get("requestedSchema") or {}).get("properties") or {}
    grade.check(offered(form) == [ONE_ID], "note_id es una selección única con la nota "
                "que coincide", got=props.get("note_id"), expected=f"opciones exactamente "
                f"[{ONE_ID!r}]")
    grade.check((props.get("confirm") or {}).get("type") == "boolean"
                and {"note_id", "confirm"} <= set(required),
                "confirm es boolean y note_id y confirm son obligatorios",
                got={"confirm": props.get("confirm"), "required": required},
                expected="confirm: boolean; required: ['note_id', 'confirm']")
    try:
        elicitation.check_schema(form.get("message"), form.get("requestedSchema"), revision)
        problem = None
    except elicitation.SchemaError as exc:
        problem = str(exc)
    grade.check(problem is None, "el formulario pasa el comprobador del servidor "
                "(elicitation.check_schema)", got=problem, expected="sin problemas")
    ej2.unchanged(grade, tree, before, "tras cancelar")


@graded("ejercicio2", 1, "archiva la única coincidencia tras accept con confirm: true",
        revisions=REVISIONS)
def test_archives_single_match_after_confirmation(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, accept(ONE_ID))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": ONE_TITLE})
    asked(grade, call, ONE_TITLE)
    after = tree.snapshot()
    moved = after.get("Notes/.archive/compra.md")
    grade.check(not call.is_error, "la llamada termina sin error", got=call.text(),
                expected="isError: false")
    grade.check("Notes/compra.md" not in after and moved is not None
                and moved[0] == before["Notes/compra.md"][0],
                "la nota pasa, intacta, a Notes/.archive/compra.md",
                got=describe_changes(before, after) or "nada cambió",
                expected="Notes/compra.md movida a Notes/.archive/compra.md")
    others = {k: v for k, v in before.items() if k != "Notes/compra.md"}
    rest = {k: v for k, v in after.items() if k != "Notes/.archive/compra.md"}
    grade.check(others == rest, "ninguna otra nota cambia",
                got=describe_changes(others, rest), expected="el resto igual")
    grade.check(ONE_ID not in ej2.listed_ids(run), "notes_list ya no la muestra",
                expected=f"{ONE_ID} fuera de notes_list", got="sigue en la lista")


@graded("ejercicio2", 1, "encuentra el título sin distinguir mayúsculas ni espacios alrededor",
        revisions=REVISIONS)
def test_titles_match_ignoring_case_and_surrounding_spaces(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, {"action": "cancel"})
    before = tree.snapshot()
    spelled = "  INFORME tps "
    call = run.call(TOOL, {"title": spelled})
    found = bool(call.forms()) and offered(call.forms()[0]) == sorted(TWO_IDS)
    grade.check(found, f"con el título {spelled!r} pregunta por las dos notas «{TITLE}»" if found
                else f"con el título {spelled!r} se esperaba un formulario con las dos notas "
                f"«{TITLE}» (los títulos coinciden sin distinguir mayúsculas ni espacios "
                "alrededor, como hace ctx.find_notes), y "
                + (f"ofreció {offered(call.forms()[0])}" if call.forms() else
                   f"no preguntó (respondió: {short(call.text(), 160)})"))
    ej2.unchanged(grade, tree, before, "tras cancelar")


def refused(lab, grade, revision, answer, what):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, answer)
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE)
    ej2.unchanged(grade, tree, before, what)


@graded("ejercicio2", 1, "no archiva nada si el usuario rechaza (decline)", revisions=REVISIONS)
def test_decline_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, {"action": "decline"}, "tras decline")


@graded("ejercicio2", 1, "no archiva nada si el usuario cancela (cancel)", revisions=REVISIONS)
def test_cancel_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, {"action": "cancel"}, "tras cancel")


@graded("ejercicio2", 1, "no archiva nada con accept y confirm: false", revisions=REVISIONS)
def test_unconfirmed_accept_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, accept("n-inf-a", confirm=False),
            "tras accept con confirm: false")


@graded("ejercicio2", 1, "no archiva nada si la respuesta no encaja (id desconocido, tipo "
        "equivocado)", revisions=REVISIONS)
def test_answer_that_does_not_fit_archives_nothing(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, accept("n-inventada"),
                    accept("n-inf-a", confirm="sí"))
    before = tree.snapshot()
    for answer in ("note_id: 'n-inventada'", "confirm: 'sí' (texto, no booleano)"):
        call = run.call(TOOL, {"title": TITLE})
        asked(grade, call, TITLE)
        ej2.unchanged(grade, tree, before, f"tras accept con {answer}")


@graded("ejercicio2", 1, "rechaza sin preguntar los títulos que no están dentro de las roots",
        revisions=REVISIONS)
def test_titles_outside_the_roots_are_refused_without_asking(lab, grade, revision):
    tree = ej2.notes(lab, ("Notes-evil", "informe-evil.md", "n-inf-evil", TITLE))
    run = ej2.start(lab, grade, revision, tree, {"action": "cancel"})
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE)
    grade.check(offered(call.forms()[0]) == sorted(TWO_IDS),
                "solo ofrece notas de dentro de las roots (Notes-evil no es una root)",
                got=offered(call.forms()[0]), expected=sorted(TWO_IDS))
    for title, where in (("Plan secreto", "solo existe en la carpeta hermana Notes-evil"),
                         ("No existe", "no existe en ningún sitio")):
        call = run.call(TOOL, {"title": title})
        grade.check(call.is_error and not call.prompts,
                    f"título {title!r} ({where}): isError true y ninguna elicitación",
                    got=f"isError={call.is_error}, {len(call.prompts)} elicitación(es), "
                        f"texto: {short(call.text(), 120)}",
                    expected="isError: true sin preguntar")
    ej2.unchanged(grade, tree, before, "tras las tres llamadas")


@graded("ejercicio2", 1, "pregunta una sola vez por llamada (nunca vuelve a preguntar)",
        revisions=REVISIONS)
def test_asks_only_once_per_call(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, {"action": "decline"},
                    accept("n-inf-a", confirm=False))
    for answer in ("decline", "accept con confirm: false"):
        call = run.call(TOOL, {"title": TITLE})
        if answer == "decline":
            asked(grade, call, TITLE)
        grade.check(len(call.prompts) == 1, f"tras {answer}: exactamente una elicitación",
                    got=f"{len(call.prompts)} elicitaciones", expected="1")


@graded("ejercicio2", 1, "archivar es un solo movimiento que no pierde ninguna nota",
        revisions=REVISIONS)
def test_archiving_moves_the_file_and_never_overwrites(lab, grade, revision):
    tree = ej2.notes(lab, ("Otros/.archive", "informe-b.md", "n-viejo", "Informe viejo"))
    run = ej2.start(lab, grade, revision, tree, accept("n-inf-a"), accept("n-inf-b"))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE)
    after = tree.snapshot()
    moved = after.get("Notes/.archive/informe-a.md")
    grade.require(moved is not None, "tras accept con confirm: true, n-inf-a no llegó a "
                  "Notes/.archive/informe-a.md")
    grade.check(moved == before["Notes/informe-a.md"],
                "la nota se mueve (mismo archivo, mismo inodo), no se copia y se borra",
                got=f"inodo {moved[1]}", expected=f"inodo {before['Notes/informe-a.md'][1]}")
    call = run.call(TOOL, {"title": TITLE})
    final = tree.snapshot()
    grade.check(final.get("Otros/.archive/informe-b.md") == before["Otros/.archive/informe-b.md"]
                and final.get("Otros/informe-b.md") == before["Otros/informe-b.md"],
                "si en .archive ya hay un archivo con ese nombre, no se sobrescribe: las dos "
                "notas siguen intactas", got=describe_changes(after, final) or "nada cambió",
                expected="Otros/informe-b.md y Otros/.archive/informe-b.md sin cambios")
