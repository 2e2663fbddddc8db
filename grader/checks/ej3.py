"""Exercise 3 (the URL-mode guard): observing a guard through the wire, case by case.

A case is (simulated SDK version, protocol revision, declared elicitation capability) and what
the statement's rules say the server must do: use URL mode or give the manual fallback. The
grader starts a server with that `--sdk-version`, speaks that revision with those capabilities,
calls `notes_setup` and watches what comes back. Every table mixes cases so that none of these
guards passes one: always yes, always no, `elicitation.supports_url(caps)` alone, the demo's
guard (`url_mode.demo_guard`), a guard that only looks at the version (numbers or text), one that
only looks at the protocol. So each table has a case that must use URL mode, a case where only
the version says no, and a case where only the protocol or the capability says no.

The URL flow itself (a well-formed request, `accept` is not completion, completion after the
page) is the server's code, not the learner's: tests/notes_server covers it, and it is not
graded.

Decisions are memoised per submission: one server per 2025 handshake (stopped once it has
answered), and one per SDK version for 2026-07-28, kept for the submission, where every case of
that version rides on it as a stateless request.
"""

from dataclasses import dataclass

from context import NO_URL_CAPABILITY
from grader.checks.grading import Broken, short
from protocol import MISSING_CLIENT_CAPABILITY

CAPS = {"form+url": {"form": {}, "url": {}}, "url": {"url": {}}, "form": {"form": {}},
        "{}": {}, "ninguna": False}
SHOWN = {"form+url": 'declaró elicitation {"form": {}, "url": {}}',
         "url": 'declaró elicitation {"url": {}}', "form": 'declaró elicitation {"form": {}}',
         "{}": "declaró elicitation {} (solo formulario)",
         "ninguna": "no declaró elicitation"}
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
    servers = lab.state.url_servers  # SDK version -> its 2026-07-28 server, kept
    if protocol == "2026-07-28":
        run = servers.get(sdk)
        if run is None:
            run = servers[sdk] = lab.server(protocol, roots=None, sdk=sdk,
                                            elicitation=CAPS[caps], keep=True)
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
    sdk = repr(case.sdk) if case.sdk else "vacía"
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
