"""The requestState challenge, public tests: what a client can do with your tokens, on the wire.

Each test plays notes_delete("Informe") round by round against servers that seal with your
`@extension.request_state` (grader/checks/reto.py) and sends back what an attacker would. A
refusal is the error -32602 with nothing changed on disk. Every test first needs the positive
scenario: the legitimate flow works and your sealer does something the server's own does not.
"""

from grader.checks import reto
from grader.checks.grading import graded
from grader.checks.notes_tree import describe_changes
from grader.checks.reto import EXPIRY_TTL, EXPIRY_WAIT, Flow, notes, pick, server

REPLAY = "que la ronda que borró no se pueda repetir con el mismo token"
FORGED = "que un token hecho sin la clave de tu servidor no llegue a borrar nada"
MOVED = "que el token de una llamada no llegue a borrar nada en otra llamada ni por otro usuario"


@graded("reto", 2, reto.POSITIVE)
def test_a_retry_with_the_token_unchanged_works(lab, grade):
    facts = reto.require_positive(lab, grade, first=True)
    grade.check(True, f"notes_delete({{'title': {reto.TITLE!r}}}) pidió las roots, después qué "
                "nota borrar, y con n-b y confirm: true borró exactamente n-b; cada reintento "
                "llevaba el requestState tal como llegó")
    extra = [what for what, shown in (
        ("rechaza la repetición de la ronda que borró", not facts.replays),
        ("rechaza el token en el servidor de otro usuario", not facts.other_user),
        ("no deja leer lo que el servidor encontró en el disco", not facts.readable)) if shown]
    grade.check(bool(extra), "además, a diferencia del sello del servidor, tu sello "
                + "; ".join(extra))


@graded("reto", 2, "un reintento lo atiende igual otra réplica con la misma clave")
def test_a_retry_can_be_served_by_another_replica_with_the_same_key(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("dos servidores con la misma clave (binding.key) y el mismo usuario, como dos "
               "réplicas detrás de un balanceador: cada reintento llega a la otra")
    tree = notes(lab, facts.marker)
    key = reto.fleet_key()
    one, two = Flow(server(lab, tree, key=key), tree), Flow(server(lab, tree, key=key), tree)
    asked = two.send(one.first(), two.roots())
    request = next(iter(asked.requests.values()), {})
    carried = asked.state is not None and isinstance(request, dict) \
        and request.get("method") == "elicitation/create"
    if not carried:
        grade.check(False, "la ronda de las roots, reintentada en la otra réplica: el servidor "
                    f"{asked.describe()}; debía preguntar qué nota borrar. Lo que el servidor "
                    "recuerda entre rondas viaja en el token (cifrado y firmado con la clave), "
                    "no en la memoria de un proceso: cualquier réplica con la clave lo abre")
        return
    before = tree.snapshot()
    done = one.third(asked.state, next(iter(asked.requests)), pick("n-b"))
    changes = describe_changes(before, tree.snapshot())
    wanted = f"desapareció Notas/informe-{facts.marker}.md"
    grade.check(changes == wanted, "la ronda de las roots en una réplica y la que borra en la "
                "otra: se borró exactamente n-b" if changes == wanted else
                f"la ronda que borra, reintentada en la otra réplica: el servidor "
                f"{done.describe()} y en el disco {changes or 'nada cambió'}; debía borrar "
                "exactamente n-b. Lo que el servidor recuerda entre rondas viaja en el token "
                "(cifrado y firmado con la clave), no en la memoria de un proceso")


@graded("reto", 3, "un token con un carácter cambiado se rechaza (-32602) y no cambia nada")
def test_a_token_with_a_character_changed_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    roots_token = flow.first()
    reto.attempts(grade, flow, tree, reto.changed(roots_token), flow.roots(),
                  "el token de la ronda de las roots con un carácter cambiado (al principio, en "
                  "medio y al final)")
    again = flow.send(roots_token, flow.roots())
    still = again.state is not None and not again.refused
    grade.check(still, "tras esos rechazos, el token intacto sigue valiendo: un intento "
                "rechazado no gasta el token legítimo" if still else
                f"tras rechazar los tokens cambiados, el token intacto ya no valió (el servidor "
                f"{again.describe()}): un intento rechazado gastó el token legítimo; comprueba "
                "el sello antes de apuntar que un token se usó")
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, tree, reto.content_flips(form_token), {key: pick("n-b")},
                  "el token de la ronda que borra con un carácter de en medio cambiado")


@graded("reto", 2, "un token recortado o alargado se rechaza (-32602) y no cambia nada")
def test_a_token_cut_or_lengthened_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    roots_token = flow.first()
    reto.attempts(grade, flow, tree, reto.cut_or_lengthened(roots_token), flow.roots(),
                  "el token recortado, vacío o alargado")


@graded("reto", 2, "el mismo token escrito de otra forma (re-codificado) se rechaza")
def test_a_token_spelled_another_way_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    roots_token = flow.first()
    reto.attempts(grade, flow, tree, reto.respelled(roots_token), flow.roots(),
                  "el token re-codificado (relleno, espacios, otro alfabeto, bits que base64 no "
                  "usa): solo vale escrito exactamente como lo diste")


