"""Exercise 2: `notes_archive` asks once, archives only the chosen note on a real yes.

Every test runs under both protocol revisions. The notes: two titled "Informe TPS" in two
different roots (Notes and Otros), one "Lista de la compra", and a sibling folder
"Notes-evil" that is never a root.
"""

import pytest

import elicitation
from grader.checks.harness import REVISIONS, describe_changes, short
from grader.checks.plugin import graded

TOOL = "notes_archive"
ONE_TITLE, ONE_ID = "Lista de la compra", "n-compra"
TWO_TITLE, TWO_IDS = "  INFORME tps ", ("n-inf-a", "n-inf-b")


def notes(lab, *extra):
    return lab.folders(("Notes", "informe-a.md", "n-inf-a", "Informe TPS"),
                       ("Otros", "informe-b.md", "n-inf-b", "informe TPS"),
                       ("Notes", "compra.md", ONE_ID, ONE_TITLE),
                       ("Notes-evil", "secreto.md", "n-secreto", "Plan secreto"), *extra)


def start(lab, revision, tree, *answers):
    lab.require_tool(TOOL)
    return lab.shared_server(revision, roots=[tree.uri("Notes"), tree.uri("Otros")],
                             answers=answers)


def accept(note_id, confirm=True):
    return {"action": "accept", "content": {"note_id": note_id, "confirm": confirm}}


def asked(grade, call, title):
    grade.require(call.forms(), f"notes_archive({{'title': {title!r}}}) no envió ningún "
                  f"formulario de confirmación (respondió: {short(call.text())})")


def offered(prompt):
    """The note ids a form offers in `note_id`, or None when it is not a single-select."""
    schema = prompt.get("requestedSchema") if isinstance(prompt, dict) else None
    prop = (schema or {}).get("properties", {}).get("note_id") if isinstance(schema, dict) \
        else None
    if not isinstance(prop, dict) or prop.get("type") != "string":
        return None
    values = [o.get("const") for o in prop.get("oneOf", []) if isinstance(o, dict)]
    values += list(prop.get("enum", []))
    return sorted(values) if values else None


def unchanged(grade, tree, before, what):
    changes = describe_changes(before, tree.snapshot())
    grade.check(not changes, f"{what}: ningún archivo cambia", got=changes or None,
                expected="las notas tal como estaban")


def listed_ids(run):
    call = run.call("notes_list")
    return {n.get("id") for n in call.structured.get("notes", []) if isinstance(n, dict)}


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "anuncia notes_archive como destructiva y pide confirmación con una "
        "sola coincidencia")
def test_asks_to_confirm_even_with_one_match(lab, grade, revision):
    tree = notes(lab)
    run = start(lab, revision, tree, {"action": "cancel"})
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
    unchanged(grade, tree, before, "tras cancelar")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "archiva la única coincidencia tras accept con confirm: true")
def test_archives_single_match_after_confirmation(lab, grade, revision):
    tree = notes(lab)
    run = start(lab, revision, tree, accept(ONE_ID))
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
    grade.check(ONE_ID not in listed_ids(run), "notes_list ya no la muestra",
                expected=f"{ONE_ID} fuera de notes_list", got="sigue en la lista")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 2, "con varias coincidencias ofrece exactamente esas notas y archiva "
        "solo la elegida, en la .archive de su root")
def test_archives_only_the_chosen_note(lab, grade, revision):
    tree = notes(lab)
    run = start(lab, revision, tree, accept("n-inf-b"))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TWO_TITLE})
    asked(grade, call, TWO_TITLE)
    grade.check(len(call.prompts) == 1 and offered(call.forms()[0]) == sorted(TWO_IDS),
                "una sola elicitación que ofrece exactamente las dos notas con ese título "
                "(sin distinguir mayúsculas ni espacios)",
                got=[offered(p) for p in call.prompts], expected=[sorted(TWO_IDS)])
    after = tree.snapshot()
    grade.check(not call.is_error, "la llamada termina sin error", got=call.text(),
                expected="isError: false")
    moved = after.get("Otros/.archive/informe-b.md")
    grade.check("Otros/informe-b.md" not in after and moved is not None
                and moved[0] == before["Otros/informe-b.md"][0],
                "la nota elegida (n-inf-b, en la root Otros) pasa a Otros/.archive/informe-b.md",
                got=describe_changes(before, after) or "nada cambió",
                expected="Otros/informe-b.md movida a Otros/.archive/")
    grade.check(after.get("Notes/informe-a.md") == before["Notes/informe-a.md"],
                "la otra coincidencia (n-inf-a) sigue intacta en su sitio",
                got=describe_changes(before, after), expected="Notes/informe-a.md sin cambios")
    listed = listed_ids(run)
    grade.check("n-inf-b" not in listed and "n-inf-a" in listed,
                "notes_list muestra n-inf-a y ya no n-inf-b", got=sorted(listed),
                expected="n-inf-a sí, n-inf-b no")


