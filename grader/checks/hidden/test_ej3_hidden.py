"""Exercise 3, hidden tests: the same rules as the statement, on cases the public tests do not
show. Their texts carry none of their inputs (grader/checks/grading.py: `hidden=True` drops
what was received and expected).

The guard: tables of other versions, pre-releases, revisions and declarations (feedback says
only that a case of the table fails). Each table still mixes a case that must use URL mode, a
case where only the version says no, and a case where only the protocol or the capability says
no. The flow: a link and its state expire; an authorization is only its owner's; a capability
declared in another shape is not URL mode.
"""

from grader.checks import ej3
from grader.checks.ej3 import (
    ACCEPT,
    DECLINE,
    MANUAL,
    MANUAL_STATUS,
    TOOL,
    URL,
    Browser,
    Case,
    ask,
    browse,
    flow_server,
    is_done,
    require_positive,
    table,
)
from grader.checks.grading import REVISIONS, graded
from grader.checks.lab import URL_TTL as TTL  # every server's link lifetime (ctx.url_ttl)
from protocol import STATELESS_VERSION


@graded("ejercicio3", 1, "versiones de dos componentes y números de varias cifras", hidden=True)
def test_short_and_long_version_numbers(lab, grade):
    table(lab, grade, [
        Case("1.24", "2025-11-25", "form+url", URL),
        Case("1.23", "2025-11-25", "form+url", MANUAL),
        Case("10.0.0", "2026-07-28", "form+url", URL),
        Case("1.22.9", "2025-11-25", "form+url", MANUAL),
        Case("1.30.2", "2025-11-25", "{}", MANUAL),
        Case("2.3.0.1", "2025-11-25", "form+url", MANUAL),
        Case("2.3.0xyz", "2025-11-25", "form+url", MANUAL),
    ], hidden=True)


@graded("ejercicio3", 1, "pre-releases de otras versiones", hidden=True)
def test_other_prereleases(lab, grade):
    table(lab, grade, [
        Case("2.0.0rc2", "2026-07-28", "form+url", MANUAL),
        Case("2.0.0", "2026-07-28", "url", URL),
        Case("1.23.2rc1", "2025-11-25", "form+url", URL),
        Case("1.23.1b2", "2025-11-25", "form+url", MANUAL),
        Case("2.1.0a1", "2026-07-28", "form+url", URL),
        Case("2.1.0a1", "2026-07-28", "form", MANUAL),
        Case("2.3.0b", "2025-11-25", "form+url", MANUAL),
        Case("2.3.0.dev1", "2025-11-25", "form+url", MANUAL),
        Case("2.3.0-beta", "2025-11-25", "form+url", MANUAL),
    ], hidden=True)


@graded("ejercicio3", 1, "otras revisiones del protocolo y otras formas de declarar la "
        "capacidad", hidden=True)
def test_other_revisions_and_declarations(lab, grade):
    table(lab, grade, [
        Case("2.3.0", "2025-03-26", "form+url", MANUAL),
        Case("2.3.0", "2024-11-05", "form+url", MANUAL),
        Case("2.3.0", "2025-11-25", "url", URL),
        Case("1.23.0", "2025-11-25", "url", MANUAL),
        Case("2.3.0", "2026-07-28", "{}", MANUAL),
        Case("2.3.0", "2025-11-25", "url:true", MANUAL),
        Case("2.3.0", "2026-07-28", "url:null", MANUAL),
    ], hidden=True)


# == the flow ===================================================================================
@graded("ejercicio3", 1, "un enlace y su state caducan", revisions=REVISIONS, hidden=True,
        severe="que un state sirva una sola vez y caduque")
def test_a_link_and_its_state_expire(lab, grade, revision):
    require_positive(lab, grade, revision)
    stateless = revision == STATELESS_VERSION
    run = flow_server(lab, revision, answers=[ACCEPT, ACCEPT, DECLINE] if stateless else ())
    if stateless:
        run.user.browser = Browser(run.fetch, ("allow", "callback"), None)
    first = ask(run)
    grade.require(first.url, "notes_backup no pidió el modo URL")
    visit = run.user.browser.visits[0] if stateless and run.user.browser.visits \
        else browse(run.fetch, first.url, "allow", stop="callback")
    second = ask(run)
    grade.require(second.url, "notes_backup no pidió el modo URL")
    yield TTL + 0.6  # the link's lifetime passes (grader/checks/later.py)
    if visit.back:
        run.fetch(visit.back)   # back from the provider after the link's lifetime
    browse(run.fetch, second.url)  # a link opened after its lifetime
    done = is_done(run.call(TOOL))
    grade.check(not done, "un flujo que se completa después de caducar no autoriza nada"
                if not done else "un flujo completado después de caducar (ctx.url_ttl) dejó al "
                "usuario autorizado: el enlace y su state caducan", severe=True)


@graded("ejercicio3", 1, "una autorización solo la usa quien la hizo", revisions=REVISIONS,
        hidden=True, severe="que un flujo solo lo complete y lo use quien lo empezó")
def test_an_authorization_is_only_its_owners(lab, grade, revision):
    require_positive(lab, grade, revision)
    stateless = revision == STATELESS_VERSION
    run = flow_server(lab, revision, answers=[ACCEPT] if stateless else (), second=True,
                      second_answers=[DECLINE])
    if stateless:
        run.user.browser = Browser(run.fetch, ("allow", None))
    first = ask(run)
    grade.require(first.url, "notes_backup no pidió el modo URL")
    if not stateless:
        browse(run.fetch, first.url)
    mine = first.trace if stateless and is_done(first.trace) else run.call(TOOL)
    grade.require(is_done(mine), "quien autorizó no pudo hacer la copia después", gate=ej3.POSITIVE)
    done = is_done(run.peer.call(TOOL))
    grade.check(not done, "otra persona, en su propia sesión, no hace la copia con la "
                "autorización de otro" if not done else "otra persona, en su propia sesión, "
                "hizo la copia con la autorización de otro: guárdala para quien la hizo "
                "(ctx.user)", severe=True)


@graded("ejercicio3", 1, "otra forma de declarar la capacidad no es el modo URL",
        revisions=REVISIONS, hidden=True, severe="no enviar nunca el modo URL a un cliente que "
        "no declaró elicitation.url")
def test_a_capability_in_another_shape_is_not_url_mode(lab, grade, revision):
    require_positive(lab, grade, revision)
    caps = {"form": {}, "url": True} if revision == STATELESS_VERSION else {"url": None}
    run = flow_server(lab, revision, elicitation=caps)
    first = ask(run)
    grade.check(not first.shape, "sin modo URL para ese cliente" if not first.shape else
                "envió el modo URL a un cliente que no lo declaró como se debe", severe=True)
    trace = first.trace
    safe = not first.shape and not trace.prompts and trace.error is None \
        and trace.structured.get("status") == MANUAL_STATUS
    grade.check(safe, "y da la alternativa segura sin preguntar nada" if safe else
                "no dio la alternativa segura sin preguntar nada")
