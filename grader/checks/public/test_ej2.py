"""Exercise 2, public tests: `notes_archive` asks once, archives only the chosen note on a real yes.

Every test runs under both protocol revisions (one under 2025-06-18, the revision `choice`'s
`protocol=` is for) and, except the positive scenario's own test, first requires that scenario
(grader/checks/ej2.py): a tool that never archives, or archives without asking, scores nothing
here. The notes: "Informe TPS" in the roots Notas and Otros, "Lista de la compra" in Notas,
and a sibling folder "Notas-privadas" that is never a root. Every test of what must not happen
(`must_not=True`) ends on its own server with a legitimate archive (`ej2.still_archives`).

Each behaviour is graded in one test, and a test observes its own behaviour without relying on
another's (the form's shape is the form test's, folders made early are the early-changes
test's), so one mistake is reported once. The severe checks (`severe=True`) are those of the
statement's «Lo imprescindible»: they leave the exercise with at most half of its points.
"""

import elicitation
from grader.checks import ej2
from grader.checks.ej2 import (
    CHOSEN,
    CHOSEN_FILE,
    EVIL_ID,
    ONE_ID,
    ONE_TITLE,
    SEVERE_DECISION,
    SEVERE_ROOTS,
    TITLE,
    TOOL,
    TWO_IDS,
    During,
    accept,
    asked,
    called,
    offered,
)
from grader.checks.grading import graded, short
from grader.checks.notes_tree import describe_changes
from shared.protocol import FORM_ONLY, LATEST_HANDSHAKE, REVISIONS


@graded("ejercicio2", 2, ej2.POSITIVE, revisions=REVISIONS, severe=SEVERE_DECISION)
def test_archives_only_the_chosen_note(lab, grade, revision):
    facts = ej2.positive(lab, revision)
    ej2.acted_without_asking(grade, facts)
    if facts.asked and not facts.changed_before_asking and not facts.moved \
            and facts.other_changes:
        grade.check(False, f"tras elegir {CHOSEN} cambió otra nota que nadie eligió "
                    f"({facts.other_changes})", severe=True)
    grade.require(facts.shown, ej2.why_not_shown(facts))
    grade.check(facts.prompts == 1, "una sola pregunta en la llamada" if facts.prompts == 1
                else f"se esperaba una sola pregunta en la llamada y hubo {facts.prompts}")
    grade.check(not facts.other_changes, "ninguna otra nota cambia (n-inf-a sigue en Notas/)"
                if not facts.other_changes else
                f"además de archivar la nota elegida ({CHOSEN}) cambió esto: "
                f"{facts.other_changes}; solo se archiva la nota que el usuario eligió",
                severe=True)
    shows = "n-inf-b" not in facts.listed and "n-inf-a" in facts.listed
    grade.check(shows, "notes_list muestra n-inf-a y ya no n-inf-b" if shows else
                f"después, notes_list mostraba {short(sorted(facts.listed, key=str))}: se "
                "esperaba n-inf-a sí y n-inf-b no")


