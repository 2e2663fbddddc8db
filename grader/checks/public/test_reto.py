"""The requestState challenge, public tests: what a client, and someone with your code but without
your server's key, can do with your tokens.

Each test plays notes_delete("Informe") round by round against servers that seal with your
`@extension.request_state` (grader/checks/reto.py) and sends back what an attacker would. A
refusal is the error -32602 with nothing changed on disk. Every test first needs the positive
scenario (your reto.py registers your sealer, the legitimate flow works, the token follows the
statement's format), and every test of what must not happen ends with a legitimate delete on
the server it attacked, which must still work.
"""

from grader.checks import reto
from grader.checks import reto_tokens as tokens
from grader.checks.grading import graded
from grader.checks.notes_tree import describe_changes
from grader.checks.reto import Flow, notes, pick, server

REPLAY = "que una ronda ya usada (la que borró, o una rechazada) no se pueda repetir"
FORGED = "que un token hecho sin la clave de tu servidor no llegue a borrar nada"
MOVED = "que el token de una llamada no llegue a borrar nada en otra llamada ni por otro usuario"


@graded("reto", 2, reto.POSITIVE)
def test_a_retry_with_the_token_unchanged_works(lab, grade):
    reto.require_positive(lab, grade, first=True)
    grade.check(True, f"notes_delete({{'title': {reto.TITLE!r}}}) pidió las roots, después qué "
                "nota borrar, y con n-b y confirm: true borró exactamente n-b; cada reintento "
                "llevaba el requestState tal como llegó")
    grade.check(True, "el token se lee con el formato del enunciado: nonce, sobre cifrado "
                "(caduca y datos) y etiqueta")


@graded("reto", 2, "un reintento lo atiende igual otra réplica con la misma clave")
def test_a_retry_can_be_served_by_another_replica_with_the_same_key(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("dos servidores con la misma clave (binding.key) y el mismo usuario, como dos "
               "réplicas detrás de un balanceador: cada reintento llega a la otra")
    tree = notes(lab, facts.marker)
    key = reto.fleet_key()
    one = Flow(server(lab, facts, tree, key=key), tree)
    two = Flow(server(lab, facts, tree, key=key), tree)
    asked = two.send(one.first(), one.roots())
    question = asked.asked("elicitation/create")
    if asked.state is None or question is None:
        grade.check(False, "la ronda de las roots, reintentada en la otra réplica: el servidor "
                    f"{asked.describe()}; debía preguntar qué nota borrar. Lo que el servidor "
                    "recuerda entre rondas viaja en el token (cifrado y firmado con la clave), "
                    "no en la memoria de un proceso: cualquier réplica con la clave lo abre")
        return
    before = tree.snapshot()
    done = one.third(asked.state, question, pick("n-b"))
    changes = describe_changes(before, tree.snapshot())
    reto.every_token_follows_the_format(lab, grade, facts)
    grade.check(changes == reto.wanted(facts.marker), "la ronda de las roots en una réplica y "
                "la que borra en la otra: se borró exactamente n-b"
                if changes == reto.wanted(facts.marker) else
                f"la ronda que borra, reintentada en la otra réplica: el servidor "
                f"{done.describe()} y en el disco {changes or 'nada cambió'}; debía borrar "
                "exactamente n-b. Lo que el servidor recuerda entre rondas viaja en el token "
                "(cifrado y firmado con la clave), no en la memoria de un proceso")


@graded("reto", 3, "un token con un carácter cambiado se rechaza (-32602) y no cambia nada",
        must_not=True)
def test_a_token_with_a_character_changed_is_refused(lab, grade):
    facts, served, flow = reto.scene(lab, grade)
    roots_token = flow.first()
    reto.attempts(grade, flow, tokens.changed(roots_token), flow.roots(),
                  "el token de la ronda de las roots con un carácter cambiado (al principio, en "
                  "medio y al final)")
    again = flow.send(roots_token, flow.roots())
    still = again.state is not None and not again.refused
    grade.check(still, "tras esos rechazos, el token intacto sigue valiendo: un intento "
                "rechazado no gasta el token legítimo" if still else
                f"tras rechazar los tokens cambiados, el token intacto ya no valió (el servidor "
                f"{again.describe()}): un intento rechazado gastó el token legítimo; comprueba "
                "la etiqueta antes de apuntar que un token se usó")
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, tokens.content_flips(form_token), {key: pick("n-b")},
                  "el token de la ronda que borra con un carácter de en medio cambiado")
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "un token recortado o alargado se rechaza (-32602) y no cambia nada",
        must_not=True)
