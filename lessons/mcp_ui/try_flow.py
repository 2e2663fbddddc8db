"""Exercise 3B with your own clicks: −32042 followed the way a 2025-11-25 client may follow it.

`await lab.try_backup()` starts a lab server with your `soluciones/ejercicio3b.py` alone (so
the course's own URL-mode guard decides, as when 3B is graded) and calls `notes_backup` from a
2025-11-25 client (`call_following_url`); `try_backup("2026-07-28")` does it at 2026-07-28
(notebook 6's optional part), where the URL comes inside the call and the client retries it
once you are done on the page. Without authorization your tool ends the call with
−32042; the client then does what *Client › Elicitation › URL Elicitation Required Error*
lets it do: it shows the consent dialog for the first URL elicitation in
`error.data.elicitations`, opens that URL if you accept (a new tab in JupyterLab; in
JupyterLite, which has no web server, `FlowPage`: a browser drawn in the notebook that follows
your connect page to Nube de Copias and back to your callback), waits for
`notifications/elicitation/complete` with that elicitationId (or for your «Reintentar ya»,
if it never comes), and calls `notes_backup` again, once.

A −32042 whose `data.elicitations` holds no URL-mode elicitation (say, the bare URL) is not
followed, and the client says why (`not_followed`); a page of yours that raises is shown in the
call's panel as it happens (lab_client.py). FlowPage labels the address it shows as the
browser's: a `code` and a `state` in it reach your browser, never the MCP client.

With LESSON_USER=scripted (or `simulate=True`) the simulated user plays `scripted` and its
browser presses `browser` ("allow": «Autorizar») on every page with a form.

Deliberate simplifications: only the first URL elicitation is followed, and the call is
retried once; FlowPage shows a page's text and the buttons of its form, not its HTML.
"""

from __future__ import annotations

import asyncio
import html
from urllib.parse import urlencode, urljoin

import ipywidgets as w

from client import simulated_user
from shared.protocol import URL_ELICITATION_REQUIRED, URL_MODE
from tooling import url_entry_problem

from .dialog import BOX
from .env import scripted_mode
from .pages import page_text
from .text import esc
from .users import CallPanel

COMPLETE = "notifications/elicitation/complete"
WAIT_FOR_NOTICE = 600.0    # seconds a person may take on the page
SCRIPTED_WAIT = 10.0       # ... and a simulated one (then the call is retried anyway)
BUTTONS = {"allow": "Autorizar", "deny": "Rechazar"}


def not_followed(result) -> str | None:
    """Why the client cannot follow a −32042 (a lab_client.ToolResult): its
    `data.elicitations` holds no URL-mode elicitation (tooling.url_entry_problem). None when
    the result is no −32042, or one the client can follow."""
    error = result.error or {}
    if error.get("code") != URL_ELICITATION_REQUIRED:
        return None
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    return url_entry_problem(data.get("elicitations"))


def url_required(result) -> dict | None:
    """The first URL elicitation of a −32042 error (a lab_client.ToolResult), or None."""
    error = result.error or {}
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    if error.get("code") != URL_ELICITATION_REQUIRED:
        return None
    entries = data.get("elicitations") if isinstance(data.get("elicitations"), list) else []
    return next((e for e in entries if isinstance(e, dict) and e.get("mode") == URL_MODE
                 and isinstance(e.get("url"), str)), None)


async def call_following_url(conn, tool: str, arguments: dict | None = None, *, scripted=(),
                             simulate: bool = False, browser: str = "allow"):
    """`conn.call(tool)`; if it ends with −32042, follow its URL (consent, the page, the
    completion notification) and call once more. Returns the last ToolResult."""
    with_flow_pages(conn)
    first = await conn.call(tool, arguments, scripted=scripted, simulate=simulate,
                            browser=browser)
    params = url_required(first)
    if params is None:
        problem = not_followed(first)
        if problem:
            print(f"  ⚠ El cliente no puede seguir este −32042: {problem}.")
        return first
    panel = CallPanel()
    panel.note("↪ El cliente (2025-11-25) sigue el −32042: te pide consentimiento para la URL "
               "de <code>error.data.elicitations</code>.", "#555")
    conn.user.begin(panel, list(scripted) if simulate or scripted_mode() else None, browser)
    notice = Notice(conn, params.get("elicitationId"))
    try:
        answer = await conn.user.elicit(params)
        if answer.get("action") != "accept":
            panel.note(f"Respondiste {esc(answer.get('action'))}: el cliente no abre nada y no "
                       "vuelve a llamar.")
            return first
        await conn.user.open_url(params["url"])
        await wait_for(notice, panel, SCRIPTED_WAIT if conn.user.script else WAIT_FOR_NOTICE)
    finally:
        notice.cancel()
        conn.user.end("El cliente deja de esperar la página.")
    print("↻ El cliente repite la llamada:")
    return await conn.call(tool, arguments)


