"""Where the kernel runs decides how notebook 03's setup page reaches the learner
(lessons/mcp_ui/where.py, hub.py, code/transports/page_http.py's Exposure).

Each host is faked by its own markers (environment variables, the Jupyter server's runtime
file): on a laptop the real page on 127.0.0.1; on a JupyterHub with jupyter-server-proxy the
same page through the hub's URL, only under its secret prefix and only for the browser the
hub logged in as this learner; anywhere else (Colab, Codespaces, a remote server, a hub that
cannot proxy) the page drawn in the notebook, said to be a simulation, where every exercise
still completes (exercise 3B's redirects there, with the reference solution, in
test_try_flow_reference.py).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from notebook_helpers import import_mcp_ui, lab_run

from nube_copias import Provider
from transports import page_http
from urlflow import setup_page, url_mode

ui = import_mcp_ui()
from mcp_ui import hub, where  # noqa: E402  (after import_mcp_ui put code/ on sys.path)

HUB_ENV = {"JUPYTERHUB_USER": "ana", "JUPYTERHUB_SERVICE_PREFIX": "/user/ana/",
           "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:9/user/ana/",
           "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api"}
MARKERS = ("COLAB_RELEASE_TAG", "CODESPACES", "JUPYTERHUB_USER", "JUPYTERHUB_SERVICE_PREFIX",
           "JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_PUBLIC_URL", "JUPYTERHUB_API_URL",
           "LESSON_PUBLIC_URL", "LESSON_PAGE", "LESSON_KERNEL", "JPY_PARENT_PID")


def place(environ, proxy=True, runtime_dir=None):
    return where.where(environ, {}, lambda name: proxy, runtime_dir)


# -- which mode, and why ----------------------------------------------------------------------
def test_on_a_laptop_the_page_is_the_real_one_on_loopback(tmp_path):
    (tmp_path / "jpserver-41.json").write_text(json.dumps({"url": "http://127.0.0.1:8888/"}))
    found = place({"JPY_PARENT_PID": "41"}, runtime_dir=tmp_path)
    assert (found.name, found.page) == ("JupyterLab", where.LOCAL)


@pytest.mark.parametrize("markers,name,because", [
    ({"COLAB_RELEASE_TAG": "release-colab_20260101"}, "Colab", "Google"),
    ({"CODESPACES": "true"}, "Codespaces", "codespace"),
    ({**HUB_ENV, "JUPYTERHUB_PUBLIC_URL": "https://hub.example/user/ana/"}, "JupyterHub",
     "jupyter-server-proxy"),
    (HUB_ENV, "JupyterHub", "JUPYTERHUB_PUBLIC_URL"),
])
def test_where_the_browser_cannot_reach_the_kernel_the_page_is_drawn_in_the_notebook(
        markers, name, because):
    found = place(markers, proxy=name != "JupyterHub" or "PUBLIC" in because)
    assert (found.name, found.page) == (name, where.INLINE)
    assert because in found.why and "simulación" in found.why


def test_a_jupyter_server_listening_beyond_loopback_is_taken_as_remote(tmp_path):
    (tmp_path / "jpserver-7.json").write_text(json.dumps({"url": "http://10.1.2.3:8888/"}))
    found = place({"JPY_PARENT_PID": "7"}, runtime_dir=tmp_path)
    assert found.page == where.INLINE and "10.1.2.3" in found.why


def test_a_hub_with_the_proxy_and_a_public_url_serves_the_page_through_itself():
    found = place({**HUB_ENV, "JUPYTERHUB_PUBLIC_URL": "https://hub.example/user/ana/"})
    assert (found.page, found.public_url) == (where.HUB, "https://hub.example/user/ana/")
    assert "hub.example" in found.why


def test_an_instructor_can_give_the_hubs_public_origin_when_the_hub_does_not():
    found = place({**HUB_ENV, "LESSON_PUBLIC_URL": "https://clase.example"})
    assert (found.page, found.public_url) == (where.HUB, "https://clase.example/user/ana/")


def test_lesson_page_forces_the_simulation_and_cannot_force_a_hub_that_is_not_there():
    assert place({"LESSON_PAGE": "simulada"}).page == where.INLINE
    forced = place({"LESSON_PAGE": "hub"})
    assert forced.page == where.INLINE and "LESSON_PAGE=hub" in forced.why


@pytest.mark.parametrize("markers,transport,hub_url", [
    ({"COLAB_RELEASE_TAG": "r"}, "inline", ""),
    ({"CODESPACES": "true"}, "inline", ""),
    ({**HUB_ENV, "JUPYTERHUB_PUBLIC_URL": "https://hub.example/user/ana/"}, "http",
     "https://hub.example/user/ana/"),
    ({}, "http", ""),
])
def test_the_kernel_follows_the_place(monkeypatch, markers, transport, hub_url):
    for name in MARKERS:
        monkeypatch.delenv(name, raising=False)
    for name, value in markers.items():
        monkeypatch.setenv(name, value)
    kernel = ui.current_kernel()
    assert (kernel.cells_as_tasks, kernel.page_transport, kernel.hub_url) == \
        (False, transport, hub_url)


def test_diagnostico_says_which_page_mode_it_chose_and_why():
    colab = ui.diagnose.page_finding(place({"COLAB_RELEASE_TAG": "r"}))
    assert colab.found.startswith("simulada") and "Colab" in colab.fix
    assert "LESSON_PAGE=local" in colab.fix
    on_hub = ui.diagnose.page_finding(
        place({**HUB_ENV, "JUPYTERHUB_PUBLIC_URL": "https://hub.example/user/ana/"}))
    assert on_hub.ok is True and "https://hub.example/user/ana/proxy/<puerto>/" in on_hub.found


# -- the simulation where the browser cannot reach the kernel (faked Colab) -----------------
@pytest.fixture
def colab(monkeypatch):
    for name in MARKERS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20260101")
    monkeypatch.delenv("LESSON_USER", raising=False)


def test_on_colab_notebook_03s_flow_completes_on_the_simulated_page(colab):
    async def body(lab):
        conn = await lab.connect(quiet=True)
        assert conn.user.pages == "inline" and conn.server._http_page is None  # no socket
        call = asyncio.ensure_future(conn.call("notes_setup"))
        while not conn.user._open:
            await asyncio.sleep(0.01)
        conn.user._open[-1].press("accept")
        while not any("mcp-simulated-page" in c._dom_classes
                      for c in conn.last.panel.box.children):
            await asyncio.sleep(0.01)
        drawn = next(c for c in conn.last.panel.box.children
                     if "mcp-simulated-page" in c._dom_classes)
        assert "Simulación" in drawn.children[0].value
        next(b for b in drawn.children[1].children if b.description == "Autorizar").click()
        await call
        return conn
    conn = lab_run(body)
    assert conn.last.result.data == {"status": "configured"}
    assert conn.last_url().startswith(setup_page.INLINE_BASE + "/connect?elicitation=")


# -- the real page behind a hub's proxy ----------------------------------------------------------
class Access:
    """A HubAccess whose identity answers are given by the test (who owns which cookie)."""

    def __init__(self, owners):
        self.asked = []
        self.access = hub.HubAccess("http://hub.test:8000/user/ana/", {**HUB_ENV},
                                    ask=lambda cookie: self.asked.append(cookie)
                                    or owners.get(cookie))


@pytest.fixture
def exposed():
    """A flow store with one pending link, its page served behind a faked hub proxy."""
    flows = url_mode.FlowStore(ttl_seconds=60)
    record = flows.start("s1", "local:ana", "notas-sync")
    page = setup_page.SetupPage(flows, "notas-sync")
    access = Access({"ana-cookie": "ana", "beto-cookie": "beto"})
    served = page_http.serve_http(page, exposure=access.access.exposure(), log=LOG.append)
    yield served, record, access
    served.close()


LOG: list[str] = []


def request(served, path, method="GET", body=None, **headers):
    loop = urlsplit(served.loopback)
    connection = http.client.HTTPConnection(loop.hostname, loop.port, timeout=10)
    headers = {"Host": "hub.test:8000", **headers}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def test_the_hub_page_has_the_hubs_address_and_a_secret_prefix(exposed):
    served, record, access = exposed
    key = access.access.key
    port = urlsplit(served.loopback).port
    assert served.base == f"http://hub.test:8000/user/ana/proxy/{port}/{key}"
    assert len(key) >= 22 and served.page.url_for("x").startswith(served.base + "/connect?")


def test_without_the_prefix_there_is_no_page_at_all(exposed):
    served, record, access = exposed
    status, text = request(served, f"/connect?elicitation={record.elicitation_id}",
                           Cookie="ana-cookie")
    assert status == 404 and record.nonce not in text and access.asked == []


def test_another_user_with_the_whole_url_sees_nothing_and_completes_nothing(exposed):
    served, record, access = exposed
    prefix = "/" + access.access.key
    for cookie in ({}, {"Cookie": "beto-cookie"}):
        status, text = request(served, f"{prefix}/connect?elicitation={record.elicitation_id}",
                               **cookie)
        assert status == 403 and record.nonce not in text and "Autorizar" not in text
        status, _ = request(served, f"{prefix}/connect", "POST",
                            f"elicitation={record.elicitation_id}&state={record.nonce}"
                            "&decision=allow", Origin="http://hub.test:8000", **cookie)
        assert status == 403
    assert served.page.flows.usable(record.elicitation_id)  # still pending, untouched


def test_the_owners_browser_through_the_proxy_sees_and_completes_the_flow(exposed):
    served, record, access = exposed
    prefix = "/" + access.access.key
    status, text = request(served, f"{prefix}/connect?elicitation={record.elicitation_id}",
                           Cookie="ana-cookie")
    assert status == 200 and record.nonce in text
    assert 'action="connect"' in text  # relative: it stays under the proxy's prefix
    status, text = request(served, f"{prefix}/connect", "POST",
                           f"elicitation={record.elicitation_id}&state={record.nonce}"
                           "&decision=allow", Cookie="ana-cookie",
                           Origin="http://hub.test:8000")
    assert status == 200 and "quedó autorizado" in text
    assert access.asked == ["ana-cookie"]  # asked once, then remembered
    assert not any(access.access.key in line for line in LOG)


@pytest.mark.parametrize("headers,status", [
    ({"Host": "evil.example"}, 421),
    ({"Origin": "https://evil.example"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
])
def test_a_foreign_site_is_still_refused_through_the_hub(exposed, headers, status):
    served, record, access = exposed
    got, _ = request(served, f"/{access.access.key}/connect", "POST",
                     f"elicitation={record.elicitation_id}&state={record.nonce}&decision=allow",
                     **{"Cookie": "ana-cookie", "Origin": "http://hub.test:8000", **headers})
    assert got == status and served.page.flows.usable(record.elicitation_id)


def test_nube_de_copias_form_posts_to_a_relative_address():
    provider = Provider(lambda: "http://hub.test/user/ana/proxy/1/k")
    request_ = setup_page.PageRequest("GET", "/nube-copias/autorizar", {
        "response_type": "code", "client_id": "notas-roots-elicitacion",
        "redirect_uri": provider.redirect_uri(), "state": "s"}, {}, None, "", None)
    answer = setup_page._response(provider.authorize(request_))
    assert 'action="autorizar"' in answer.html


# -- whose cookies: the learner's own Jupyter server says it ---------------------------------
class FakeServer(BaseHTTPRequestHandler):
    """A Jupyter server's GET /user/ana/api/me: ana for her cookie with a matching X-XSRFToken."""

    def do_GET(self):
        ok = self.path == "/user/ana/api/me" and "ana-session" in (self.headers["Cookie"] or "") \
            and self.headers["X-XSRFToken"] == "tok|1"
        body = json.dumps({"identity": {"username": "ana"}}).encode() if ok else b"{}"
        self.send_response(200 if ok else 403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_the_identity_comes_from_the_learners_jupyter_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {**HUB_ENV, "JUPYTERHUB_SERVICE_URL":
               f"http://0.0.0.0:{server.server_address[1]}/user/ana/"}
        access = hub.HubAccess("https://hub.example/user/ana/", env)
        assert access.check({"Cookie": 'jupyterhub-user-ana=ana-session; _xsrf="tok|1"'}) is None
        assert access.check({"Cookie": "jupyterhub-user-beto=beto-session; _xsrf=tok|1"})
        assert access.check({"Cookie": "jupyterhub-user-ana=ana-session"})  # no xsrf: refused
        assert access.check({})
    finally:
        server.shutdown()
        server.server_close()
