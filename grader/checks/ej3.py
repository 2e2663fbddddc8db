"""Exercise 3 (URL mode for a first-run OAuth flow, behind an SDK-version guard): the scenarios
its public and hidden tests share, observed only on the wire, through the server's pages and
in the records of a provider the grader runs itself.

Three graded parts (grader/exercises.py):

- **3A, the guard** (`ejercicio3a.py` alone in the server): tables of (simulated SDK version,
  protocol revision, declared elicitation capability) -> URL mode or the manual fallback,
  observed through the server's own `notes_setup`, which asks the learner's guard. Every
  table mixes a case that must use URL mode, one where only the version says no and one where
  only the protocol or the capability says no, so none of these passes a table: always yes,
  always no, `supports_url(caps)` alone, the demo's `url_mode.demo_guard`, a guard that only
  looks at the version (numbers or text), one that only looks at the protocol. A guard that
  says yes to a client that did not declare `elicitation.url` is a severe mistake.
- **3B, the flow at 2025-11-25** (`ejercicio3b.py` alone, with the course's own guard, so a
  broken 3A never costs 3B a point): `notes_backup` needs an authorization at Nube de Copias.
  The grader is the MCP client, the user's browser *and* Nube de Copias: the server runs with
  `--provider rpc`, so its `page.provider` / `ctx.provider` ask the grader's own
  `nube_copias.Provider` (`run.provider`) to exchange a code or to make a copy, and the
  browser's visits to the provider's page are served by that provider too (`browser_of`). A
  copy counts only when the provider recorded it, in the account of the user who authorized,
  with the notes of the roots; a tool that never exchanges a code and says "done" makes none.
  The browser reaches the server's pages through the private rpc channel (`--setup-page rpc`);
  a second user's session on the same server (`--second-user`) is another person's client and
  browser. Every frame the server sends to a client is scanned for the provider's codes and
  tokens (their prefixes), and what the client was sent for the flow's `state`.
- **3B's optional part, the same flow at 2026-07-28** (notebook 6, graded apart).

Every 3B server of a submission starts alike (`flow_server`): the same file, users, lifetime
(`TTL`, the expiry test's too), second user and provider, so a flow cannot tell one test from
another; while a lifetime passes the server is kept busy (`lifetime_passes`), so no test leaves
it idle for a lifetime; the users' names are new for each submission (`state.names`). The
positive scenario (`AuthFacts`, once per submission and revision) gates every flow test. A
test of what must not happen judges the step by its effect (after it, is anyone authorized:
does the next notes_backup make a copy, or say it did?), and ends with the legitimate action on
the same server (`legitimate`: the user's own new flow still works, to a copy the provider
recorded): otherwise it scores 0, and the exercise keeps at most half (grading.REFUSED_ALL), so
a flow that refuses everything after its first success gains nothing.

Decisions of the guard tables are memoised per submission: one server per 2025 handshake
(stopped once it has answered), and one per SDK version for 2026-07-28 in each test (`lab.reuse`),
where every case of that version rides on it as a stateless request.
"""

import html
import math
import os
import re
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import nube_copias
from client.client_core import input_requests
from client.simulated_user import FORM_FIELD
from core.context import NO_URL_CAPABILITY
from grader.checks.grading import Broken, short
from grader.checks.lab import URL_TTL, require_in_time
from grader.escape import one_line
from shared import wire
from shared.protocol import (
    FORM_MODE,
    LATEST_HANDSHAKE,
    MISSING_CLIENT_CAPABILITY,
    STATELESS_VERSION,
    URL_ELICITATION_REQUIRED,
    URL_MODE,
)
from tooling import CRASH_WHERE, url_entry_problem, where_in_spanish
from urlflow.setup_page import INLINE_BASE, SetupPage

GUARD_FILE, FLOW_FILE = "ejercicio3a.py", "ejercicio3b.py"

# == 3A: the guard ==============================================================================
CAPS = {"form+url": {"form": {}, "url": {}}, "url": {"url": {}}, "form": {"form": {}},
        "{}": {}, "ninguna": False, "url:true": {"form": {}, "url": True},
        "url:null": {"url": None}}
SHOWN = {"form+url": "declaró los modos formulario y URL",
         "url": "declaró solo el modo URL", "form": "declaró solo el modo formulario",
         "{}": "declaró elicitation vacío (solo formulario)",
         "ninguna": "no declaró elicitation",
         "url:true": "declaró elicitation.url, pero no como objeto",
         "url:null": "declaró elicitation.url vacío, no como objeto"}