def test_a_token_cut_or_lengthened_is_refused(lab, grade):
    facts, served, flow = reto.scene(lab, grade)
    reto.attempts(grade, flow, tokens.cut_or_lengthened(flow.first()), flow.roots(),
                  "el token recortado, vacío o alargado")
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "el mismo token escrito de otra forma (re-codificado) se rechaza", must_not=True)
def test_a_token_spelled_another_way_is_refused(lab, grade):
    facts, served, flow = reto.scene(lab, grade)
    reto.attempts(grade, flow, tokens.respelled(flow.first()), flow.roots(),
                  "el token re-codificado (relleno, espacios, otro alfabeto, bits que base64 no "
                  "usa): solo vale escrito exactamente como lo diste (usa decode de sealkit)")
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "un token caducado se rechaza", must_not=True)
def test_an_expired_token_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("el corrector tiene la clave que dio a tu servidor: con tu formato hace copias "
               "de tus tokens con la caducidad que quiere (válidas en todo lo demás), así que "
               "no espera a que pase la vida de un token")
    reto.expired_copies(lab, grade, facts, past=60.0)


@graded("reto", 3, "una ronda ya usada no se puede repetir con el mismo token", severe=REPLAY,
        must_not=True)
def test_a_used_round_cannot_be_replayed(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("tras borrar n-b, un atacante repite la última ronda: tal cual, con otra "
               "respuesta (n-a) y con el token re-codificado; y en otra llamada, la usuaria "
               "rechaza el formulario y el atacante envía la misma ronda con un sí")
    tree = notes(lab, facts.marker)
    served = server(lab, facts, tree)
    reto.replays(lab, grade, facts, served, tree, [
        ("el mismo reintento, repetido tal cual", lambda token: token, pick("n-b")),
        ("el mismo token con otra respuesta (n-a)", lambda token: token, pick("n-a")),
        ("el mismo token con relleno «=» al final y otra respuesta (n-a)",
         lambda token: token + "=", pick("n-a")),
        ("el mismo token con un salto de línea en medio y otra respuesta (n-a)",
         lambda token: token[:len(token) // 2] + "\n" + token[len(token) // 2:], pick("n-a"))])
    reto.declined_then_yes(lab, grade, facts, served, "decline")
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "el token de la ronda de las roots tampoco vale dos veces", must_not=True)
def test_the_first_rounds_token_cannot_be_used_twice(lab, grade):
    facts, served, flow = reto.scene(lab, grade)
    roots_token = flow.first()
    flow.second(roots_token)
    reto.attempts(grade, flow, [("de la ronda de las roots, que ya se usó una vez", roots_token)],
                  flow.roots(), "el token de la ronda de las roots, otra vez (binding.one_time "
                  "vale para cada estado de notes_delete, también el primero)")
    reto.still_works(lab, grade, facts, served)


@graded("reto", 3, "un token llevado a otra herramienta o a otros argumentos se rechaza",
        severe=MOVED, must_not=True)
def test_a_token_moved_to_another_tool_or_other_arguments_is_refused(lab, grade):
    facts, served, flow = reto.scene(lab, grade)
    reto.attempts(grade, flow, [("de notes_delete({'title': 'Informe'})", flow.first())],
                  flow.roots(), "en notes_delete({'title': 'Otra'}), otros argumentos",
                  arguments={"title": "Otra"}, severe_if_changed=True)
    listing = Flow(served, flow.tree, arguments={}, name=reto.NO_ARGUMENTS)
    token = listing.first()
    reto.attempts(grade, listing, [(f"de {reto.NO_ARGUMENTS}(), sin argumentos", token)],
                  listing.roots(), f"en {reto.SAME_ARGUMENTS[0]}(), otra herramienta con los "
                  "mismos argumentos (ninguno)", name=reto.SAME_ARGUMENTS[0],
                  severe_if_changed=True)
    form_token, key = flow.second(flow.first())
    reto.attempts(grade, flow, [("de la ronda que borra de notes_delete({'title': "
                                 "'Informe'})", form_token)], {key: pick("n-b")},
                  "en notes_delete({'title': 'informe'}), que encuentra las mismas notas pero "
                  "con otros argumentos", arguments={"title": "informe"},
                  severe_if_changed=True)
    reto.binds(grade, facts, ("tool", "arguments"))
    reto.still_works(lab, grade, facts, served)


@graded("reto", 2, "un token llevado al servidor de otro usuario se rechaza", severe=MOVED,
        must_not=True)
def test_a_token_moved_to_another_user_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    grade.note("dos servidores con la misma clave (binding.key, como dos réplicas) que actúan "
               "por dos usuarios (binding.principal): el token de la ronda que borra de uno se "
               "envía al otro")
    tree = notes(lab, facts.marker)
    key = reto.fleet_key()
    mine = Flow(server(lab, facts, tree, key=key), tree)
    theirs = server(lab, facts, tree, key=key, principal=facts.intruder)
    token, question = mine.second(mine.first())
    reto.attempts(grade, Flow(theirs, tree), [("de la ronda que borra, sellado para otro "
                                               "usuario", token)], {question: pick("n-b")},
                  "en el servidor de otro usuario con la misma clave", severe_if_changed=True)
    reto.binds(grade, facts, ("principal",))
    reto.still_works(lab, grade, facts, theirs)


@graded("reto", 3, "un token hecho sin la clave de tu servidor se rechaza", severe=FORGED,
        must_not=True)
def test_a_token_made_without_your_servers_key_is_refused(lab, grade):
    facts = reto.require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    mine, other = server(lab, facts, tree), server(lab, facts, tree)
    made, key = Flow(other, tree).second(Flow(other, tree).first())
    before = tree.snapshot()
    reply = Flow(mine, tree).third(made, key, pick("n-b"))
    changes = describe_changes(before, tree.snapshot())
    good = reply.refused and not changes
    grade.check(good, "un token hecho por otro servidor con tu código pero otra clave, para la "
                "ronda que borra, se rechaza y nada cambia" if good else
                "un token hecho por otro servidor con tu código pero otra clave, para la ronda "
                f"que borra: tu servidor {reply.describe()}"
                + (f" y {changes}" if changes else "") + "; tu sello no depende de la clave del "
                "servidor: usa keys_from(binding.key), nunca binding.key_id ni una constante",
                severe=True)
    roots_token = Flow(mine, tree).first()
    restarted = server(lab, facts, tree)
    reto.attempts(grade, Flow(restarted, tree), [("de antes de reiniciar el servidor (ahora "
                                                  "tiene otra clave)", roots_token)],
                  Flow(restarted, tree).roots(), "tras un reinicio")
    reto.forgery_with_your_code(lab, grade, facts, mine)
    reto.still_works(lab, grade, facts, mine, restarted)


@graded("reto", 2, "lo que el servidor encontró en el disco no se puede leer en el token")
def test_what_the_server_found_on_disk_cannot_be_read_from_a_token(lab, grade):
    facts = reto.require_positive(lab, grade)
    found = tokens.revealed(facts.form_token, facts.marker)
    grade.check(not found, "el token de la ronda que pregunta qué nota borrar no deja leer el "
                "nombre de archivo de las notas que encontró" if not found else
                f"en el token de la ronda que pregunta qué nota borrar se lee el nombre de "
                f"archivo de una nota (informe-{facts.marker}.md) {found}: cifra el sobre")
    cipher = facts.reading.cipher
    grade.check(cipher.secret, "el sobre se cifra con una clave que sale de binding.key: sin "
                "ella no se descifra" if cipher.secret else
                f"el sobre se descifra con {cipher.label}, sin la clave del servidor: "
                "cualquiera con tu código lo lee; cifra con la primera clave de "
                "keys_from(binding.key)")
    if cipher.secret:
        grade.check(cipher.label == tokens.FORMAT_KEY, "el sobre se cifra con la primera clave "
                    "de keys_from(binding.key), como dice el formato"
                    if cipher.label == tokens.FORMAT_KEY else
                    f"el sobre se descifra con {cipher.label}: el formato lo cifra con la "
                    "primera de keys_from(binding.key) (clave_cifrar) y firma con la segunda")


@graded("reto", 1, "la etiqueta se compara en tiempo constante (hmac.compare_digest)")
def test_tags_are_compared_in_constant_time(lab, grade):
    found = reto.require_positive(lab, grade).constant_time
    grade.check(found, "el open de tu sello, en reto.py, compara la etiqueta con compare_digest"
                if found else "el open de tu sello, en reto.py, no llega a llamar a "
                "hmac.compare_digest (ni él ni las funciones de reto.py a las que llama): "
                "comparar la etiqueta con == tarda más cuanto más se parece, y eso da pistas "
                "para falsificarla. Esto no se mide en el cable: el corrector lee tu archivo")

