"""Elicitation policy: which mode a client may get, and the one place forms are checked.

A form's `requestedSchema` must be a flat object of primitive properties (string, number,
integer, boolean, single- and multi-select enums). `check_schema` enforces that, refuses fields
that look like they ask for a secret (whatever the field is called: the name, title,
description and the message are all read) and refuses URLs inside form fields. `check_answer`
validates what the client sent back, again, on the server: a client is not trusted to have
validated it.

Deliberate simplifications: secret detection is a word list (English and Spanish), not a
classifier; `format` values are checked loosely (email has an @, date parses, ...).
"""

from __future__ import annotations

import datetime
import re

from shared.protocol import FORM_MODE, FORM_ONLY, LATEST_HANDSHAKE, URL_MODE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from collections.abc import Sequence
    from typing import Any

STRING_FORMATS = ("email", "uri", "date", "date-time")
ACTIONS = ("accept", "decline", "cancel")

SECRET_WORDS = re.compile(r"\b(" + "|".join([
    r"pass(word|wd|phrase|code)s?", r"contrase(ñ|n)as?", r"secret(o|s|os)?", r"tokens?",
    r"(api|access|private|secret) ?keys?", r"clave (de )?(api|acceso)", r"clave (secreta|privada)",
    r"credentials?", r"credencial(es)?", r"pin", r"otp", r"cvv", r"cvc", r"iban", r"ssn",
    r"(credit |debit )?cards?", r"tarjetas?", r"payments?", r"pagos?", r"bank", r"bancari[oa]s?",
]) + r")\b", re.IGNORECASE)
# What counts as a URL in a form's text: what `\b[a-z][a-z0-9+.-]*://|\bwww\.` (ignoring case)
# finds. That pattern backtracks through every run of scheme characters from every start in
# it (quadratic: a 200 KB message took over a minute), so `has_url` finds the same thing in
# linear time: each maximal run of scheme characters is scanned once, from its start.
URL_WWW = re.compile(r"\bwww\.", re.IGNORECASE)
SCHEME_RUN = re.compile(r"(?<![a-z0-9+.-])[a-z0-9+.-]+://", re.IGNORECASE)
SCHEME_START = re.compile(r"[a-z]", re.IGNORECASE)
INNER_START = re.compile(r"[+.-][a-z]", re.IGNORECASE)   # a word starts after + . -


class SchemaError(ValueError):
    """A requestedSchema this server refuses to send."""


# -- which mode may we use? -------------------------------------------------------------------
def supports_form(capabilities: dict[str, Any]) -> bool:
    """A bare `elicitation: {}` (the 2025-06-18 shape) means form mode."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return False
    return FORM_MODE in elicitation or URL_MODE not in elicitation


def supports_url(capabilities: dict[str, Any]) -> bool:
    """Did the client declare URL mode (`elicitation.url`, an object)? Only that: whether URL
    mode may be used also depends on the protocol and the SDK version (exercise 3)."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return isinstance(elicitation, dict) and isinstance(elicitation.get(URL_MODE), dict)


# -- building forms ---------------------------------------------------------------------------
def choice(options: Sequence[tuple[str, str]], title: str | None = None,
           description: str | None = None, protocol: str = LATEST_HANDSHAKE
           ) -> dict[str, Any]:
    """A single-select string property from (value, label) pairs, for a form's properties.

    `choice([("note-3", "TPS report (2023)"), ("note-7", "TPS report (2024)")],
    title="¿Cuál?", protocol=ctx.protocol_version)` returns the property dict to put under a
    name in `ctx.elicit_form(message, {"note_id": ...}, required=["note_id"])`; the answer is
    one of the values. 2025-11-25 and later: the titled `oneOf` form. 2025-06-18 had no `oneOf`
    here, only the (now deprecated) `enum` + `enumNames` pair, so older clients get that.
    """
    prop = {"type": "string"}
    if protocol == FORM_ONLY:
        prop["enum"] = [value for value, _ in options]
        prop["enumNames"] = [label for _, label in options]
    else:
        prop["oneOf"] = [{"const": value, "title": label} for value, label in options]
    if title:
        prop["title"] = title
    if description:
        prop["description"] = description
    return prop


def form(message, properties, required=(), protocol=LATEST_HANDSHAKE, quoted=()):
    """The params of a form `elicitation/create`, checked before anything is sent (`quoted`:
    see check_schema)."""
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    params = {"mode": FORM_MODE, "message": message, "requestedSchema": schema}
    if protocol == FORM_ONLY:
        del params["mode"]  # the field did not exist yet
    check_schema(message, schema, protocol, quoted)
    return params