URL, MANUAL = "modo URL", "alternativa manual"
REFUSED = "URL rechazada por el servidor"
CAPABILITY = "no decir nunca que sí a un cliente que no declaró elicitation.url"


@dataclass(frozen=True)
class Case:
    sdk: str
    protocol: str
    caps: str
    expected: str
    why: str = ""   # the rule that decides this case, said to the learner (public tables)


def decide(lab, sdk, protocol, caps):
    """What notes_setup does for this SDK version, protocol and declared capability."""
    def observed():
        try:
            return observe(lab, sdk, protocol, caps)
        except Broken as exc:
            return f"error: {exc}"
    return lab.once(("ejercicio3a", sdk, protocol, caps), observed)


def observe(lab, sdk, protocol, caps):
    if protocol == STATELESS_VERSION:
        run = lab.reuse(("guard", sdk), lambda: lab.server(
            protocol, roots=None, sdk=sdk, elicitation=CAPS[caps], solution=GUARD_FILE))
        run.client.capabilities = {} if CAPS[caps] is False else {"elicitation": CAPS[caps]}
        call = run.call("notes_setup", timeout=10.0)
    else:  # one handshake, one case: the server is stopped as soon as it answered
        run = lab.server(protocol, roots=None, sdk=sdk, elicitation=CAPS[caps],
                         solution=GUARD_FILE)
        try:
            call = run.call("notes_setup", timeout=10.0)
        finally:
            lab.finish(run)
    if call.urls():
        return URL
    if not call.prompts and call.structured.get("status") == "manual":
        return MANUAL
    if (call.error or "").startswith(f"{MISSING_CLIENT_CAPABILITY}:") or (
            call.is_error and not call.prompts and NO_URL_CAPABILITY in call.text()):
        return REFUSED
    if call.forms():
        return f"envió un formulario ({short(call.forms()[0], 120)})"
    return f"respondió otra cosa ({short(call.text(), 160)})"


def explain(case, got):
    """One Spanish sentence: which case failed and why."""
    sdk = f"«{case.sdk}»" if case.sdk else "vacía"
    where = f"SDK {sdk}, protocolo {case.protocol}, el cliente {SHOWN[case.caps]}"
    if case.expected == URL and got == MANUAL:
        return (f"{where}: tu guarda no permitió el modo URL (el servidor dio la alternativa "
                f"manual), pero aquí se cumplen las tres condiciones ({case.why})")
    if case.expected == MANUAL and got == URL:
        return (f"{where}: tu guarda permitió el modo URL y el servidor envió la URL, pero "
                f"{case.why}")
    if case.expected == MANUAL and got == REFUSED:
        return (f"{where}: tu guarda dijo que sí, pero el cliente no declaró elicitation.url, así "
                "que el servidor no pudo enviar la URL (error -32021 o error de la herramienta) "
                "en lugar de dar la alternativa manual")
    return f"{where}: se esperaba {case.expected} y {got}"


def table(lab, grade, cases, hidden=False):
    """Every case of the table decides as the rules say (one check: a table scores all or
    nothing). In a test declared with `severe=CAPABILITY`, a yes to a client that did not
    declare elicitation.url (the server had to refuse the URL) makes that check severe."""
    got = {case: decide(lab, case.sdk, case.protocol, case.caps) for case in cases}
    wrong = [(case, seen) for case, seen in got.items() if seen != case.expected]
    severe = bool(grade.severe) and any(seen == REFUSED for seen in got.values())
    if hidden:  # nothing about the cases themselves, not even how many
        grade.check(not wrong, "todos los casos de esta tabla eligen bien" if not wrong else
                    "algún caso de esta tabla elige mal entre el modo URL y la alternativa "
                    "manual; repasa las reglas del enunciado", severe=severe)
        return
    grade.note(f"{len(cases)} casos; cada uno llama a notes_setup y mira si llega una "
               "elicitación en modo URL o la alternativa manual")
    grade.check(not wrong, "todos los casos eligen bien entre modo URL y alternativa manual"
                if not wrong else "casos que eligen mal:\n    "
                + "\n    ".join(explain(case, seen) for case, seen in wrong), severe=severe)


