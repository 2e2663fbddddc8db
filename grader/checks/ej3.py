"""Exercise 3 (URL mode for a first-run OAuth flow, behind an SDK-version guard): the scenarios
its public and hidden tests share, observed only on the wire and through the server's pages.

Two parts, graded apart:

- **The guard** (a smaller share): tables of (simulated SDK version, protocol revision, declared
  elicitation capability) -> URL mode or the manual fallback, observed through the server's
  own `notes_setup`, which asks the learner's guard. Every table mixes a case that must use URL
  mode, one where only the version says no and one where only the protocol or the capability
  says no, so none of these passes a table: always yes, always no, `supports_url(caps)` alone,
  the demo's `url_mode.demo_guard`, a guard that only looks at the version (numbers or text),
  one that only looks at the protocol.
- **The flow**, written by the learner: `notes_backup` needs an authorization at Nube de Copias
  (code/nube_copias.py, a simulated OAuth provider whose pages the server serves). The grader is
  the MCP client *and* the user's browser: the browser reaches the server's pages through the
  private rpc channel (`serve --setup-page rpc`: no socket, so it works in every sandbox mode),
  follows the server's connect page to the provider, presses «Autorizar» or «Rechazar» and
  comes back to the server's callback (`Visit`). A second user's session on the same server
  (`serve --second-user`) is another person's client and browser. Every frame the server sends
  to a client (not the browser's pages) is scanned for the provider's codes and tokens (their
  prefixes), and what the client was sent for the flow's `state`.

The positive scenario (`AuthFacts`, once per submission and revision) gates every flow test: a
client that declared URL mode calls notes_backup, the browser opens the link, is sent to Nube de
Copias's authorization page with a state, authorizes, comes back to the callback, which answers
200; then notes_backup answers status done with the notes of the roots. So the starter, the
server's defaults, the lesson's notes_sync/notes_setup registered as notes_backup (their link
is Notas Sync's page, which never sends the browser to Nube de Copias) and constant answers
score nothing. The tests of what must not happen count only once the flow is seen working, and
each is judged by its effect: after the step under test, is the user authorized (the next
notes_backup makes the copy)?

Decisions of the guard tables are memoised per submission: one server per 2025 handshake
(stopped once it has answered), and one per SDK version for 2026-07-28 in each test (`lab.reuse`),
where every case of that version rides on it as a stateless request.
"""

import html
import math
import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import nube_copias
from context import NO_URL_CAPABILITY
from grader.checks.grading import Broken, short
from grader.escape import one_line
from grader.state import AuthFacts
from protocol import MISSING_CLIENT_CAPABILITY, STATELESS_VERSION, URL_ELICITATION_REQUIRED
from setup_page import INLINE_BASE
from simulated_user import FORM_FIELD

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


@dataclass(frozen=True)
class Case:
    sdk: str
    protocol: str
    caps: str
    expected: str
    why: str = ""   # the rule that decides this case, said to the learner (public tables)


def decide(lab, sdk, protocol, caps):
    """What notes_setup does for this SDK version, protocol and declared capability."""
    memo = lab.state.url_decisions
    key = (sdk, protocol, caps)
    if key not in memo:
        try:
            memo[key] = observe(lab, sdk, protocol, caps)
        except Broken as exc:
            memo[key] = f"error: {exc}"
    return memo[key]


def observe(lab, sdk, protocol, caps):
    if protocol == "2026-07-28":
        run = lab.reuse(("guard", sdk), lambda: lab.server(protocol, roots=None, sdk=sdk,
                                                            elicitation=CAPS[caps]))
        run.client.capabilities = {} if CAPS[caps] is False else {"elicitation": CAPS[caps]}
        call = run.call("notes_setup", timeout=10.0)
    else:  # one handshake, one case: the server is stopped as soon as it answered
        run = lab.server(protocol, roots=None, sdk=sdk, elicitation=CAPS[caps])
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
    wrong = [(case, got) for case in cases
             if (got := decide(lab, case.sdk, case.protocol, case.caps)) != case.expected]
    if hidden:  # nothing about the cases themselves, not even how many
        grade.check(not wrong, "todos los casos de esta tabla eligen bien" if not wrong else
                    "algún caso de esta tabla elige mal entre el modo URL y la alternativa "
                    "manual; repasa las reglas del enunciado")
        return
    grade.note(f"{len(cases)} casos; cada uno llama a notes_setup y mira si llega una "
               "elicitación en modo URL o la alternativa manual")
    grade.check(not wrong, "todos los casos eligen bien entre modo URL y alternativa manual"
                if not wrong else "casos que eligen mal:\n    "
                + "\n    ".join(explain(case, got) for case, got in wrong))


# == the flow ===================================================================================
TOOL = "notes_backup"
NOTES = (("Notas", "acta.md", "n-acta", "Acta"), ("Notas", "borrador.md", "n-borrador", "Borrador"),
         ("Notas/sub", "cuentas.md", "n-cuentas", "Cuentas"))
FULL = {"form": {}, "url": {}}
ACCEPT, DECLINE, CANCEL = {"action": "accept"}, {"action": "decline"}, {"action": "cancel"}
COMPLETE = "notifications/elicitation/complete"
MANUAL_STATUS = "manual"   # what the safe fallback answers (structuredContent.status)
PROVIDER_PAGE = INLINE_BASE + nube_copias.AUTHORIZE_PATH
POSITIVE = "autoriza en la página de Nube de Copias y después hace la copia"
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
    """A page the server answered, as one short line of its visible text."""
    if not isinstance(page, dict):
        return "nada"
    if "error" in page:
        return f"ningún página ({page['error']})"
    body = page.get("body", "")
    main = body.split("<body>", 1)[-1] if isinstance(body, str) else ""
    text = html.unescape(TAG.sub(" ", main))
    return f"HTTP {page.get('status')}: «{one_line(' '.join(text.split()), limit)}»"


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


