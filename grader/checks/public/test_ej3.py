"""Exercise 3, public tests: URL mode for Nube de Copias's first-run authorization, behind the
learner's SDK-version guard, observed only on the wire and through the server's pages.

The guard (1 point per table): the server runs with a simulated SDK version, the client speaks
a protocol revision and declares some elicitation capability, and the server's `notes_setup`
must use URL mode or give the manual fallback as the statement's rules say. Every table mixes
cases that must use URL mode with cases where only the version, or only the protocol or the
capability, says no: a guard that always answers the same, or looks at only one of the three,
scores nothing.

The flow (grader/checks/ej3.py): every test runs under both revisions where it applies and,
except the positive scenario's own test, requires that scenario first. Severe tests
(`severe=`) guard what the statement calls «lo imprescindible».
"""

from grader.checks import ej3
from grader.checks.ej3 import (
    ACCEPT,
    CANCEL,
    DECLINE,
    MANUAL,
    MANUAL_STATUS,
    MIN_ID_BITS,
    NOTES,
    POSITIVE,
    PROVIDER_PAGE,
    TOOL,
    URL,
    Browser,
    Case,
    ask,
    browse,
    decide,
    flow_server,
    id_bits,
    not_authorized,
    reply,
    require_positive,
    table,
)
from grader.checks.grading import REVISIONS, graded, short
from protocol import LATEST_HANDSHAKE, STATELESS_VERSION
from setup_page import INLINE_BASE

GOOD = "SDK ≥ 1.23.1, protocolo 2025-11-25 y elicitation.url declarado"
GOOD_2026 = "SDK ≥ 2.0.0, protocolo 2026-07-28 y elicitation.url declarado"
NO_URL = "el cliente no declaró elicitation.url (un {} o solo form es solo formulario)"


@graded("ejercicio3", 1, "usa el modo URL a partir del SDK 1.23.1, no antes")
def test_url_mode_from_sdk_1_23_1(lab, grade):
    table(lab, grade, [
        Case("1.23.0", "2025-11-25", "form+url", MANUAL,
             "1.23.0 es anterior a 1.23.1 (la primera versión que negocia 2025-11-25)"),
        Case("1.23.1", "2025-11-25", "form+url", URL, GOOD),
        Case("2.3.0", "2025-11-25", "{}", MANUAL, NO_URL),
    ])


@graded("ejercicio3", 1, "compara las versiones como números, no como texto")
def test_versions_compare_as_numbers(lab, grade):
    table(lab, grade, [
        Case("1.9.0", "2025-11-25", "form+url", MANUAL,
             "1.9.0 es anterior a 1.23.1 (9 < 23: las versiones se comparan como números)"),
        Case("1.100.0", "2025-11-25", "form+url", URL,
             "1.100.0 es posterior a 1.23.1 (100 > 23: las versiones se comparan como números)"),
        Case("1.23.1", "2025-11-25", "form", MANUAL, NO_URL),
    ])


@graded("ejercicio3", 1, "sin versión, con una ilegible o con una pre-release anterior: "
        "alternativa manual")
def test_missing_unreadable_or_prerelease_versions_mean_no(lab, grade):
    table(lab, grade, [
        Case("", "2025-11-25", "form+url", MANUAL,
             "sin versión del SDK no se sabe si lo admite: la respuesta es no"),
        Case("desconocida", "2025-11-25", "form+url", MANUAL,
             "una versión ilegible significa no"),
        Case("1.23.1rc1", "2025-11-25", "form+url", MANUAL,
             "1.23.1rc1 es una pre-release, anterior a la 1.23.1 final"),
        Case("2.3.0", "2025-11-25", "form+url", URL, GOOD),
        Case("2.3.0", "2025-06-18", "form+url", MANUAL,
             "2025-06-18 no tiene modo URL"),
    ])


@graded("ejercicio3", 1, "tiene en cuenta el protocolo negociado (2025-06-18 no; 2026-07-28 "
        "solo con SDK 2.x)")
