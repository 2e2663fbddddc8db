"""What a client sends back is checked again on the server, field by field, with a reason that
names the field and the rule it broke: types, bounds, lengths, offered options (single and
multi-select, both shapes), formats. A URL-mode `accept` carries no content at all. The forms
a schema may hold are checked too: array items, defaults per revision, option values."""

import datetime

import pytest

from elicitation import AnswerError, SchemaError, check_answer, check_schema, form


def schema_of(prop, required=()):
    return {"type": "object", "properties": {"v": prop}, "required": list(required)}


def accepted(prop, value):
    return check_answer(schema_of(prop), {"action": "accept", "content": {"v": value}}).content


def refusal(prop, value):
    with pytest.raises(AnswerError) as caught:
        check_answer(schema_of(prop), {"action": "accept", "content": {"v": value}})
    return str(caught.value)


def test_a_url_mode_accept_carries_no_content():
    answer = check_answer(None, {"action": "accept", "content": {"token": "x"}})
    assert (answer.action, answer.content) == ("accept", {})


@pytest.mark.parametrize("result", [{}, {"action": "acept"}, {"action": None}, "accept", None])
def test_a_result_without_a_known_action_is_refused_naming_the_three(result):
    with pytest.raises(AnswerError, match=r"acción válida \(accept, decline o cancel\)"):
        check_answer(schema_of({"type": "boolean"}), result)


@pytest.mark.parametrize("content", [None, ["v"], "v"])
def test_an_accept_without_content_is_refused(content):
    with pytest.raises(AnswerError, match="accept sin 'content'"):
        check_answer(schema_of({"type": "boolean"}), {"action": "accept", "content": content})


def test_an_answer_keeps_exactly_the_fields_it_sent():
    schema = {"type": "object", "properties": {"a": {"type": "boolean"},
                                               "b": {"type": "integer"}}, "required": ["a"]}
    answer = check_answer(schema, {"action": "accept", "content": {"a": False}})
    assert answer.content == {"a": False}


@pytest.mark.parametrize("prop, good, bad, reason", [
    ({"type": "integer", "minimum": 2}, 2, 1, "el campo 'v' es menor que 2"),
    ({"type": "integer", "maximum": 5}, 5, 6, "el campo 'v' es mayor que 5"),
    ({"type": "number", "minimum": 0.5, "maximum": 1.5}, 1.5, 1.75,
     "el campo 'v' es mayor que 1.5"),
    ({"type": "number"}, 2, True, "el campo 'v' debe ser de tipo number"),
    ({"type": "integer"}, 2.0, "2", "el campo 'v' debe ser de tipo integer"),
    ({"type": "integer"}, -3, False, "el campo 'v' debe ser de tipo integer"),
    ({"type": "boolean"}, False, 0, "el campo 'v' debe ser true o false"),
])
def test_numbers_and_booleans_are_checked_by_type_and_bounds(prop, good, bad, reason):
    assert accepted(prop, good) == {"v": good}
    assert refusal(prop, bad) == reason


@pytest.mark.parametrize("prop, good, bad, reason", [
    ({"type": "string", "minLength": 2}, "ab", "a", "no tiene una longitud permitida"),
    ({"type": "string", "maxLength": 2}, "ab", "abc", "no tiene una longitud permitida"),
    ({"type": "string", "enum": ["x", "y"]}, "y", "z", "no es una de las opciones ofrecidas"),
    ({"type": "string", "oneOf": [{"const": "x", "title": "X"}]}, "x", "X",
     "no es una de las opciones ofrecidas"),
    ({"type": "string"}, "", 3, "el campo 'v' debe ser texto"),
])
def test_text_is_checked_by_length_and_offered_options(prop, good, bad, reason):
    assert accepted(prop, good) == {"v": good}
    assert refusal(prop, bad).endswith(reason)


@pytest.mark.parametrize("fmt, good, bad, reason", [
    ("date", "2025-01-31", "2025-02-30", "no tiene formato date"),
    ("date-time", "2025-01-31T10:00:00Z", "mañana", "no tiene formato date-time"),
    ("date-time", "2025-01-31T10:00:00+02:00", "2025-01-31 25:00", "no tiene formato date-time"),
    ("email", "ana@example.com", "ana@example", "no es un email"),
    ("email", "a.b@c.d", "a b@c.d", "no es un email"),
    ("uri", "https://example.com", "example.com", "no es una URI"),
    ("uri", "urn:isbn:0451450523", "1http://x", "no es una URI"),
    ("uri", "MAILTO:ana@example.com", "://example.com", "no es una URI"),
])
def test_text_formats_are_checked(fmt, good, bad, reason):
    prop = {"type": "string", "format": fmt}
    assert accepted(prop, good) == {"v": good}
    assert refusal(prop, bad) == f"el campo 'v' {reason}"


