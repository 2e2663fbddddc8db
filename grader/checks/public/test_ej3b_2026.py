"""Exercise 3B's optional part (notebook 6, graded apart): the same flow at 2026-07-28, where
URL mode travels inside `input_required`, with no elicitationId, no −32042 and no completion
notification; `accept` is consent only, and decline or cancel retire the link.

Same servers and judges as 3B (grader/checks/ej3.py): Nube de Copias is the grader's, and a
test of what must not happen ends with the user's own flow on the same server.
"""

import time

from grader.checks import ej3
from grader.checks.ej3 import (
    ACCEPT,
    CANCEL,
    DECLINE,
    POSITIVE_2026,
    STATELESS_VERSION,
    Browser,
    ask,
    asked,
    browse,
    browser_of,
    flow_server,
    legitimate,
    not_authorized,
    reply,
    require_positive,
    scene,
)
from grader.checks.grading import graded

NOTHING_YET = "no dar por autorizado nada hasta que la página de retorno canjea el code y " \
    "completa el flujo"


@graded("ejercicio3b_2026", 3, POSITIVE_2026,
        severe="no dejar un token, un code o el state del flujo en manos del cliente")
def test_authorizes_at_the_provider_and_then_backs_up_in_2026(lab, grade):
    facts = ej3.positive(lab, STATELESS_VERSION)
    grade.require(facts.shown, ej3.why_not_shown(lab, facts, STATELESS_VERSION))
    grade.check(facts.shape == "input_required" and "elicitationId" not in (facts.params or {}),
                "pidió el modo URL dentro de input_required, sin elicitationId; tras «Autorizar» "
                "y tu página de retorno, el reintento hizo la copia y Nube de Copias la tiene"
                if facts.shape == "input_required" and "elicitationId" not in (facts.params or {})
                else "en 2026-07-28 el modo URL viaja en input_required y sin elicitationId")
    # what reaches the client at 2026-07-28 (the URL inside input_required, the results)
    # carries no provider credential and not the flow's state, as at 2025-11-25
    grade.check(not facts.leaks, "ningún mensaje al cliente lleva un code ni un token de Nube de "
                "Copias" if not facts.leaks else "un mensaje al cliente llevaba "
                + " y ".join(facts.leaks) + ": la credencial se queda en el servidor", severe=True)
    shown = ej3.carries(facts.traces, facts.visit.state)
    grade.check(not shown, "el state del flujo no aparece en nada de lo que recibe el cliente "
                "(tampoco en la URL de input_required)" if not shown else "el state del flujo "
                "(el que tu página mandó a Nube de Copias) apareció en lo que recibió el cliente "
                "(la URL de input_required o un resultado): solo viaja entre el navegador, el "
                "proveedor y tu servidor; el enlace lleva el identificador del flujo",
                severe=True)


@graded("ejercicio3b_2026", 1, "accept es solo consentimiento: sin la página de retorno, pending",
        severe=NOTHING_YET, must_not=True)
def test_accept_is_consent_only(lab, grade):
    run = scene(lab, grade, STATELESS_VERSION, answers=[ACCEPT, ACCEPT])
    run.user.browser = Browser(browser_of(run), None, ("allow", "callback"))
    first = ask(run)
    grade.require(first.shape, f"notes_backup no pidió el modo URL (respondió "
                  f"{reply(first.trace)})")
    done = ej3.is_done(first.trace) or run.provider.copies
    grade.check(not done, "tras accept sin abrir la página, notes_backup aún no hace la copia"
                if not done else "tras accept sin abrir la página, notes_backup hizo la copia: "
                "accept es consentimiento, no el final", severe=True)
    pending = first.status == "pending"
    grade.check(pending, "y responde pending" if pending else
                f"tras accept sin abrir la página respondió {reply(first.trace, 120)}: se "
                "esperaba status pending (accept es consentimiento, no el final)")
    second = ask(run)
    done = ej3.is_done(second.trace) or run.provider.copies
    grade.check(not done, "tras accept y «Autorizar» sin volver a tu página de retorno, aún sin "
                "copia" if not done else "tras accept y «Autorizar» en Nube de Copias sin volver "
                "a tu página de retorno, notes_backup hizo la copia", severe=True)
    legitimate(grade, run, STATELESS_VERSION)


@graded("ejercicio3b_2026", 2, "decline y cancel anulan el enlace",
        severe="que tras decline o cancel el enlace ya no autorice nada", must_not=True)
def test_decline_and_cancel_retire_the_link(lab, grade):
    require_positive(lab, grade, STATELESS_VERSION)
    for answer, name in ((DECLINE, "decline"), (CANCEL, "cancel")):
        run = flow_server(lab, STATELESS_VERSION, answers=[answer])
        first = asked(grade, run)
        said = first.status == "not_authorized"
        grade.check(said, f"tras {name} responde not_authorized sin copiar nada" if said else
                    f"tras {name} respondió {reply(first.trace, 120)}: se esperaba status "
                    "not_authorized")
        browse(browser_of(run), first.url)
        not_authorized(grade, run, f"tras {name}, alguien abrió el enlace y autorizó")
        legitimate(grade, run, STATELESS_VERSION)


@graded("ejercicio3b_2026", 1, "no envía notifications/elicitation/complete en 2026-07-28")
def test_no_completion_notification_in_2026(lab, grade):
    facts = require_positive(lab, grade, STATELESS_VERSION)
    grade.check(not facts.notified, "en 2026-07-28 no envía notifications/elicitation/complete "
                "(no existe: el cliente se entera al reintentar)" if not facts.notified else
                "en 2026-07-28 envió notifications/elicitation/complete, que esa revisión "
                "retiró: el cliente se entera al reintentar (guarda el flujo sin notificación)")


REPLAY_UNTIL = 2.5  # seconds after its flow was created that its round is sent again, twice a
#                    second (while the requestState still opens: lab.STATE_TTL)


@graded("ejercicio3b_2026", 1, "un enlace caduca a la hora fijada al crear su flujo, aunque la "
        "llamada se repita", severe="que un state sirva una sola vez y caduque", must_not=True)
def test_a_links_lifetime_is_fixed_when_its_flow_is_created(lab, grade):
    run = scene(lab, grade, STATELESS_VERSION)
    url, retry = ej3.consent_round(run)  # the flow is created, the user consents
    created = time.monotonic()
    grade.require(url, "notes_backup no pidió el modo URL dentro de input_required")
    while created + REPLAY_UNTIL > time.monotonic():
        yield min(0.5, created + REPLAY_UNTIL - time.monotonic())
        run.request("tools/call", retry)  # the same round again: its requestState, its answer
    yield from ej3.lifetime_passes(run, created)  # (never idle for long meanwhile)
    browse(browser_of(run), url)  # the link, opened after the lifetime its flow was created with
    not_authorized(grade, run, "con el enlace abierto y autorizado después de su caducidad "
                   "(ctx.url_ttl desde que se creó el flujo), aunque entre medias se repitió la "
                   "llamada")
    legitimate(grade, run, STATELESS_VERSION)