def test_negotiated_protocol_counts(lab, grade):
    table(lab, grade, [
        Case("2.3.0", "2025-06-18", "form+url", MANUAL, "2025-06-18 no tiene modo URL"),
        Case("2.3.0", "2026-07-28", "form+url", URL, GOOD_2026),
        Case("1.30.0", "2026-07-28", "form+url", MANUAL,
             "2026-07-28 necesita un SDK ≥ 2.0.0 y 1.30.0 es 1.x"),
        Case("1.30.0", "2025-11-25", "form+url", URL, GOOD),
        Case("2.0.0b1", "2026-07-28", "form+url", MANUAL,
             "2.0.0b1 es una pre-release, anterior a la 2.0.0 que exige 2026-07-28"),
    ])


@graded("ejercicio3", 1, "solo usa el modo URL si el cliente declaró elicitation.url")
def test_client_must_declare_url_elicitation(lab, grade):
    table(lab, grade, [
        Case("2.3.0", "2025-11-25", "form+url", URL, GOOD),
        Case("2.3.0", "2025-11-25", "{}", MANUAL, NO_URL),
        Case("2.3.0", "2026-07-28", "url", URL, GOOD_2026),
        Case("2.3.0", "2026-07-28", "form", MANUAL, NO_URL),
        Case("2.3.0", "2026-07-28", "ninguna", MANUAL, "el cliente no declaró elicitation"),
        Case("1.23.0", "2025-11-25", "form+url", MANUAL,
             "1.23.0 es anterior a 1.23.1 (la primera versión que negocia 2025-11-25)"),
    ])


# == the flow ===================================================================================
@graded("ejercicio3", 2, POSITIVE, revisions=REVISIONS)
def test_authorizes_at_the_provider_and_then_backs_up(lab, grade, revision):
    facts = ej3.positive(lab, revision)
    grade.require(facts.shown, ej3.why_not_shown(facts, revision))
    how = {"-32042": "el error −32042", "input_required": "input_required",
           "elicitation/create": "una elicitación en la misma llamada"}[facts.shape]
    grade.check(True, f"sin autorización pidió el modo URL ({how}); el enlace llevó a Nube de "
                "Copias con un state, tras «Autorizar» tu página de vuelta respondió 200 y "
                f"notes_backup hizo la copia de las {len(NOTES)} notas")


@graded("ejercicio3", 2, "la herramienta que no puede seguir responde el error −32042 con "
        "data.elicitations", revisions=(LATEST_HANDSHAKE,))
def test_a_tool_that_cannot_go_on_answers_32042(lab, grade, revision):
    facts = require_positive(lab, grade, revision)
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


@graded("ejercicio3", 1, "el enlace abre una página del propio servidor y no dice quién eres",
        revisions=REVISIONS)
def test_the_link_opens_the_servers_own_page_and_names_nobody(lab, grade, revision):
    facts = require_positive(lab, grade, revision)
    url = facts.visit.url
    own = url.startswith(INLINE_BASE + "/") and not url.startswith(PROVIDER_PAGE)
    grade.check(own, "el enlace es una página del propio servidor (la que luego lleva al "
                "proveedor)" if own else
                f"el enlace {short(url, 160)} no es una página de tu servidor: debe llevar a tu "
                "página de conexión (ctx.page_url), que es la que envía al proveedor")
    names = [name for name in ej3._query(url) if ej3.IDENTITY_PARAM.search(name)]
    says = [who for who in (lab.state.names.user,)
            if who in url or who.replace("-", "%2D") in url]
    grade.check(not names and not says, "el enlace no lleva quién eres (ni usuario ni sesión)"
                if not names and not says else
                "el enlace dice quién eres (" + ", ".join(
                    [f"el parámetro {n}" for n in names] + [f"el usuario {w}" for w in says])
                + "): la página comprueba quién está en el navegador (page.user), no lo que "
                "diga la URL. (Los secretos del flujo los mira «no llega al cliente ningún "
                "token, code ni state»)")


@graded("ejercicio3", 1, "cada flujo tiene su propio identificador, imposible de adivinar",
        revisions=REVISIONS)
