"""Exercise 3B, public tests: Nube de Copias's first-run authorization in URL mode, at
2025-11-25, with the course's own guard (grader/checks/ej3.py).

Every test but the positive scenario's own requires that scenario first. Nube de Copias is the
grader's: a copy counts only when it recorded one, for the user who authorized. Severe tests
(`severe=`) guard what the statement calls «lo imprescindible»; a test of what must not happen
ends with the user's own flow on the same server (`legitimate`), which must still work.
"""

import secrets
import time

from grader.checks import ej3
from grader.checks.ej3 import (
    IDENTITY_PARAM,
    MANUAL_STATUS,
    MIN_ID_BITS,
    NOTES,
    POSITIVE,
    PROVIDER_PAGE,
    ask,
    asked,
    browse,
    browser_of,
    flow_server,
    forged,
    id_bits,
    legitimate,
    not_authorized,
    refused,
    reply,
    require_positive,
    scene,
)
from grader.checks.grading import graded, short
from urlflow.setup_page import INLINE_BASE

OWNER = "que un flujo solo lo complete y lo use quien lo empezó"
ONCE = "que un state sirva una sola vez y caduque"
THEIRS = ("tu página de retorno completa solo el flujo de su state, y solo si es de quien está en "
          "el navegador (nunca «el último flujo pendiente»)")
SPENT = "el state se gasta la primera vez que vuelve: sácalo con pop antes de comprobar nada"
NO_CODE = ("200 es solo para un flujo completado de verdad: sin un code que Nube de Copias acepte "
           "no se autoriza nada")


@graded("ejercicio3b", 3, POSITIVE)
def test_authorizes_at_the_provider_and_then_backs_up(lab, grade):
    facts = ej3.positive(lab, ej3.LATEST_HANDSHAKE)
    grade.require(facts.shown, ej3.why_not_shown(lab, facts, ej3.LATEST_HANDSHAKE))
    grade.check(True, "sin autorización pidió el modo URL; el enlace llevó a Nube de Copias con "
                "un state, tras «Autorizar» tu página de retorno respondió 200, notes_backup "
                f"hizo la copia de las {len(NOTES)} notas y Nube de Copias la tiene, en la "
                "cuenta de quien autorizó")


@graded("ejercicio3b", 2, "la herramienta que no puede seguir responde el error −32042 con "
        "data.elicitations")
def test_a_tool_that_cannot_go_on_answers_32042(lab, grade):
    facts = require_positive(lab, grade)
    if facts.shape != "-32042":
        grade.check(False, "en 2025-11-25 notes_backup, sin autorización, pidió el modo URL con "
                    "una elicitación dentro de la llamada; la herramienta que no puede seguir "
                    "debe terminar con el error −32042 (URLElicitationRequired) y la URL en "
                    "data.elicitations")
        return
    params = facts.params or {}
    missing = [k for k in ("message", "url", "elicitationId")
               if not (isinstance(params.get(k), str) and params.get(k))]
    grade.check(not missing, "el error −32042 lleva en data.elicitations una elicitación en modo "
                "URL con message, url y elicitationId" if not missing else
                "la elicitación en modo URL de data.elicitations del error −32042 no tiene "
                + ", ".join(missing) + " (textos no vacíos)")


@graded("ejercicio3b", 1, "el enlace abre una página del propio servidor y no dice quién eres")
def test_the_link_opens_the_servers_own_page_and_names_nobody(lab, grade):
    facts = require_positive(lab, grade)
    url = facts.visit.url
    own = url.startswith(INLINE_BASE + "/") and not url.startswith(PROVIDER_PAGE)
    grade.check(own, "el enlace es una página del propio servidor (la que luego lleva al "
                "proveedor)" if own else
                f"el enlace {short(url, 160)} no es una página de tu servidor: debe llevar a tu "
                "página de conexión (ctx.page_url), que es la que envía al proveedor")
    names = [name for name in ej3._query(url) if IDENTITY_PARAM.search(name)]
    user = lab.state.names.user
    says = user in url or user.replace("-", "%2D") in url
    grade.check(not names and not says, "el enlace no lleva quién eres (ni usuario ni sesión)"
                if not names and not says else
                "el enlace dice quién eres (" + ", ".join(
                    [f"el parámetro {n}" for n in names] + (["tu usuario"] if says else []))
                + "): la página comprueba quién está en el navegador (page.user), no lo que "
                "diga la URL. (Los secretos del flujo los mira «no llega al cliente ningún "
                "token, code ni state»)")