# -- checking forms ---------------------------------------------------------------------------
_COMMON = {"type", "title", "description", "default"}
_ALLOWED_KEYS = {
    "string": _COMMON | {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"items", "minItems", "maxItems"},
}


def check_schema(message, schema, protocol=LATEST_HANDSHAKE, quoted=()):
    """Raise SchemaError unless this is a flat, primitive, secret-free form for `protocol`.

    `quoted` are texts of the user's own data that the message quotes (a note's title): the
    secret-word filter judges what the form asks for, not what it quotes, so «¿Cuál de las
    notas «Pagos de marzo» borro?» is no request for a payment. URLs are refused anyway."""
    if not isinstance(message, str) or not message.strip():
        raise SchemaError("el mensaje de la elicitación no puede estar vacío")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise SchemaError("requestedSchema debe ser un objeto con type 'object'")
    extra = set(schema) - {"type", "properties", "required", "$schema"}
    if extra:
        raise SchemaError(f"claves no permitidas en requestedSchema: {sorted(extra)}")
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise SchemaError("requestedSchema necesita al menos una propiedad")
    required = schema.get("required", [])
    if not isinstance(required, list) or not set(required) <= set(properties):
        raise SchemaError("'required' debe listar solo propiedades existentes")
    _refuse_secrets("message", _without(message, quoted))
    _refuse_urls("message", message)
    for name, prop in properties.items():
        _check_property(name, prop, protocol)


def _check_property(name, prop, protocol):
    if not isinstance(prop, dict):
        raise SchemaError(f"la propiedad {name!r} debe ser un objeto")
    kind = prop.get("type")
    if kind not in _ALLOWED_KEYS:
        raise SchemaError(f"{name!r}: tipo {kind!r} no permitido (solo tipos primitivos)")
    extra = set(prop) - _ALLOWED_KEYS[kind]
    if extra:
        raise SchemaError(f"{name!r}: claves no permitidas {sorted(extra)} "
                          "(el formulario es plano)")
    texts = [name, prop.get("title", ""), prop.get("description", "")]
    texts += [o.get("title", "") for o in prop.get("oneOf", []) if isinstance(o, dict)]
    texts += [str(label) for label in prop.get("enumNames", [])]
    for text in texts:
        _refuse_secrets(name, text)
    for text in texts[1:] + [str(v) for v in _values_of(prop)]:
        _refuse_urls(name, text)
    if kind == "string":
        if "format" in prop and prop["format"] not in STRING_FORMATS:
            raise SchemaError(f"{name!r}: format {prop['format']!r} no permitido")
        if "oneOf" in prop and protocol == FORM_ONLY:
            raise SchemaError(f"{name!r}: oneOf no existe en 2025-06-18; usa enum + enumNames")
        _check_options(name, prop)
    elif kind == "array":
        if protocol == FORM_ONLY:
            raise SchemaError(f"{name!r}: la selección múltiple llegó en 2025-11-25")
        items = prop.get("items")
        if not isinstance(items, dict) or not (
                (items.get("type") == "string" and isinstance(items.get("enum"), list))
                or isinstance(items.get("anyOf"), list)):
            raise SchemaError(f"{name!r}: un array solo puede ser una selección múltiple de enum")
    if "default" in prop and protocol == FORM_ONLY and kind != "boolean":
        raise SchemaError(f"{name!r}: en 2025-06-18 solo los booleanos admiten default")


def _check_options(name, prop):
    if "enum" in prop and not all(isinstance(v, str) for v in prop["enum"]):
        raise SchemaError(f"{name!r}: los valores de enum deben ser texto")
    if "oneOf" in prop and not all(isinstance(o, dict) and isinstance(o.get("const"), str)
                                   for o in prop["oneOf"]):
        raise SchemaError(f"{name!r}: cada opción de oneOf necesita un const de texto")


def _values_of(prop):
    values = list(prop.get("enum", [])) + [o.get("const") for o in prop.get("oneOf", [])
                                           if isinstance(o, dict)]
    items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
    values += list(items.get("enum", [])) + [o.get("const") for o in items.get("anyOf", [])
                                             if isinstance(o, dict)]
    if "default" in prop:
        values.append(prop["default"])
    return values