def form_problems(form, ids, revision):
    """What is wrong with a confirmation form offering `ids` (Spanish), [] when nothing."""
    schema = form.get("requestedSchema") if isinstance(form.get("requestedSchema"), dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    problems = []
    choices = offered(form)
    if choices is None:
        problems.append("note_id no es una selección entre las notas que coinciden (un texto "
                        "libre obliga a escribir el id a mano y admite cualquier cosa): usa "
                        "choice(opciones, title=..., protocol=ctx.protocol_version)")
    elif choices != sorted(ids):
        problems.append(f"note_id ofrece {short(choices)} y debía ofrecer exactamente "
                        f"{short(sorted(ids))}, las notas que coinciden")
    confirm = props.get("confirm") if isinstance(props.get("confirm"), dict) else {}
    if confirm.get("type") != "boolean":
        problems.append("falta confirm como booleano (una casilla: sí o no)")
    missing = [name for name in ("note_id", "confirm") if name not in required]
    if missing:
        problems.append(f"{' y '.join(missing)} no está en required (ambos son obligatorios)")
    try:
        elicitation.check_schema(form.get("message"), form.get("requestedSchema"), revision)
    except elicitation.SchemaError as exc:
        problems.append(f"el comprobador del servidor lo rechaza: {short(str(exc), 200)}")
    return problems


@graded("ejercicio2", 1, "el formulario ofrece exactamente las notas que coinciden y pide "
        "confirm, ambos obligatorios", revisions=REVISIONS)
def test_the_form_offers_exactly_the_matching_notes(lab, grade, revision):
    facts = ej2.require_positive(lab, grade, revision)
    problems = form_problems(facts.form, TWO_IDS, revision)
    grade.check(not problems, "con dos coincidencias, el formulario ofrece esas dos notas en "
                "note_id y pide confirm; los dos son obligatorios" if not problems else
                "el formulario de la llamada con dos coincidencias: " + "; ".join(problems))


@graded("ejercicio2", 1, ej2.ONE_MATCH, revisions=REVISIONS, severe=SEVERE_DECISION,
        must_not=True)
def test_asks_to_confirm_even_with_one_match(lab, grade, revision):
    tree = ej2.notes(lab)
    before = tree.snapshot()
    seen = {}

    def user(params):
        try:
            seen["files"] = tree.snapshot()
        except Exception as exc:  # a Broken, raised after the call
            seen["broken"] = exc
        return {"action": "cancel"}

    run = ej2.start(lab, grade, revision, tree, user)
    call = run.call(TOOL, {"title": ONE_TITLE})
    if "broken" in seen:
        raise seen["broken"]
    asked(grade, call, ONE_TITLE, tree, before)
    changed = describe_changes(before, seen.get("files", before))
    grade.check(not changed, "con una sola coincidencia pregunta antes de tocar nada"
                if not changed else f"{called(ONE_TITLE)} cambió notas antes de preguntar "
                f"({changed})", severe=True)
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 1, "anuncia notes_archive como destructiva, con el título como entrada",
        revisions=REVISIONS)
