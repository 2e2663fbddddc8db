"""The elicitation form: a form-mode `elicitation/create` drawn from its requestedSchema.

One widget per property (text, number, date, checkbox, radio buttons or a dropdown, checkboxes
for a multi-select), with the title, a required mark, the description and a hint of what is
accepted. Accept validates first, with the server's own `elicitation.check_answer`, and sends
nothing while a problem remains; Decline and Cancel send no content. `check_form` asks the
server's `check_schema` whether it would send a form at all.

A text field sends its value when it loses focus (clicking «Aceptar» does that), not at every
keystroke: ipywidgets holds a widget's next update until the kernel has answered the one
before, while a click goes at once, so on a busy kernel a value typed key by key could reach
Python after the click that sends the form, which would then carry only its first letters.

Deliberate simplifications: a number is typed as text (and parsed on Accept); a date-time is
a text field; more than six options become a dropdown.
"""

from __future__ import annotations

import re
from datetime import date

import ipywidgets as w

import elicitation
from shared.protocol import LATEST_HANDSHAKE, SERVER_INFO

from .dialog import BOX, Dialog
from .text import esc

HINTS = {"email": "un email", "uri": "una URI", "date": "fecha AAAA-MM-DD",
         "date-time": "fecha y hora AAAA-MM-DDTHH:MM"}


def options_of(prop: dict) -> list[tuple[str, str]]:
    """(label, value) pairs of a single-select string or of an array's items: the titled
    `oneOf` / `anyOf`, a plain `enum`, or the legacy `enum` + `enumNames` (2025-06-18)."""
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


def hint(prop: dict) -> str:
    """A short Spanish hint about what a field accepts (format, bounds, lengths)."""
    kind = prop.get("type")
    parts = {"integer": ["número entero"], "number": ["número"]}.get(kind, [])
    parts += [HINTS[prop["format"]]] if prop.get("format") in HINTS else []
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        parts.append(f"entre {low} y {high}" if low is not None and high is not None
                     else f"mínimo {low}" if low is not None else f"máximo {high}")
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
        self.kind, self.title = prop.get("type"), str(prop.get("title") or name)
        default, self.choices, rows = prop.get("default"), [], []
        if self.kind == "boolean":
            self.input = w.Checkbox(value=bool(default), indent=False,
                                    description=self.title + (" *" if required else ""))
        else:
            mark = ' <span style="color:#c0392b" title="obligatorio">*</span>'
            rows.append(w.HTML(f"<b>{esc(self.title)}</b>" + (mark if required else "")))
            items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
            options = options_of(items if self.kind == "array" else prop)
            if self.kind == "array":
                self.choices = [w.Checkbox(value=value in (default or []), description=text,
                                           indent=False) for text, value in options]
                self._values = [value for _, value in options]
                self.input = w.VBox(self.choices)
            elif options:
                widget = w.RadioButtons if len(options) <= 6 else w.Dropdown
                start = default if default in [v for _, v in options] else None
                self.input = widget(options=options, value=start,
                                    layout=w.Layout(width="max-content"))
            elif self.kind == "string" and prop.get("format") == "date":
                self.input = w.DatePicker(
                    value=date.fromisoformat(default) if isinstance(default, str) else None)
            else:
                self.input = w.Text(value="" if default is None else str(default),
                                    placeholder=hint(prop), continuous_update=False)
        rows.append(self.input)
        help_text = " · ".join(t for t in (prop.get("description"), hint(prop)) if t)
        if help_text:
            rows.append(w.HTML(f'<span style="color:#555;font-size:90%">{esc(help_text)}</span>'))
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
            if self.kind == "integer" and not number.is_integer():
                raise ValueError(f"«{self.title}» debe ser un número entero")
            return int(number) if self.kind == "integer" or re.fullmatch(r"-?\d+", text) \
                else number
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


class ElicitationForm(Dialog):
    def __init__(self, params: dict, server: str = SERVER_INFO["name"]):
        super().__init__()
        self.params = params
        self.schema = params.get("requestedSchema") or {"type": "object", "properties": {}}
        required = set(self.schema.get("required") or [])
        self.fields = [FormField(name, prop, name in required)
                       for name, prop in (self.schema.get("properties") or {}).items()]
        header = w.HTML(f"<div>📝 El servidor <b>{esc(server)}</b> te pregunta:</div>"
                        f"<div style='margin:4px 0 8px 0'>{esc(params.get('message', ''))}</div>")
        legend = w.HTML('<span style="color:#555;font-size:85%">* obligatorio · «Rechazar» dice '
                        "que no; «Cancelar» abandona la operación</span>" if required else "")
        self.widget = w.VBox([header, *[f.widget for f in self.fields], legend,
                              w.HBox(list(self.buttons.values())), self.status],
                             layout=w.Layout(**BOX))

    def accept(self) -> None:
        content, problems, missing = {}, [], []
        for f in self.fields:
            try:
                value = f.read()
            except ValueError as exc:
                problems.append(str(exc))
                continue
            if value is not FormField.MISSING:
                content[f.name] = value
            elif f.required:
                missing.append(f"«{f.title}»")
        if missing:  # every one of them, and what an unticked box will say
            unticked = [f"«{f.title}»" for f in self.fields
                        if f.required and f.kind == "boolean" and content.get(f.name) is False]
            problems[:0] = [f"falta {missing[0]} (obligatorio)" if len(missing) == 1 else
                            f"faltan {', '.join(missing[:-1])} y {missing[-1]} (obligatorios)"]
            problems += [f"{' y '.join(unticked)} sin marcar se enviará como «no»"] \
                if unticked else []
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
                                 + esc("; ".join(problems)) + ".</span>")
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


def check_form(message: str, schema: dict, protocol: str = LATEST_HANDSHAKE) -> bool:
    """Would the lesson's server send this form? Prints its verdict (code/core/elicitation.py)."""
    try:
        elicitation.check_schema(message, schema, protocol)
    except elicitation.SchemaError as exc:
        print(f"✗ El servidor se niega a enviarlo: {exc}")
        return False
    print("✓ El servidor lo enviaría: formulario plano, sin secretos ni enlaces.")
    return True