def test_each_flow_has_its_own_unguessable_id(lab, grade, revision):
    require_positive(lab, grade, revision)
    run = flow_server(lab, revision, answers=[DECLINE] * 6)
    asks = [ask(run) for _ in range(6)]
    stateless = revision == STATELESS_VERSION
    values = [a.url if stateless else a.elicitation_id for a in asks]
    what = "los enlaces" if stateless else "los elicitationId"
    missing = next((a for a, v in zip(asks, values, strict=True) if not v), None)
    grade.require(missing is None, "no todas las llamadas pidieron el modo URL con "
                  f"{'una URL' if stateless else 'un elicitationId'} (una respondió "
                  f"{reply(missing.trace) if missing else ''})")
    distinct = len(set(values)) == len(values)
    grade.check(distinct, f"seis flujos, seis {what} distintos" if distinct else
                f"seis flujos y solo {len(set(values))} {what} distintos: cada flujo necesita "
                "el suyo")
    bits = id_bits(values)
    grade.check(bits >= MIN_ID_BITS, f"lo que cambia entre {what} parece aleatorio "
                f"(≥ {MIN_ID_BITS} bits)" if bits >= MIN_ID_BITS else
                f"lo que cambia de un flujo a otro en {what} se podría adivinar (unos "
                f"{bits:.0f} bits, se esperan al menos {MIN_ID_BITS}: un contador, una hora o "
                "algo corto); usa secrets.token_urlsafe")


@graded("ejercicio3", 1, "nada queda autorizado hasta que la página de vuelta completa el flujo",
        revisions=REVISIONS, severe="no dar por autorizado nada hasta que la página de vuelta "
        "completa el flujo")
def test_nothing_is_authorized_until_the_provider_calls_back(lab, grade, revision):
    require_positive(lab, grade, revision)
    if revision == STATELESS_VERSION:
        run = flow_server(lab, revision, answers=[ACCEPT, ACCEPT, DECLINE])
        run.user.browser = Browser(run.fetch, None, ("allow", "callback"))
        first = ask(run)
        grade.require(first.shape, f"notes_backup no pidió el modo URL (respondió "
                      f"{reply(first.trace)})")
        not_authorized(grade, first.trace, "tras accept sin abrir la página")
        pending = first.status == "pending"
        grade.check(pending, "y responde pending (accept es solo consentimiento)" if pending
                    else f"tras accept sin abrir la página respondió {reply(first.trace, 120)}: "
                    "se esperaba status pending (accept es consentimiento, no el final)")
        second = ask(run)
        not_authorized(grade, second.trace, "tras accept y «Autorizar» en Nube de Copias sin "
                       "volver a tu página de vuelta")
        return
    run = flow_server(lab, revision)
    first = ask(run)
    grade.require(first.url, f"notes_backup no pidió el modo URL (respondió "
                  f"{reply(first.trace)})")
    browse(run.fetch, first.url, stop="provider")
    second = ask(run)
    not_authorized(grade, second.trace, "tras abrir el enlace y ver la página de Nube de Copias "
                   "sin pulsar nada")
    if second.url:
        browse(run.fetch, second.url, "allow", stop="callback")
    not_authorized(grade, run.call(TOOL), "tras pulsar «Autorizar» en Nube de Copias sin volver "
                   "a tu página de vuelta")


@graded("ejercicio3", 1, "avisa del final con notifications/elicitation/complete solo en "
        "2025-11-25", revisions=REVISIONS)
