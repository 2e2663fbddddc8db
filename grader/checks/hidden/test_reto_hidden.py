"""The requestState challenge, hidden tests: the public tests' attacks with other inputs, in other
places and other orders (no class of mistake is only here). Their texts say which attack,
never its inputs (grader/checks/reto.py, `hidden=True`)."""

from grader.checks import reto
from grader.checks import reto_tokens as tokens
from grader.checks.grading import graded
from grader.checks.reto import Flow, notes, pick, server

REPLAY = "que una ronda ya usada no se pueda repetir"
MOVED = "que el token de una llamada no llegue a borrar nada en otra llamada ni por otro usuario"


@graded("reto", 2, "otros cambios, recortes y re-codificaciones se rechazan", hidden=True,
        must_not=True)
def test_other_changes_cuts_and_spellings_are_refused(lab, grade):
    facts, served, flow = reto.scene(lab, grade)
    token = flow.first()
    n = len(token)
    variants = tokens.unique(token, [
        *[(f"{k}", tokens.flip(token, k * n // 8, 16)) for k in (1, 3, 5, 7)],
        ("a", token[:-2]), ("b", token[2:]), ("c", token + token), ("d", token[:1]),
        ("e", " " + token), ("f", token + "\t"), ("g", token + "\r\n")])
    reto.attempts(grade, flow, variants, flow.roots(), "tokens alterados en la ronda de las "
                  "roots", hidden=True)
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, tokens.content_flips(form_token, bits=16, count=4),
                  {key: pick("n-b")}, "tokens alterados en la ronda que borra", hidden=True)
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "tokens llevados a otras herramientas, otros argumentos y otro usuario se "
        "rechazan", hidden=True, severe=MOVED, must_not=True)
def test_tokens_moved_elsewhere_are_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    fleet = reto.fleet_key()
    mine = server(lab, facts, tree, key=fleet)
    flow = Flow(mine, tree)
    reto.attempts(grade, flow, [("a", flow.first())], flow.roots(),
                  "un token llevado a una herramienta que escribe", name="notes_write",
                  arguments={"uri": tree.uri("Notas") + "/nueva.md", "title": "Nueva",
                             "body": "x"}, hidden=True, severe_if_changed=True)
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, [("b", form_token)], {key: pick("n-b")},
                  "un token llevado a argumentos que encuentran las mismas notas",
                  arguments={"title": f"  {reto.TITLE}  "}, hidden=True, severe_if_changed=True)
    listing = Flow(mine, tree, arguments={}, name=reto.NO_ARGUMENTS)
    reto.attempts(grade, listing, [("d", listing.first())], listing.roots(),
                  "un token llevado a otra herramienta con los mismos argumentos",
                  name=reto.SAME_ARGUMENTS[1], hidden=True, severe_if_changed=True)
    theirs = Flow(server(lab, facts, tree, key=fleet, principal=facts.intruder), tree)
    their_token, their_key = theirs.second(theirs.first())
    reto.attempts(grade, flow, [("c", their_token)], {their_key: pick("n-b")},
                  "un token de otro usuario, en la ronda que borra", hidden=True,
                  severe_if_changed=True)
    reto.still_works(lab, grade, facts, mine)


@graded("reto", 2, "otras rondas ya usadas tampoco se pueden repetir", hidden=True,
        severe=REPLAY, must_not=True)
def test_other_used_rounds_cannot_be_replayed(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    served = server(lab, facts, tree)
    reto.declined_then_yes(lab, grade, facts, served, "cancel", hidden=True)
    reto.declined_then_yes(lab, grade, facts, served, "unconfirmed", hidden=True)
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "tokens caducados hace un momento se rechazan", hidden=True, must_not=True)
def test_tokens_expired_a_moment_ago_are_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    reto.expired_copies(lab, grade, facts, past=1.5, hidden=True)


@graded("reto", 2, "tampoco se leen las notas encontradas en una subcarpeta", hidden=True)
def test_notes_found_in_a_subfolder_cannot_be_read_either(lab, grade):
    facts = reto.require_positive(lab, grade)
    folder = reto.new_marker()
    tree = notes(lab, facts.marker, (f"Notas/{folder}", "informe-c.md", "n-c", reto.TITLE))
    served = server(lab, facts, tree)
    flow = Flow(served, tree)
    form_token, _ = flow.second(flow.first())
    found = tokens.revealed(form_token, folder)
    grade.check(not found, "el token no deja leer dónde están las notas encontradas" if not found
                else "el token deja leer dónde están las notas encontradas: cifra el sobre")
    reto.every_token_follows_the_format(lab, grade, facts)
