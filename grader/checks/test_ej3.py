"""Exercise 3: the URL-mode guard, observed only through the wire.

The grader starts servers with different `--sdk-version` values, speaks different protocol
revisions and declares different capabilities, calls `notes_setup` and watches whether a
URL-mode elicitation arrives or the manual fallback comes back. Every case table mixes cases
that must use URL mode with cases that must not, so a guard that always answers the same
thing scores nothing. Then the URL flow itself: a well-formed request, `accept` is not
completion, completion only after the setup page is submitted.
"""

import json
import urllib.parse

import pytest

import url_mode
from grader.checks.harness import REVISIONS, Broken, short
from grader.checks.plugin import graded

CAPS = {"form+url": {"form": {}, "url": {}}, "url": {"url": {}}, "form": {"form": {}},
        "{}": {}, "ninguna": False}
URL, MANUAL = "modo URL", "alternativa manual"


def decide(lab, sdk, protocol, caps):
    """What notes_setup does for this SDK version, protocol and declared capability.

    Memoised per submission: one server per 2025 handshake, and one per SDK version for
    2026-07-28, where every case of that version rides on it as a stateless request.
    """
    memo = lab.state.url_decisions
    key = (sdk, protocol, caps)
    if key not in memo:
        try:
            memo[key] = observe(lab, sdk, protocol, caps)
        except Broken as exc:
            memo[key] = f"error: {exc}"
    return memo[key]


def observe(lab, sdk, protocol, caps):
    servers = lab.state.url_servers  # kept for the whole submission
    if protocol == "2026-07-28":
        run = next((r for (v, p, _), r in servers.items() if v == sdk and p == protocol), None)
        if run is None:
            run = servers[(sdk, protocol, caps)] = lab.server(
                protocol, roots=None, sdk=sdk, elicitation=CAPS[caps], keep=True)
        run.client.capabilities = {} if CAPS[caps] is False \
            else {"elicitation": CAPS[caps]}
    else:
        run = servers[(sdk, protocol, caps)] = lab.server(
            protocol, roots=None, sdk=sdk, elicitation=CAPS[caps], keep=True)
    call = run.call("notes_setup")
    if call.urls():
        return URL
    if not call.prompts and call.structured.get("status") == "manual":
        return MANUAL
    if call.forms():
        return f"un formulario: {short(call.forms()[0], 160)}"
    return f"otra cosa: {short(call.text(), 160)}"


def table(lab, grade, cases):
    wrong = []
    for sdk, protocol, caps, expected in cases:
        got = decide(lab, sdk, protocol, caps)
        if got != expected:
            wrong.append(f"SDK {sdk!r}, protocolo {protocol}, elicitation {caps}: "
                         f"{got} (se esperaba {expected})")
    grade.note(f"{len(cases)} casos; cada uno llama a notes_setup")
    grade.check(not wrong, "todos los casos eligen bien entre modo URL y alternativa manual "
                "(y la alternativa no envía ningún formulario)"
                + ("" if not wrong else ":\n    " + "\n    ".join(wrong)))


@graded("ejercicio3", 1, "usa el modo URL a partir del SDK 1.23.1, no antes")
def test_url_mode_from_sdk_1_23_1(lab, grade):
    table(lab, grade, [("1.23.0", "2025-11-25", "form+url", MANUAL),
                       ("1.23.1", "2025-11-25", "form+url", URL),
                       ("2.3.0", "2025-11-25", "form+url", URL)])


@graded("ejercicio3", 1, "compara las versiones como números, no como texto")
def test_versions_compare_as_numbers(lab, grade):
    table(lab, grade, [("1.9.0", "2025-11-25", "form+url", MANUAL),
                       ("1.100.0", "2025-11-25", "form+url", URL),
                       ("1.23.1", "2025-11-25", "form+url", URL)])


@graded("ejercicio3", 1, "sin versión, con una ilegible o con una pre-release anterior: "
        "alternativa manual")
def test_missing_unreadable_or_prerelease_versions_mean_no(lab, grade):
    table(lab, grade, [("", "2025-11-25", "form+url", MANUAL),
                       ("desconocida", "2025-11-25", "form+url", MANUAL),
                       ("1.23.1rc1", "2025-11-25", "form+url", MANUAL),
                       ("2.3.0", "2025-11-25", "form+url", URL)])


@graded("ejercicio3", 1, "tiene en cuenta el protocolo negociado (2025-06-18 no; 2026-07-28 "
        "solo con SDK 2.x)")
def test_negotiated_protocol_counts(lab, grade):
    table(lab, grade, [("2.3.0", "2025-11-25", "form+url", URL),
                       ("2.3.0", "2025-06-18", "form+url", MANUAL),
                       ("2.3.0", "2026-07-28", "form+url", URL),
                       ("1.30.0", "2026-07-28", "form+url", MANUAL),
                       ("1.30.0", "2025-11-25", "form+url", URL),
                       ("2.0.0b1", "2026-07-28", "form+url", MANUAL)])