def refused(lab, grade, revision, answer, what):
    tree = notes(lab)
    run = start(lab, revision, tree, answer)
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TWO_TITLE})
    asked(grade, call, TWO_TITLE)
    unchanged(grade, tree, before, what)


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "no archiva nada si el usuario rechaza (decline)")
def test_decline_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, {"action": "decline"}, "tras decline")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "no archiva nada si el usuario cancela (cancel)")
def test_cancel_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, {"action": "cancel"}, "tras cancel")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "no archiva nada con accept y confirm: false")
def test_unconfirmed_accept_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, accept("n-inf-a", confirm=False),
            "tras accept con confirm: false")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "no archiva nada si la respuesta no encaja (id desconocido, tipo "
        "equivocado)")
def test_answer_that_does_not_fit_archives_nothing(lab, grade, revision):
    tree = notes(lab)
    run = start(lab, revision, tree, accept("n-inventada"), accept("n-inf-a", confirm="sí"))
    before = tree.snapshot()
    for answer in ("note_id: 'n-inventada'", "confirm: 'sí' (texto, no boolean)"):
        call = run.call(TOOL, {"title": TWO_TITLE})
        asked(grade, call, TWO_TITLE)
        unchanged(grade, tree, before, f"tras accept con {answer}")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "rechaza sin preguntar los títulos que no están dentro de las roots")
def test_titles_outside_the_roots_are_refused_without_asking(lab, grade, revision):
    tree = notes(lab, ("Notes-evil", "informe-evil.md", "n-inf-evil", "Informe TPS"))
    run = start(lab, revision, tree, {"action": "cancel"})
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TWO_TITLE})
    asked(grade, call, TWO_TITLE)
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
    unchanged(grade, tree, before, "tras las tres llamadas")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "pregunta una sola vez por llamada (nunca vuelve a preguntar)")
def test_asks_only_once_per_call(lab, grade, revision):
    tree = notes(lab)
    run = start(lab, revision, tree, {"action": "decline"}, accept("n-inf-a", confirm=False))
    for answer in ("decline", "accept con confirm: false"):
        call = run.call(TOOL, {"title": TWO_TITLE})
        if answer == "decline":
            asked(grade, call, TWO_TITLE)
        grade.check(len(call.prompts) == 1, f"tras {answer}: exactamente una elicitación",
                    got=f"{len(call.prompts)} elicitaciones", expected="1")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio2", 1, "archivar es un solo movimiento que no pierde ninguna nota")
def test_archiving_moves_the_file_and_never_overwrites(lab, grade, revision):
    tree = notes(lab, ("Otros/.archive", "informe-b.md", "n-viejo", "Informe viejo"))
    run = start(lab, revision, tree, accept("n-inf-a"), accept("n-inf-b"))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TWO_TITLE})
    asked(grade, call, TWO_TITLE)
    after = tree.snapshot()
    moved = after.get("Notes/.archive/informe-a.md")
    grade.require(moved is not None, "tras accept con confirm: true, n-inf-a no llegó a "
                  "Notes/.archive/informe-a.md")
    grade.check(moved == before["Notes/informe-a.md"],
                "la nota se mueve (mismo archivo, mismo inodo), no se copia y se borra",
                got=f"inodo {moved[1]}", expected=f"inodo {before['Notes/informe-a.md'][1]}")
    call = run.call(TOOL, {"title": TWO_TITLE})
    final = tree.snapshot()
    grade.check(final.get("Otros/.archive/informe-b.md") == before["Otros/.archive/informe-b.md"]
                and final.get("Otros/informe-b.md") == before["Otros/informe-b.md"],
                "si en .archive ya hay un archivo con ese nombre, no se sobrescribe: las dos "
                "notas siguen intactas", got=describe_changes(after, final) or "nada cambió",
                expected="Otros/informe-b.md y Otros/.archive/informe-b.md sin cambios")