def test_announces_a_destructive_tool_that_takes_a_title(lab, grade, revision):
    tool = ej2.require_positive(lab, grade, revision).tool or {}
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    grade.check(annotations.get("destructiveHint") is True
                and annotations.get("readOnlyHint") is False,
                "tools/list anuncia destructiveHint verdadero y readOnlyHint falso",
                got=annotations or "ninguna anotación",
                expected="destructiveHint: verdadero; readOnlyHint: falso")
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    title = properties.get("title") if isinstance(properties.get("title"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    grade.check(title.get("type") == "string" and "title" in required,
                "inputSchema pide title, un texto obligatorio", got=schema,
                expected="title de tipo string en properties y en required")


@graded("ejercicio2", 1, "archiva la única coincidencia tras accept con confirm verdadero",
        revisions=REVISIONS)
def test_archives_single_match_after_confirmation(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, accept(ONE_ID))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": ONE_TITLE})
    asked(grade, call, ONE_TITLE, gate=ej2.ONE_MATCH)
    after = tree.snapshot()
    moved = after.get("Notas/.archive/compra.md")
    grade.check(not call.is_error, "la llamada termina sin error", got=call.text(),
                expected="un resultado sin error")
    grade.check("Notas/compra.md" not in after and moved is not None
                and moved[0] == before["Notas/compra.md"][0],
                "la nota pasa, intacta, a Notas/.archive/compra.md",
                got=describe_changes(before, after) or "nada cambió",
                expected="Notas/compra.md movida a Notas/.archive/compra.md")
    others = ej2.changes_besides(before, after, "Notas/compra.md")
    grade.check(not others, "ninguna otra nota cambia", got=others, expected="el resto igual")
    grade.check(ONE_ID not in ej2.listed_ids(run), "notes_list ya no la muestra",
                expected=f"{ONE_ID} fuera de notes_list", got="sigue en la lista")


@graded("ejercicio2", 1, "encuentra el título entero sin distinguir mayúsculas ni espacios "
        "alrededor", revisions=REVISIONS)
def test_titles_match_ignoring_case_and_surrounding_spaces(lab, grade, revision):
    tree = ej2.notes(lab, ("Notas", "informe-anual.md", "n-inf-anual", f"{TITLE} anual"))
    run = ej2.start(lab, grade, revision, tree, {"action": "cancel"})
    spelled = "  INFORME tps "
    call = run.call(TOOL, {"title": spelled})
    choices = offered(call.forms()[0]) if call.forms() else None
    found = bool(call.forms()) and choices in (None, sorted(TWO_IDS))
    grade.check(found, f"con el título «{spelled}» pregunta por las dos notas «{TITLE}» (y no "
                f"por «{TITLE} anual»)" if found else
                f"con el título «{spelled}» se esperaba un formulario con las dos notas "
                f"«{TITLE}» y ninguna otra (los títulos coinciden enteros, sin distinguir "
                "mayúsculas ni espacios alrededor, como hace ctx.find_notes), y "
                + (f"ofreció {short(choices)}" if call.forms() else
                   f"no preguntó (respondió: {short(call.text(), 160)})"))
    run.answer_with({"action": "cancel"})
    part = "Informe"
    call = run.call(TOOL, {"title": part})
    whole = not call.prompts  # (that it ends with an error is the outside-the-roots test's)
    grade.check(whole, f"con el título «{part}», que solo es el principio de otros títulos, "
                "no pregunta por ninguna nota" if whole else
                f"con el título «{part}», que solo es el principio de «{TITLE}», preguntó por "
                f"{short(offered(call.forms()[0]) or 'una nota') if call.forms() else 'algo'}: "
                "ninguna nota se titula así (el título coincide entero, no una parte)")


def refused(lab, grade, revision, answer, what):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, answer)
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE, tree, before)
    ej2.unchanged(grade, tree, before, what, severe=True)
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 1, "no archiva nada si el usuario rechaza (decline)", revisions=REVISIONS,
        severe=SEVERE_DECISION, must_not=True)
def test_decline_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, {"action": "decline"}, "tras decline")


@graded("ejercicio2", 1, "no archiva nada si el usuario cancela (cancel)", revisions=REVISIONS,
        severe=SEVERE_DECISION, must_not=True)
def test_cancel_archives_nothing(lab, grade, revision):
    refused(lab, grade, revision, {"action": "cancel"}, "tras cancel")


@graded("ejercicio2", 1, "no archiva nada con accept y confirm falso o sin confirm",
        revisions=REVISIONS, severe=SEVERE_DECISION, must_not=True)
def test_unconfirmed_accept_archives_nothing(lab, grade, revision):
    # a confirm that is not true is a no, and so is an accept that does not carry it at all
    # (whatever the form said of it: a missing field is never a yes)
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, accept("n-inf-a", confirm=False),
                    {"action": "accept", "content": {"note_id": "n-inf-a"}})
    before = tree.snapshot()
    for what in ("tras accept con confirm falso", "tras accept sin confirm (un campo que falta "
                 "no es un sí)"):
        call = run.call(TOOL, {"title": TITLE})
        asked(grade, call, TITLE, tree, before)
        ej2.unchanged(grade, tree, before, what, severe=True)
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 1, "no archiva nada si la respuesta no encaja (id desconocido, tipo "
        "equivocado)", revisions=REVISIONS, severe=SEVERE_DECISION, must_not=True)
def test_answer_that_does_not_fit_archives_nothing(lab, grade, revision):
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, accept("n-inventada"),
                    accept("n-inf-a", confirm="sí"))
    before = tree.snapshot()
    for answer in ("note_id «n-inventada», que no se ofreció",
                   "confirm «sí» (un texto, no un booleano)"):
        call = run.call(TOOL, {"title": TITLE})
        asked(grade, call, TITLE, tree, before)
        ej2.unchanged(grade, tree, before, f"tras accept con {answer}", severe=True)
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 1, "solo busca dentro de las roots de ese momento: rechaza sin preguntar "
        "los títulos de fuera y no ofrece notas de una root que se dejó de compartir",
        revisions=REVISIONS, severe=SEVERE_ROOTS, must_not=True)
