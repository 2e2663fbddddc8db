"""Exercise 3B, hidden tests: the same classes as the public tests, with other inputs: the
other person's flow expiring, their authorization instead of yours, other shapes of a
capability, a way back without any state, a code changed on its way. Their texts carry none of
their inputs (grader/checks/grading.py: `hidden=True`).
"""

import secrets
import time
from urllib.parse import parse_qsl, urlencode, urlsplit

from grader.checks.ej3 import (
    MANUAL_STATUS,
    ask,
    asked,
    browse,
    browser_of,
    flow_server,
    forged,
    legitimate,
    lifetime_passes,
    not_authorized,
    refused,
    replay,
    require_positive,
    scene,
)
from grader.checks.grading import graded

OWNER = "que un flujo solo lo complete y lo use quien lo empezó"
ONCE = "que un state sirva una sola vez y caduque"
NO_SUCCESS = "no dar por autorizado nada hasta que la página de retorno canjea el code y " \
    "completa el flujo"


def changed(url, **values):
    """`url` with some query parameters replaced (None: taken out)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in values]
    query += [(k, v) for k, v in values.items() if v is not None]
    return parts._replace(query=urlencode(query)).geturl()


@graded("ejercicio3b", 1, "el flujo de otra persona también caduca", hidden=True, severe=ONCE,
        must_not=True)
def test_another_persons_flow_expires_too(lab, grade):
    run = scene(lab, grade)
    theirs = asked(grade, run.peer)
    visit = browse(browser_of(run, peer=True), theirs.url, stop="provider")
    grade.require(visit.authorize, "el enlace no llevó a Nube de Copias")
    yield from lifetime_passes(run, time.monotonic())
    replay(browser_of(run, peer=True), visit)  # «Autorizar» pressed after the lifetime
    not_authorized(grade, run, "con un flujo completado después de caducar", peer=True)
    legitimate(grade, run)


@graded("ejercicio3b", 1, "la autorización de otra persona no es la tuya", hidden=True,
        severe=OWNER, must_not=True)
def test_another_persons_authorization_is_not_yours(lab, grade):
    run = scene(lab, grade)
    theirs = asked(grade, run.peer)
    browse(browser_of(run, peer=True), theirs.url)
    not_authorized(grade, run, "con la autorización de otra persona")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "otra forma de declarar la capacidad no es el modo URL", hidden=True,
        severe="no enviar nunca el modo URL a un cliente que no declaró elicitation.url")
def test_a_capability_in_another_shape_is_not_url_mode(lab, grade):
    require_positive(lab, grade)
    for caps in ({"url": None}, {"form": {}, "url": True}):
        run = flow_server(lab, elicitation=caps)
        first = ask(run)
        grade.check(not first.shape, "sin modo URL para ese cliente" if not first.shape else
                    "envió el modo URL a un cliente que no lo declaró como se debe", severe=True)
        trace = first.trace
        safe = not first.shape and not trace.prompts and trace.error is None \
            and trace.structured.get("status") == MANUAL_STATUS
        grade.check(safe, "y da la alternativa manual sin preguntar nada" if safe else
                    "no dio la alternativa manual sin preguntar nada")


@graded("ejercicio3b", 1, "un retorno sin state no completa ningún flujo", hidden=True,
        severe=OWNER, must_not=True)
def test_a_way_back_without_a_state_completes_nothing(lab, grade):
    run = scene(lab, grade)
    asked(grade, run)  # a pending flow of yours
    visit = forged(browser_of(run), run.provider, secrets.token_urlsafe(32))
    grade.require(visit.back, "Nube de Copias no devolvió ningún code")
    refused(grade, browser_of(run)(changed(visit.back, state=None)), "con un code y sin state",
            "un retorno sin state no es de ningún flujo")
    not_authorized(grade, run, "tras un retorno sin state")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "un code cambiado por el camino no autoriza nada", hidden=True,
        severe=NO_SUCCESS, must_not=True)
def test_a_code_changed_on_its_way_authorizes_nothing(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    visit = browse(browser_of(run), first.url, "allow", stop="callback")
    grade.require(visit.back, "el enlace no llevó a Nube de Copias")
    refused(grade, browser_of(run)(changed(visit.back, code=visit.code + "x")),
            "con un code que Nube de Copias no emitió", "sin un code válido no hay éxito")
    not_authorized(grade, run, "tras un code que Nube de Copias rechazó")
    legitimate(grade, run)