def test_a_utc_z_timestamp_is_read_even_where_python_cannot_read_z(monkeypatch):
    """The demo runs on Python 3.10+, whose datetime.fromisoformat does not read "Z"."""
    class Python310Datetime(datetime.datetime):
        @classmethod
        def fromisoformat(cls, text):
            if text[-1:] in "Zz":
                raise ValueError(f"Invalid isoformat string: {text!r}")
            return super().fromisoformat(text)
    monkeypatch.setattr(datetime, "datetime", Python310Datetime)
    prop = {"type": "string", "format": "date-time"}
    assert accepted(prop, "2025-01-31T10:00:00Z") == {"v": "2025-01-31T10:00:00Z"}


ENUM_ITEMS = {"type": "string", "enum": ["casa", "ideas"]}
ANYOF_ITEMS = {"anyOf": [{"const": "rojo", "title": "Rojo"}, {"const": "azul", "title": "Azul"}]}


@pytest.mark.parametrize("items, good, bad", [
    (ENUM_ITEMS, ["ideas", "casa"], ["casa", "rojo"]),
    (ANYOF_ITEMS, ["azul"], ["Azul"]),
])
def test_multi_select_answers_are_lists_of_offered_options(items, good, bad):
    prop = {"type": "array", "items": items}
    assert accepted(prop, good) == {"v": good}
    assert accepted(prop, []) == {"v": []}
    assert refusal(prop, bad) == "el campo 'v' debe ser una lista de opciones ofrecidas"
    assert refusal(prop, good[0]) == "el campo 'v' debe ser una lista de opciones ofrecidas"


def test_multi_select_answers_respect_min_and_max_items():
    prop = {"type": "array", "items": ENUM_ITEMS, "minItems": 1, "maxItems": 1}
    assert accepted(prop, ["casa"]) == {"v": ["casa"]}
    for bad in ([], ["casa", "ideas"]):
        assert refusal(prop, bad) == "el campo 'v' no tiene un número de elementos permitido"


# -- what a form may hold ------------------------------------------------------------------------
def schema_refusal(prop, protocol="2025-11-25"):
    with pytest.raises(SchemaError) as caught:
        check_schema("¿?", schema_of(prop), protocol)
    return str(caught.value)


@pytest.mark.parametrize("items", [ENUM_ITEMS, ANYOF_ITEMS])
def test_multi_select_fields_hold_an_enum_or_titled_options(items):
    check_schema("¿?", schema_of({"type": "array", "items": items}))


@pytest.mark.parametrize("items", [
    None, "string", {"type": "number", "enum": [1, 2]}, {"type": "string"},
    {"type": "string", "enum": "casa"}, {"anyOf": {"const": "rojo"}},
])
def test_any_other_array_is_refused(items):
    prop = {"type": "array"} if items is None else {"type": "array", "items": items}
    assert schema_refusal(prop) == \
        "'v': un array solo puede ser una selección múltiple de enum"


def test_only_booleans_have_defaults_in_2025_06_18():
    for prop in ({"type": "boolean", "default": True}, {"type": "string", "default": "a"}):
        check_schema("¿?", schema_of(prop), "2025-11-25")
    check_schema("¿?", schema_of({"type": "boolean", "default": True}), "2025-06-18")
    assert schema_refusal({"type": "string", "default": "a"}, "2025-06-18") == \
        "'v': en 2025-06-18 solo los booleanos admiten default"


@pytest.mark.parametrize("prop, reason", [
    ({"type": "string", "enum": ["a", 1]}, "'v': los valores de enum deben ser texto"),
    ({"type": "string", "oneOf": [{"const": 1, "title": "Uno"}]},
     "'v': cada opción de oneOf necesita un const de texto"),
    ({"type": "string", "oneOf": ["a"]}, "'v': cada opción de oneOf necesita un const de texto"),
])
def test_option_values_are_text(prop, reason):
    assert schema_refusal(prop) == reason


@pytest.mark.parametrize("prop", [
    {"type": "array", "items": {"type": "string", "enum": ["https://phish.example"]}},
    {"type": "array", "items": {"anyOf": [{"const": "www.phish.example", "title": "A"}]}},
    {"type": "string", "oneOf": [{"const": "http://phish.example", "title": "A"}]},
    {"type": "boolean", "default": "www.example.com"},
])
def test_option_values_and_defaults_may_not_be_urls(prop):
    assert schema_refusal(prop).startswith("'v' contiene una URL")


def test_required_fields_are_listed_in_the_form():
    params = form("¿?", {"a": {"type": "boolean"}, "b": {"type": "boolean"}}, ("b",))
    assert params["requestedSchema"]["required"] == ["b"]
    assert "required" not in form("¿?", {"a": {"type": "boolean"}})["requestedSchema"]