def _without(text, quoted):
    """`text` with every occurrence of each quoted text blanked out."""
    for part in quoted:
        if isinstance(part, str) and part:
            text = text.replace(part, " ")
    return text


def _refuse_secrets(where, text):
    if not isinstance(text, str):
        return
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").replace("-", " ")
    found = SECRET_WORDS.search(words)
    if found:
        raise SchemaError(f"{where!r} parece pedir un secreto ({found[0]!r}): "
                          "los secretos nunca van en un formulario; usa el modo URL")


def has_url(text):
    """True when `text` holds a scheme and `://` (a letter at a word start, then letters,
    digits, `+`, `.` or `-`) or a word starting `www.`; linear in the length of `text`."""
    if URL_WWW.search(text):
        return True
    for run in SCHEME_RUN.finditer(text):
        start = run.start()
        before = text[start - 1] if start else " "
        word_before = before.isalnum() or before == "_"
        if (SCHEME_START.match(text, start) and not word_before) \
                or INNER_START.search(text, start, run.end()):
            return True
    return False


def _refuse_urls(where, text):
    if isinstance(text, str) and has_url(text):
        raise SchemaError(f"{where!r} contiene una URL: no pongas enlaces en un formulario")


# -- checking answers -------------------------------------------------------------------------
class Answer:
    """What the user did: `action` ("accept", "decline" or "cancel") and `content`, the form's
    fields, only meaningful when action == "accept" (an empty dict otherwise)."""

    def __init__(self, action: str, content: dict[str, Any] | None = None) -> None:

        self.action, self.content = action, content or {}

    def __repr__(self):
        return f"Answer({self.action!r}, {self.content!r})"


class AnswerError(ValueError):
    """An answer that does not fit what was asked; never acted upon."""


def check_answer(schema, result):
    """Validate an ElicitResult against the schema that was sent; return an Answer."""
    if not isinstance(result, dict) or result.get("action") not in ACTIONS:
        raise AnswerError("la respuesta no trae una acción válida (accept, decline o cancel)")
    action = result["action"]
    if action != "accept":
        return Answer(action)
    if schema is None:  # URL mode: accept carries no content
        return Answer(action)
    content = result.get("content")
    if not isinstance(content, dict):
        raise AnswerError("accept sin 'content'")
    properties = schema["properties"]
    unknown = set(content) - set(properties)
    if unknown:
        raise AnswerError(f"campos que no se pidieron: {sorted(unknown)}")
    missing = [name for name in schema.get("required", []) if name not in content]
    if missing:
        raise AnswerError(f"faltan campos obligatorios: {missing}")
    for name, value in content.items():
        problem = _value_problem(properties[name], value)
        if problem:
            raise AnswerError(f"el campo {name!r} {problem}")
    return Answer(action, dict(content))


def _value_problem(prop, value):
    kind = prop["type"]
    if kind == "boolean":
        return None if isinstance(value, bool) else "debe ser true o false"
    if kind in ("number", "integer"):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or (kind == "integer" and not float(value).is_integer()):
            return f"debe ser de tipo {kind}"
        if "minimum" in prop and value < prop["minimum"]:
            return f"es menor que {prop['minimum']}"
        if "maximum" in prop and value > prop["maximum"]:
            return f"es mayor que {prop['maximum']}"
        return None
    if kind == "array":
        allowed = _values_of({"items": prop["items"]})
        if not isinstance(value, list) or not all(v in allowed for v in value):
            return "debe ser una lista de opciones ofrecidas"
        if not prop.get("minItems", 0) <= len(value) <= prop.get("maxItems", len(value)):
            return "no tiene un número de elementos permitido"
        return None
    if not isinstance(value, str):
        return "debe ser texto"
    options = [o["const"] for o in prop.get("oneOf", [])] + list(prop.get("enum", []))
    if options and value not in options:
        return "no es una de las opciones ofrecidas"
    if not prop.get("minLength", 0) <= len(value) <= prop.get("maxLength", len(value)):
        return "no tiene una longitud permitida"
    return _format_problem(prop.get("format"), value)


def _format_problem(fmt, value):
    try:
        if fmt == "date":
            datetime.date.fromisoformat(value)
        elif fmt == "date-time":
            datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        elif fmt == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
            return "no es un email"
        elif fmt == "uri" and not re.match(r"[a-z][a-z0-9+.-]*:", value, re.IGNORECASE):
            return "no es una URI"
    except ValueError:
        return f"no tiene formato {fmt}"
    return None