def test_titles_outside_the_roots_are_refused_without_asking(lab, grade, revision):
    tree = ej2.notes(lab, ("Notas-privadas", "informe-evil.md", EVIL_ID, TITLE),
                     ("Notas", "informe-c.md", "n-inf-c", TITLE))  # two still match in Notas
    run = ej2.start(lab, grade, revision, tree, {"action": "cancel"})
    outside = ("Notas-privadas/", "Otros/")
    before = {k: v for k, v in tree.snapshot().items() if k.startswith(outside)}
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE)
    leaked = ej2.mentions(call.forms()[0], EVIL_ID)
    grade.check(not leaked, "solo ofrece notas de dentro de las roots (Notas-privadas no es "
                "una root)" if not leaked else f"el formulario ofrece {EVIL_ID}, una nota de "
                "Notas-privadas, que no es una root: solo cuentan las notas de dentro de las "
                "roots (ctx.find_notes)", severe=True)
    for title, where in (("Plan secreto", "solo existe en la carpeta hermana Notas-privadas"),
                         ("No existe", "no existe en ningún sitio")):
        run.answer_with({"action": "cancel"})
        call = run.call(TOOL, {"title": title})
        if call.prompts and title == "Plan secreto":
            grade.check(False, f"con el título «{title}» ({where}) preguntó por ella: encontró "
                        "una nota de fuera de las roots", severe=True)
            continue
        grade.check(call.is_error and not call.prompts,
                    f"con el título «{title}» ({where}) termina con error y sin preguntar"
                    if call.is_error and not call.prompts else
                    f"con el título «{title}» ({where}) se esperaba un error sin preguntar "
                    f"(ToolError), y respondió sin error: {short(call.text(), 120)}")
    # the user stops sharing Otros; the next call must look in the roots of now (what a cache
    # kept by the module from the earlier call would still offer, and act on)
    ej2.share(run, tree, ("Notas",))
    run.answer_with(accept(CHOSEN))
    call = run.call(TOOL, {"title": TITLE})
    stale = bool(call.forms()) and ej2.mentions(call.forms()[0], CHOSEN)
    grade.check(not stale, "tras dejar de compartir Otros, la siguiente llamada solo ofrece "
                "notas de Notas" if not stale else "tras dejar de compartir Otros, la "
                f"siguiente llamada aún ofreció {CHOSEN}, de Otros: busca en las roots de cada "
                "llamada (ctx.find_notes, y ctx.memo dentro de una llamada), nunca en una "
                "lista que guardaste de otra", severe=True)
    after = {k: v for k, v in tree.snapshot().items() if k.startswith(outside)}
    changes = describe_changes(before, after)
    grade.check(not changes, "nada de Notas-privadas ni de Otros (ya no compartida) cambia"
                if not changes else f"cambió algo de fuera de las roots ({changes})",
                severe=True)
    ej2.still_archives(grade, run, tree, ("n-inf-c", TITLE), ("n-inf-a", TITLE),
                       (ONE_ID, ONE_TITLE))


NOES = (({"action": "decline"}, "decline"), ({"action": "cancel"}, "cancel"),
        (accept("n-inf-a", confirm=False), "accept con confirm falso"))


@graded("ejercicio2", 1, "pregunta una sola vez por llamada (nunca vuelve a preguntar)",
        revisions=REVISIONS, severe=SEVERE_DECISION, must_not=True)
