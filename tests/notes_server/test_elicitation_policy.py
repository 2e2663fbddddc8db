"""The one place forms are built and checked: flat primitive schemas, no secrets, no URLs;
mode routing from declared capabilities; answers validated again on the server."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import elicitation
from elicitation import AnswerError, SchemaError, check_answer, check_schema, choice, form
from mcp_schema import validate_def

NOTE = choice([("note-3", "2023-04-12"), ("note-7", "2024-04-10")], title="Nota")
CONFIRM = {"type": "boolean", "title": "Sí"}
SCHEMA = {"type": "object", "properties": {"note_id": NOTE, "confirm": CONFIRM},
          "required": ["note_id", "confirm"]}


@pytest.mark.parametrize("capabilities, form_ok, url_ok", [
    ({}, False, False),
    ({"elicitation": {}}, True, False),                  # the bare 2025-06-18 shape: form only
    ({"elicitation": {"form": {}}}, True, False),
    ({"elicitation": {"url": {}}}, False, True),
    ({"elicitation": {"form": {}, "url": {}}}, True, True),
    ({"elicitation": True}, False, False),
])
def test_modes_follow_the_declared_capability(capabilities, form_ok, url_ok):
    assert elicitation.supports_form(capabilities) is form_ok
    assert elicitation.supports_url(capabilities) is url_ok


def test_the_lesson_form_is_valid_for_the_official_schema():
    params = form("¿Cuál?", {"note_id": NOTE, "confirm": CONFIRM}, ["note_id", "confirm"])
    validate_def(params, "2025-11-25", "ElicitRequestFormParams")


def test_older_clients_get_enum_names_instead_of_one_of():
    old = choice([("note-3", "2023")], protocol="2025-06-18")
    params = form("¿Cuál?", {"note_id": old}, ["note_id"], protocol="2025-06-18")
    assert "mode" not in params and old["enumNames"] == ["2023"]
    validate_def({"method": "elicitation/create", "params": params}, "2025-06-18",
                 "ElicitRequest")


@pytest.mark.parametrize("prop", [
    {"type": "object", "properties": {"a": {"type": "string"}}},
    {"type": "array", "items": {"type": "object"}},
    {"type": "array", "items": {"type": "string"}},
    {"type": "string", "pattern": "^a$"},
    {"type": "string", "format": "password"},
    {"type": "null"},
    {"enum": ["a"]},
])
def test_only_flat_primitive_properties_are_allowed(prop):
    with pytest.raises(SchemaError):
        check_schema("¿?", {"type": "object", "properties": {"campo": prop}})


@pytest.mark.parametrize("name, prop", [
    ("password", {"type": "string"}),
    ("apiKey", {"type": "string"}),
    ("github_token", {"type": "string"}),
    ("card_number", {"type": "string"}),
    ("x", {"type": "string", "title": "Tu contraseña"}),
    ("x", {"type": "string", "description": "Pega aquí tu clave de API"}),
    ("valor", {"type": "string", "title": "Client secret"}),
    ("cvv", {"type": "integer"}),
    ("iban", {"type": "string"}),
    ("datos_de_pago", {"type": "string"}),
])
def test_secret_looking_fields_are_refused_whatever_they_are_called(name, prop):
    with pytest.raises(SchemaError, match="secreto"):
        check_schema("Configura la cuenta", {"type": "object", "properties": {name: prop}})


@pytest.mark.parametrize("name, prop", [
    ("note_id", NOTE), ("confirm", CONFIRM), ("compass", {"type": "string"}),
    ("discard", {"type": "boolean"}), ("secretary", {"type": "string"}),
    ("email", {"type": "string", "format": "email"}),
])
def test_ordinary_fields_are_not_mistaken_for_secrets(name, prop):
    check_schema("Elige", {"type": "object", "properties": {name: prop}})


@pytest.mark.parametrize("prop", [
    {"type": "string", "description": "Lee https://example.com antes"},
    {"type": "string", "default": "www.example.com"},
    {"type": "string", "oneOf": [{"const": "a", "title": "ver http://x.y"}]},
    {"type": "string", "enum": ["https://phish.example"]},
])
def test_urls_inside_form_fields_are_refused(prop):
    with pytest.raises(SchemaError, match="URL"):
        check_schema("Elige", {"type": "object", "properties": {"campo": prop}})


# The pattern a URL in a form's text is read by; has_url finds exactly what it finds, without its
# backtracking (quadratic on a run of scheme characters with no "://" after it).
URL_PATTERN = re.compile(r"\b[a-z][a-z0-9+.-]*://|\bwww\.", re.IGNORECASE)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="aZk1+.-_:/ wWé\u212a\u0131\u017f\n", max_size=16))
def test_has_url_finds_what_the_url_pattern_finds(text):
    assert elicitation.has_url(text) == bool(URL_PATTERN.search(text))


@pytest.mark.parametrize("text, found", [
    ("ver http://x", True), ("a.b://", True), ("x+y://", True), ("+a://", True),
    ("1a://", False), ("_a://", False), ("é://", False), ("9://", False), ("www.x", True),
    ("awww.x", False), ("a." * 100_000, False), ("a." * 100_000 + "a://", True),
    ("1" * 200_000 + "://", False), ("1" * 200_000 + "+z://", True),
])
def test_has_url_on_short_and_long_texts(text, found):
    assert elicitation.has_url(text) is found


def test_a_field_may_ask_for_a_uri_value_with_format_uri():
    check_schema("¿Dónde?", {"type": "object",
                            "properties": {"repo": {"type": "string", "format": "uri"}}})


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {}},
    {"type": "object", "properties": {"a": CONFIRM}, "required": ["b"]},
    {"type": "object", "properties": {"a": CONFIRM}, "additionalProperties": False},
    {"type": "array"},
])
def test_malformed_schemas_are_refused(schema):
    with pytest.raises(SchemaError):
        check_schema("¿?", schema)


def test_multi_select_does_not_exist_before_2025_11_25():
    multi = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
    check_schema("¿?", {"type": "object", "properties": {"m": multi}})
    with pytest.raises(SchemaError):
        check_schema("¿?", {"type": "object", "properties": {"m": multi}}, "2025-06-18")


def test_accept_with_valid_content_is_returned():
    answer = check_answer(SCHEMA, {"action": "accept",
                                   "content": {"note_id": "note-7", "confirm": True}})
    assert (answer.action, answer.content) == ("accept", {"note_id": "note-7", "confirm": True})


@pytest.mark.parametrize("content, problem", [
    ({"note_id": "note-99", "confirm": True}, "opciones ofrecidas"),
    ({"note_id": "note-7"}, "obligatorios"),
    ({"note_id": "note-7", "confirm": "yes"}, "true o false"),
    ({"note_id": "note-7", "confirm": True, "extra": 1}, "no se pidieron"),
    ({"note_id": 7, "confirm": True}, "texto"),
])
def test_content_that_does_not_fit_is_refused(content, problem):
    with pytest.raises(AnswerError, match=problem):
        check_answer(SCHEMA, {"action": "accept", "content": content})


@pytest.mark.parametrize("result", [{}, {"action": "maybe"}, {"action": "accept"}, "accept"])
def test_malformed_results_are_refused(result):
    with pytest.raises(AnswerError):
        check_answer(SCHEMA, result)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_carry_no_content(action):
    answer = check_answer(SCHEMA, {"action": action, "content": {"note_id": "note-7"}})
    assert answer.content == {}


@pytest.mark.parametrize("prop, good, bad", [
    ({"type": "integer", "minimum": 1, "maximum": 5}, 3, 6),
    ({"type": "integer"}, 2, 2.5),
    ({"type": "number", "minimum": 0}, 0.5, -1),
    ({"type": "string", "format": "date"}, "2025-01-31", "31/01/2025"),
    ({"type": "string", "format": "email"}, "ana@example.com", "ana"),
    ({"type": "string", "maxLength": 3}, "abc", "abcd"),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1},
     ["a"], ["a", "b"]),
])
def test_bounds_formats_and_lengths_are_checked(prop, good, bad):
    schema = {"type": "object", "properties": {"v": prop}}
    check_answer(schema, {"action": "accept", "content": {"v": good}})
    with pytest.raises(AnswerError):
        check_answer(schema, {"action": "accept", "content": {"v": bad}})
