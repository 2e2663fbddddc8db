"""The notebook side of the lesson: an MCP *client* with an ipywidgets user interface.

Every notebook in lessons/ imports this module and nothing else of its own. It puts ../code
on sys.path and builds on the stdlib notes server and client found there:

    lab = NotesLab()                      # a temporary notes folder (removed at the end)
    conn = await lab.connect()            # `python code/main.py serve` on stdio + a Client
    await conn.call("notes_delete", {"title": "TPS report"},
                    scripted=[{"action": "accept", "content": {...}}])
    conn.transcript(last_call=True)       # the frames that crossed, one line each
    revisar("ejercicio2")                 # runs the grader on soluciones/ and shows feedback

Who answers the server's questions (forms and URL consents):
- by default, the learner: the form is drawn in the cell and the call *waits for the click*;
- with LESSON_USER=scripted (what `make test` sets), or `simulate=True` on one call, a
  scripted user plays the answers listed in `scripted=[...]`, through the same widgets.

Environment: LESSON_USER=scripted switches the scripted user on; LESSON_KEEP_LAB (any value)
makes `NotesLab.close()` keep the practice folder (the browser tests inspect it on disk).

Threads: code/client.py is thread-based. `LabClient.call` runs `Client.call_tool` in a worker
thread (`asyncio.to_thread`) while the cell awaits it, so the kernel's event loop stays free
to deliver widget clicks. When the server asks something, the worker thread hands the question
to the event loop (`run_coroutine_threadsafe`), where the widgets are built and clicked, and
blocks until the answer exists. There is no timeout on the learner's side; the server has its
own (a form left open for 10 minutes ends the call with a message, and the form is closed).
"""

from __future__ import annotations

import asyncio
import atexit
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import ipywidgets as w
from IPython.display import display

LESSONS = Path(__file__).resolve().parent
REPO = LESSONS.parent
CODE = REPO / "code"
SOLUTIONS = LESSONS / "soluciones"
MAIN = CODE / "main.py"
if str(CODE) not in sys.path:
    sys.path.insert(0, str(CODE))

import client as mcp_client  # noqa: E402  (code/client.py)
import elicitation  # noqa: E402
import store  # noqa: E402
import url_mode  # noqa: E402
import wire  # noqa: E402
from roots import path_to_uri  # noqa: E402

SOLUTIONS.mkdir(exist_ok=True)  # %%writefile does not create folders
STATELESS = "2026-07-28"
SERVER_NAME = "notas-roots-elicitacion"
SOLUTION_META = "io.github.curso-mcp/solution"
ACTION_LABELS = {"accept": "Aceptar", "decline": "Rechazar", "cancel": "Cancelar"}

# The notes every lab starts with: (folder, file, id, title, created).
DEFAULT_NOTES = (
    ("Notas", "compra.md", "note-1", "Lista de la compra", "2025-06-01"),
    ("Notas", "tps-2023.md", "note-3", "TPS report", "2023-04-12"),
    ("Notas", "tps-2024.md", "note-7", "TPS report", "2024-04-10"),
    ("Notas", "tps-2025.md", "note-14", "TPS report", "2025-04-09"),
    ("Notas-privadas", "diario.md", "note-99", "Diario", "2025-01-01"),
    ("Trabajo", "plan.md", "note-21", "Plan del trimestre", "2025-07-01"),
)


def scripted_mode() -> bool:
    """True when an unattended run asked for the scripted user (LESSON_USER=scripted)."""
    return os.environ.get("LESSON_USER", "").strip().lower() == "scripted"


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _short_json(value, limit=120) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# =============================================================================================
# The elicitation form
# =============================================================================================
def options_of(prop: dict) -> list[tuple[str, str]]:
    """(label, value) pairs of a single-select string or of an array's items.

    Understands the titled `oneOf` / `anyOf` ({"const", "title"}), the plain `enum`, and the
    legacy `enum` + `enumNames` pair (2025-06-18).
    """
    for key in ("oneOf", "anyOf"):
        if isinstance(prop.get(key), list):
            return [(str(o.get("title") or o.get("const")), o.get("const"))
                    for o in prop[key] if isinstance(o, dict) and "const" in o]
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")
        if isinstance(names, list) and len(names) == len(prop["enum"]):
            return [(str(n), v) for n, v in zip(names, prop["enum"], strict=True)]
        return [(str(v), v) for v in prop["enum"]]
    return []


def _hint(prop: dict) -> str:
    """A short Spanish hint about what a field accepts (format, bounds, lengths)."""
    kind, parts = prop.get("type"), []
    if kind == "integer":
        parts.append("número entero")
    elif kind == "number":
        parts.append("número")
    fmt = prop.get("format")
    parts += {"email": ["un email"], "uri": ["una URI"], "date": ["fecha AAAA-MM-DD"],
              "date-time": ["fecha y hora AAAA-MM-DDTHH:MM"]}.get(fmt, [])
    if "minimum" in prop and "maximum" in prop:
        parts.append(f"entre {prop['minimum']} y {prop['maximum']}")
    elif "minimum" in prop:
        parts.append(f"mínimo {prop['minimum']}")
    elif "maximum" in prop:
        parts.append(f"máximo {prop['maximum']}")
    if "minLength" in prop or "maxLength" in prop:
        parts.append(f"de {prop.get('minLength', 0)} a {prop.get('maxLength', '∞')} caracteres")
    if kind == "array" and ("minItems" in prop or "maxItems" in prop):
        parts.append(f"elige de {prop.get('minItems', 0)} a {prop.get('maxItems', 'todas')}")
    return ", ".join(parts)


class FormField:
    """One property of a requestedSchema as a widget: it can be read, filled and frozen."""

    MISSING = object()

    def __init__(self, name: str, prop: dict, required: bool):
        self.name, self.prop, self.required = name, prop, required
        self.kind = prop.get("type")
        self.title = str(prop.get("title") or name)
        mark = " *" if required else ""
        default = prop.get("default")
        self.choices: list[w.Checkbox] = []
        rows: list[w.Widget] = []
        if self.kind == "boolean":
            self.input = w.Checkbox(value=bool(default), description=self.title + mark,
                                    indent=False)
        else:
            label = f"<b>{_esc(self.title)}</b>"
            if required:
                label += ' <span style="color:#c0392b" title="obligatorio">*</span>'
            rows.append(w.HTML(label))
            if self.kind == "array":
                items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
                chosen = set(default or [])
                self.choices = [w.Checkbox(value=value in chosen, description=text,
                                           indent=False)
                                for text, value in options_of(items)]
                self._values = [value for _, value in options_of(items)]
                self.input = w.VBox(self.choices)
            elif options_of(prop):
                opts = options_of(prop)
                start = default if default in [v for _, v in opts] else None
                widget = w.RadioButtons if len(opts) <= 6 else w.Dropdown
                self.input = widget(options=opts, value=start,
                                    layout=w.Layout(width="max-content"))
            elif self.kind == "string" and prop.get("format") == "date":
                value = date.fromisoformat(default) if isinstance(default, str) else None
                self.input = w.DatePicker(value=value)
            else:
                self.input = w.Text(value="" if default is None else str(default),
                                    placeholder=_hint(prop))
        rows.append(self.input)
        help_text = " · ".join(t for t in (prop.get("description"), _hint(prop)) if t)
        if help_text:
            rows.append(w.HTML(f'<span style="color:#555;font-size:90%">{_esc(help_text)}'
                               "</span>"))
        self.widget = w.VBox(rows, layout=w.Layout(margin="0 0 8px 0"))

    def read(self):
        """The value to send, FormField.MISSING when left empty; ValueError when unreadable."""
        if self.kind == "boolean":
            return bool(self.input.value)
        if self.kind == "array":
            picked = [v for box, v in zip(self.choices, self._values, strict=True) if box.value]
            return picked if picked or self.required else self.MISSING
        value = self.input.value
        if value is None or value == "":
            return self.MISSING
        if isinstance(value, date):
            return value.isoformat()
        if self.kind in ("integer", "number") and isinstance(value, str):
            text = value.strip().replace(",", ".")
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"«{self.title}» debe ser un número") from None
            if self.kind == "integer":
                if not number.is_integer():
                    raise ValueError(f"«{self.title}» debe ser un número entero")
                return int(number)
            return int(number) if re.fullmatch(r"-?\d+", text) else number
        return value

    def fill(self, value) -> None:
        """Put `value` into the widget, as a person would (used by the scripted user)."""
        if self.kind == "boolean":
            self.input.value = bool(value)
        elif self.kind == "array":
            for box, option in zip(self.choices, self._values, strict=True):
                box.value = option in (value or [])
        elif isinstance(self.input, w.DatePicker):
            self.input.value = date.fromisoformat(value) if value else None
        elif isinstance(self.input, (w.RadioButtons, w.Dropdown)):
            if value not in [v for _, v in self.input.options]:
                raise ValueError(f"{value!r} no es una opción de «{self.title}»")
            self.input.value = value
        else:
            self.input.value = "" if value is None else str(value)

    def freeze(self) -> None:
        for widget in [self.input, *self.choices]:
            widget.disabled = True