# == 3B: the flow ===============================================================================
TOOL = "notes_backup"
NOTES = (("Notas", "acta.md", "n-acta", "Acta"), ("Notas", "borrador.md", "n-borrador", "Borrador"),
         ("Notas/sub", "cuentas.md", "n-cuentas", "Cuentas"))
EXPECTED_IDS = sorted(note[2] for note in NOTES)  # what a copy of the roots must carry
FULL = {FORM_MODE: {}, URL_MODE: {}}
ACCEPT, DECLINE, CANCEL = {"action": "accept"}, {"action": "decline"}, {"action": "cancel"}
COMPLETE = "notifications/elicitation/complete"
MANUAL_STATUS = "manual"   # what the manual fallback answers (structuredContent.status)
PROVIDER_PAGE = INLINE_BASE + nube_copias.AUTHORIZE_PATH
POSITIVE = "autoriza en la página de Nube de Copias y después hace la copia"
POSITIVE_2026 = "en 2026-07-28, autoriza en Nube de Copias y después hace la copia"
TTL = URL_TTL             # every server's link lifetime (ctx.url_ttl): one for every test
EXPIRED = TTL + 0.6       # what the expiry tests wait
BUSY_EVERY = 1.0          # while a lifetime passes, the server hears a call at least this often
WAIT_NOTIFICATION = 3.0   # seconds the positive scenario waits for the completion notice
MIN_ID_BITS = 64          # what an unguessable identifier must carry, at least
IDENTITY_PARAM = re.compile(r"user|usuario|email|correo|mail|name|nombre|sub$|subject|session"
                            r"|sesion|account|cuenta|login", re.IGNORECASE)
TAG = re.compile(r"<[^>]*>")
DIGITS, LOWER = "0123456789", "abcdefghijklmnopqrstuvwxyz"
ALPHABETS = (DIGITS, DIGITS + "abcdef", DIGITS + "ABCDEF", DIGITS + LOWER,
             DIGITS + LOWER + LOWER.upper(), DIGITS + LOWER + LOWER.upper() + "-_")


@dataclass
class Ask:
    """How one notes_backup call without authorization asked for URL mode (or did not)."""
    shape: str           # "-32042", "elicitation/create", "input_required" or "" (it did not)
    params: dict | None  # the URL-mode params (the first ones)
    trace: object        # the CallTrace

    @property
    def url(self):
        url = (self.params or {}).get("url")
        return url if isinstance(url, str) else ""

    @property
    def elicitation_id(self):
        eid = (self.params or {}).get("elicitationId")
        return eid if isinstance(eid, str) else ""

    @property
    def status(self):
        return self.trace.structured.get("status")


@dataclass
class Visit:
    """What the user's browser saw going through a flow's pages."""
    url: str = ""                 # the link it opened
    link: dict | None = None      # what the link answered (the server's connect page)
    authorize: str = ""           # the provider's authorization URL it was sent to
    state: str = ""               # the state in it
    consent: dict | None = None   # the provider's page
    back: str = ""                # where the provider sent it back (the server's callback)
    code: str = ""                # the code in it
    callback: dict | None = None  # what the server's callback answered

    @property
    def reached_provider(self):
        return bool(self.authorize) and bool(self.consent) and self.consent.get("status") == 200

    @property
    def completed(self):
        return bool(self.callback) and self.callback.get("status") == 200


def page_text(page, limit=160):
    """A page the server answered, as one short line of its visible text; for a route that
    raised, the exception and its line instead (what a learner can act on)."""
    if not isinstance(page, dict):
        return "nada"
    if "error" in page:
        return f"ninguna página ({page['error']})"
    if isinstance(page.get("failure"), str):  # the line stays, however long the message
        where = CRASH_WHERE.fullmatch(page["failure"])
        said = one_line(where[1] if where else page["failure"], limit)
        if where:
            said = where_in_spanish(f"{said} (at {where[2]}:{where[3]})")
        return f"HTTP {page.get('status')} porque tu código lanzó una excepción: {said}"
    body = page.get("body", "")
    main = body.split("<body>", 1)[-1] if isinstance(body, str) else ""
    text = html.unescape(TAG.sub(" ", main))
    return f"HTTP {page.get('status')}: «{one_line(' '.join(text.split()), limit)}»"


def status_of(page):
    return page.get("status", 0) if isinstance(page, dict) else 0


