"""The setup page from the notebook's side: reach it by URL, draw it, poke at it.

`PAGES.fetch(url, method, data)` is the one `fetch` of the lesson's `simulated_user.Browser`: a real
page (`http://127.0.0.1:<port>`, JupyterLab) is fetched over HTTP; an inline page
(`setup_page.INLINE_BASE`, JupyterLite, no sockets) is handed to the `SetupPage` of the lab
server that issued that elicitation, in-process. `SimulatedPage` draws an inline page inside
the notebook, labelled as the simulation it is, with Autorizar/Rechazar buttons that post
through the same fetch. `open_page` and `submit_page` load or post the page like a browser, or
like an attacker with a forged state (notebook 4).

Deliberate simplifications: the simulated page shows the page's text, not its HTML, and its
buttons post the fields of the page's own form (found with `simulated_user.FORM_FIELD`).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urljoin, urlsplit
from weakref import WeakKeyDictionary

import ipywidgets as w

from client import simulated_user
from urlflow.setup_page import INLINE_BASE

from .dialog import BOX
from .text import esc, visible_text


class Pages:
    """The lab servers whose setup page has no socket, found by the URLs they issued."""

    def __init__(self):
        self.servers = []
        # server -> GET /connect of its inline page; held weakly, so a new server never
        # inherits the count of a closed one (an id() can be reused once its object is gone)
        self.visits = WeakKeyDictionary()

    def add(self, server) -> None:
        self.servers.append(server)

    def remove(self, server) -> None:
        if server in self.servers:
            self.servers.remove(server)

    def fetch(self, url: str, method: str = "GET", data: str | None = None) -> dict:
        """One request to a setup page: {"status", "body"}, or {"error"}. A page reached
        through a JupyterHub's proxy (hub.py) is asked in this kernel too: the simulated user
        is the learner, and the hub would want the learner's browser login."""
        inline = url.startswith(INLINE_BASE + "/")
        server = self._inline_server(url, data) if inline else self._exposed_server(url)
        if server is None:
            return simulated_user.http_fetch(url, method, data)
        path = urlsplit(url if inline else url[len(server.page().base):]).path
        if method == "GET" and path == "/connect":
            self.visits[server] = self.visits_of(server) + 1
        return server.page().fetch(url, method, data)

    def _exposed_server(self, url):
        for server in reversed(self.servers):
            served = getattr(server, "_http_page", None)
            if getattr(served, "exposure", None) is not None \
                    and url.startswith(served.base + "/"):
                return server
        return None

    def visits_of(self, server) -> int:
        return self.visits.get(server, 0)

    def _inline_server(self, url, data):
        inline = [s for s in self.servers if s.config.page_transport == "inline"]
        asked = parse_qs(urlsplit(url).query).get("elicitation") \
            or parse_qs(data or "").get("elicitation") or [""]
        issued = [s for s in inline if s.flows.get(asked[0]) is not None]
        return (issued or inline or [None])[-1]


PAGES = Pages()
PAGE_ONLY = ("title", "style", "script", "form")  # the simulated page draws its own buttons


def page_text(page: dict, hidden=("title", "style", "script")) -> str:
    if "error" in page:
        return f"sin respuesta ({page['error']})"
    return visible_text(page.get("body", ""), hidden)


class SimulatedPage:
    """The provider's page drawn in the notebook, for a kernel without a web server."""

    def __init__(self, url: str, fetch=PAGES.fetch):
        self.url, self.fetch = url, fetch
        page = fetch(url, "GET", None)
        self.fields = dict(simulated_user.FORM_FIELD.findall(page.get("body", "")))
        self.buttons = {"allow": w.Button(description="Autorizar", button_style="primary"),
                        "deny": w.Button(description="Rechazar")}
        for decision, button in self.buttons.items():
            button.on_click(lambda _, decision=decision: self.press(decision))
            button.disabled = page.get("status") != 200
        self.result = w.HTML()
        banner = w.HTML(
            "<div style='background:#fff4ce;padding:4px 8px'>🧪 <b>Simulación</b> de la página "
            "del proveedor. Aquí no hay servidor web, así que el cuaderno dibuja la página que "
            "en JupyterLab abrirías en otra pestaña; tus clics llegan a la misma página del "
            "servidor (<code>code/urlflow/setup_page.py</code>).</div>"
            f"<div style='margin:6px 0'>Dirección: <code>{esc(url)}</code></div>"
            f"<div style='margin:6px 0'><b>{esc(page_text(page, (*PAGE_ONLY, 'p')))}</b></div>"
            f"<div style='margin:6px 0'>{esc(page_text(page, (*PAGE_ONLY, 'h1')))}</div>")
        self.widget = w.VBox([banner, w.HBox(list(self.buttons.values())), self.result],
                             layout=w.Layout(**{**BOX, "border": "2px dashed #d4a72c"}))
        self.widget.add_class("mcp-simulated-page")

    def press(self, decision: str) -> dict:
        """Post the page's form with this decision ("allow" or "deny"), like its buttons."""
        for button in self.buttons.values():
            button.disabled = True
        answer = self.fetch(urljoin(self.url, "connect"), "POST",
                            urlencode({**self.fields, "decision": decision}))
        self.result.value = f"<b>HTTP {answer.get('status', '—')}</b>: {esc(page_text(answer))}"
        return answer


def open_page(url: str) -> None:
    """GET the setup page like a browser; prints its HTTP status and visible text."""
    page = PAGES.fetch(url, "GET", None)
    print(f"HTTP {page.get('status', '—')}: {page_text(page)[:220]}")


def submit_page(url: str, state: str | None = None, decision: str = "allow") -> int | None:
    """POST the setup page's form. `state=None` takes the real nonce from the page first, as
    a browser would; any other value is sent as it is (a forged or stale state)."""
    if state is None:
        browser = simulated_user.Browser(decision, fetch=PAGES.fetch)
        browser.visit(url)
        answer, verb = browser.pages[-1], "POST" if len(browser.pages) > 1 else "GET"
    else:
        eid, verb = parse_qs(urlsplit(url).query).get("elicitation", [""])[0], "POST"
        answer = PAGES.fetch(urljoin(url, "connect"), "POST",
                             urlencode({"elicitation": eid, "state": state, "decision": decision}))
    print(f"{verb} → HTTP {answer.get('status', '—')}: {page_text(answer)[:220]}")
    return answer.get("status")