class _Dialog:
    """Shared by the form and the URL consent: three buttons and a future for the answer."""

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

    accept_label = "Aceptar"

    @property
    def answered(self) -> bool:
        return self.future.done()

    def accept(self) -> None:
        self.resolve({"action": "accept"})

    def resolve(self, result: dict, note: str | None = None) -> None:
        if self.future.done():
            return
        for button in self.buttons.values():
            button.disabled = True
        self.freeze()
        self.status.value = note or _answer_note(result)
        self.future.set_result(result)

    def freeze(self) -> None:
        pass

    def press(self, action: str) -> None:
        """Click a button the way the browser would (the scripted user does this)."""
        self.buttons[action].click()


def _answer_note(result: dict) -> str:
    action = result.get("action")
    text = f"Enviaste <b>{ACTION_LABELS.get(action, action)}</b> (<code>{_esc(action)}</code>)"
    if result.get("content"):
        text += f": <code>{_esc(_short_json(result['content']))}</code>"
    return f'<span style="color:#1e6b30">{text}</span>'


_BOX = dict(border="1px solid #b0b7c3", padding="10px", margin="6px 0", width="max-content",
            max_width="95%")


class ElicitationForm(_Dialog):
    """A form-mode `elicitation/create` drawn from its requestedSchema.

    Accept validates first (required fields, numbers, bounds, formats, options) and does not
    send anything while a problem remains; Decline and Cancel send no content.
    """

    def __init__(self, params: dict, server: str = SERVER_NAME):
        super().__init__()
        self.params = params
        self.schema = params.get("requestedSchema") or {"type": "object", "properties": {}}
        required = set(self.schema.get("required") or [])
        self.fields = [FormField(name, prop, name in required)
                       for name, prop in (self.schema.get("properties") or {}).items()]
        header = w.HTML(f"<div>📝 El servidor <b>{_esc(server)}</b> te pregunta:</div>"
                        f"<div style='margin:4px 0 8px 0'>{_esc(params.get('message', ''))}"
                        "</div>")
        legend = w.HTML('<span style="color:#555;font-size:85%">* obligatorio · «Rechazar» '
                        "dice que no; «Cancelar» abandona la operación</span>"
                        if required else "")
        self.widget = w.VBox([header, *[f.widget for f in self.fields], legend,
                              w.HBox(list(self.buttons.values())), self.status],
                             layout=w.Layout(**_BOX))

    def accept(self) -> None:
        content, problems = {}, []
        for f in self.fields:
            try:
                value = f.read()
            except ValueError as exc:
                problems.append(str(exc))
                continue
            if value is FormField.MISSING:
                if f.required:
                    problems.append(f"falta «{f.title}» (obligatorio)")
                continue
            content[f.name] = value
        result = {"action": "accept", "content": content}
        if not problems:
            try:
                elicitation.check_answer(self.schema, result)
            except elicitation.AnswerError as exc:
                problems.append(str(exc))
            except Exception as exc:  # a schema this module cannot judge: let the server say
                problems.append(f"no pude validar la respuesta ({exc})")
        if problems:
            self.status.value = ('<span style="color:#c0392b">No se envió nada: '
                                 + _esc("; ".join(problems)) + ".</span>")
            return
        self.resolve(result)

    def freeze(self) -> None:
        for f in self.fields:
            f.freeze()

    def fill(self, content: dict) -> None:
        by_name = {f.name: f for f in self.fields}
        for name, value in (content or {}).items():
            if name not in by_name:
                raise ValueError(f"el formulario no tiene el campo {name!r}")
            by_name[name].fill(value)


# =============================================================================================
# The URL-mode consent dialog
# =============================================================================================
def site_of(host: str) -> str:
    """The part of a host that says who you are talking to: the last two labels
    (`notas-sync.example.evil.example` -> `evil.example`), or the whole IP / localhost.

    A simplification: without the public suffix list, `x.co.uk` would give `co.uk`.
    """
    if url_mode.is_loopback(host) or re.fullmatch(r"[\d.]+|\[?[0-9a-f:]+\]?", host or ""):
        return host
    labels = host.split(".")
    return ".".join(labels[-2:]) if len(labels) > 2 else host