def _query(url):
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def _next(url, page):
    """Where a redirect sends the browser, absolute (or "")."""
    location = page.get("location") if isinstance(page, dict) else None
    if not isinstance(location, str) or page.get("status") not in (301, 302, 303, 307):
        return ""
    return urljoin(url, location)


def browse(fetch, url, decision="allow", stop=None):
    """The user's browser through a flow: open the link; if it leads to Nube de Copias,
    `stop="provider"` stays on its page, else the user presses `decision`; `stop="callback"`
    stays before going back to the server's callback."""
    visit = Visit(url=url)
    visit.link = fetch(url)
    where = _next(url, visit.link)
    if not where.startswith(PROVIDER_PAGE + "?"):
        return visit
    return at_provider(fetch, visit, where, decision, stop)


def at_provider(fetch, visit, where, decision="allow", stop=None):
    visit.authorize, visit.state = where, _query(where).get("state", "")
    visit.consent = fetch(where)
    if stop == "provider" or visit.consent.get("status") != 200:
        return visit
    fields = {name: html.unescape(value)
              for name, value in FORM_FIELD.findall(visit.consent.get("body", ""))}
    fields["decision"] = decision
    answer = fetch(PROVIDER_PAGE, "POST", urlencode(fields))
    visit.back = _next(PROVIDER_PAGE, answer)
    visit.code = _query(visit.back).get("code", "")
    if visit.back and stop != "callback":
        visit.callback = fetch(visit.back)
    return visit


def replay(fetch, visit, decision="allow", stop=None):
    """The same authorization request again (the same state), straight at the provider: a
    fresh code comes back to the server's callback with that state."""
    return at_provider(fetch, Visit(url=visit.url), visit.authorize, decision, stop)


def forged(fetch, provider, state, stop="callback"):
    """A real code of this browser's account from Nube de Copias, for a `state` of the
    grader's choosing (the provider echoes any state): what a callback that ignores its
    state would take."""
    return at_provider(fetch, Visit(), provider.authorize_url(state), "allow", stop)


def browser_of(run, peer=False):
    """The browser of the server's user (or, `peer`, of the second user): the server's pages
    through that session's rpc page channel, Nube de Copias's page from the grader's provider,
    where that person is the account that authorizes."""
    session = run.peer if peer else run
    account = run.lab.state.names.other if peer else run.lab.state.names.user
    page = getattr(run, "provider_page", None)
    if page is None:  # the provider's page, served by the grader: only its own route
        page = run.provider_page = SetupPage(None, None, oauth=run.provider)
        page.route(nube_copias.AUTHORIZE_PATH, run.provider.authorize)

    def fetch(url, method="GET", data=None):
        if isinstance(url, str) and (url == PROVIDER_PAGE or url.startswith(PROVIDER_PAGE + "?")):
            return page.fetch(url, method, data, user=account)
        return session.fetch(url, method, data)
    return fetch


class Browser:
    """A scripted user's browser after a consent (2026-07-28): each visit follows the next plan,
    one of (decision, stop) or None (the user never opens the page)."""

    def __init__(self, fetch, *plans):
        self.fetch, self.plans, self.visits = fetch, list(plans), []

    def visit(self, url):
        plan = self.plans.pop(0) if self.plans else ("allow", None)
        self.visits.append(Visit(url=url) if plan is None else browse(self.fetch, url, *plan))


def flow_server(lab, revision=LATEST_HANDSHAKE, *, answers=(), elicitation=None,
                second_answers=()):
    """A 3B server: the learner's ejercicio3b.py alone with the course's guard, three notes in
    the root Notas, its pages on the rpc channel and Nube de Copias the grader's, its frames
    watched, a second user's session (`run.peer`). Every one starts alike."""
    lab.require_tool(TOOL)
    tree = lab.folders(*NOTES)
    return lab.server(revision, roots=[tree.uri("Notas")], answers=answers,
                      elicitation=FULL if elicitation is None else elicitation, watch=True,
                      second=True, second_answers=second_answers, solution=FLOW_FILE,
                      course_guard=True, provider=True)


def scene(lab, grade, revision=LATEST_HANDSHAKE, **options):
    """A test's start: the positive scenario first (its gate), then a fresh 3B server."""
    require_positive(lab, grade, revision)
    return flow_server(lab, revision, **options)


