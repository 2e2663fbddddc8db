"""The requestState challenge, hidden tests: the statement's attacks in other places and other
orders. Their texts say which attack, never its inputs (grader/checks/reto.py, `hidden=True`)."""

from grader.checks import reto
from grader.checks.grading import graded
from grader.checks.notes_tree import describe_changes
from grader.checks.reto import Flow, notes, pick, server

DECLINED = "que una ronda rechazada no se pueda repetir como un sí"


@graded("reto", 2, "otros cambios, recortes y re-codificaciones se rechazan", hidden=True)
def test_other_changes_cuts_and_spellings_are_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    token = flow.first()
    n = len(token)
    variants = reto.unique(token, [
        *[(f"{k}", reto.flip(token, k * n // 8, 16)) for k in (1, 3, 5, 7)],
        ("a", token[:-2]), ("b", token[2:]), ("c", token + token), ("d", token[:1]),
        ("e", " " + token), ("f", token + "\t"), ("g", token + "\r\n")])
    reto.attempts(grade, flow, tree, variants, flow.roots(), "tokens alterados en la ronda de "
                  "las roots", hidden=True)
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, tree, reto.content_flips(form_token, bits=16, count=4),
                  {key: pick("n-b")}, "tokens alterados en la ronda que borra", hidden=True)


@graded("reto", 2, "tokens llevados a otras herramientas, otros argumentos y otro usuario se "
        "rechazan", hidden=True)
def test_tokens_moved_elsewhere_are_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    reto.attempts(grade, flow, tree, [("a", flow.first())], flow.roots(),
                  "un token llevado a una herramienta que escribe", name="notes_write",
                  arguments={"uri": tree.uri("Notas") + "/nueva.md", "title": "Nueva",
                             "body": "x"}, hidden=True)
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, tree, [("b", form_token)], {key: pick("n-b")},
                  "un token llevado a argumentos que encuentran las mismas notas",
                  arguments={"title": f"  {reto.TITLE}  "}, hidden=True)
    fleet = reto.fleet_key()
    theirs = Flow(server(lab, tree, key=fleet, subject=reto.person()), tree)
    mine = Flow(server(lab, tree, key=fleet, subject=reto.person()), tree)
    their_token, their_key = theirs.second(theirs.first())
    reto.attempts(grade, mine, tree, [("c", their_token)], {their_key: pick("n-b")},
                  "un token de otro usuario, en la ronda que borra", hidden=True)


@graded("reto", 2, "una ronda rechazada por el usuario no se puede repetir como un sí",
        hidden=True, severe=DECLINED)
def test_a_declined_round_cannot_be_replayed_as_a_yes(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    form_token, key = flow.second(flow.first())
    declined = flow.third(form_token, key, pick("n-b", "decline"))
    grade.require(declined.result is not None and not declined.refused,
                  "una respuesta decline legítima debía aceptarse (sin borrar nada)")
    before = tree.snapshot()
    reply = flow.third(form_token, key, pick("n-b"))
    changes = describe_changes(before, tree.snapshot())
    good = reply.refused and not changes
    grade.check(good, "tras un decline, el mismo token con accept se rechaza y nada cambia"
                if good else "tras un decline, el mismo token se aceptó con accept: un "
                "atacante convirtió el no del usuario en un sí", severe=True)


@graded("reto", 2, "un token caducado se rechaza en la ronda que borra", hidden=True)
def test_a_token_expired_at_the_round_that_deletes_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    form_token, key = flow.second(flow.first())
    yield reto.EXPIRY_TTL + 0.6  # the token's lifetime passes (grader/checks/later.py)
    reto.attempts(grade, flow, tree, [("a", form_token)], {key: pick("n-b")},
                  "un token caducado en la ronda que borra", hidden=True)


@graded("reto", 2, "tampoco se leen las notas encontradas en una subcarpeta", hidden=True)
def test_notes_found_in_a_subfolder_cannot_be_read_either(lab, grade):
    facts = reto.require_positive(lab, grade)
    folder = reto.new_marker()
    tree = notes(lab, facts.marker, (f"Notas/{folder}", "informe-c.md", "n-c", reto.TITLE))
    flow = Flow(server(lab, tree), tree)
    form_token, _ = flow.second(flow.first())
    found = reto.revealed(form_token, folder)
    grade.check(not found, "el token no deja leer dónde están las notas encontradas" if not found
                else "el token deja leer dónde están las notas encontradas: cifra lo que sellas")
