"""What the form and the URL consent have in common: three buttons and a future for the answer.

A dialog is answered once: a click (or the scripted user pressing the same button) resolves
its future, disables the buttons, freezes the fields and says what was sent. `resolve` with a
note answers it from outside (the call ended, the server withdrew the question); `close` only
disables it (the call was cancelled: the server will withdraw the question, and a withdrawn
question gets no answer).

Deliberate simplifications: one answer per dialog, and nothing here talks to the wire.
"""

from __future__ import annotations

import asyncio

import ipywidgets as w

from .text import esc, short_json

ACTION_LABELS = {"accept": "Aceptar", "decline": "Rechazar", "cancel": "Cancelar"}
BOX = dict(border="1px solid #b0b7c3", padding="10px", margin="6px 0", width="max-content",
           max_width="95%")


class Dialog:
    accept_label = "Aceptar"

    def __init__(self):
        self.future = asyncio.get_running_loop().create_future()
        self.status = w.HTML()
        self.buttons = {
            "accept": w.Button(description=self.accept_label, button_style="primary",
                               layout=w.Layout(width="auto")),
            "decline": w.Button(description="Rechazar", layout=w.Layout(width="auto")),
            "cancel": w.Button(description="Cancelar", layout=w.Layout(width="auto")),
        }
        self.buttons["accept"].on_click(lambda _: self.accept())
        self.buttons["decline"].on_click(lambda _: self.resolve({"action": "decline"}))
        self.buttons["cancel"].on_click(lambda _: self.resolve({"action": "cancel"}))

    @property
    def answered(self) -> bool:
        return self.future.done()

    def accept(self) -> None:
        self.resolve({"action": "accept"})

    def resolve(self, result: dict, note: str | None = None) -> None:
        if self.future.done():
            return
        self.close(note or answer_note(result))
        self.future.set_result(result)

    def close(self, note: str) -> None:
        """Disable it and say why, without answering (`resolve` answers)."""
        for button in self.buttons.values():
            button.disabled = True
        self.freeze()
        self.status.value = note

    def freeze(self) -> None:
        """Disable the dialog's own fields (the form has some)."""

    def press(self, action: str) -> None:
        """Click a button the way the browser would (the scripted user does this)."""
        self.buttons[action].click()


def answer_note(result: dict, who: str = "Enviaste") -> str:
    """What was sent, said in the dialog: «Enviaste Aceptar (accept): {...}» (`who` says
    who sent it, e.g. a simulated user)."""
    action = result.get("action")
    text = f"{who} <b>{ACTION_LABELS.get(action, action)}</b> (<code>{esc(action)}</code>)"
    if result.get("content"):
        text += f": <code>{esc(short_json(result['content']))}</code>"
    return f'<span style="color:#1e6b30">{text}</span>'