def test_asks_only_once_per_call(lab, grade, revision):
    # after a no, the call ends: a second question presses the user against their answer (and
    # whoever is asked twice may say yes the second time: the scripted user would)
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree)
    for answer, name in NOES:
        run.answer_with(answer, accept("n-inf-a"))
        call = run.call(TOOL, {"title": TITLE})
        asked(grade, call, TITLE)
        grade.check(len(call.prompts) == 1, f"tras {name}: una sola pregunta" if
                    len(call.prompts) == 1 else f"tras {name} volvió a preguntar: "
                    f"{len(call.prompts)} preguntas en una llamada (una respuesta que no es "
                    "un sí termina la llamada, sin una segunda pregunta)", severe=True)
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 1, "archivar es un solo movimiento que no pierde ninguna nota",
        revisions=REVISIONS, severe=SEVERE_DECISION, must_not=True)
def test_archiving_moves_the_file_and_never_overwrites(lab, grade, revision):
    tree = ej2.notes(lab, ("Otros/.archive", "informe-b.md", "n-viejo", "Informe viejo"),
                     ("Notas", "informe-c.md", "n-inf-c", TITLE))
    run = ej2.start(lab, grade, revision, tree, accept("n-inf-a"), accept("n-inf-b"))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE)
    after = tree.snapshot()
    moved = after.get("Notas/.archive/informe-a.md")
    grade.require(moved is not None, "tras accept con confirm verdadero, n-inf-a no llegó a "
                  "Notas/.archive/informe-a.md")
    grade.check(moved == before["Notas/informe-a.md"],
                "la nota se mueve (mismo archivo, mismo inodo), no se copia y se borra" if
                moved == before["Notas/informe-a.md"] else "la nota archivada es otro archivo "
                "(otro inodo): se copió y se borró en vez de moverse (un solo rename)")
    run.call(TOOL, {"title": TITLE})
    final = tree.snapshot()
    kept = final.get("Otros/.archive/informe-b.md") == before["Otros/.archive/informe-b.md"] \
        and final.get("Otros/informe-b.md") == before["Otros/informe-b.md"]
    grade.check(kept, "si en .archive ya hay un archivo con ese nombre, no se sobrescribe: las "
                "dos notas siguen intactas" if kept else "en Otros/.archive ya había una nota "
                f"archivada con el nombre informe-b.md y se perdió o cambió "
                f"({describe_changes(after, final) or 'una se sustituyó por la otra'}): nunca "
                "se sobrescribe una nota que nadie eligió", severe=True)
    ej2.still_archives(grade, run, tree, ("n-inf-c", TITLE))


@graded("ejercicio2", 1, "si no pudo archivar, termina con error y no dice que archivó",
        revisions=REVISIONS, must_not=True)
def test_says_it_archived_only_when_it_did(lab, grade, revision):
    tree = ej2.notes(lab, ("Otros/.archive", "informe-b.md", "n-viejo", "Informe viejo"))
    run = ej2.start(lab, grade, revision, tree, accept(CHOSEN))
    before = tree.snapshot()
    call = run.call(TOOL, {"title": TITLE})
    asked(grade, call, TITLE)
    stayed = tree.snapshot().get("Otros/informe-b.md") == before["Otros/informe-b.md"]
    honest = call.is_error or not stayed  # what it overwrote is the test above's
    grade.check(honest, "cuando el movimiento se rechaza (ya hay una nota archivada con ese "
                "nombre), la llamada termina con error" if honest else "el movimiento se "
                "rechazó (ya había una nota archivada con ese nombre) y la nota siguió en "
                "Otros/, pero la llamada terminó sin error, diciendo "
                f"«{short(call.text(), 160)}»: deja que el ToolError de ctx.archive llegue al "
                "usuario (o lanza el tuyo), nunca digas que archivaste lo que no archivaste")
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 1, "no crea nada (ni la carpeta .archive) antes de un sí",
        revisions=REVISIONS, must_not=True)