def asked(grade, session):
    """notes_backup once, which must ask for URL mode (a gate; a hidden test does not quote the
    server's answer): its Ask."""
    first = ask(session)
    grade.require(first.url, "notes_backup no pidió el modo URL" + (
        "" if grade.hidden else f" (respondió {reply(first.trace)})"))
    return first


def ask(run):
    """notes_backup once: how it asked for URL mode (-32042 data, an elicitation/create in the
    call, an input_required entry), or that it did not."""
    trace = run.call(TOOL)
    if trace.error_code == URL_ELICITATION_REQUIRED:
        data = trace.error_data if isinstance(trace.error_data, dict) else {}
        entries = data.get("elicitations") if isinstance(data.get("elicitations"), list) else []
        urls = [e for e in entries if isinstance(e, dict) and e.get("mode") == URL_MODE]
        return Ask("-32042", urls[0] if urls else None, trace)
    if trace.urls():
        shape = "input_required" if run.revision == STATELESS_VERSION else "elicitation/create"
        return Ask(shape, trace.urls()[0], trace)
    return Ask("", None, trace)


def is_done(trace):
    return trace.structured.get("status") == "done"


def reply(trace, limit=200):
    if trace.error is not None:
        return f"el error {short(trace.error, limit)}"
    return f"«{short(trace.text(), limit)}»"


def real_copy(run, start):
    """Did Nube de Copias record, since its `start`-th copy, a copy of the roots' notes in the
    account of the server's user? (what a copy made for that user looks like)"""
    mine = run.lab.state.names.user
    return any(account == mine and sorted(ids) == EXPECTED_IDS
               for account, ids in run.provider.copies[start:])


# -- the positive scenario -----------------------------------------------------------------------
@dataclass
class AuthFacts:
    """Exercise 3B's positive scenario in one revision: a client that declared URL mode calls
    notes_backup without authorization, the user's browser opens the link, authorizes at Nube
    de Copias and comes back to the server's callback; then notes_backup must make the copy,
    and Nube de Copias must have it, in that user's account."""
    shape: str = ""           # how it asked: "-32042", "elicitation/create", "input_required"
    params: dict | None = None  # the URL-mode params it sent (the first ones)
    not_url: str = ""         # a -32042 the client cannot follow: why (tooling.url_entry_problem)
    reply: str = ""           # what the first call answered (escaped, short)
    visit: object = None      # Visit: what the browser saw
    notified: list = field(default_factory=list)  # elicitationIds of completion notifications
    final_status: object = None   # structuredContent.status of the last notes_backup
    final_notes: object = None    # structuredContent.notes of it
    final_reply: str = ""
    copied: bool = False      # Nube de Copias recorded the copy, for that user, of those notes
    copies: list = field(default_factory=list)    # every copy it recorded: (whose, how many)
    traces: list = field(default_factory=list)    # its CallTraces (for the credential checks)
    leaks: list = field(default_factory=list)     # provider credentials seen in frames (Spanish)

    @property
    def shown(self):
        visit = self.visit
        return bool(self.shape) and visit is not None and visit.reached_provider \
            and visit.completed and self.final_status == "done" \
            and self.final_notes == len(EXPECTED_IDS) and self.copied


def positive(lab, revision):
    """The positive scenario's facts in `revision` (played once per submission)."""
    return lab.once(("ejercicio3b", revision), lambda: play_positive(lab, revision))


def play_positive(lab, revision):
    stateless = revision == STATELESS_VERSION
    run = flow_server(lab, revision, answers=[ACCEPT] if stateless else ())
    run.user.browser = browser = Browser(browser_of(run), ("allow", None))
    facts = AuthFacts()
    first = ask(run)
    facts.shape, facts.params, facts.reply = first.shape, first.params, reply(first.trace)
    facts.traces.append(first.trace)
    if not first.shape or not first.url:
        if first.shape == "-32042":
            data = first.trace.error_data if isinstance(first.trace.error_data, dict) else {}
            facts.not_url = url_entry_problem(data.get("elicitations")) or ""
        facts.shape = ""
        return finish(run, facts)
    if browser.visits:  # the client opened it on consent (an elicitation in the call)
        facts.visit = browser.visits[0]
    else:               # -32042: the user opens it from the error
        facts.visit = browse(browser_of(run), first.url)
    if facts.visit.completed and not stateless:
        eid = first.elicitation_id
        run.wait_for(lambda: any(n["params"].get("elicitationId") == eid
                                 for n in run.notifications(COMPLETE)), WAIT_NOTIFICATION)
    final = first.trace
    if not stateless or not is_done(final):
        final = run.call(TOOL)  # retried (2026-07-28: already retried after the page)
        facts.traces.append(final)
    facts.final_status = final.structured.get("status")
    facts.final_notes = final.structured.get("notes")
    facts.final_reply = reply(final)
    facts.copied = real_copy(run, 0)
    facts.copies = [(whose, len(ids)) for whose, ids in run.provider.copies]
    return finish(run, facts)