@graded("ejercicio3b", 1, "cada flujo tiene su propio identificador, imposible de adivinar")
def test_each_flow_has_its_own_unguessable_id(lab, grade):
    run = scene(lab, grade)
    asks = [ask(run) for _ in range(6)]
    values = [a.elicitation_id for a in asks]
    missing = next((a for a, v in zip(asks, values, strict=True) if not v), None)
    grade.require(missing is None, "no todas las llamadas pidieron el modo URL con un "
                  f"elicitationId (una respondió {reply(missing.trace) if missing else ''})")
    distinct = len(set(values)) == len(values)
    grade.check(distinct, "seis flujos, seis elicitationId distintos" if distinct else
                f"seis flujos y solo {len(set(values))} elicitationId distintos: cada flujo "
                "necesita el suyo")
    bits = id_bits(values)
    grade.check(bits >= MIN_ID_BITS, "lo que cambia de un elicitationId a otro parece aleatorio "
                f"(≥ {MIN_ID_BITS} bits)" if bits >= MIN_ID_BITS else
                "lo que cambia de un elicitationId a otro se podría adivinar (unos "
                f"{bits:.0f} bits, se esperan al menos {MIN_ID_BITS}: un contador, una hora o "
                "algo corto); usa secrets.token_urlsafe")


@graded("ejercicio3b", 1, "cada flujo tiene su propio state, imposible de adivinar",
        severe="un state imposible de adivinar, uno por flujo", must_not=True)
def test_each_flow_has_its_own_unguessable_state(lab, grade):
    run = scene(lab, grade)
    links = [(ask(run), False), (ask(run.peer), True), (ask(run), False), (ask(run.peer), True)]
    grade.require(all(a.url for a, _ in links), "no todas las llamadas pidieron el modo URL")
    states = [browse(browser_of(run, peer), a.url, stop="provider").state for a, peer in links]
    grade.require(all(states), "no todos los enlaces llevaron a Nube de Copias con un state")
    distinct = len(set(states)) == len(states)
    bits = id_bits(states)
    good = distinct and bits >= MIN_ID_BITS
    grade.check(good, "cuatro flujos empezados casi a la vez (dos tuyos y dos de otra persona), "
                "cuatro states distintos que parecen aleatorios" if good else
                "cuatro flujos empezados casi a la vez (dos tuyos y dos de otra persona) "
                + (f"comparten state ({len(set(states))} distintos)" if not distinct else
                   f"tienen states que se podrían adivinar (unos {bits:.0f} bits, se esperan al "
                   f"menos {MIN_ID_BITS})") + ": un state hecho con la hora se repite o se "
                "adivina; sácalo de secrets (secrets.token_urlsafe)", severe=True)
    legitimate(grade, run)


@graded("ejercicio3b", 1, "nada queda autorizado hasta que la página de retorno completa el "
        "flujo", severe="no dar por autorizado nada hasta que la página de retorno canjea el "
        "code y completa el flujo", must_not=True)
def test_nothing_is_authorized_until_the_callback_completes_the_flow(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    browse(browser_of(run), first.url, stop="provider")
    not_authorized(grade, run, "tras abrir el enlace y ver la página de Nube de Copias sin "
                   "pulsar nada")
    second = ask(run)
    if second.url:
        browse(browser_of(run), second.url, "allow", stop="callback")
    not_authorized(grade, run, "tras pulsar «Autorizar» en Nube de Copias sin volver a tu página "
                   "de retorno")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "avisa del final con notifications/elicitation/complete")
def test_completion_is_notified(lab, grade):
    facts = require_positive(lab, grade)
    eid = (facts.params or {}).get("elicitationId")
    ours = [n for n in facts.notified if n == eid]
    others = [n for n in facts.notified if n != eid]
    grade.check(len(ours) == 1 and not others,
                "cuando tu página de retorno completa el flujo llega una notifications/"
                "elicitation/complete con su elicitationId" if len(ours) == 1 and not others
                else "tras completar el flujo en tu página de retorno "
                + ("no llegó notifications/elicitation/complete con su elicitationId (¿guardaste "
                   "ctx.completion_notifier() con el flujo y lo llamaste al completarlo?)"
                   if not ours else
                   f"llegaron {len(ours)} notificaciones con su elicitationId" if len(ours) > 1
                   else "llegó además una notificación con otro elicitationId"))


@graded("ejercicio3b", 1, "no llega al cliente ningún token, code ni state",
        severe="no dejar un token, un code o el state del flujo en manos del cliente")
