"""The user behind the lesson's client: a person clicking widgets, or a script playing answers
through the same widgets.

`WidgetUser` is the `user` of `async_client.AsyncClient` (the contract of client_core.py):
`await elicit(params, question_id)` draws the question (a form, or the URL consent) in the
call's panel and returns the answer; `await open_url(url)` opens the page after a consent (a
link to a new tab, or the simulated page drawn in the notebook); `withdraw(question_id,
reason)` closes a dialog the server gave up on. With a script (LESSON_USER=scripted or
`simulate=True`), a `simulated_user.ScriptedUser` decides each answer, which is then typed into
the form and clicked like a person would, and its `simulated_user.Browser` opens the page.
`sdk_elicitation` answers the official SDK the same way.

Deliberate simplifications: one user per connection answering one call at a time; the
"Ya terminé en la página" button stands in for a client noticing the person came back.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import ipywidgets as w
from IPython.display import display

from client import simulated_user
from shared.protocol import FORM_MODE, URL_MODE

from .consent import ConsentDialog
from .dialog import Dialog, answer_note
from .env import scripted_mode
from .focus import keep_selection
from .forms import ElicitationForm
from .pages import PAGES, SimulatedPage, page_text
from .text import esc, short_json


@dataclass
class Raw:
    """A scripted answer sent as it is, without passing through the form's validation
    (what a buggy or hostile client could send)."""

    result: dict


class NoAnswer:
    """A scripted answer that leaves the dialog open: the person never answers (to see what a
    client's timeout or a cancellation does to an open form)."""


WITHDRAW_GRACE = 2.0  # seconds a cancelled call's dialogs wait for the server to withdraw them


class CallPanel:
    """The widget area of one tool call: forms, consents and live events, in order.

    It is displayed the first time something is added (from the event loop, while the cell
    that made the call is still running, so it lands in that cell's output); a call that asks
    nothing leaves no widget behind. `visible=False` never displays it.
    """

    def __init__(self, visible: bool = True):
        self.box = keep_selection(w.VBox([]))  # answering never moves the notebook's selection
        self.visible = visible
        self.shown = False

    def add(self, widget: w.Widget) -> None:
        self.box.children = (*self.box.children, widget)
        if self.visible and not self.shown:
            self.shown = True
            display(self.box)

    def note(self, text: str, color: str = "#333") -> w.HTML:
        line = w.HTML(f'<div style="color:{color};font-size:92%">{text}</div>')
        self.add(line)
        return line


class WidgetUser:
    def __init__(self, panel: CallPanel | None = None, fetch=PAGES.fetch, pages: str = "link"):
        self.panel = panel or CallPanel()
        self.fetch = fetch            # how pages are loaded (see pages.PAGES)
        self.pages = pages            # "link": a new tab; "inline": the simulated page
        self.script: simulated_user.ScriptedUser | None = None  # None: a person answers
        self.browser_decision = "allow"
        self.wait_after_open = False  # 2026-07-28: wait for «Ya terminé en la página»
        self.history: list[tuple[dict, dict]] = []  # (params, result) of every question
        self.shown: list[dict] = []   # params of every question drawn, answered or not
        self._open: list[Dialog] = []
        self._closing: list[Dialog] = []  # closed by a cancelled call, not withdrawn yet
        self._questions: dict = {}    # the server's request id -> (dialog, its panel)
        self._tasks: set = set()

    def begin(self, panel: CallPanel, script=None, browser: str = "allow") -> None:
        """A new call: its panel, and the answers to play (None: wait for the person)."""
        self.panel, self.browser_decision = panel, browser
        self.script = None if script is None else simulated_user.ScriptedUser(
            *script, browser=simulated_user.Browser(browser, fetch=self.fetch))
        self._questions.clear()

    def end(self, reason: str, answer: bool = True) -> None:
        """Close whatever is still open; never leave it hanging. The call ended without it
        (`answer`: it is answered cancel), or was cancelled (the server withdraws its
        questions, and a withdrawn question gets no answer: wait for that, a moment)."""
        note = f"<span style='color:#8a6d00'>⏹ {esc(reason)}</span>"
        dialogs, self._open = self._open, []
        for dialog in dialogs:
            dialog.resolve({"action": "cancel"}, note) if answer else dialog.close(note)
        if dialogs and not answer:
            self._closing += dialogs
            asyncio.get_running_loop().call_later(WITHDRAW_GRACE, self._give_up, dialogs)

    async def settled(self) -> None:
        """Until every dialog a cancelled call closed is withdrawn by the server (or given up
        after WITHDRAW_GRACE)."""
        dialogs, self._closing = self._closing, []
        if dialogs:
            await asyncio.wait([dialog.future for dialog in dialogs])

    @staticmethod
    def _give_up(dialogs) -> None:
        for dialog in dialogs:  # never withdrawn: the server has forgotten them anyway
            dialog.resolve({"action": "cancel"}, dialog.status.value)

    def withdraw(self, question_id, reason) -> None:
        """The server sent notifications/cancelled for its question `question_id`."""
        dialog, panel = self._questions.pop(question_id, (None, None))
        if dialog is None:
            return
        why = f": {reason.rstrip('. ')}" if isinstance(reason, str) and reason.strip() else ""
        if dialog.answered:
            panel.note(f"📨 El servidor retiró su pregunta #{esc(question_id)} "
                       f"(<code>notifications/cancelled</code>){esc(why)}", "#8a6d00")
        else:
            dialog.resolve({"action": "cancel"}, note=(
                "<span style='color:#8a6d00'>⏹ El servidor retiró esta pregunta "
                f"(<code>notifications/cancelled</code>){esc(why)}. El formulario se cerró "
                "sin enviar nada.</span>"))

    # -- the client's user ------------------------------------------------------------------
    async def elicit(self, params: dict, question_id=None) -> dict:
        mode = params.get("mode", FORM_MODE) if isinstance(params, dict) else FORM_MODE
        dialog = ConsentDialog(params, opens=self.pages) if mode == URL_MODE \
            else ElicitationForm(params)
        self._open.append(dialog)
        self.shown.append(params)
        if question_id is not None:
            self._questions[question_id] = (dialog, self.panel)
        if self.script is not None:  # played before it is shown: never clickable on screen
            self._play(dialog, params)
        else:
            dialog.status.value = ("<span style='color:#555'>⏳ La llamada está en pausa "
                                   "esperando tu respuesta.</span>")
        self.panel.add(dialog.widget)
        result = await dialog.future
        if dialog in self._open:
            self._open.remove(dialog)
        self.history.append((params, result))
        return result

    async def open_url(self, url: str) -> None:
        # Like a person: the consent reaches the server (queued first) before the page does.
        await asyncio.sleep(0)
        if self.script is not None and self.browser_decision == "later":
            self.panel.note("🤖 El usuario dio su consentimiento, pero no abre la página "
                            "(todavía).")
            return
        if self.script is not None:
            button = "Autorizar" if self.browser_decision == "allow" else "Rechazar"
            self.panel.note(f"🤖 El navegador simulado abre la página y pulsa «{button}».")
            self.script.open_url(url)
            pages = self.script.browser.pages
            self.panel.note("🤖 La página respondió: "
                            + esc(page_text(pages[-1])[:200] if pages else "nada"))
            return
        if self.pages == "inline":
            self.panel.add(SimulatedPage(url, self.fetch).widget)
        else:
            self.panel.add(w.HTML(
                f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer" '
                'class="mcp-open-page" style="display:inline-block;padding:4px 12px;'
                'border:1px solid #2d6cdf;border-radius:3px;color:#2d6cdf;'
                'text-decoration:none">🔗 Abrir la página en una pestaña nueva</a>'))
        where = "la página simulada" if self.pages == "inline" else "esa pestaña"
        if not self.wait_after_open:
            self.panel.note(f"Cuando termines en {where}, vuelve aquí: el servidor te avisará "
                            "cuando la página le confirme el resultado.")
            return
        await self._done_on_the_page(where)

    async def _done_on_the_page(self, where: str) -> None:
        done = w.Button(description="Ya terminé en la página", button_style="primary",
                        layout=w.Layout(width="auto"))
        future = asyncio.get_running_loop().create_future()

        def finish(_):
            done.disabled = True
            if not future.done():
                future.set_result(None)
        done.on_click(finish)
        self.panel.note(f"En 2026-07-28 no hay notificación de fin: cuando acabes en {where}, "
                        "pulsa el botón y el cliente reintentará la llamada.")
        self.panel.add(done)
        await future

    def _play(self, dialog: Dialog, params: dict) -> None:
        had_answer = bool(self.script.answers)
        answer = self.script.elicit(params)  # ScriptedUser: the next answer, or cancel
        if not had_answer:
            dialog.resolve(answer, note="🤖 El usuario simulado no tenía respuesta preparada "
                           "para esta pregunta: envió <b>cancel</b>.")
            return
        if isinstance(answer, NoAnswer):  # open, but in the script's hands: not clickable
            for button in dialog.buttons.values():
                button.disabled = True
            dialog.freeze()
            dialog.status.value = ("🤖 El usuario simulado deja el formulario abierto: no "
                                   "responde.")
            return
        if isinstance(answer, Raw):
            dialog.resolve(answer.result, note="🤖 El usuario simulado envió sin validar: "
                           f"<code>{esc(short_json(answer.result))}</code>")
            return
        try:
            if answer.get("action") == "accept" and isinstance(dialog, ElicitationForm):
                dialog.fill(answer.get("content") or {})
            dialog.press(answer.get("action"))
        except (ValueError, KeyError) as exc:
            dialog.resolve({"action": "cancel"}, note="<span style='color:#c0392b'>🤖 La "
                           f"respuesta preparada no encaja en el formulario ({esc(exc)}): "
                           "se envió cancel.</span>")
            return
        if not dialog.answered:  # the form refused it (validation): say so, then cancel
            dialog.resolve({"action": "cancel"},
                           note=f"{dialog.status.value}<br>🤖 Se envió cancel.")
            return
        why = " (LESSON_USER=scripted)" if scripted_mode() else ""
        dialog.status.value = "🤖 " + answer_note(dialog.future.result(),
                                                  f"El usuario simulado{why} envió")

    # -- the official SDK's callback ------------------------------------------------------
    async def sdk_elicitation(self, context, params):
        """`elicitation_callback` for mcp.Client: the same widgets answer the SDK."""
        import mcp.types as types

        data = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        result = await self.elicit(data)
        if data.get("mode") == URL_MODE and result["action"] == "accept":
            task = asyncio.get_running_loop().create_task(self.open_url(data["url"]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return types.ElicitResult(action=result["action"], content=result.get("content"))