@graded("reto", 2, "un token caducado se rechaza")
def test_an_expired_token_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)  # every server's lifetime is EXPIRY_TTL
    roots_token = flow.first()
    yield EXPIRY_WAIT  # the token's lifetime passes (grader/checks/later.py)
    reto.attempts(grade, flow, tree, [(f"con una vida de {EXPIRY_TTL:g} s (binding.ttl), "
                                       f"devuelto {EXPIRY_WAIT:g} s después", roots_token)],
                  flow.roots(), "un token caducado")


@graded("reto", 3, "la ronda que borró no se puede repetir con el mismo token",
        severe=REPLAY)
def test_the_round_that_deleted_cannot_be_replayed(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("tras borrar n-b, un atacante repite la última ronda: tal cual, con otra "
               "respuesta (n-a) y con el token re-codificado")
    replayed = facts.replays
    grade.check(not replayed, "las cuatro repeticiones se rechazan con -32602 y n-a sigue en su "
                "sitio" if not replayed else f"se aceptó {replayed[0][0]}: el servidor "
                f"{replayed[0][1]}" + (f" (y {len(replayed) - 1} repeticiones más)"
                                       if len(replayed) > 1 else "")
                + "; un token de notes_delete (binding.one_time) vale una sola vez: apunta los "
                "que ya se usaron", severe=True)


@graded("reto", 3, "un token llevado a otra herramienta o a otros argumentos se rechaza",
        severe=MOVED)
def test_a_token_moved_to_another_tool_or_other_arguments_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    flow = Flow(server(lab, tree), tree)
    reto.attempts(grade, flow, tree, [("de notes_delete({'title': 'Informe'})", flow.first())],
                  flow.roots(), "en notes_delete({'title': 'Otra'}), otros argumentos",
                  arguments={"title": "Otra"}, severe_if_changed=True)
    reto.attempts(grade, flow, tree, [("de notes_delete({'title': 'Informe'})", flow.first())],
                  flow.roots(), "en notes_list, otra herramienta", name="notes_list",
                  arguments={}, severe_if_changed=True)
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, tree, [("de la ronda que borra de notes_delete({'title': "
                                       "'Informe'})", form_token)], {key: pick("n-b")},
                  "en notes_delete({'title': 'informe'}), que encuentra las mismas notas pero "
                  "con otros argumentos", arguments={"title": "informe"},
                  severe_if_changed=True)


@graded("reto", 2, "un token llevado al servidor de otro usuario se rechaza", severe=MOVED)
def test_a_token_moved_to_another_user_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("dos servidores con la misma clave (binding.key, como dos réplicas) que actúan "
               "por dos usuarios (binding.principal): el token de la ronda que borra de uno se "
               "envía al otro")
    grade.check(not facts.other_user, "el servidor del otro usuario lo rechaza con -32602 y "
                "nada cambia" if not facts.other_user else "el servidor del otro usuario "
                f"{facts.other_user}: ata el token a binding.principal",
                severe=facts.other_user_changed)


@graded("reto", 3, "un token sellado con otra clave (otro servidor, un reinicio) se rechaza",
        severe=FORGED)
def test_a_token_sealed_with_another_key_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    mine, other = Flow(server(lab, tree), tree), Flow(server(lab, tree), tree)
    forged, key = other.second(other.first())
    before = tree.snapshot()
    reply = mine.third(forged, key, pick("n-b"))
    changes = describe_changes(before, tree.snapshot())
    good = reply.refused and not changes
    grade.check(good, "un token hecho por otro servidor (alguien con tu código pero sin tu "
                "clave) para la ronda que borra se rechaza y nada cambia" if good else
                "un token hecho por otro servidor (alguien con tu código pero sin tu clave) "
                f"para la ronda que borra: tu servidor {reply.describe()}"
                + (f" y {changes}" if changes else "") + "; tu sello no depende de la clave "
                "del servidor: ¿usas binding.key, o una clave fija en tu archivo, o un hash sin "
                "clave?", severe=True)
    roots_token = mine.first()
    restarted = Flow(server(lab, tree), tree)
    reto.attempts(grade, restarted, tree, [("de antes de reiniciar el servidor (ahora tiene "
                                            "otra clave)", roots_token)], restarted.roots(),
                  "tras un reinicio")


@graded("reto", 1, "lo que el servidor encontró en el disco no se puede leer en el token")
def test_what_the_server_found_on_disk_cannot_be_read_from_a_token(lab, grade):
    facts = reto.require_positive(lab, grade)
    found = facts.readable
    grade.check(not found, "el token de la ronda que pregunta qué nota borrar no deja leer el "
                "nombre de archivo de las notas que encontró" if not found else
                f"en el token de la ronda que pregunta qué nota borrar se lee el nombre de "
                f"archivo de una nota (informe-{facts.marker}.md) {found}: cifra lo que sellas")


@graded("reto", 1, "la etiqueta se compara en tiempo constante (hmac.compare_digest)")
def test_tags_are_compared_in_constant_time(lab, grade):
    reto.require_positive(lab, grade)
    found = lab.state.reto_source.compare_digest
    grade.check(found, "reto.py compara con compare_digest" if found else
                "reto.py no llama a hmac.compare_digest (ni a secrets.compare_digest): "
                "comparar la etiqueta con == tarda más cuanto más se parece, y eso da pistas "
                "para falsificarla. Esto no se mide en el cable: el corrector lee tu archivo")