def test_completion_is_notified_only_in_2025_11_25(lab, grade, revision):
    facts = require_positive(lab, grade, revision)
    if revision == STATELESS_VERSION:
        grade.check(not facts.notified, "en 2026-07-28 no envía notifications/elicitation/"
                    "complete (no existe: el cliente se entera al reintentar)" if not
                    facts.notified else "en 2026-07-28 envió notifications/elicitation/"
                    "complete, que esa revisión retiró: el cliente se entera al reintentar")
        return
    eid = (facts.params or {}).get("elicitationId")
    ours = [n for n in facts.notified if n == eid]
    others = [n for n in facts.notified if n != eid]
    grade.check(len(ours) == 1 and not others,
                "cuando tu página de vuelta completa el flujo llega una notifications/"
                "elicitation/complete con su elicitationId" if len(ours) == 1 and not others
                else "tras completar el flujo en tu página de vuelta "
                + ("no llegó notifications/elicitation/complete con su elicitationId (¿guardaste "
                   "ctx.completion_notifier() con el flujo y lo llamaste al completarlo?)"
                   if not ours else
                   f"llegaron {len(ours)} notificaciones con su elicitationId" if len(ours) > 1
                   else "llegó además una notificación con otro elicitationId"))


@graded("ejercicio3", 1, "no llega al cliente ningún token, code ni state", revisions=REVISIONS,
        severe="no dejar un token, un code o el state del flujo en manos del cliente")
def test_no_token_code_or_state_reaches_the_client(lab, grade, revision):
    facts = require_positive(lab, grade, revision)
    grade.check(not facts.leaks, "ningún mensaje al cliente lleva un code ni un token de Nube de "
                "Copias" if not facts.leaks else "un mensaje al cliente llevaba "
                + " y ".join(facts.leaks) + ": la credencial se queda en el servidor", severe=True)
    state = facts.visit.state
    shown = ej3.carries(facts.traces, state)
    grade.check(not shown, "el state del flujo no aparece en nada de lo que recibe el cliente"
                if not shown else "el state del flujo (el que tu página mandó a Nube de Copias) "
                "apareció en lo que recibió el cliente (la URL, el elicitationId o un "
                "resultado): solo viaja entre el navegador, el proveedor y tu servidor",
                severe=True)


@graded("ejercicio3", 1, "el navegador de otra persona no completa tu flujo",
        revisions=REVISIONS, severe="que un flujo solo lo complete y lo use quien lo empezó")
def test_another_persons_browser_cannot_complete_the_flow(lab, grade, revision):
    require_positive(lab, grade, revision)
    stateless = revision == STATELESS_VERSION
    run = flow_server(lab, revision, answers=[ACCEPT, DECLINE] if stateless else (),
                      second=True, second_answers=[DECLINE])
    if stateless:  # the consent is yours, but another person's browser opens the link
        run.user.browser = Browser(run.peer.fetch, ("allow", None))
    first = ask(run)
    grade.require(first.url, f"notes_backup no pidió el modo URL (respondió "
                  f"{reply(first.trace)})")
    if stateless:
        visit = run.user.browser.visits[0] if run.user.browser.visits else None
        not_authorized(grade, first.trace, "cuando otra persona abrió tu enlace y autorizó en "
                       "su navegador")
    else:
        visit = browse(run.peer.fetch, first.url)
    grade.note("el navegador de la otra persona vio: tu enlace → "
               + ej3.page_text(visit.link if visit else None, 100))
    not_authorized(grade, run.call(TOOL), "cuando otra persona abrió tu enlace y autorizó en su "
                   "navegador")
    not_authorized(grade, run.peer.call(TOOL), "para la otra persona, que no autorizó nada "
                   "suyo")


@graded("ejercicio3", 1, "un state sirve una sola vez", revisions=REVISIONS,
        severe="que un state sirva una sola vez y caduque")
def test_a_state_is_used_once(lab, grade, revision):
    require_positive(lab, grade, revision)
    stateless = revision == STATELESS_VERSION
    run = flow_server(lab, revision, answers=[ACCEPT, DECLINE] if stateless else ())
    if stateless:
        run.user.browser = Browser(run.fetch, ("deny", None))
    first = ask(run)
    grade.require(first.url, f"notes_backup no pidió el modo URL (respondió "
                  f"{reply(first.trace)})")
    visit = run.user.browser.visits[0] if stateless and run.user.browser.visits \
        else browse(run.fetch, first.url, "deny")
    grade.require(visit.authorize, "el enlace no llevó a Nube de Copias (tu página respondió "
                  f"{ej3.page_text(visit.link)})")
    again = ej3.replay(run.fetch, visit)
    refused = again.callback is not None and again.callback.get("status", 0) >= 400
    grade.check(refused, "tras «Rechazar», la misma petición con un code nuevo y el mismo state "
                "no vale: tu página de vuelta responde con un error" if refused else
                "tras «Rechazar», tu página de vuelta aceptó el mismo state con un code nuevo "
                f"({ej3.page_text(again.callback, 100)}); el state se gasta la primera vez")
    not_authorized(grade, run.call(TOOL), "tras usar otra vez un state ya gastado")


