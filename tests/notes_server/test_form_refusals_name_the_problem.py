"""A form the server refuses to send says exactly what is wrong and where: a tool that builds a
bad form shows that reason to the learner ("El servidor se negó a enviar este formulario: ...").
Every text a field carries is read (name, title, description, option titles, the old
enumNames labels, the message), and a form is checked against its own revision."""

import pytest

from elicitation import SchemaError, check_schema, choice, form, supports_form, supports_url

CONFIRM = {"type": "boolean", "title": "Sí"}
MULTI = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}


def refused(message, schema, protocol="2025-11-25"):
    with pytest.raises(SchemaError) as caught:
        check_schema(message, schema, protocol)
    return str(caught.value)


def one(name, prop):
    return {"type": "object", "properties": {name: prop}}


@pytest.mark.parametrize("message", ["", "   ", None, 42])
def test_a_form_without_a_message_is_refused(message):
    assert "mensaje" in refused(message, one("ok", CONFIRM))


@pytest.mark.parametrize("schema", [
    {"type": "array", "properties": {"ok": CONFIRM}},
    ["ok"],
    "object",
])
def test_a_schema_that_is_not_an_object_schema_is_refused_as_such(schema):
    assert "type 'object'" in refused("¿?", schema)


def test_unknown_schema_keys_are_named():
    reason = refused("¿?", {**one("ok", CONFIRM), "additionalProperties": False, "anyOf": []})
    assert "claves no permitidas en requestedSchema: ['additionalProperties', 'anyOf']" \
        in reason


def test_a_schema_may_name_its_json_schema_dialect():
    check_schema("¿?", {**one("ok", CONFIRM),
                        "$schema": "https://json-schema.org/draft/2020-12/schema"})


def test_a_form_without_fields_is_refused_as_empty():
    assert "al menos una propiedad" in refused("¿?", {"type": "object", "properties": {}})


def test_required_fields_that_do_not_exist_are_refused():
    assert "'required'" in refused("¿?", {**one("ok", CONFIRM), "required": ["otro"]})


@pytest.mark.parametrize("prop, reason", [
    ("texto", "la propiedad 'campo' debe ser un objeto"),
    ({"type": "null"}, "'campo': tipo 'null' no permitido"),
    ({"type": "string", "pattern": "^a$"}, "'campo': claves no permitidas ['pattern']"),
    ({"type": "string", "format": "password"}, "'campo': format 'password' no permitido"),
])
def test_a_refused_field_is_named_with_its_problem(prop, reason):
    assert reason in refused("¿?", one("campo", prop))


def test_a_secret_asked_in_the_message_is_refused_as_the_message():
    assert refused("Escribe tu contraseña", one("ok", CONFIRM)).startswith(
        "'message' parece pedir un secreto")


def test_a_secret_field_is_refused_under_its_own_name():
    assert refused("¿?", one("password", {"type": "string"})).startswith(
        "'password' parece pedir un secreto")


@pytest.mark.parametrize("name", ["clientSecret", "githubToken", "api-key", "private-key"])
def test_secret_names_are_found_across_camel_case_and_hyphens(name):
    assert refused("¿?", one(name, {"type": "string"})).startswith(
        f"'{name}' parece pedir un secreto")


def test_a_url_in_the_message_is_refused_as_the_message():
    assert refused("Lee https://example.com", one("ok", CONFIRM)).startswith(
        "'message' contiene una URL")


@pytest.mark.parametrize("prop", [
    {"type": "string", "title": "Ver www.example.com"},
    {"type": "string", "description": "Lee https://example.com"},
])
def test_a_url_in_a_fields_title_or_description_is_refused_under_its_name(prop):
    assert refused("¿?", one("campo", prop)).startswith("'campo' contiene una URL")


def test_old_option_labels_are_read_for_secrets_too():
    old = choice([("a", "Usuario"), ("b", "Contraseña")], protocol="2025-06-18")
    assert "secreto" in refused("¿?", one("campo", old), "2025-06-18")


def test_titled_options_do_not_exist_in_2025_06_18():
    new = choice([("a", "Uno")])
    check_schema("¿?", one("campo", new), "2025-11-25")
    assert "oneOf no existe en 2025-06-18" in refused("¿?", one("campo", new), "2025-06-18")


def test_a_form_is_checked_against_its_own_revision():
    form("¿?", {"m": MULTI})
    with pytest.raises(SchemaError, match="selección múltiple"):
        form("¿?", {"m": MULTI}, protocol="2025-06-18")


def test_a_choice_keeps_its_title_and_description():
    prop = choice([("a", "Uno")], title="Nota", description="La que quieres borrar")
    assert (prop["title"], prop["description"]) == ("Nota", "La que quieres borrar")


@pytest.mark.parametrize("capabilities", [None, [], "elicitation", 42])
def test_capabilities_that_are_not_an_object_allow_no_mode(capabilities):
    assert supports_form(capabilities) is False
    assert supports_url(capabilities) is False