def finish(run, facts):
    facts.notified = [n["params"].get("elicitationId") for n in run.notifications(COMPLETE)]
    facts.leaks = list(run.leaks)
    return facts


def asked_for(revision):
    return (f"notes_backup sin autorización, con un cliente {revision} que declaró el modo URL")


def why_not_shown(lab, facts, revision):
    """One Spanish sentence: where the positive scenario stopped."""
    visit = facts.visit
    if not facts.shape and facts.not_url:
        return (f"{asked_for(revision)}, respondió el error −32042, pero el cliente no puede "
                f"seguirlo: {facts.not_url}")
    if not facts.shape:
        return (f"{asked_for(revision)}, no pidió el modo URL: respondió {facts.reply}")
    if visit is None or not visit.authorize:
        seen = page_text(visit.link if visit else None)
        return (f"el enlace del modo URL no llevó a la página de autorización de Nube de Copias "
                f"(tu página respondió {seen}); tu página de conexión debe redirigir con "
                "page.redirect(page.provider.authorize_url(state))")
    if not visit.reached_provider:
        return (f"Nube de Copias no aceptó la petición de autorización a la que llevó tu página "
                f"({page_text(visit.consent)}); usa page.provider.authorize_url(state)")
    if not visit.completed:
        return (f"tras pulsar «Autorizar» en Nube de Copias, tu página de retorno "
                f"({nube_copias.REDIRECT_PATH}) respondió {page_text(visit.callback)}; debe "
                "canjear el code, completar el flujo y responder 200")
    if facts.final_status != "done" or facts.final_notes != len(EXPECTED_IDS):
        return (f"tras autorizar en Nube de Copias, notes_backup respondió {facts.final_reply}; "
                f"se esperaba la copia hecha (status done) con las {len(EXPECTED_IDS)} notas de "
                "la root")
    made = facts.copies
    where = "no registró ninguna copia" if not made else "solo registró " + ", ".join(
        f"una copia de {count} notas en {'tu cuenta' if whose == lab.state.names.user else 'otra'}"
        for whose, count in made)
    return (f"notes_backup dijo que hizo la copia, pero Nube de Copias {where}: la copia se "
            "hace con ctx.provider.backup(token, ctx.notes()) y el token que tu página de "
            "retorno canjeó para ese usuario (page.provider.exchange(code))")


def require_positive(lab, grade, revision=LATEST_HANDSHAKE):
    """Gate: the positive scenario went through (a link, the provider, the callback, the copy
    the provider recorded). Its reason is said once, in the positive scenario's own test; here
    only that test's name."""
    facts = positive(lab, revision)
    gate = POSITIVE_2026 if revision == STATELESS_VERSION else POSITIVE
    grade.require(facts.shown, f"esta prueba necesita que antes funcione «{gate}» (mira esa "
                  "prueba)", gate=gate)
    return facts


# -- what a test of what must not happen judges ------------------------------------------------
def not_authorized(grade, run, when, peer=False, severe=True):
    """After `when`, notes_backup (the user's, or the second user's) must not make a copy: it
    must not say so, nor may Nube de Copias record one."""
    start = len(run.provider.copies)
    trace = (run.peer if peer else run).call(TOOL)
    made = len(run.provider.copies) > start
    done = is_done(trace) or made
    said = f"respondió {reply(trace, 120)}" if is_done(trace) else \
        "Nube de Copias registró una copia"
    return grade.check(not done, f"{when}, notes_backup aún no hace la copia" if not done else
                       f"{when}, notes_backup hizo la copia ({said}): el usuario quedó "
                       "autorizado sin completar bien el flujo", severe=severe)


