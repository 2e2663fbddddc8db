"""Nube de Copias, exercise 3's simulated OAuth provider: a copy is recorded in the account that
authorized it, and with `serve --provider rpc` the provider is the client's (a grader's): the
server asks it on the MCP pipe, and its core may wait for the answer while a page or a tool
runs. A completion notice a page sends from the core reaches the client before the page's
answer, so whoever reads the answer has seen the notice; one sent from another thread goes
through the core too.
"""

import textwrap
import time

import pytest

import extension
import nube_copias
from client.sync_client import Client
from server import Config, NotesServer
from server_support import CODE  # noqa: F401  (puts code/ on sys.path)
from shared import wire
from shared.protocol import PROVIDER_METHOD, SETUP_PAGE_METHOD
from transports.transport import start_in_process
from urlflow.setup_page import INLINE_BASE, PageRequest

PAGES = textwrap.dedent('''
    import threading

    import nube_copias
    from extension import Extension
    from server import ok

    extension = Extension()
    NOTIFY = []


    @extension.tool("prepara", description="Guarda quién avisa del fin.")
    def prepara(ctx):
        NOTIFY[:] = [ctx.completion_notifier()]
        return ok("Listo.")


    @extension.tool("avisa_desde_otro_hilo", description="Avisa del fin desde otro hilo.")
    def avisa_desde_otro_hilo(ctx):
        worker = threading.Thread(target=ctx.completion_notifier(), args=("flujo-2",))
        worker.start()
        worker.join()
        return ok("Avisado.")


    @extension.tool("avisa_mal", description="Avisa del fin sin un elicitationId válido.")
    def avisa_mal(ctx):
        refusals = []
        for wrong in ("", 7, None):
            try:
                ctx.completion_notifier()(wrong)
            except TypeError as exc:
                refusals.append(str(exc))
        return ok(" | ".join(refusals))


    @extension.page_route("/vuelve")
    def vuelve(page):
        return page.redirect("/canjea?code=otra-vez")


    @extension.page_route("/campos")
    def campos(page):
        return page.reply(200, "Campos", f"{len(page.form)} campos")


    @extension.page_route("/canjea")
    def canjea(page):
        try:
            token = page.provider.exchange(page.query.get("code", ""))
        except nube_copias.ProviderError as exc:
            return page.reply(400, "No", str(exc))
        if NOTIFY:
            NOTIFY[0]("flujo-1")
        return page.reply(200, "Sí", f"token de {len(token)} caracteres")
''')


def authorized_code(provider, account, state="s-1"):
    """Press «Autorizar» on the provider's page as `account`: the code it sends back."""
    fields = {"response_type": "code", "client_id": nube_copias.CLIENT_ID,
              "redirect_uri": provider.redirect_uri(), "state": state, "decision": "allow"}
    page = PageRequest("POST", nube_copias.AUTHORIZE_PATH, {}, fields, account, INLINE_BASE,
                       provider)
    location = provider.authorize(page).location
    return location.split("code=", 1)[1].split("&", 1)[0]


def test_a_copy_is_recorded_in_the_account_that_authorized_it():
    provider = nube_copias.Provider(lambda: INLINE_BASE)
    token = provider.exchange(authorized_code(provider, "ana"))
    assert provider.backup(token, ["n-1", "n-2"]) == 2
    assert provider.copies_of("ana") == [["n-1", "n-2"]] and provider.copies_of("beto") == []
    with pytest.raises(nube_copias.ProviderError):
        provider.backup("ncc_tok_inventado", ["n-1"])
    assert len(provider.copies) == 1


def test_a_code_is_exchanged_once_and_a_revoked_code_is_refused():
    provider = nube_copias.Provider(lambda: INLINE_BASE)
    code = authorized_code(provider, "ana")
    provider.exchange(code)
    with pytest.raises(nube_copias.ProviderError):
        provider.exchange(code)
    revoked = authorized_code(provider, "ana")
    provider.revoke(revoked)
    with pytest.raises(nube_copias.ProviderError):
        provider.answer({"op": "exchange", "code": revoked})
    with pytest.raises(nube_copias.ProviderError):
        provider.answer({"op": "borra", "code": revoked})