@graded("ejercicio3", 2, "decline y cancel anulan el enlace", revisions=(STATELESS_VERSION,),
        severe="que tras decline o cancel el enlace ya no autorice nada")
def test_decline_and_cancel_retire_the_link(lab, grade, revision):
    require_positive(lab, grade, revision)
    for answer, name in ((DECLINE, "decline"), (CANCEL, "cancel")):
        run = flow_server(lab, revision, answers=[answer, DECLINE])
        first = ask(run)
        grade.require(first.url, f"notes_backup no pidió el modo URL (respondió "
                      f"{reply(first.trace)})")
        said = first.status == "not_authorized"
        grade.check(said, f"tras {name} responde not_authorized sin copiar nada" if said else
                    f"tras {name} respondió {reply(first.trace, 120)}: se esperaba status "
                    "not_authorized")
        browse(run.fetch, first.url)
        not_authorized(grade, run.call(TOOL), f"tras {name}, alguien abrió el enlace y autorizó")


@graded("ejercicio3", 1, "sin modo URL posible, una alternativa segura que no pregunta nada",
        revisions=REVISIONS, severe="no enviar nunca el modo URL a un cliente que no declaró "
        "elicitation.url")
def test_without_url_mode_a_safe_fallback_that_asks_nothing(lab, grade, revision):
    require_positive(lab, grade, revision)
    if revision == STATELESS_VERSION:
        cases = [("2.3.0", {"form": {}}, "un cliente que solo declaró el modo formulario", True),
                 ("2.3.0", False, "un cliente que no declaró elicitation", True),
                 ("1.30.0", None, "SDK 1.30.0 (2026-07-28 necesita ≥ 2.0.0)", False)]
    else:
        cases = [("2.3.0", {}, "un cliente que declaró elicitation vacío (solo formulario)",
                  True),
                 ("1.9.0", None, "SDK 1.9.0 (anterior a 1.23.1)", False)]
    for sdk, caps, who, undeclared in cases:
        run = flow_server(lab, revision, sdk=sdk, elicitation=caps)
        first = ask(run)
        trace = first.trace
        if undeclared:
            grade.check(not first.shape, f"con {who}, nada en modo URL" if not first.shape
                        else f"con {who}, notes_backup envió el modo URL ({first.shape}): a un "
                        "cliente que no declaró elicitation.url no se le envía nunca",
                        severe=True)
        elif first.shape:
            # one cause, charged once: when the learner's own guard says yes here, the flow
            # followed it and the guard's table has already taken the point
            if decide(lab, sdk, revision, "form+url") == URL:
                grade.note(f"con {who}, notes_backup envió el modo URL porque tu guarda dijo que "
                           "sí: ya se cuenta en la tabla de la guarda, no aquí")
            else:
                grade.check(False, f"con {who}, notes_backup envió el modo URL: tu guarda debía "
                            "decir que no (usa ctx.url_mode_allowed())")
            continue
        safe = not first.shape and not trace.prompts and trace.error is None \
            and trace.structured.get("status") == MANUAL_STATUS
        grade.check(safe, f"con {who}, la alternativa segura: status manual, sin preguntar nada"
                    if safe else f"con {who}, notes_backup respondió {reply(trace, 120)}"
                    + (f" y preguntó {len(trace.prompts)} vez/veces" if trace.prompts else "")
                    + ": se esperaba la alternativa segura (status manual) sin preguntar nada")

