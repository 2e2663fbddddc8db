"""The course on a real JupyterHub (hub.py: JupyterHub from the Binder environment, its npm
proxy, two learners), driven in Debian's chromium through the hub's URL only.

A learner runs notebook 03 with clicks: the URL-mode consent opens the setup page through the
hub (`/user/<name>/proxy/<port>/<key>/connect?...`), «Autorizar» completes the flow and the
call ends configured; the notebook's `ui.revisar` checks exercise 3B. A second learner, in a
browser of their own, and another user of the machine, connecting to 127.0.0.1 directly with
the whole URL in hand, can neither see the page nor complete the flow, which its owner then
completes.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from journeys import STARTERS, run_with_clicks
from lab import open_notebook, run_all, write_starter_solutions
from waits import TEST_TIMEOUT

NOTEBOOK_03 = next(j for j in STARTERS if j.notebook == "03_modo_url.ipynb")
PENDING_LINK = [  # a URL-mode link left pending: consented, the page never opened
    "import mcp_ui as ui\nlab = ui.NotesLab(quiet=True)\nconn = await lab.connect(quiet=True)",
    "r = await conn.call('notes_setup', simulate=True, scripted=[{'action': 'accept'}],\n"
    "                    browser='later')\nprint('URL=' + conn.last_url())",
]
PAGE_URL = re.compile(r"URL=(\S+)")


def hub_page(url: str) -> tuple[str, str, str]:
    """(port, key, elicitation id) of a setup page URL served through the hub's proxy."""
    match = re.search(r"/proxy/(\d+)/([A-Za-z0-9_-]+)/connect\?", url)
    assert match, url
    return match[1], match[2], parse_qs(urlsplit(url).query)["elicitation"][0]


@pytest.mark.timeout(TEST_TIMEOUT)
def test_a_learner_does_notebook_03s_url_flow_and_checks_exercise_3b_through_the_hub(
        hub, page):
    lessons = hub.user_home("ana") / "curso" / "lessons"
    assert write_starter_solutions(lessons)
    hub.login(page, "ana")
    run_with_clicks(page, hub.as_lab("ana"), (None, hub.scratch("ana")),
                    "curso/lessons/03_modo_url.ipynb", NOTEBOOK_03, "hub-03")
    links = page.locator("a.mcp-open-page").evaluate_all("links => links.map(a => a.href)")
    assert links and all(link.startswith(f"{hub.url}/user/ana/proxy/") for link in links)


@pytest.mark.timeout(TEST_TIMEOUT)
def test_another_learner_and_another_local_user_can_neither_see_nor_complete_the_flow(
        hub, browser, page, other_user):
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)
                                               for source in PENDING_LINK], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                       "language": "python"}})
    path = hub.user_home("ana") / "curso" / "lessons" / "enlace-pendiente.ipynb"
    path.write_text(nbformat.writes(notebook))
    hub.login(page, "ana")
    open_notebook(page, hub.as_lab("ana"), "curso/lessons/enlace-pendiente.ipynb",
                  workspace="pendiente")
    run_all(page)
    url = PAGE_URL.search(page.locator(".jp-OutputArea-output").last.inner_text())[1]
    assert url.startswith(f"{hub.url}/user/ana/proxy/"), url
    port, key, eid = hub_page(url)

    # beto, logged in to the same hub in his own browser, follows ana's link
    beto = browser.new_context()
    try:
        intruder = beto.new_page()
        hub.login(intruder, "beto")
        answer = intruder.goto(url)
        assert answer.status in (403, 404) or "/hub/" in intruder.url
        expect(intruder.locator("body")).not_to_contain_text("Autorizar Notas Sync")
    finally:
        beto.close()

    # another user of the machine, straight to 127.0.0.1: without the key there is no page,
    # with the whole URL there is still none, and a form posted with a guessed state is refused
    loopback = f"http://127.0.0.1:{port}"
    status, body = other_user.fetch(f"{loopback}/connect?elicitation={eid}")
    assert status == 404 and "Autorizar" not in body
    status, body = other_user.fetch(f"{loopback}/{key}/connect?elicitation={eid}")
    assert status == 403 and "Autorizar" not in body
    status, _ = other_user.fetch(f"{loopback}/{key}/connect", "POST", urlencode(
        {"elicitation": eid, "state": "adivinado", "decision": "allow"}))
    assert status == 403
    status, body = other_user.fetch(url)  # through the hub, without ana's login
    assert "Autorizar Notas Sync" not in body

    # the link is still ana's to complete, in her own browser, through the hub
    setup = page.context.new_page()
    setup.goto(url)
    expect(setup.locator("h1")).to_have_text("Autorizar Notas Sync")
    setup.locator("#allow").click()
    expect(setup.locator("#result")).to_contain_text("Notas Sync quedó autorizado")
    assert setup.url.startswith(f"{hub.url}/user/ana/proxy/{port}/{key}/connect")


def test_the_binder_environment_is_the_pinned_one_with_the_proxy_enabled(hub):
    """The hub ran from binder/'s environment: exactly requirements.txt's pins, and
    jupyter-server-proxy enabled in the learners' Jupyter server."""
    import subprocess

    from hub import ENV_DIR, REPO

    def pins(text):
        return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in
                re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", text, re.M)}
    frozen = pins(subprocess.run([str(ENV_DIR / "bin" / "python"), "-m", "pip", "freeze"],
                                 capture_output=True, text=True, check=True).stdout)
    wanted = pins((REPO / "requirements.txt").read_text())
    assert {name: frozen.get(name) for name in wanted} == wanted
    listed = subprocess.run([str(ENV_DIR / "bin" / "jupyter"), "server", "extension", "list"],
                            capture_output=True, text=True)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)  # no colours
    assert re.search(r"jupyter_server_proxy\s+enabled", plain)
