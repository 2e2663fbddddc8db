"""URL mode: the demo guard, the URL policy, single-use flow records, the local setup page,
and the credential that never leaves the server."""

import json
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from client.simulated_user import Browser, ScriptedUser
from client.sync_client import Client
from server import Config, NotesServer
from transports.page_http import serve_http
from transports.transport import start_in_process
from urlflow.setup_page import SetupPage
from urlflow.url_mode import FlowError, FlowStore, demo_guard, url_problems

URL = {"elicitation": {"form": {}, "url": {}}}


@pytest.mark.parametrize("sdk, protocol, capabilities, allowed", [
    ("2.3.0", "2025-11-25", URL, True),
    ("1.0.0", "2025-11-25", URL, True),        # the demo guard ignores the SDK version
    (None, "2026-07-28", URL, True),
    ("2.3.0", "2025-06-18", URL, False),
    ("2.3.0", "2025-11-25", {"elicitation": {}}, False),
    ("2.3.0", "2025-11-25", {"elicitation": {"form": {}}}, False),
    ("2.3.0", "2025-11-25", {}, False),
    ("2.3.0", "2025-11-25", None, False),
])
def test_the_demo_guard_checks_protocol_and_capability_only(sdk, protocol, capabilities,
                                                              allowed):
    assert demo_guard(sdk, protocol, capabilities) is allowed


def test_without_a_guard_the_server_never_uses_url_mode():
    assert NotesServer(Config()).allow_url_mode("2025-11-25", URL) is False
    assert NotesServer(Config(demo_url_guard=True)).allow_url_mode("2025-11-25", URL) is True


@pytest.mark.parametrize("url", ["http://127.0.0.1:8123/connect?elicitation=abc",
                                 "http://localhost/x", "http://[::1]:80/x",
                                 "https://notas.example.com/connect"])
def test_safe_urls_pass_the_policy(url):
    assert url_problems(url) == []


@pytest.mark.parametrize("url, problem", [
    ("http://notas.example.com/connect", "HTTPS"),
    ("https://xn--nts-5ma.example/connect", "punycode"),
    ("https://nоtas.example.com/", "alfabetos"),          # a Cyrillic "о"
    ("https://user:pw@notas.example.com/", "credenciales"),
    ("https://notas.example.com/c?token=abc", "token"),
    ("https://notas.example.com/c?email=a@b.c", "email"),
    ("javascript:alert(1)", "http(s)"),
])
def test_unsafe_urls_are_flagged(url, problem):
    assert any(problem in p for p in url_problems(url))


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_elicitation_ids_and_nonces_are_unguessable_and_distinct():
    flows = FlowStore()
    records = [flows.start("s", "u", "p") for _ in range(50)]
    ids = {r.elicitation_id for r in records} | {r.nonce for r in records}
    assert len(ids) == 100 and all(len(i) >= 24 for i in ids)


def test_a_record_completes_once():
    flows = FlowStore()
    record = flows.start("s", "local:ana", "notas-sync")
    flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    assert flows.is_configured("local:ana", "notas-sync")
    with pytest.raises(FlowError, match="ya se usó"):
        flows.complete(record.elicitation_id, record.nonce, "notas-sync")


@pytest.mark.parametrize("eid, nonce, provider, reason", [
    ("desconocido", None, "notas-sync", "desconocido"),
    (None, "otro-nonce", "notas-sync", "no coincide"),
    (None, None, "otro-proveedor", "proveedor"),
])
def test_tampered_completions_attach_nothing(eid, nonce, provider, reason):
    flows = FlowStore()
    record = flows.start("s", "local:ana", "notas-sync")
    with pytest.raises(FlowError, match=reason):
        flows.complete(eid or record.elicitation_id, nonce or record.nonce, provider)
    assert not flows.is_configured("local:ana", "notas-sync")
    assert record.status == "pending"


def test_an_expired_record_attaches_nothing():
    clock = Clock()
    flows = FlowStore(ttl_seconds=60, clock=clock)
    record = flows.start("s", "local:ana", "notas-sync")
    clock.now = 61
    with pytest.raises(FlowError, match="caducó"):
        flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    assert not flows.is_configured("local:ana", "notas-sync")