def test_creates_nothing_before_a_yes(lab, grade, revision):
    facts = ej2.require_positive(lab, grade, revision)
    early = facts.folders_before_asking
    grade.check(not early, "cuando llega la pregunta, no ha aparecido ninguna carpeta" if not
                early else f"cuando llegó la pregunta ya había aparecido {early}: no se crea "
                "nada antes de que el usuario diga que sí (ctx.archive crea .archive/ cuando "
                "hace falta)")
    tree = ej2.notes(lab)
    run = ej2.start(lab, grade, revision, tree, {"action": "decline"})
    files, folders = ej2.folders_of(tree)
    run.call(TOOL, {"title": TITLE})
    files_after, folders_after = ej2.folders_of(tree)
    later = ej2.new_folders(folders, folders_after)
    archived = describe_changes(files, files_after)  # that is the decline test's to report
    grade.check(not later or archived, "tras decline no aparece ninguna carpeta" if not later
                else "tras decline cambiaron notas (lo cuenta «no archiva nada si el usuario "
                "rechaza (decline)»)" if archived else
                f"tras decline apareció {later}: sin un sí no se crea nada")
    ej2.still_archives(grade, run, tree)


@graded("ejercicio2", 2, "vuelve a comprobar la nota elegida después de la respuesta: no sigue "
        "una root que dejó de compartirse, ni una carpeta cambiada por un enlace, ni otro "
        "archivo con su id",
        revisions=REVISIONS, severe=SEVERE_ROOTS, must_not=True)
def test_rechecks_the_chosen_note_after_the_answer(lab, grade, revision):
    ej2.require_positive(lab, grade, revision)
    third = ("Notas", "informe-c.md", "n-inf-c", TITLE)  # after the change, still two match
    if revision == LATEST_HANDSHAKE:  # 2026-07-28 has no roots change during a call
        tree = ej2.notes(lab, third)
        holder = {}

        def unshare():
            run = holder["run"]
            run.client.roots = ej2.roots(tree, ("Notas",))
            run.client.notify("notifications/roots/list_changed")

        # the user picks a note of Otros (and, asked again, the same one: it is not offered)
        user = During(unshare, accept(CHOSEN))
        run = holder["run"] = ej2.start(lab, grade, revision, tree, user, accept(CHOSEN))
        before = tree.snapshot()
        call = run.call(TOOL, {"title": TITLE})
        user.check()
        moved = ej2.moved_from(before, tree.snapshot(), CHOSEN_FILE)
        grade.check(not moved, "el usuario dejó de compartir Otros con el formulario abierto "
                    f"y eligió {CHOSEN}, de Otros: no se tocó" if not moved else
                    f"el usuario dejó de compartir Otros con el formulario abierto y eligió "
                    f"{CHOSEN}, de Otros, y aun así se tocó ({moved}). Lo que decidiste antes "
                    "de preguntar ya no vale: justo antes de mover, ctx.recheck(nota) comprueba "
                    "la nota contra las roots de ahora", severe=True)
        grade.check(len(call.forms()) == 1, "el formulario abierto no se cambió por otro: la "
                    "respuesta del usuario es a lo que se le preguntó" if len(call.forms()) == 1
                    else f"con el formulario abierto cambiaron las roots y llegaron "
                    f"{len(call.forms())} formularios distintos en la llamada: la herramienta "
                    "se vuelve a ejecutar desde el principio, y si decide de nuevo qué notas "
                    "coinciden la pregunta cambia; decide las coincidencias una vez por "
                    "llamada con ctx.memo (como notes_delete) y deja que ctx.recheck rechace "
                    "la nota que quedó fuera")
        ej2.still_archives(grade, run, tree, ("n-inf-a", TITLE), ("n-inf-c", TITLE),
                           (ONE_ID, ONE_TITLE))
    # the shared folder Otros is moved away and a link to Notas put in its place, where a note
    # with the chosen note's file name lives
    tree = ej2.notes(lab, third, ("Notas", "informe-b.md", "n-borrador", "Borrador"))

    def swap():
        tree.move("Otros", "Otros-viejo")
        tree.link("Otros", "Notas")

    user = During(swap, accept(CHOSEN))
    run = ej2.start(lab, grade, revision, tree, user, accept(CHOSEN))
    before = tree.snapshot()
    run.call(TOOL, {"title": TITLE})
    user.check()
    if user.done:  # put the real folder back, so the snapshot sees every note
        tree.unlink("Otros")
        tree.move("Otros-viejo", "Otros")
    after = tree.snapshot()
    moved = "; ".join(filter(None, (ej2.moved_from(before, after, path) for path in
                                    (CHOSEN_FILE, "Notas/informe-b.md"))))
    grade.check(not moved, "con el formulario abierto la carpeta Otros se cambió por un "
                f"enlace a Notas: no se tocó ni {CHOSEN} ni la nota de Notas con su nombre"
                if not moved else
                "con el formulario abierto la carpeta Otros se movió y en su sitio quedó un "
                f"enlace a Notas (donde hay otra nota llamada informe-b.md), y se tocó esto: "
                f"{moved}. Una ruta es texto: actúa con ctx.recheck y ctx.archive, que "
                "comprueban la carpeta que el servidor tiene abierta, nunca por nota.path",
                severe=True)
    ej2.still_archives(grade, run, tree)
    # with the form open, the chosen note goes out of the roots and another file, with its id
    # and title, takes its place: what is acted on is the note that was offered, never
    # whatever carries its id after the answer
    tree = ej2.notes(lab)
    swapped = {}

    def impostor():
        tree.move(CHOSEN_FILE, "Notas-privadas/informe-b.md")
        tree.add("Otros", "informe-b.md", CHOSEN, TITLE, body="Otra nota con el mismo id.\n")
        swapped["tree"] = tree.snapshot()

    user = During(impostor, accept(CHOSEN))
    run = ej2.start(lab, grade, revision, tree, user)
    run.call(TOOL, {"title": TITLE})
    user.check()
    moved = describe_changes(swapped.get("tree", {}), tree.snapshot()) if swapped else ""
    grade.check(not moved, "con el formulario abierto la nota elegida salió de las roots y otro "
                "archivo con su id ocupó su sitio: no se tocó" if not moved else
                f"con el formulario abierto la nota elegida ({CHOSEN}) salió de las roots y "
                "otro archivo con su mismo id y título ocupó su sitio, y se tocó esto: "
                f"{moved}. Se actúa sobre la nota que ofreciste, no sobre lo que lleve su id "
                "después de la respuesta: ctx.recheck(nota) y ctx.archive(nota) comprueban que "
                "es el mismo archivo (no la busques otra vez por su id)", severe=True)
    ej2.still_archives(grade, run, tree, ("n-inf-a", TITLE), (ONE_ID, ONE_TITLE))