@graded("ejercicio3", 1, "solo usa el modo URL si el cliente declaró elicitation.url")
def test_client_must_declare_url_elicitation(lab, grade):
    table(lab, grade, [("2.3.0", "2025-11-25", "form+url", URL),
                       ("2.3.0", "2025-11-25", "{}", MANUAL),
                       ("2.3.0", "2026-07-28", "url", URL),
                       ("2.3.0", "2026-07-28", "form", MANUAL),
                       ("2.3.0", "2026-07-28", "{}", MANUAL),
                       ("2.3.0", "2026-07-28", "ninguna", MANUAL)])


def url_flow(lab, grade, revision, answers, browser=None, setup_wait=30.0):
    """The URL flow with SDK 2.3.0, gated on a guard that decides (not a constant yes): the
    flow itself is the server's code, so only a guard that says no where it must earns it."""
    grade.require(decide(lab, "1.23.0", "2025-11-25", "form+url") == MANUAL,
                  "tu guarda no decide: también usa el modo URL con el SDK 1.23.0, que no lo "
                  "admite (una guarda que siempre dice que sí no cuenta para el flujo URL)")
    run = lab.server(revision, roots=None, sdk="2.3.0", setup_wait=setup_wait,
                     answers=answers, browser=browser)
    return run, run.call("notes_setup")


def sent_url(grade, call):
    grade.require(call.urls(), "con SDK 2.3.0 y un cliente que declara elicitation.url, "
                  f"notes_setup no envió ninguna elicitación en modo URL (respondió: "
                  f"{short(call.text(), 160)})")
    return call.urls()[0]


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio3", 1, "la petición en modo URL está bien formada")
def test_url_request_is_well_formed(lab, grade, revision):
    run, call = url_flow(lab, grade, revision, [{"action": "decline"}])
    request = sent_url(grade, call)
    url = request.get("url")
    problems = url_mode.url_problems(url) if isinstance(url, str) else ["no hay url"]
    host = urllib.parse.urlsplit(url).hostname if isinstance(url, str) else None
    grade.check(not problems and (url_mode.is_loopback(host or "")
                                  or url.startswith("https://")),
                "la URL es https o de loopback y no lleva datos sensibles",
                got=f"{url!r}: {problems}", expected="sin problemas")
    grade.check(isinstance(request.get("message"), str) and request["message"].strip(),
                "lleva un mensaje para el usuario", got=request.get("message"),
                expected="texto no vacío")
    if revision == "2025-11-25":
        eid = request.get("elicitationId")
        grade.check(isinstance(eid, str) and eid.strip(), "lleva elicitationId (2025-11-25)",
                    got=eid, expected="un identificador no vacío")
    else:
        grade.check("elicitationId" not in request, "no lleva elicitationId (2026-07-28 lo "
                    "quitó)", got=sorted(request), expected="sin elicitationId")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio3", 1, "aceptar sin visitar la página no cuenta como configurado")
def test_accept_alone_is_not_completion(lab, grade, revision):
    run, call = url_flow(lab, grade, revision, [{"action": "accept"}], setup_wait=0.05)
    sent_url(grade, call)
    status = call.structured.get("status")
    grade.check(status != "configured" and not call.is_error,
                "tras accept sin visitar la página, notes_setup no dice 'configured'",
                got=status or call.text(), expected="'pending' (u otro estado no final)")
    if revision == "2025-11-25":
        done = run.notifications("notifications/elicitation/complete")
        grade.check(not done, "no llega notifications/elicitation/complete",
                    got=done, expected="ninguna notificación")


@pytest.mark.parametrize("revision", REVISIONS)
@graded("ejercicio3", 2, "se completa solo después de enviar la página de configuración")
def test_completion_comes_after_the_page_is_submitted(lab, grade, revision):
    run, call = url_flow(lab, grade, revision, [{"action": "accept"}], browser="allow")
    request = sent_url(grade, call)
    run.user.browser.wait()
    pages = run.user.browser.pages
    grade.check(len(pages) == 2 and all(p.get("status") == 200 for p in pages),
                "la página de configuración se abre y acepta el formulario",
                got=[p.get("status", p.get("error")) for p in pages], expected="[200, 200]")
    grade.check(call.structured.get("status") == "configured",
                "notes_setup termina con status 'configured'",
                got=call.structured.get("status") or call.text(), expected="'configured'")
    if revision == "2025-11-25":
        post = next((i for i, frame in enumerate(run.frames) if frame == ("mark", "post")),
                    None)
        complete = [i for i, (d, m) in enumerate(run.frames) if d == "←"
                    and isinstance(m, dict)
                    and m.get("method") == "notifications/elicitation/complete"]
        ids = [(run.frames[i][1].get("params") or {}).get("elicitationId") for i in complete]
        grade.check(len(complete) == 1 and ids == [request.get("elicitationId")],
                    "llega una notifications/elicitation/complete con el mismo elicitationId",
                    got=json.dumps(ids), expected=json.dumps([request.get("elicitationId")]))
        grade.check(post is not None and all(i > post for i in complete) and complete,
                    "la notificación llega después de enviar la página, no antes",
                    got="antes" if complete and post is not None and complete[0] < post
                    else "no llegó", expected="después del envío")