def with_flow_pages(conn) -> None:
    """In JupyterLite (pages drawn in the notebook) a person opens URL-mode pages in a
    `FlowPage`, which follows your connect page to Nube de Copias and back; users.py's
    SimulatedPage knows only Notas Sync's own page. Scripted browsers already follow
    redirects."""
    user = conn.user
    if user.pages != "inline" or getattr(user, "flow_pages", False):
        return
    drawn_by_users = user.open_url

    async def open_url(url: str) -> None:
        if user.script is not None:
            return await drawn_by_users(url)
        user.panel.add(FlowPage(url, user.fetch).widget)
        if user.wait_after_open:  # 2026-07-28: the client retries when you say so
            await user._done_on_the_page("la página simulada")
    user.open_url, user.flow_pages = open_url, True


class Notice:
    """Whether `notifications/elicitation/complete` for one elicitationId reached the client:
    `future` is done when it comes (or when someone gives up waiting)."""

    def __init__(self, conn, elicitation_id):
        self.conn, self.eid = conn, elicitation_id
        self.future = asyncio.get_running_loop().create_future()
        self._previous = conn.client.on_notification
        conn.client.on_notification = self._seen
        if any(self._ours(msg) for direction, msg in conn.frames if direction == "←"):
            self.future.set_result("notification")

    def _ours(self, note) -> bool:
        params = note.get("params") if isinstance(note.get("params"), dict) else {}
        return note.get("method") == COMPLETE and params.get("elicitationId") == self.eid

    def _seen(self, note):
        if self._previous is not None:
            self._previous(note)
        if self._ours(note) and not self.future.done():
            self.future.set_result("notification")

    def cancel(self):
        self.conn.client.on_notification = self._previous
        if not self.future.done():
            self.future.cancel()


async def wait_for(notice: Notice, panel: CallPanel, seconds: float) -> None:
    """Until the completion notification, a click on «Reintentar ya», or `seconds`."""
    again = w.Button(description="Reintentar ya", layout=w.Layout(width="auto"))
    again.on_click(lambda _: notice.future.done() or notice.future.set_result("click"))
    panel.note("Esperando <code>notifications/elicitation/complete</code>: la manda tu página de "
               "retorno cuando completa el flujo. Si no llega, pulsa «Reintentar ya».", "#555")
    panel.add(again)
    try:
        how = await asyncio.wait_for(asyncio.shield(notice.future), seconds)
    except asyncio.TimeoutError:
        how = "timeout"
    again.disabled = True
    panel.note({"notification": "📨 Llegó <code>notifications/elicitation/complete</code> con "
                "el mismo elicitationId: la página completó el flujo.",
                "click": "Pulsaste «Reintentar ya»: la notificación de fin no llegó.",
                "timeout": "⏳ No llegó la notificación de fin a tiempo."}[how],
               "#1e6b30" if how == "notification" else "#8a6d00")


class FlowPage:
    """A browser drawn in the notebook, for a kernel without a web server (JupyterLite): it
    opens a link, follows the redirects (your connect page, Nube de Copias, your callback),
    shows each page's text and offers the buttons of its form, labelled as the simulation it
    is."""

    def __init__(self, url: str, fetch):
        self.browser = simulated_user.Browser(fetch=fetch)
        self.page, self.url = {}, url
        self.view = w.HTML()
        self.buttons = w.HBox([])
        self.widget = w.VBox([w.HTML(
            "<div style='background:#fff4ce;padding:4px 8px'>🧪 <b>Simulación</b> de un "
            "navegador: aquí no hay servidor web, así que el cuaderno abre las páginas de tu "
            "servidor y de Nube de Copias (con sus redirecciones) y te las muestra.</div>"),
            self.view, self.buttons],
            layout=w.Layout(**{**BOX, "border": "2px dashed #d4a72c"}))
        self.widget.add_class("mcp-flow-page")
        self.open(url)

    def open(self, url: str, method: str = "GET", data: str | None = None) -> dict:
        self.url, self.page = self.browser.follow(url, method, data)
        body = self.page.get("body", "")
        self.view.value = (f"<div style='margin:6px 0'>Dirección en tu navegador (el cliente "
                           f"MCP no la ve): <code>{esc(self.url)}</code>"
                           f"</div><div><b>HTTP {esc(self.page.get('status', '—'))}</b>: "
                           f"{esc(page_text(self.page))}</div>")
        form = simulated_user.FORM_ACTION.search(body) if self.page.get("status") == 200 else None
        self.buttons.children = []
        if form is not None:
            fields = {n: html.unescape(v) for n, v in simulated_user.FORM_FIELD.findall(body)}
            target = urljoin(self.url, html.unescape(form[1]))
            buttons = []
            for decision, label in BUTTONS.items():
                button = w.Button(description=label,
                                  button_style="primary" if decision == "allow" else "")
                button.on_click(lambda _, d=decision: self.open(
                    target, "POST", urlencode({**fields, "decision": d})))
                buttons.append(button)
            self.buttons.children = buttons
        return self.page

    def press(self, decision: str) -> dict:
        """Press «Autorizar» ("allow") or «Rechazar» ("deny") on the page shown now."""
        labels = [b.description for b in self.buttons.children]
        button = self.buttons.children[labels.index(BUTTONS[decision])]
        button.click()
        return self.page