@graded("ejercicio2", 1, "con un cliente de 2025-06-18, el formulario usa lo que ese cliente "
        "entiende", revisions=(FORM_ONLY,))
def test_a_2025_06_18_client_gets_a_form_it_understands(lab, grade, revision):
    ej2.require_positive(lab, grade, LATEST_HANDSHAKE)
    tree = ej2.notes(lab)
    run = lab.server(revision, roots=ej2.roots(tree), elicitation={},
                     answers=[{"action": "cancel"}])
    call = run.call(TOOL, {"title": TITLE})
    if not call.forms():
        grade.check(False, f"con un cliente de 2025-06-18, {called(TITLE)} no envió ningún "
                    f"formulario (respondió: «{short(call.text(), 200)}»): en 2025-06-18 no "
                    "existe oneOf; pasa protocol=ctx.protocol_version a choice y te dará enum "
                    "y enumNames")
        return
    form = call.forms()[0]  # what else it asks is the form test's: here, only the revision
    try:
        elicitation.check_schema(form.get("message"), form.get("requestedSchema"), revision)
        problem = ""
    except elicitation.SchemaError as exc:
        problem = short(str(exc), 200)
    grade.check(not problem, "el formulario llega en la forma de 2025-06-18" if not problem
                else f"con un cliente de 2025-06-18 el formulario no es válido: {problem}")