def test_completion_tells_the_session_that_started_the_flow_once():
    told = []
    flows = FlowStore()
    record = flows.start("s", "u", "p", on_complete=told.append)
    flows.complete(record.elicitation_id, record.nonce, "p")
    with pytest.raises(FlowError):
        flows.complete(record.elicitation_id, record.nonce, "p")
    assert told == [record.elicitation_id]


@pytest.fixture
def page():
    flows = FlowStore()
    setup = serve_http(SetupPage(flows, "notas-sync"))
    yield setup, flows
    setup.close()


def http(url, form=None):
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with urllib.request.urlopen(url, data=data, timeout=5) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), dict(error.headers)


def test_the_setup_page_listens_on_loopback_only(page):
    setup, _ = page
    assert setup.base.startswith("http://127.0.0.1:")
    assert not url_problems(setup.url_for("abc"))


def test_the_inline_page_answers_without_any_socket():
    flows = FlowStore()
    setup = SetupPage(flows, "notas-sync")
    record = flows.start("s", "local:ana", "notas-sync")
    url = setup.url_for(record.elicitation_id)
    assert url.startswith("http://notas-sync.localhost/connect?") and not url_problems(url)
    status, _, body, *_ = setup.handle("GET", url.split("localhost", 1)[1])
    assert status == 200 and record.nonce in body
    browser = Browser(fetch=setup.fetch)
    browser.visit(url)
    assert record.status == "completed" and flows.is_configured("local:ana", "notas-sync")


def test_the_consent_page_shows_the_provider_and_is_not_cached(page):
    setup, flows = page
    record = flows.start("s", "u", "notas-sync")
    status, body, headers = http(setup.url_for(record.elicitation_id))
    assert status == 200 and "Notas Sync" in body and record.nonce in body
    assert headers["Cache-Control"] == "no-store" and headers["X-Frame-Options"] == "DENY"


def test_submitting_the_page_completes_the_record(page):
    setup, flows = page
    record = flows.start("s", "local:ana", "notas-sync")
    Browser().visit(setup.url_for(record.elicitation_id))
    assert record.status == "completed" and flows.is_configured("local:ana", "notas-sync")


def test_denying_on_the_page_completes_nothing(page):
    setup, flows = page
    record = flows.start("s", "local:ana", "notas-sync")
    Browser(decision="deny").visit(setup.url_for(record.elicitation_id))
    assert record.status == "denied" and not flows.is_configured("local:ana", "notas-sync")


def test_a_replayed_submission_is_refused(page):
    setup, flows = page
    record = flows.start("s", "u", "notas-sync")
    form = {"elicitation": record.elicitation_id, "state": record.nonce, "decision": "allow"}
    assert http(setup.base + "/connect", form)[0] == 200
    status, body, _ = http(setup.base + "/connect", form)
    assert status == 400 and "ya se usó" in body


@pytest.mark.parametrize("form", [
    {"elicitation": "inventado", "state": "x", "decision": "allow"},
    {"state": "x", "decision": "allow"},
    {},
])
def test_unknown_or_missing_state_is_refused(page, form):
    setup, _ = page
    assert http(setup.base + "/connect", form)[0] == 400


def test_an_unknown_link_is_gone(page):
    setup, _ = page
    assert http(setup.url_for("inventado"))[0] == 410


def test_the_credential_never_appears_on_the_wire_or_in_logs(tmp_path):
    frames, logs = [], []
    server = NotesServer(Config(setup_wait=10, demo_url_guard=True), log=logs.append)
    user = ScriptedUser({"action": "accept"}, browser=Browser())
    with Client(*start_in_process(server), roots=[str(tmp_path)], user=user,
                on_frame=lambda d, m: frames.append(json.dumps(m))).connect() as client:
        result = client.call_tool("notes_setup")
        again = client.call_tool("notes_setup")
    secrets = list(server.flows._vault.values())
    server.close()
    assert result["structuredContent"] == {"status": "configured"}
    assert again["structuredContent"] == {"status": "configured", "already": True}
    assert len(secrets) == 1
    everything = "\n".join(frames + logs + [p.get("body", "") for p in user.browser.pages])
    assert secrets[0] not in everything
    assert not re.search(r"state=|nonce", "\n".join(logs))