def refused(grade, page, when, why, severe=True):
    """A page that must refuse (4xx, never the 200 of a success); `why`, what the learner's
    page must do to refuse it."""
    status = status_of(page)
    ok = status >= 400
    return grade.check(ok, f"{when}, tu página responde un error ({status})" if ok else
                       f"{when}, tu página respondió {page_text(page, 100)}: {why}",
                       severe=severe)


def legitimate(grade, run, revision=LATEST_HANDSHAKE):
    """The last step of a test of what must not happen (`@graded(..., must_not=True)`): on the
    same server, the user's own new flow still works, to a copy Nube de Copias recorded in
    their account (`grade.still_works`; without it the test scores 0: refusing everything is
    not what it checks). A flow that failed after its lifetime had passed on the grader's side
    is the grader's fault (`require_in_time`), never the learner's."""
    since, start = time.monotonic(), len(run.provider.copies)
    if revision == STATELESS_VERSION:
        run.user.answers[:], run.user.visits[:] = [ACCEPT], []
        run.user.browser = Browser(browser_of(run), ("allow", None))
        trace = run.call(TOOL)
    else:
        first = ask(run)
        trace = first.trace
        if first.url:
            browse(browser_of(run), first.url)
            trace = run.call(TOOL)
    works = is_done(trace) and real_copy(run, start)
    if not works:
        require_in_time(since, TTL)
    said = "" if works or grade.hidden else f" (notes_backup respondió {reply(trace, 120)})"
    return grade.still_works(works, "después, en el mismo servidor, tu propio flujo (pedir la "
                             "copia, abrir tu enlace, «Autorizar», volver) " + (
                                 "terminó en una copia que Nube de Copias registró" if works
                                 else "no terminó en una copia que Nube de Copias registrara")
                             + said)


def lifetime_passes(run, since, lifetime=EXPIRED):
    """The waits of a test while `lifetime` seconds pass from `since` (time.monotonic()): `yield
    from` it. The server is never left idle for a lifetime meanwhile: every `BUSY_EVERY`
    seconds the second user asks for a backup of their own (a flow of theirs that nobody
    completes), so a lifetime check leaves no gap another test does not have, and a server
    that spots a long idle gap learns nothing from it (grader/README.md, *Points follow
    severity*: refusing everything there would cost what the bug costs anyway)."""
    while True:
        left = since + lifetime - time.monotonic()
        if left <= 0:
            return
        yield min(BUSY_EVERY, left)
        if since + lifetime - time.monotonic() > 0:
            run.peer.call(TOOL)


def consent_round(run):
    """At 2026-07-28, notes_backup by hand, with no client loop: the first round (URL mode
    inside input_required) and the retry that consents (accept). Returns (the URL, the retry's
    params: its requestState and answers, to send again), or ("", None) when it did not ask."""
    result, error = run.request("tools/call", {"name": TOOL, "arguments": {}})
    if error is not None or result.get("resultType") != "input_required":
        return "", None
    responses, url = {}, ""
    try:
        for key, method, params in input_requests(result):
            if method == "roots/list":
                responses[key] = run.client._roots_result()
            elif params.get("mode") == URL_MODE and isinstance(params.get("url"), str):
                url, responses[key] = url or params["url"], ACCEPT
            else:
                responses[key] = CANCEL
    except wire.RpcError:
        return "", None
    retry = {"name": TOOL, "arguments": {}, "inputResponses": responses}
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    run.request("tools/call", retry)
    return url, retry


def carries(traces, secret):
    """Does any of these calls carry `secret` (its URL-mode params, result or error)?"""
    if not secret:
        return False
    for trace in traces:
        for part in (trace.prompts, trace.result, trace.error, trace.error_data):
            try:
                if part is not None and secret in repr(part):
                    return True
            except RecursionError:
                return True
    return False


def id_bits(values):
    """How unguessable identifiers look: the bits their varying part can carry (what differs
    once the common beginning and end are taken off), by the alphabet it uses; the least."""
    prefix = os.path.commonprefix(values)
    suffix = os.path.commonprefix([v[::-1] for v in values])
    parts = [v[len(prefix):len(v) - len(suffix)] if len(prefix) + len(suffix) < len(v) else ""
             for v in values]
    used = set("".join(parts))
    size = next((len(alphabet) for alphabet in ALPHABETS if used <= set(alphabet)), 95)
    return min(len(part) for part in parts) * math.log2(size) if parts else 0.0