def test_no_token_code_or_state_reaches_the_client(lab, grade):
    facts = require_positive(lab, grade)
    grade.check(not facts.leaks, "ningún mensaje al cliente lleva un code ni un token de Nube de "
                "Copias" if not facts.leaks else "un mensaje al cliente llevaba "
                + " y ".join(facts.leaks) + ": la credencial se queda en el servidor", severe=True)
    shown = ej3.carries(facts.traces, facts.visit.state)
    grade.check(not shown, "el state del flujo no aparece en nada de lo que recibe el cliente"
                if not shown else "el state del flujo (el que tu página mandó a Nube de Copias) "
                "apareció en lo que recibió el cliente (la URL, el elicitationId o un "
                "resultado): solo viaja entre el navegador, el proveedor y tu servidor",
                severe=True)


@graded("ejercicio3b", 1, "el navegador de otra persona no completa tu flujo", severe=OWNER,
        must_not=True)
def test_another_persons_browser_cannot_complete_the_flow(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    visit = browse(browser_of(run, peer=True), first.url)
    grade.note("el navegador de la otra persona vio: tu enlace → "
               + ej3.page_text(visit.link, 100))
    not_authorized(grade, run, "cuando otra persona abrió tu enlace y autorizó en su navegador")
    not_authorized(grade, run, "para la otra persona, que no autorizó nada suyo", peer=True)
    legitimate(grade, run)


@graded("ejercicio3b", 1, "tu página de retorno completa solo el flujo de su state",
        severe=OWNER, must_not=True)
def test_the_callback_completes_only_the_flow_of_its_state(lab, grade):
    run = scene(lab, grade)
    grade.require(ask(run).url, "notes_backup no pidió el modo URL")  # a pending flow of yours
    made_up = forged(browser_of(run), run.provider, secrets.token_urlsafe(32))
    page = browser_of(run)(made_up.back)
    refused(grade, page, "con un code de verdad y un state que no es de ningún flujo", THEIRS)
    not_authorized(grade, run, "tras llegar a tu página de retorno un state que no es de "
                   "ningún flujo (tu flujo pendiente no es «el que toca»)")
    theirs = ask(run.peer)  # another person's flow: they authorize, you get their way back
    grade.require(theirs.url, "notes_backup no pidió el modo URL a la otra persona")
    visit = browse(browser_of(run, peer=True), theirs.url, "allow", stop="callback")
    grade.require(visit.back, "el enlace de la otra persona no llevó a Nube de Copias "
                  f"(tu página respondió {ej3.page_text(visit.link)})")
    page = browser_of(run)(visit.back)
    refused(grade, page, "cuando tu navegador trae el code y el state del flujo de otra persona",
            THEIRS)
    not_authorized(grade, run, "tras traer tu navegador el code y el state del flujo de otra "
                   "persona")
    not_authorized(grade, run, "para la otra persona, cuyo flujo se completó en otro navegador",
                   peer=True)
    legitimate(grade, run)


@graded("ejercicio3b", 1, "un state sirve una sola vez, también si Nube de Copias rechaza el "
        "code", severe=ONCE, must_not=True)
def test_a_state_is_used_once(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    visit = browse(browser_of(run), first.url, "deny")
    grade.require(visit.authorize, "el enlace no llevó a Nube de Copias (tu página respondió "
                  f"{ej3.page_text(visit.link)})")
    again = ej3.replay(browser_of(run), visit)
    refused(grade, again.callback, "tras «Rechazar», la misma petición con un code nuevo y el "
            "mismo state", SPENT)
    not_authorized(grade, run, "tras usar otra vez un state ya gastado")
    # a code Nube de Copias refuses spends the state too: it is never put back for a retry
    second = asked(grade, run)
    visit = browse(browser_of(run), second.url, "allow", stop="callback")
    grade.require(visit.back, "el enlace no llevó a Nube de Copias (tu página respondió "
                  f"{ej3.page_text(visit.link)})")
    run.provider.revoke(visit.code)  # Nube de Copias will refuse this code
    browser_of(run)(visit.back)
    again = ej3.replay(browser_of(run), visit)
    refused(grade, again.callback, "después de que Nube de Copias rechazara el code, la misma "
            "petición con un code nuevo y el mismo state", SPENT + ", también cuando Nube de "
            "Copias rechaza el code: un state no se devuelve a STATES para reintentar")
    not_authorized(grade, run, "tras volver con el state de un code que Nube de Copias rechazó")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "un state que trae el navegador de otra persona queda gastado",
        severe=ONCE, must_not=True)
def test_a_state_another_persons_browser_brings_back_is_spent(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    mine = browse(browser_of(run), first.url, stop="provider")
    grade.require(mine.authorize, "el enlace no llevó a Nube de Copias (tu página respondió "
                  f"{ej3.page_text(mine.link)})")
    ej3.replay(browser_of(run, peer=True), mine)  # your state, in another person's browser
    late = ej3.replay(browser_of(run), mine)      # then you press «Autorizar»
    refused(grade, late.callback, "después de que el navegador de otra persona trajera tu state, "
            "ese mismo state en tu navegador", SPENT + ", aunque lo traiga otra persona")
    not_authorized(grade, run, "tras volver con un state que ya trajo otra persona")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "sin code, o con un code que Nube de Copias rechaza, la página de "
        "retorno no responde éxito", severe="no dar por autorizado nada hasta que la página de "
        "retorno canjea el code y completa el flujo", must_not=True)
def test_without_a_valid_code_the_callback_reports_no_success(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    denied = browse(browser_of(run), first.url, "deny")
    refused(grade, denied.callback, "tras «Rechazar» en Nube de Copias (vuelve sin code)",
            NO_CODE)
    not_authorized(grade, run, "tras «Rechazar» en Nube de Copias")
    second = ask(run)
    grade.require(second.url, "notes_backup no pidió el modo URL otra vez")
    visit = browse(browser_of(run), second.url, "allow", stop="callback")
    grade.require(visit.back, "el enlace no llevó a Nube de Copias")
    run.provider.revoke(visit.code)  # Nube de Copias will refuse this code
    page = browser_of(run)(visit.back)
    refused(grade, page, "con un code que Nube de Copias rechaza al canjearlo", NO_CODE)
    not_authorized(grade, run, "tras un code que Nube de Copias rechazó")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "un enlace y su state caducan", severe=ONCE, must_not=True)
def test_a_link_and_its_state_expire(lab, grade):
    run = scene(lab, grade)
    first = asked(grade, run)
    visit = browse(browser_of(run), first.url, "allow", stop="callback")
    second = ask(run)
    grade.require(second.url, "notes_backup no pidió el modo URL otra vez")
    # both links' lifetime (ctx.url_ttl) passes (grader/checks/later.py), the server kept busy
    yield from ej3.lifetime_passes(run, time.monotonic())
    if visit.back:
        browser_of(run)(visit.back)  # back from Nube de Copias after the lifetime
    browse(browser_of(run), second.url)  # a link opened after its lifetime
    not_authorized(grade, run, "con dos flujos completados después de caducar (ctx.url_ttl)")
    legitimate(grade, run)


@graded("ejercicio3b", 1, "una autorización solo la usa quien la hizo", severe=OWNER, must_not=True)
def test_an_authorization_is_only_its_owners(lab, grade):
    run = scene(lab, grade)
    legitimate(grade, run)  # you authorize, and your copy is made
    not_authorized(grade, run, "para otra persona, en su propia sesión, con la autorización de "
                   "otro", peer=True)
    legitimate(grade, run)  # and yours still works


@graded("ejercicio3b", 1, "sin modo URL posible, la alternativa manual, sin preguntar nada",
        severe="no enviar nunca el modo URL a un cliente que no declaró elicitation.url")
def test_without_url_mode_a_manual_fallback_that_asks_nothing(lab, grade):
    require_positive(lab, grade)
    for caps, who in (({"form": {}}, "un cliente que solo declaró el modo formulario"),
                      ({}, "un cliente que declaró elicitation vacío (solo formulario)")):
        run = flow_server(lab, elicitation=caps)
        first = ask(run)
        trace = first.trace
        grade.check(not first.shape, f"con {who}, nada en modo URL" if not first.shape
                    else f"con {who}, notes_backup envió el modo URL ({first.shape}): a un "
                    "cliente que no declaró elicitation.url no se le envía nunca (usa "
                    "ctx.url_mode_allowed())", severe=True)
        safe = not first.shape and not trace.prompts and trace.error is None \
            and trace.structured.get("status") == MANUAL_STATUS
        grade.check(safe, f"con {who}, la alternativa manual: status manual, sin preguntar nada"
                    if safe else f"con {who}, notes_backup respondió {reply(trace, 120)}"
                    + (f" y preguntó {len(trace.prompts)} vez/veces" if trace.prompts else "")
                    + ": se esperaba la alternativa manual (status manual) sin preguntar nada")