def replay(fetch, visit, decision="allow"):
    """The same authorization request again (the same state), straight at the provider: a
    fresh code comes back to the server's callback with a state already used."""
    return at_provider(fetch, Visit(url=visit.url), visit.authorize, decision)


class Browser:
    """A scripted user's browser (after a consent): each visit follows the next plan, one of
    (decision, stop) or None (the user never opens the page)."""

    def __init__(self, fetch, *plans):
        self.fetch, self.plans, self.visits = fetch, list(plans), []

    def visit(self, url):
        plan = self.plans.pop(0) if self.plans else ("allow", None)
        self.visits.append(Visit(url=url) if plan is None else browse(self.fetch, url, *plan))


def flow_server(lab, revision, *, answers=(), elicitation=None, sdk="2.3.0", second=False,
                second_answers=()):
    """A server for the flow: the learner's solution, three notes in the root Notas, its pages on
    the rpc channel, its frames watched; `second`: a second user's session (`run.peer`)."""
    lab.require_tool(TOOL)
    tree = lab.folders(*NOTES)
    return lab.server(revision, roots=[tree.uri("Notas")], sdk=sdk, answers=answers,
                      elicitation=FULL if elicitation is None else elicitation, watch=True,
                      second=second, second_answers=second_answers)


def ask(run):
    """notes_backup once: how it asked for URL mode (-32042 data, an elicitation/create in the
    call, an input_required entry), or that it did not."""
    trace = run.call(TOOL)
    if trace.error_code == URL_ELICITATION_REQUIRED:
        data = trace.error_data if isinstance(trace.error_data, dict) else {}
        entries = data.get("elicitations") if isinstance(data.get("elicitations"), list) else []
        urls = [e for e in entries if isinstance(e, dict) and e.get("mode") == "url"]
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


# -- the positive scenario -----------------------------------------------------------------------
def positive(lab, revision):
    """The positive scenario's facts in `revision` (played once per submission)."""
    memo = lab.state.auth_shown
    if revision not in memo:
        try:
            memo[revision] = play_positive(lab, revision)
        except Broken as exc:
            memo[revision] = exc
    if isinstance(memo[revision], Broken):
        raise memo[revision]
    return memo[revision]


def play_positive(lab, revision):
    run = flow_server(lab, revision, answers=[ACCEPT])
    run.user.browser = browser = Browser(run.fetch, ("allow", None))
    facts = AuthFacts(expected_notes=len(NOTES))
    first = ask(run)
    facts.shape, facts.params, facts.reply = first.shape, first.params, reply(first.trace)
    facts.traces.append(first.trace)
    if not first.shape or not first.url:
        facts.shape = ""
        return finish(run, facts)
    if browser.visits:  # the client opened it on consent (an elicitation in the call)
        facts.visit = browser.visits[0]
    else:               # -32042: the user opens it from the error
        facts.visit = browse(run.fetch, first.url)
    if facts.visit.completed and revision != STATELESS_VERSION:
        eid = first.elicitation_id
        run.wait_for(lambda: any(n["params"].get("elicitationId") == eid
                                 for n in run.notifications(COMPLETE)), WAIT_NOTIFICATION)
    final = first.trace
    if revision != STATELESS_VERSION or not is_done(final):
        final = run.call(TOOL)  # retried (2026-07-28: already retried after the page)
        facts.traces.append(final)
    facts.final_status = final.structured.get("status")
    facts.final_notes = final.structured.get("notes")
    facts.final_reply = reply(final)
    return finish(run, facts)


def finish(run, facts):
    facts.notified = [n["params"].get("elicitationId") for n in run.notifications(COMPLETE)]
    facts.leaks = list(run.leaks)
    return facts


def asked_for(revision):
    return (f"notes_backup sin autorización, con un cliente {revision} que declaró el modo URL "
            "(SDK 2.3.0)")


def why_not_shown(facts, revision):
    """One Spanish sentence: where the positive scenario stopped."""
    visit = facts.visit
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
        return (f"tras pulsar «Autorizar» en Nube de Copias, tu página de vuelta "
                f"({nube_copias.REDIRECT_PATH}) respondió {page_text(visit.callback)}; debe "
                "completar el flujo y responder 200")
    return (f"tras autorizar en Nube de Copias, notes_backup respondió {facts.final_reply}; se "
            f"esperaba la copia hecha (status done) con las {facts.expected_notes} notas de la "
            "root")


def require_positive(lab, grade, revision):
    """Gate: the positive scenario went through (a link, the provider, the callback, the copy).
    Its reason is said once, in the positive scenario's own test; here only that test's name."""
    facts = positive(lab, revision)
    grade.require(facts.shown, f"esta prueba necesita que antes funcione «{POSITIVE}» en "
                  f"{revision} (mira esa prueba)", gate=POSITIVE)
    return facts


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


def not_authorized(grade, trace, when, severe=True):
    """After `when`, notes_backup must not make the copy (the user is not authorized)."""
    done = is_done(trace)
    return grade.check(not done, f"{when}, notes_backup aún no hace la copia" if not done else
                       f"{when}, notes_backup hizo la copia (respondió {reply(trace, 120)}): el "
                       "usuario quedó autorizado sin completar el flujo", severe=severe)