def highlight_host(url: str) -> str:
    """The full URL as HTML with its host marked (and its site in bold); all escaped and
    nothing clickable."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = parts.netloc
    at = netloc.rfind("@") + 1
    start = netloc.lower().find(host, at) if host else -1
    if start < 0:
        return f"<code>{_esc(url)}</code>"
    before = f"{parts.scheme}://{netloc[:start]}" if parts.scheme else netloc[:start]
    after = url[len(before) + len(host):] if url.startswith(before) else ""
    shown = netloc[start:start + len(host)]
    site = site_of(host)
    head = shown[:len(shown) - len(site)] if shown.lower().endswith(site) else ""
    tail = shown[len(head):]
    return (f"<code style='word-break:break-all'>{_esc(before)}"
            f"<mark style='background:#ffe58f'>{_esc(head)}<b>{_esc(tail)}</b></mark>"
            f"{_esc(after)}</code>")


def url_warnings(url: str) -> list[str]:
    """What a careful client warns about before asking for consent (Spanish sentences)."""
    warnings = list(url_mode.url_problems(url))
    host = urlsplit(url).hostname or ""
    if any(ord(c) > 127 for c in host):
        try:
            ascii_host = host.encode("idna").decode()
        except UnicodeError:
            ascii_host = "no representable"
        warnings.append(f"el host tiene caracteres no ASCII (en punycode: {ascii_host}); "
                        "comprueba que es el sitio que esperas")
    return warnings


def host_note(url: str) -> str:
    host = urlsplit(url).hostname or "(sin host)"
    if url_mode.is_loopback(host):
        return f"{host}: esta misma máquina (loopback)"
    site = site_of(host)
    return site if site == host else f"{site} (host completo: {host})"


class ConsentDialog(_Dialog):
    """A URL-mode `elicitation/create`: show everything, fetch nothing, ask for consent.

    Accept only means "I agree to open it"; the page is opened afterwards, by the user, from
    a link that appears only then (see WidgetUser.show_link).
    """

    accept_label = "Acepto abrir la página"

    def __init__(self, params: dict, server: str = SERVER_NAME, preview: bool = False):
        super().__init__()
        self.params = params
        url = str(params.get("url", ""))
        warnings = url_warnings(url)
        rows = [f"<div>🌐 El servidor <b>{_esc(server)}</b> quiere que abras una página "
                "fuera de este cliente:</div>",
                f"<div style='margin:4px 0'>{_esc(params.get('message', ''))}</div>",
                "<div>Dirección completa:</div>", f"<div>{highlight_host(url)}</div>",
                f"<div>Dominio: <b>{_esc(host_note(url))}</b></div>"]
        rows += [f"<div style='color:#c0392b'>⚠ {_esc(text)}</div>" for text in warnings]
        rows.append("<div style='color:#555;font-size:90%'>El cliente no ha descargado nada "
                    "de esta dirección. Si aceptas, verás un enlace para abrirla tú; lo que "
                    "escribas allí no pasa por el cliente ni por el modelo.</div>")
        self.warnings = warnings
        self.html = w.HTML("".join(rows))
        self.widget = w.VBox([self.html, w.HBox(list(self.buttons.values())), self.status],
                             layout=w.Layout(**_BOX))
        if preview:
            for button in self.buttons.values():
                button.disabled = True
            self.status.value = "<i>Vista previa: estos botones no envían nada.</i>"


# =============================================================================================
# The user: widgets (a person) or a script (unattended runs)
# =============================================================================================
@dataclass
class Raw:
    """A scripted answer sent as it is, without passing through the form's validation
    (what a buggy or hostile client could send)."""

    result: dict


class CallPanel:
    """The widget area of one tool call: forms, consents and live events, in order.

    It is displayed the first time something is added (always from the event loop, while
    the cell that made the call is still running, so it lands in that cell's output); a call
    that asks nothing leaves no widget behind. `visible=False` never displays it.
    """

    def __init__(self, visible: bool = True):
        self.box = w.VBox([])
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
    """Plugs into code/client.py as its `user`: `elicit(params)` and `open_url(url)`.

    Those two are called from the client's worker threads; they hand the question to the
    kernel's event loop and block until it is answered. `ask(params)` is the same thing for
    code that already runs on the loop (the official SDK's `elicitation_callback`).
    """

    def __init__(self, panel: CallPanel | None = None, loop=None):
        self.panel = panel or CallPanel()
        self.loop = loop
        self.script: list | None = None     # answers to play, or None: wait for a person
        self.browser_decision = "allow"     # what the scripted browser clicks on the page
        self.wait_after_open = False        # 2026-07-28: block until "ya terminé"
        self.history: list[tuple[dict, dict]] = []  # (params, result) of every question
        self._open: list[_Dialog] = []
        self._lock = threading.Lock()

    # -- configuration per call ----------------------------------------------------------
    def begin(self, panel: CallPanel, loop, script=None) -> None:
        self.panel, self.loop = panel, loop
        self.script = None if script is None else list(script)

    def end(self, reason: str) -> None:
        """Close whatever is still open (the call ended without it); never leave it hanging."""
        for dialog in list(self._open):
            if not dialog.answered:
                dialog.resolve({"action": "cancel"},
                               note=f"<span style='color:#8a6d00'>⏹ {_esc(reason)}</span>")
        self._open.clear()

    # -- called from worker threads -------------------------------------------------------
    def elicit(self, params: dict) -> dict:
        self._require_loop()
        return asyncio.run_coroutine_threadsafe(self.ask(params), self.loop).result()

    def open_url(self, url: str) -> None:
        self._require_loop()
        if self.script is not None:
            self._soon(self.panel.note, "🤖 El navegador simulado abre la página y pulsa "
                       f"«{'Autorizar' if self.browser_decision == 'allow' else 'Rechazar'}».")
            browser = mcp_client.Browser(self.browser_decision)
            browser.visit(url)
            page = _visible_text(browser.pages[-1].get("body", "") if browser.pages else "")
            self._soon(self.panel.note, "🤖 La página respondió: " + _esc(page[:200]))
            return
        asyncio.run_coroutine_threadsafe(self.show_link(url), self.loop).result()

    def _require_loop(self) -> None:
        if self.loop is None:
            raise RuntimeError("Usa `await conn.call(...)`: el formulario necesita el bucle "
                               "de eventos del kernel para recibir tus clics.")

    def _soon(self, fn, *args) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    # -- on the event loop ----------------------------------------------------------------
    async def ask(self, params: dict) -> dict:
        mode = params.get("mode", "form") if isinstance(params, dict) else "form"
        dialog = ConsentDialog(params) if mode == "url" else ElicitationForm(params)
        self._open.append(dialog)
        self.panel.add(dialog.widget)
        if self.script is not None:
            self._play(dialog)
        else:
            dialog.status.value = ("<span style='color:#555'>⏳ La llamada está en pausa "
                                   "esperando tu respuesta.</span>")
        result = await dialog.future
        with self._lock:
            self.history.append((params, result))
        return result

    def _play(self, dialog: _Dialog) -> None:
        if not self.script:
            dialog.resolve({"action": "cancel"}, note="🤖 El usuario simulado no tenía "
                           "respuesta preparada para esta pregunta: envió <b>cancel</b>.")
            return
        answer = self.script.pop(0)
        if isinstance(answer, Raw):
            dialog.resolve(answer.result, note="🤖 El usuario simulado envió sin validar: "
                           f"<code>{_esc(_short_json(answer.result))}</code>")
            return
        action = answer.get("action")
        try:
            if action == "accept" and isinstance(dialog, ElicitationForm):
                dialog.fill(answer.get("content") or {})
            dialog.press(action)
        except (ValueError, KeyError) as exc:
            dialog.resolve({"action": "cancel"}, note="<span style='color:#c0392b'>🤖 La "
                           f"respuesta preparada no encaja en el formulario ({_esc(exc)}): "
                           "se envió cancel.</span>")
            return
        if not dialog.answered:  # the form refused it (validation): say so, then cancel
            problem = dialog.status.value
            dialog.resolve({"action": "cancel"}, note=f"{problem}<br>🤖 Se envió cancel.")
            return
        dialog.status.value = "🤖 Usuario simulado (LESSON_USER=scripted): " \
            + dialog.status.value

    async def show_link(self, url: str) -> None:
        """After consent: a link the user clicks to open the page in a new tab."""
        link = w.HTML(
            f'<a href="{_esc(url)}" target="_blank" rel="noopener noreferrer" '
            'class="mcp-open-page" style="display:inline-block;padding:4px 12px;'
            'border:1px solid #2d6cdf;border-radius:3px;color:#2d6cdf;text-decoration:none">'
            "🔗 Abrir la página en una pestaña nueva</a>")
        self.panel.add(link)
        if not self.wait_after_open:
            self.panel.note("Cuando termines en esa pestaña, vuelve aquí: el servidor te "
                            "avisará cuando la página le confirme el resultado.")
            return
        done = w.Button(description="Ya terminé en la página", button_style="primary",
                        layout=w.Layout(width="auto"))
        future = asyncio.get_running_loop().create_future()

        def finish(_):
            done.disabled = True
            if not future.done():
                future.set_result(None)
        done.on_click(finish)
        self.panel.note("En 2026-07-28 no hay notificación de fin: cuando acabes en la "
                        "página, pulsa el botón y el cliente reintentará la llamada.")
        self.panel.add(done)
        await future

    # -- the official SDK's callback ------------------------------------------------------
    async def sdk_elicitation(self, context, params):
        """`elicitation_callback` for mcp.Client: the same widgets answer the SDK."""
        import mcp.types as types

        self.loop = asyncio.get_running_loop()
        data = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        result = await self.ask(data)
        if data.get("mode") == "url" and result["action"] == "accept":
            url = data["url"]
            if self.script is not None:
                self.loop.run_in_executor(None, self.open_url, url)
            else:
                self.loop.create_task(self.show_link(url))
        return types.ElicitResult(action=result["action"], content=result.get("content"))


# =============================================================================================
# The lab: temporary notes, servers, clients
# =============================================================================================
_LABS: list[NotesLab] = []


@dataclass
class ToolResult:
    """What a tools/call returned (or the protocol error it got)."""

    raw: dict
    error: dict | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None or bool(self.raw.get("isError"))

    @property
    def text(self) -> str:
        if self.error is not None:
            return f"error {self.error['code']}: {self.error['message']}"
        content = self.raw.get("content") or [{}]
        return str(content[0].get("text", ""))

    @property
    def data(self) -> dict:
        return self.raw.get("structuredContent") or {}

    def _ipython_display_(self):
        """Nothing: `LabClient.call` already printed it. Use .text, .data or .raw."""


@dataclass
class CallRecord:
    tool: str
    arguments: dict
    before: dict
    after: dict = field(default_factory=dict)
    questions: list = field(default_factory=list)  # (params, result) pairs
    result: ToolResult | None = None
    frames: tuple[int, int] = (0, 0)


class NotesLab:
    """A private notes folder for one notebook, plus the servers and clients it started.

    Three folders: Notas/ (the one the user shares), Notas-privadas/ (a sibling that shares a
    prefix with it and is never shared) and Trabajo/ (shared later). Everything lives in a
    temporary folder that `close()` (or the kernel's exit) removes.
    """

    def __init__(self, notes=DEFAULT_NOTES, quiet: bool = False):
        self.base = Path(tempfile.mkdtemp(prefix="notas-leccion-")).resolve()
        self.clients: list[LabClient] = []
        self.guard_rows: list[dict] = []
        self._sdk_log = None
        for folder in ("Notas", "Notas-privadas", "Trabajo"):
            (self.base / folder).mkdir()
        for note in notes:
            self.add_note(*note)
        _LABS.append(self)
        if not quiet:
            print(f"Carpeta de práctica: {self.base}  (en lo que sigue se muestra como …)")
            self.show()

    # -- paths -----------------------------------------------------------------------------
    def path(self, *parts: str) -> str:
        return str(self.base.joinpath(*parts))

    def uri(self, *parts: str) -> str:
        return path_to_uri(self.path(*parts))

    def hide(self, text: str) -> str:
        """Replace the temporary folder by … so that printed output does not change."""
        for prefix in (str(self.base), path_to_uri(str(self.base))[len("file://"):]):
            text = text.replace(prefix, "…")
        return text

    # -- what is on disk ------------------------------------------------------------------
    def snapshot(self) -> dict:
        """{relative path: note id} of every note file under the lab, archived ones too."""
        found = {}
        for path in sorted(self.base.rglob("*.md")):
            note = store.read_note(str(path))
            found[str(path.relative_to(self.base))] = note.id if note else "?"
        return found

    def show(self, *folders: str) -> None:
        for folder in folders or ("Notas", "Notas-privadas", "Trabajo"):
            names = sorted(p.name for p in (self.base / folder).glob("*.md"))
            print(f"  📁 {folder}/: " + (", ".join(names) or "(vacía)"))
            archived = self.base / folder / store.ARCHIVE_DIR
            if archived.is_dir():
                inside = sorted(p.name for p in archived.glob("*.md"))
                print(f"     📦 {store.ARCHIVE_DIR}/: " + (", ".join(inside) or "(vacía)"))

    def add_note(self, folder: str, name: str, note_id: str, title: str, created: str) -> None:
        """Write one more note into the lab (folder relative to the lab)."""
        store.write_atomic(self.path(folder, name),
                           store.render(note_id, title, created, f"Nota {note_id}.\n"))

    def symlink(self, link: str, target: str) -> None:
        """Create `link` (inside the lab) pointing at `target` (inside the lab)."""
        os.symlink(self.path(*target.split("/")), self.path(*link.split("/")))

    # -- servers and clients ----------------------------------------------------------------
    def server_argv(self, solution=None, sdk_version=None, server_roots=(),
                    setup_wait=300.0) -> list[str]:
        # the lesson's fixed demo guard; a solution's own url_mode_guard replaces it
        argv = [sys.executable, str(MAIN), "serve", "--demo-url-guard"]
        if setup_wait != 300.0:
            argv += ["--setup-wait", str(setup_wait)]
        if solution:
            argv += ["--solution", str(_solution_path(solution))]
        if sdk_version is not None:
            argv += ["--sdk-version", sdk_version]
        for name in server_roots:
            argv += ["--root", self.path(name)]
        return argv

    async def connect(self, protocol: str = "2025-11-25", *, roots=("Notas",),
                      elicitation=None, solution=None, sdk_version=None, server_roots=(),
                      setup_wait: float = 300.0, quiet: bool = False,
                      report_errors: bool = True) -> LabClient:
        """Start `python code/main.py serve ...` and connect a Client to it over stdio.

        roots: folder names of the lab (or file:// URIs) the client shares; None declares no
        roots capability. elicitation: None = form and url, {} = bare (form only), False =
        none. solution: a file or folder with a learner's solution (`--solution`).
        """
        argv = self.server_argv(solution, sdk_version, server_roots, setup_wait)
        shared = None if roots is None else [r if r.startswith("file:") else self.path(r)
                                              for r in roots]
        conn = LabClient(self, argv, protocol, shared, elicitation)
        self.clients.append(conn)
        await asyncio.to_thread(conn.start)
        if report_errors:
            conn.describe(full=not quiet)
        return conn

    def stdio_server(self, solution=None, sdk_version=None, server_roots=()):
        """The same server, started by the official SDK (`stdio_client`) for its Client.

        The server's log goes to a file in the lab: inside a kernel, sys.stderr is not a real
        file and cannot be handed to a child process.
        """
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        argv = self.server_argv(solution, sdk_version, server_roots)
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))
        if self._sdk_log is None:
            self._sdk_log = open(self.base / "servidor-sdk.log", "a", encoding="utf-8")
        return stdio_client(params, errlog=self._sdk_log)

    def sdk_roots(self, roots=("Notas",)):
        """A `list_roots_callback` for the official SDK's Client sharing these folders."""
        import mcp.types as types

        async def list_roots(context):
            return types.ListRootsResult(roots=[
                types.Root(uri=self.uri(name), name=name) for name in roots])
        return list_roots

    def user(self, scripted=(), simulate: bool = False) -> WidgetUser:
        """A WidgetUser for the official SDK's Client; its forms appear in the running cell."""
        user = WidgetUser(CallPanel())
        user.script = list(scripted) if (simulate or scripted_mode()) else None
        return user

    # -- exercise helpers --------------------------------------------------------------------
    async def guard_table(self, solution=SOLUTIONS, cases=None) -> None:
        """Ask *your* URL-mode guard (running inside real servers) about several situations.

        For each case a server starts with `--sdk-version` and your solution, a client with
        the given protocol and capabilities calls notes_setup, and the table says whether the
        server chose URL mode. The simulated user declines the page, so nothing is set up.
        """
        cases = cases or GUARD_CASES
        rows = []
        for number, (sdk, protocol, caps, expected) in enumerate(cases):
            conn = await self.connect(protocol, elicitation=caps, solution=solution,
                                      sdk_version=sdk, quiet=True, report_errors=number == 0)
            result = await conn.call("notes_setup", simulate=True, echo=False,
                                     scripted=[{"action": "decline"}])
            used_url = any(q[0].get("mode") == "url" for q in conn.last.questions)
            conn.close()
            rows.append({"sdk": sdk, "protocol": protocol, "caps": caps, "url": used_url,
                         "expected": expected, "result": result.text})
        print(f"{'SDK simulado':<14}{'protocolo':<12}{'elicitation':<26}{'tu guarda':<11}"
              "regla")
        for row in rows:
            caps = json.dumps(row["caps"], separators=(",", ":"))
            mine = "URL" if row["url"] else "manual"
            rule = "URL" if row["expected"] else "manual"
            mark = "✓" if mine == rule else "✗"
            print(f"{row['sdk'] or '(vacía)':<14}{row['protocol']:<12}{caps:<26}{mine:<11}"
                  f"{rule} {mark}")
        self.guard_rows = rows

    def check(self, ok: bool, good: str, bad: str) -> None:
        check(ok, good, bad)

    def check_chosen_note_deleted(self, conn: LabClient) -> None:
        """Exercise 1: the note chosen in the form, and only it, disappeared from disk."""
        record = conn.last
        answers = [r for p, r in record.questions if p.get("mode", "form") == "form"]
        gone = sorted(set(record.before) - set(record.after))
        added = sorted(set(record.after) - set(record.before))
        if not answers:
            return self.check(False, "", "La llamada no mostró ningún formulario: ¿había "
                              "varias notas con ese título?")
        answer = answers[-1]
        chosen = (answer.get("content") or {}).get("note_id")
        if answer.get("action") != "accept" or not (answer.get("content") or {}).get("confirm"):
            return self.check(not gone and not added,
                              f"Respondiste {answer.get('action')} sin confirmar y no se borró "
                              "nada. Vuelve a ejecutar la celda y acepta para ver el borrado.",
                              f"Se tocó el disco sin confirmación: {gone or added}")
        expected = [p for p, i in record.before.items() if i == chosen]
        return self.check(gone == expected and not added,
                          f"Elegiste {chosen} y solo desapareció {', '.join(gone)}: la "
                          "respuesta volvió a la misma llamada a notes_delete.",
                          f"Elegiste {chosen}, pero cambió: borradas {gone}, nuevas {added}.")

    def check_url_flow(self, conn: LabClient) -> None:
        """Notebook 3: consent, page, completion notification and a configured result."""
        record = conn.last
        asked = [p for p, _ in record.questions if p.get("mode") == "url"]
        if not asked:
            return self.check(False, "", "La llamada no pidió ninguna URL: ¿el cliente declaró "
                              "elicitation.url y la guarda lo permite?")
        answer = [r for p, r in record.questions if p.get("mode") == "url"][-1]
        eid = asked[-1].get("elicitationId")
        done = [m for d, m in conn.frames[record.frames[0]:record.frames[1]]
                if m.get("method") == "notifications/elicitation/complete"
                and (m.get("params") or {}).get("elicitationId") == eid]
        status = record.result.data.get("status") if record.result else None
        if answer.get("action") != "accept":
            return self.check(status != "configured", f"Respondiste {answer.get('action')}: "
                              "no se abrió nada y no se configuró nada.",
                              "Se configuró algo sin tu consentimiento.")
        return self.check(bool(done) and status == "configured",
                          "Consentimiento → página → notifications/elicitation/complete con el "
                          "mismo elicitationId → resultado «configured».",
                          f"El flujo no terminó (estado {status!r}; notificación "
                          f"{'recibida' if done else 'no recibida'}).")

    def close(self) -> None:
        """Stop every server this lab started and delete its folder.

        With LESSON_KEEP_LAB set (the browser tests do it, to inspect the disk afterwards)
        the folder is kept.
        """
        for conn in self.clients:
            conn.close()
        self.clients.clear()
        if self._sdk_log is not None:
            self._sdk_log.close()
            self._sdk_log = None
        if os.environ.get("LESSON_KEEP_LAB"):
            print(f"Servidores detenidos; la carpeta se conserva (LESSON_KEEP_LAB): {self.base}")
        else:
            shutil.rmtree(self.base, ignore_errors=True)
        if self in _LABS:
            _LABS.remove(self)


# (simulated SDK, protocol, declared elicitation, what the rules of exercise 3 say: URL?)
GUARD_CASES = (
    ("2.3.0", "2025-11-25", {"form": {}, "url": {}}, True),
    ("2.3.0", "2025-11-25", {}, False),
    ("2.3.0", STATELESS, {"form": {}, "url": {}}, True),
    ("1.23.1", "2025-11-25", {"form": {}, "url": {}}, True),
    ("1.23.0", "2025-11-25", {"form": {}, "url": {}}, False),
    ("1.30.0", STATELESS, {"form": {}, "url": {}}, False),
    ("2.0.0b1", STATELESS, {"form": {}, "url": {}}, False),
    ("2.0.0", STATELESS, {"url": {}}, True),
    ("", "2025-11-25", {"form": {}, "url": {}}, False),
    ("banana", "2025-11-25", {"form": {}, "url": {}}, False),
)


def check(ok: bool, good: str, bad: str) -> None:
    """Print ✓/✗. In unattended runs (LESSON_USER=scripted) a ✗ also fails the cell."""
    print(("✓ " + good) if ok else ("✗ " + bad))
    if not ok and scripted_mode():
        raise AssertionError(bad)


def _solution_path(solution) -> Path:
    path = Path(solution)
    return path if path.is_absolute() else (LESSONS / path).resolve()


@atexit.register
def _close_all_labs() -> None:
    for lab in list(_LABS):
        lab.close()


class LabClient:
    """One server process and the lesson's Client talking to it over stdio."""

    def __init__(self, lab: NotesLab, argv, protocol, roots, elicitation_caps):
        self.lab, self.argv, self.protocol = lab, argv, protocol
        self.frames: list[tuple[str, dict]] = []
        self.log: list[str] = []
        self.calls: list[CallRecord] = []
        self.user = WidgetUser()
        self.user.wait_after_open = protocol == STATELESS
        self.solution_info: dict | None = None
        self.handle_status: dict[str, bool] = {}
        self._log_shown = 0
        self._panel: CallPanel | None = None
        self._roots = roots
        self._elicitation = elicitation_caps
        self._lock = asyncio.Lock()
        self.client = None
        self.process = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        send, lines, close, proc = mcp_client.spawn(self.argv, stderr=subprocess.PIPE,
                                                    cwd=str(REPO))
        self.process = proc
        threading.Thread(target=self._drain, args=(proc.stderr,), daemon=True).start()
        self.client = mcp_client.Client(send, lines, close, roots=self._roots,
                                        elicitation=self._elicitation,
                                        protocol=self.protocol, user=self.user,
                                        on_frame=self._on_frame, timeout=30.0)
        self.client.connect()
        for direction, msg in self.frames:  # the initialize / server/discover answer
            result = msg.get("result")
            if direction == "←" and isinstance(result, dict) and (
                    "protocolVersion" in result or "supportedVersions" in result):
                self.solution_info = (result.get("_meta") or {}).get(SOLUTION_META)
                break

    def _drain(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            self.log.append(raw.decode("utf-8", "replace").rstrip())

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)

    def describe(self, full: bool = True) -> None:
        """What was started; a solution file that did not load is reported even when quiet."""
        info = self.solution_info
        if full:
            shown = ["python", "code/main.py", *[self.lab.hide(a) for a in self.argv[2:]]]
            shown = [_relative_solution(a) for a in shown]
            caps = json.dumps(self.client.capabilities, ensure_ascii=False,
                              separators=(",", ":"))
            print(f"Servidor: {' '.join(shown)}")
            print(f"Cliente: protocolo {self.protocol}, capacidades {caps}")
            if info is not None:
                loaded = ", ".join(info.get("files") or []) or "ningún archivo"
                extra = info.get("tools", []) + info.get("hooks", [])
                print(f"Solución cargada: {loaded}"
                      + (f" → {', '.join(extra)}" if extra else ""))
        for file, problem in ((info or {}).get("errors") or {}).items():
            print(f"⚠ No se cargó {file}: {self.lab.hide(problem)}")

    # -- calling tools -----------------------------------------------------------------------
    @property
    def last(self) -> CallRecord:
        return self.calls[-1]

    async def call(self, tool: str, arguments: dict | None = None, *, scripted=(),
                   simulate: bool = False, browser: str = "allow",
                   echo: bool = True) -> ToolResult:
        """Call a tool; forms appear below and the call waits for your answer.

        scripted: the answers (ElicitResult dicts) a simulated user gives, in order; used only
        with LESSON_USER=scripted or simulate=True. browser: what the simulated browser clicks
        on the setup page ("allow" or "deny").
        """
        arguments = dict(arguments or {})
        async with self._lock:
            panel = CallPanel(visible=echo)
            if echo:
                print(f"» {tool} {self.lab.hide(_short_json(arguments, 200))}")
            script = list(scripted) if (simulate or scripted_mode()) else None
            self.user.begin(panel, asyncio.get_running_loop(), script)
            self.user.browser_decision = browser
            self._panel = panel
            start = len(self.user.history)
            record = CallRecord(tool, arguments, self.lab.snapshot(),
                                frames=(len(self.frames), 0))
            self.calls.append(record)
            try:
                raw = await asyncio.to_thread(self.client.call_tool, tool, arguments)
                result = ToolResult(raw)
            except wire.RpcError as exc:
                result = ToolResult({}, {"code": exc.code, "message": exc.message,
                                         "data": exc.data})
            except (TimeoutError, wire.ConnectionClosed) as exc:
                result = ToolResult({}, {"code": None, "message": f"sin respuesta ({exc})"})
            except asyncio.CancelledError:
                self.user.end("Interrumpiste la celda: el formulario se cerró con cancel.")
                raise
            finally:
                self.user.end("La llamada terminó sin esta respuesta; el formulario se "
                              "cerró.")
                self._panel = None
            record.after = self.lab.snapshot()
            record.questions = self.user.history[start:]
            record.result = result
            record.frames = (record.frames[0], len(self.frames))
        if echo:
            mark = "✗" if result.is_error else "✓"
            print(f"« {mark} {self.lab.hide(result.text)}")
            await self._show_log(wait=result.is_error)
        return result

    async def _show_log(self, wait: bool = False) -> None:
        """Print what the server wrote on stderr and was not shown yet: your solution's
        print()s and tracebacks (│), and the server's warnings (⚠: a crashed tool, a hook
        that failed, a solution file that did not load...)."""
        # stderr is read by another thread: give the last lines a moment to arrive
        await asyncio.sleep(0.2 if wait else 0.05)
        lines, self._log_shown = self.log[self._log_shown:], len(self.log)
        for line in lines:
            if not line.strip() or ROUTINE_LOG.match(line):
                continue
            if line.startswith("[notas] "):
                print(f"  ⚠ servidor: {self.lab.hide(line[len('[notas] '):])}")
            else:
                print(f"  │ {self.lab.hide(line)}")

    async def set_roots(self, roots) -> None:
        """The user changes what they share; at 2025-11-25 the server is told and re-asks."""
        shared = [r if r.startswith("file:") else self.lab.path(r) for r in roots]
        start = len(self.frames)
        await asyncio.to_thread(self.client.set_roots, shared)
        print("Roots ahora: " + ", ".join(roots))
        for line in self.transcript_lines(start=start):
            print(line)
        await self._show_log(wait=True)

    async def read_handles(self) -> None:
        """Try notes_read on every handle this client opened; print what still works
        (and keep it in `self.handle_status`: handle id -> readable?)."""
        handles = [c.result.data.get("handle") for c in self.calls
                   if c.tool == "notes_open" and c.result and not c.result.is_error]
        status = {}
        for handle in handles:
            note = next(c.arguments["note_id"] for c in self.calls if c.tool == "notes_open"
                        and c.result and c.result.data.get("handle") == handle)
            result = await self.call("notes_read", {"handle": handle}, echo=False)
            status[handle] = not result.is_error
            where = next((f for f, _, i, _, _ in DEFAULT_NOTES if i == note), "?")
            text = "se puede leer" if status[handle] else self.lab.hide(result.text)
            print(f"  {handle} ({note}, en {where}/): {'✓' if status[handle] else '✗'} {text}")
        self.handle_status = status

    # -- frames --------------------------------------------------------------------------------
    def _on_frame(self, direction: str, msg: dict) -> None:
        self.frames.append((direction, msg))
        panel, loop = self._panel, self.user.loop
        if panel is None or loop is None or direction != "←":
            return
        method = msg.get("method")
        result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
        if method == "notifications/elicitation/complete":
            eid = (msg.get("params") or {}).get("elicitationId", "")
            loop.call_soon_threadsafe(
                panel.note, "📨 Llegó <code>notifications/elicitation/complete</code> "
                f"(elicitationId <code>{_esc(_abbrev(eid, 10))}</code>): la página confirmó "
                "el resultado al servidor.", "#1e6b30")
        elif result.get("resultType") == "input_required":
            asked = ", ".join(f"{k} ({v.get('method')})"
                              for k, v in (result.get("inputRequests") or {}).items())
            loop.call_soon_threadsafe(
                panel.note, f"↩ input_required: el servidor pide {_esc(asked)}; el cliente "
                "responderá y repetirá la llamada con el requestState sellado.", "#555")

    def transcript_lines(self, last_call: bool = False, full: bool = False,
                         start: int = 0, end: int | None = None) -> list[str]:
        if last_call:
            start, end = self.last.frames
        frames = self.frames[start:end]
        if full:
            return [f"{'C→S' if d == '→' else 'S→C'} "
                    + self.lab.hide(json.dumps(_abbreviate(m), ensure_ascii=False))
                    for d, m in frames]
        return [self.lab.hide(summarize_frame(d, m)) for d, m in frames]

    def show_frame(self, index: int, last_call: bool = True) -> None:
        """Print one frame (of the last call, by default) as indented JSON."""
        start, end = self.last.frames if last_call else (0, None)
        direction, msg = self.frames[start:end][index]
        print(("C→S " if direction == "→" else "S→C ")
              + self.lab.hide(json.dumps(_abbreviate(msg), ensure_ascii=False, indent=2)))

    def transcript(self, last_call: bool = False, full: bool = False) -> None:
        """Print the frames that crossed the pipe (the last call's only, if asked)."""
        for line in self.transcript_lines(last_call, full):
            print(line)

    async def request(self, method: str, params: dict | None = None) -> dict:
        """One raw JSON-RPC request (no input_required loop); prints the answer's gist."""
        start = len(self.frames)
        try:
            result = await asyncio.to_thread(self.client.request, method, params or {})
        except wire.RpcError as exc:
            result = {"error": {"code": exc.code, "message": exc.message, "data": exc.data}}
        answer = [summarize_frame(d, m) for d, m in self.frames[start:] if d == "←"]
        print(self.lab.hide(answer[-1] if answer else _short_json(result)))
        return result

    def last_url(self) -> str | None:
        """The URL of the most recent URL-mode elicitation this client received."""
        for _, msg in reversed(self.frames):
            params = msg.get("params") or {}
            result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
            for request in [params, *[r.get("params") or {} for r in
                                      (result.get("inputRequests") or {}).values()]]:
                if request.get("mode") == "url":
                    return request.get("url")
        return None

    def page_visits(self) -> int:
        """How many times the setup page was loaded (GET), from the server's log."""
        return sum("setup page: GET /connect" in line for line in self.log)


# Not repeated under each call: routine, or already shown by LabClient.describe().
ROUTINE_LOG = re.compile(r"^\[notas\] (ready on stdio|setup page: |solution .* not loaded)")


def _relative_solution(arg: str) -> str:
    try:
        return str(Path(arg).relative_to(LESSONS)) + ("/" if Path(arg).is_dir() else "")
    except ValueError:
        return arg


# =============================================================================================
# Transcripts
# =============================================================================================
_LONG = {"requestState": 16, "elicitationId": 10, "instructions": 30}


def _abbrev(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _abbreviate(value, key=None):
    if isinstance(value, dict):
        return {k: _abbreviate(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_abbreviate(v) for v in value]
    if isinstance(value, str) and key in _LONG:
        return _abbrev(value, _LONG[key])
    return value


def summarize_frame(direction: str, msg: dict) -> str:
    """One readable line for a JSON-RPC frame (who sent it, id, method, the gist)."""
    who = "C→S" if direction == "→" else "S→C"
    ident = f"#{msg['id']} " if "id" in msg else ""
    if "method" in msg:
        gist = _params_gist(msg["method"], msg.get("params") or {})
        return f"{who} {ident}{msg['method']} {gist}".rstrip()
    if "error" in msg:
        err = msg["error"] if isinstance(msg["error"], dict) else {}
        return f"{who} {ident}⤷ error {err.get('code')}: {err.get('message')}"
    return f"{who} {ident}⤷ {_result_gist(msg.get('result'))}"


def _params_gist(method: str, params: dict) -> str:
    meta = " +_meta" if "_meta" in params else ""
    if method == "tools/call":
        text = f"{params.get('name')} {_short_json(params.get('arguments', {}), 90)}"
        if "inputResponses" in params:
            text += f" +inputResponses{_short_json(params['inputResponses'], 110)}"
        if "requestState" in params:
            text += f" +requestState={_abbrev(str(params['requestState']), 12)}"
        return text + meta
    if method == "elicitation/create":
        return _elicitation_gist(params)
    if method == "initialize":
        return (f"protocolo {params.get('protocolVersion')} capacidades "
                f"{_short_json(params.get('capabilities', {}))}")
    if method == "notifications/elicitation/complete":
        return f"elicitationId={_abbrev(str(params.get('elicitationId', '')), 10)}"
    rest = {k: v for k, v in params.items() if k != "_meta"}
    return (_short_json(rest, 100) if rest else "") + meta


def _elicitation_gist(params: dict) -> str:
    mode = params.get("mode", "form")
    message = _abbrev(str(params.get("message", "")), 60)
    if mode == "url":
        eid = params.get("elicitationId")
        tail = f" elicitationId={_abbrev(eid, 10)}" if eid else " (sin elicitationId)"
        url = str(params.get("url", ""))
        scheme, _, rest = url.partition("://")  # no scheme: JupyterLab would make it a link
        return f"[url] «{message}» {rest or url} ({scheme}){tail}"
    schema = params.get("requestedSchema") or {}
    required = set(schema.get("required") or [])
    fields = ", ".join(n + ("*" if n in required else "")
                       for n in (schema.get("properties") or {}))
    return f"[{mode}] «{message}» campos: {fields}"


def _result_gist(result) -> str:
    if not isinstance(result, dict):
        return _short_json(result)
    if result.get("resultType") == "input_required":
        asks = ", ".join(f"{k}: {v.get('method')}"
                         + (f" [{v['params'].get('mode', 'form')}]"
                            if v.get("method") == "elicitation/create" else "")
                         for k, v in (result.get("inputRequests") or {}).items())
        state = result.get("requestState")
        return (f"input_required {{{asks}}}"
                + (f" requestState={_abbrev(str(state), 12)}" if state else ""))
    if "protocolVersion" in result:
        return (f"initialize ok: protocolo {result['protocolVersion']}, servidor "
                f"{(result.get('serverInfo') or {}).get('name')}")
    if "supportedVersions" in result:
        return f"discover: versiones {result['supportedVersions']}"
    if "roots" in result:
        return "roots: " + ", ".join(r.get("uri", "?") for r in result["roots"])
    if "action" in result:
        content = result.get("content")
        return result["action"] + (f" {_short_json(content)}" if content else "")
    if "tools" in result:
        return "herramientas: " + ", ".join(t.get("name", "?") for t in result["tools"])
    if "content" in result:
        mark = "✗" if result.get("isError") else "✓"
        text = ((result.get("content") or [{}])[0]).get("text", "")
        return f"{mark} {_abbrev(' '.join(str(text).split()), 90)}"
    return _short_json(result) if result else "{}"


def side_by_side(left_title: str, left: list[str], right_title: str,
                 right: list[str]) -> None:
    """Two transcripts next to each other (e.g. 2025-11-25 and 2026-07-28)."""
    def column(title, lines):
        body = _esc("\n".join(lines))
        return w.HTML(f"<b>{_esc(title)}</b><pre style='font-size:11px;white-space:pre-wrap;"
                      f"max-height:420px;overflow:auto;border:1px solid #ddd;padding:6px'>"
                      f"{body}</pre>", layout=w.Layout(width="49%"))
    display(w.HBox([column(left_title, left), column(right_title, right)]))


# =============================================================================================
# The setup page, as an attacker (or a curious learner) would poke at it
# =============================================================================================
def _visible_text(page: str) -> str:
    """The words a person would read on an HTML page (no tags, styles or title)."""
    page = re.sub(r"<(style|title)[^>]*>.*?</\1>", " ", page, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def open_page(url: str) -> None:
    """GET the setup page like a browser; prints its HTTP status and visible text."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            status, body = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read().decode()
    print(f"HTTP {status}: {_visible_text(body)[:220]}")


def submit_page(url: str, state: str | None = None, decision: str = "allow") -> int:
    """POST the setup page's form. `state=None` takes the real nonce from the page first."""
    import urllib.error
    import urllib.parse
    import urllib.request

    eid = urllib.parse.parse_qs(urlsplit(url).query).get("elicitation", [""])[0]
    if state is None:
        with urllib.request.urlopen(url, timeout=10) as response:
            found = re.search(r'name="state" value="([^"]*)"', response.read().decode())
        state = found[1] if found else ""
    data = urllib.parse.urlencode({"elicitation": eid, "state": state,
                                   "decision": decision}).encode()
    target = urllib.parse.urljoin(url, "/connect")
    try:
        with urllib.request.urlopen(target, data=data, timeout=10) as response:
            status, body = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read().decode()
    print(f"POST → HTTP {status}: {_visible_text(body)[:220]}")
    return status


def peek_state(token: str) -> None:
    """Open a requestState *without* the key: it is signed, not encrypted, so anyone can
    read it, but nobody can change it without breaking the HMAC tag."""
    import base64

    try:
        _, payload, tag = token.split(".")
        body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        print("No es un requestState de este servidor.")
        return
    print(f"versión v1 · herramienta {body.get('tool')!r} · argumentos (huella) "
          f"{body.get('args')} · caduca en {body.get('exp')} (segundos Unix) · "
          f"firma HMAC de {len(base64.urlsafe_b64decode(tag + '=' * (-len(tag) % 4)))} bytes")
    print("datos: " + _short_json(body.get("data"), 300))


# =============================================================================================
# Looking at forms and URLs without a server
# =============================================================================================
def check_form(message: str, schema: dict, protocol: str = "2025-11-25") -> bool:
    """Would the lesson's server send this form? Prints its verdict (code/elicitation.py)."""
    try:
        elicitation.check_schema(message, schema, protocol)
    except elicitation.SchemaError as exc:
        print(f"✗ El servidor se niega a enviarlo: {exc}")
        return False
    print("✓ El servidor lo enviaría: formulario plano, sin secretos ni enlaces.")
    return True


def preview_form(message: str, schema: dict) -> ElicitationForm:
    """Draw a form without any server (its buttons only validate and show what they would send)."""
    form = ElicitationForm({"mode": "form", "message": message, "requestedSchema": schema})
    display(form.widget)
    return form


def preview_consent(url: str, message: str = "Conecta tu cuenta.") -> ConsentDialog:
    """Draw the consent dialog for a URL, with its warnings; nothing is fetched or sent."""
    dialog = ConsentDialog({"mode": "url", "message": message, "url": url}, preview=True)
    display(dialog.widget)
    return dialog


# =============================================================================================
# Check my work
# =============================================================================================
@dataclass
class Review:
    """The grader's verdict on one exercise, ready to show."""

    exercise: str
    score: float | None = None
    max_score: float | None = None
    tests: list = field(default_factory=list)
    problem: str | None = None  # why there is no verdict

    @classmethod
    def from_output(cls, exercise: str, stdout: str) -> Review:
        objects = []
        for line in stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    objects.append(json.loads(line))
                except ValueError:
                    continue
        if not objects:
            return cls(exercise, problem="el corrector no devolvió ningún resultado")
        tests = [t for o in objects for t in o.get("tests", [])]
        return cls(exercise, sum(o.get("score", 0) for o in objects),
                   sum(o.get("max_score", 0) for o in objects), tests)

    def summary(self) -> str:
        if self.problem:
            return f"{self.exercise}: sin revisión ({self.problem})"
        return f"{self.exercise}: {_num(self.score)} de {_num(self.max_score)} puntos"

    def to_html(self) -> str:
        if self.problem:
            return (f"<div style='color:#8a6d00'>⚠ No pude revisar {_esc(self.exercise)}: "
                    f"{_esc(self.problem)}</div>")
        full = self.max_score and self.score == self.max_score
        color = "#1e6b30" if full else ("#8a6d00" if self.score else "#c0392b")
        rows = []
        for t in self.tests:
            icon = {"passed": "✅", "failed": "❌", "error": "💥"}.get(t.get("status"), "•")
            rows.append(f"<tr><td>{icon}</td><td><code>{_esc(t.get('name', ''))}</code></td>"
                        f"<td>{_num(t.get('score'))}/{_num(t.get('max_score'))}</td>"
                        f"<td style='text-align:left'>{_esc(t.get('output', ''))}</td></tr>")
        return (f"<div><b style='color:{color}'>{_esc(self.summary())}</b></div>"
                "<table style='font-size:90%'>" + "".join(rows) + "</table>")

    def _ipython_display_(self):
        display({"text/plain": self.summary(), "text/html": self.to_html()}, raw=True)


def _num(value) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def revisar(exercise: str, folder=SOLUTIONS, timeout: float = 600.0) -> Review:
    """Run the grader on your solution (`python -m grader soluciones/ --only ejercicioN`)."""
    folder = _solution_path(folder)
    if not (folder / f"{exercise}.py").exists():
        return Review(exercise, problem=f"no existe soluciones/{exercise}.py; ejecuta antes "
                      "la celda que empieza por %%writefile")
    if not (REPO / "grader").is_dir():
        return Review(exercise, problem="el corrector (carpeta grader/) no está en este "
                      "repositorio")
    argv = [sys.executable, "-m", "grader", str(folder), "--only", exercise, "--format", "json"]
    try:
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Review(exercise, problem=f"el corrector tardó más de {timeout:.0f} s")
    review = Review.from_output(exercise, proc.stdout)
    if review.problem and proc.stderr.strip():
        review.problem += ": " + proc.stderr.strip().splitlines()[-1][:300]
    return review


# =============================================================================================
# Small things for the last notebooks
# =============================================================================================
def quiz(questions) -> None:
    """Self-check questions: (question, [options], index of the right one, explanation).

    Displays itself and returns None: as the last line of a cell, a returned widget would
    be drawn a second time below the first.
    """
    rows = []
    for number, (question, options, right, why) in enumerate(questions, 1):
        choice = w.RadioButtons(options=options, value=None,
                                layout=w.Layout(width="max-content"))
        verdict = w.HTML()
        button = w.Button(description="Comprobar", layout=w.Layout(width="auto"))

        def check(_, choice=choice, verdict=verdict, right=right, why=why, options=options):
            if choice.value is None:
                verdict.value = "<i>Elige una opción.</i>"
            elif options.index(choice.value) == right:
                verdict.value = f"<span style='color:#1e6b30'>✓ Correcto. {_esc(why)}</span>"
            else:
                verdict.value = f"<span style='color:#c0392b'>✗ No. {_esc(why)}</span>"
        button.on_click(check)
        rows.append(w.VBox([w.HTML(f"<b>{number}. {_esc(question)}</b>"), choice,
                            w.HBox([button, verdict])],
                           layout=w.Layout(margin="0 0 10px 0")))
    display(w.VBox(rows))


CODE_GUIDE = {
    "roots.py": "qué carpetas permitió el usuario y si una ruta real está dentro",
    "elicitation.py": "qué modo puede usar cada cliente; el único sitio que revisa formularios",
    "tools.py": "las herramientas: listar, escribir, borrar (con desambiguación), configurar",
    "url_mode.py": "modo URL: la guarda de versión, la política de URLs y los registros",
    "setup_page.py": "la página local que hace de proveedor en el modo URL",
    "session.py": "el ciclo de vida en las dos revisiones (2025-11-25 y 2026-07-28)",
    "request_state.py": "el requestState sellado con HMAC de 2026-07-28",
    "server.py": "el servidor, sus ganchos y el límite (Boundary) por el que pasa todo",
    "store.py": "las notas en disco, la escritura atómica y los handles abiertos",
    "extension.py": "cómo se enchufa tu solución al servidor sin tocar code/",
    "client.py": "el cliente de la lección (el que usan estos cuadernos)",
    "wire.py": "JSON-RPC 2.0, un objeto JSON por línea",
    "demo.py": "la demo completa que imprime el cable",
    "main.py": "la entrada: `demo` o `serve`",
}


def code_tour() -> None:
    """The modules of code/ in reading order, with what to look for in each (Spanish)."""
    files = {p.name: p for p in CODE.glob("*.py")}
    for name in [*CODE_GUIDE, *sorted(set(files) - set(CODE_GUIDE))]:
        if name in files:
            lines = len(files[name].read_text(encoding="utf-8").splitlines())
            print(f"code/{name:<17}{lines:>4} líneas  {CODE_GUIDE.get(name, '')}")