@pytest.fixture
def served(tmp_path):
    """`serve --provider rpc --setup-page rpc` on a thread, with PAGES loaded; its client, the
    client's own Nube de Copias answering PROVIDER_METHOD, and the frames the client saw."""
    (tmp_path / "paginas.py").write_text(PAGES, encoding="utf-8")
    server = NotesServer(Config(page_transport="rpc", provider="rpc"),
                         extension.load(str(tmp_path / "paginas.py")))
    frames = []
    client = Client(*start_in_process(server), roots=None,
                    on_frame=lambda direction, msg: frames.append((direction, msg)))
    provider = nube_copias.Provider(lambda: INLINE_BASE)
    client.core.handlers[PROVIDER_METHOD] = lambda params: nube_copias.rpc_answer(provider,
                                                                                  params)
    client.connect()
    yield client, provider, frames
    client.close()


def page(client, target):
    return client.request(SETUP_PAGE_METHOD, {"method": "GET", "target": target, "body": ""})


def test_with_a_remote_provider_the_server_asks_the_client_and_waits_for_its_answer(served):
    client, provider, frames = served
    answer = page(client, "/canjea?code=" + authorized_code(provider, "ana"))
    assert answer["status"] == 200 and "token de" in answer["body"]
    asked = [msg for direction, msg in frames if msg.get("method") == PROVIDER_METHOD]
    assert [msg["params"]["op"] for msg in asked] == ["exchange"]
    assert len(provider._tokens) == 1  # the client's provider issued it: the server only asked


def test_a_refusal_of_the_remote_provider_is_a_provider_error_in_the_server(served):
    client, provider, _ = served
    answer = page(client, "/canjea?code=ncc_code_inventado")
    assert answer["status"] == 400 and "desconocido" in answer["body"]
    del client.core.handlers[PROVIDER_METHOD]  # now nobody answers it: an error, not a hang
    answer = page(client, "/canjea?code=" + authorized_code(provider, "ana"))
    assert answer["status"] == 400


def test_a_notice_a_page_sends_from_the_core_reaches_the_client_before_the_pages_answer(served):
    client, provider, frames = served
    client.call_tool("prepara", {})
    page(client, "/canjea?code=" + authorized_code(provider, "ana"))
    incoming = [msg for direction, msg in frames if direction == "←"]
    notice = next(i for i, msg in enumerate(incoming)
                  if msg.get("method") == "notifications/elicitation/complete")
    answer = next(i for i, msg in enumerate(incoming)
                  if isinstance(msg.get("result"), dict) and "body" in msg["result"])
    assert notice < answer


def test_a_notice_sent_from_another_thread_reaches_the_client_through_the_core(served):
    client, _, frames = served
    client.call_tool("avisa_desde_otro_hilo", {})

    def notices():
        return [msg["params"] for direction, msg in list(frames) if direction == "←"
                and msg.get("method") == "notifications/elicitation/complete"]

    # sent from the core's clock thread, soon after: waited for, not assumed before a ping
    deadline = time.monotonic() + 30
    while not notices() and time.monotonic() < deadline:
        time.sleep(0.01)
    client.request("ping", {})  # nothing more is on its way
    assert notices() == [{"elicitationId": "flujo-2"}]


def test_a_notifier_refuses_an_elicitation_id_that_is_not_a_text_and_sends_nothing(served):
    client, _, frames = served
    result = client.call_tool("avisa_mal", {})
    refusals = result["content"][0]["text"].split(" | ")
    assert len(refusals) == 3 and all("elicitationId" in text for text in refusals)
    assert not [msg for direction, msg in frames
                if msg.get("method") == "notifications/elicitation/complete"]


def test_a_redirect_of_the_page_over_the_pipe_carries_where_it_goes(served):
    client, _, _ = served
    answer = page(client, "/vuelve")
    assert answer["status"] == 303 and answer["location"] == "/canjea?code=otra-vez"
    assert "location" not in page(client, "/canjea?code=ncc_code_inventado")


def test_a_post_over_the_pipe_without_a_body_is_a_post_with_an_empty_form(served):
    client, _, _ = served
    answer = client.request(SETUP_PAGE_METHOD, {"method": "POST", "target": "/campos"})
    assert answer["status"] == 200 and "0 campos" in answer["body"]


def test_serve_says_how_to_put_the_provider_out_of_the_server():
    import main
    args = main.parse_args(["serve", "--provider", "rpc"])
    assert args.provider == "rpc" and main.parse_args(["serve"]).provider == "local"
    assert isinstance(NotesServer(Config(provider="rpc")).provider, nube_copias.RemoteProvider)
    with pytest.raises(nube_copias.ProviderError):  # not attached: refused, never a hang
        NotesServer(Config(provider="rpc")).provider.exchange("ncc_code_x")
    assert wire.RpcError(nube_copias.PROVIDER_ERROR, "x").code == nube_copias.PROVIDER_ERROR
