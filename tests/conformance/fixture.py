"""The official conformance suite's test tools, as a solution of the notes server.

The suite (`@modelcontextprotocol/conformance`, pinned in package.json) tests a server by calling
tools it names (`test_simple_text`, `test_input_required_result_elicitation`, ...) and checking
what comes back on the wire. These are those tools, written with the same public extension point
a learner uses (`serve --solution tests/conformance/fixture.py`: `Extension`, `ok`, `ToolError`
and public `ctx` methods only), so everything the suite sees travels through the server's own
machinery: its results, tool errors, forms and their checks, `MissingCapability` (-32021), the
2026-07-28 `input_required` rounds and the server's requestState sealer.

Where the suite fixes the name of a question (`user_name`, `confirm`, ...) the tool asks it with
`ctx.ask_together(user_name=...)`, whose keyword is the question's key (`ask` below); what each
tool asks and returns follows the suite's reference server
(examples/servers/typescript/everything-server.ts in modelcontextprotocol/conformance).

Deliberate simplifications: no logging, prompts, resources or tasks here (the server has none;
tests/conformance/expectations.py lists those scenarios and why).
"""

import base64
import io
import json
import wave

from extension import Extension
from server import ToolError, ok

extension = Extension()  # the tools the conformance suite calls


def ask(ctx, key, request):
    """One question under the name the suite expects (its `inputRequests` key)."""
    return ctx.ask_together(**{key: request})[key]


# A 1x1 PNG and a silent WAV (made here, with the standard library).
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5Er"
       "kJggg==")


def _silent_wav():
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(8000)
        audio.writeframes(b"\0\0" * 8)
    return base64.b64encode(buffer.getvalue()).decode()


WAV = _silent_wav()
NO_ARGUMENTS = {"type": "object", "properties": {}}
NAME = {"name": {"type": "string"}}


def tool(name, description, input_schema=None):
    return extension.tool(name, description=description, input_schema=input_schema)


def content(*parts):
    return {"content": list(parts)}


def text(value):
    return {"type": "text", "text": value}


def answered(answer):
    return f"action={answer.action}, content={json.dumps(answer.content, sort_keys=True)}"


# -- results (both revisions) ---------------------------------------------------------------------
@tool("test_simple_text", "Devuelve un texto.")
def simple_text(ctx):
    return content(text("This is a simple text response for testing."))


@tool("test_image_content", "Devuelve una imagen PNG.")
def image_content(ctx):
    return content({"type": "image", "data": PNG, "mimeType": "image/png"})


@tool("test_audio_content", "Devuelve un audio WAV.")
def audio_content(ctx):
    return content({"type": "audio", "data": WAV, "mimeType": "audio/wav"})


EMBEDDED = {"type": "resource", "resource": {"uri": "test://embedded-resource",
                                             "mimeType": "text/plain",
                                             "text": "This is an embedded resource content."}}


@tool("test_embedded_resource", "Devuelve un recurso incrustado.")
def embedded_resource(ctx):
    return content(EMBEDDED)


@tool("test_multiple_content_types", "Devuelve texto, imagen y recurso.")
def multiple_content_types(ctx):
    return content(text("Multiple content types test:"),
                   {"type": "image", "data": PNG, "mimeType": "image/png"},
                   {"type": "resource", "resource": {
                       "uri": "test://mixed-content-resource", "mimeType": "application/json",
                       "text": json.dumps({"test": "data", "value": 123})}})


@tool("test_error_handling", "Falla siempre (isError).")
def error_handling(ctx):
    raise ToolError("This tool intentionally returns an error for testing")


@tool("test_tool_with_progress", "Informa de su progreso: 0, 50 y 100 de 100.")
def tool_with_progress(ctx):
    sent = [ctx.progress(step, 100, f"Completed step {step} of 100") for step in (0, 50, 100)]
    return ok(f"progress sent: {all(sent)}")


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"},
                                         "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]}, "else": {"required": ["email"]},
    "additionalProperties": False}


@tool("json_schema_2020_12_tool", "Su inputSchema usa JSON Schema 2020-12 entero.",
      JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(ctx, **arguments):
    return ok(f"JSON Schema 2020-12 tool called with: {json.dumps(arguments, sort_keys=True)}")


@tool("test_header_echo", "Repite su región; la región viaja también en Mcp-Param-Region.",
      {"type": "object", "required": ["region"],
       "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})
def header_echo(ctx, region):
    return ok(f"region={region}")


# -- questions at 2025-11-25 (requests in the middle of the call) --------------------------------
@tool("test_sampling", "Pide un texto al modelo del cliente.",
      {"type": "object", "required": ["prompt"], "properties": {"prompt": {"type": "string"}}})
def sampling(ctx, prompt):
    result = ask(ctx, "sample", ctx.sampling_request(prompt, 100))
    reply = result.get("content") if isinstance(result, dict) else None
    return ok(f"LLM response: {reply.get('text') if isinstance(reply, dict) else 'No response'}")


@tool("test_elicitation", "Pide al usuario un nombre y un email.",
      {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}})
def elicitation(ctx, message):
    answer = ctx.elicit_form(message, {"username": {"type": "string"},
                                       "email": {"type": "string", "format": "email"}})
    return ok(f"User response: {answered(answer)}")


@tool("test_elicitation_sep1034_defaults", "Un formulario con valores por defecto (SEP-1034).")
def elicitation_defaults(ctx):
    answer = ctx.elicit_form("Please review and update the form fields with defaults", {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status",
                   "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True}})
    return ok(f"Elicitation completed: {answered(answer)}")


THREE = ("option1", "option2", "option3")
TITLED = [{"const": f"value{i}", "title": title} for i, title in
          enumerate(("First Option", "Second Option", "Third Option"), 1)]


@tool("test_elicitation_sep1330_enums", "Las cinco formas de enumeración (SEP-1330).")
def elicitation_enums(ctx):
    answer = ctx.elicit_form("Please select options from the enum fields", {
        "untitledSingle": {"type": "string", "description": "Select one option",
                           "enum": list(THREE)},
        "titledSingle": {"type": "string", "description": "Select one option with titles",
                         "oneOf": TITLED},
        "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                       "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select multiple options",
                          "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": list(THREE)}},
        "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                        "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [{"const": o["const"],
                                             "title": o["title"].replace("Option", "Choice")}
                                            for o in TITLED]}}})
    return ok(f"Elicitation completed: {answered(answer)}")


# -- questions at 2026-07-28 (input_required rounds) ---------------------------------------------
@tool("test_missing_capability", "Necesita que el cliente declare sampling.")
def missing_capability(ctx):
    ask(ctx, "sample", ctx.sampling_request("Hello", 10))
    return ok("sampling was declared")


@tool("test_input_required_result_elicitation", "Pregunta tu nombre (clave user_name).")
def input_required_elicitation(ctx):
    answer = ask(ctx, "user_name", ctx.form_request("What is your name?", NAME, ["name"]))
    return ok(f"Hello, {answer.content.get('name', '')}!")


@tool("test_input_required_result_sampling", "Pregunta al modelo (clave capital_question).")
def input_required_sampling(ctx):
    result = ask(ctx, "capital_question",
                 ctx.sampling_request("What is the capital of France?", 100))
    reply = result.get("content") if isinstance(result, dict) else None
    return ok(f"The model said: {reply.get('text') if isinstance(reply, dict) else '?'}")


@tool("test_input_required_result_list_roots", "Pide las roots del cliente.")
def input_required_list_roots(ctx):
    roots = ctx.ask_roots().get("roots", [])
    return ok(f"Roots: {', '.join(r.get('uri', '?') for r in roots) or 'none'}")


@tool("test_input_required_result_request_state", "Pide confirmación; el estado viaja sellado.")
def input_required_request_state(ctx):
    answer = ask(ctx, "confirm", ctx.form_request("Please confirm", {"ok": {"type": "boolean"}},
                                                  ["ok"]))
    return ok(f"state-ok: confirmed={answer.content.get('ok')}")


@tool("test_input_required_result_multiple_inputs",
      "Necesita tu nombre, un saludo del modelo y las roots.")
def input_required_multiple_inputs(ctx):
    # the three are independent, so they travel in one round
    answers = ctx.ask_together(
        user_name=ctx.form_request("What is your name?", NAME, ["name"]),
        greeting=ctx.sampling_request("Generate a greeting", 50),
        roots=ctx.roots_request())
    name, greeting, roots = answers["user_name"], answers["greeting"], answers["roots"].roots
    said = greeting.get("content", {}).get("text") if isinstance(greeting, dict) else None
    return ok(f"Name: {name.content.get('name')}; Greeting: {said}; Roots: {len(roots)}")


@tool("test_input_required_result_multi_round", "Dos rondas: tu nombre y luego tu color.")
def input_required_multi_round(ctx):
    name = ask(ctx, "step1", ctx.form_request("Step 1: What is your name?", NAME, ["name"]))
    color = ask(ctx, "step2", ctx.form_request(
        f"Step 2: {name.content.get('name')}, what is your favorite color?",
        {"color": {"type": "string"}}, ["color"]))
    return ok(f"{name.content.get('name')} likes {color.content.get('color')}")


@tool("test_input_required_result_tampered_state", "Pide confirmación (clave confirm).")
def input_required_tampered_state(ctx):
    ask(ctx, "confirm", ctx.form_request("Please confirm", {"ok": {"type": "boolean"}}, ["ok"]))
    return ok("integrity-ok: state verified")


@tool("test_input_required_result_capabilities",
      "Pregunta solo por lo que el cliente declaró (elicitación, sampling).")
def input_required_capabilities(ctx):
    declared = ctx.client_capabilities
    asked = []
    if isinstance(declared.get("elicitation"), dict):
        ask(ctx, "elicit_input",
            ctx.form_request("Elicitation input", {"value": {"type": "string"}}, ["value"]))
        asked.append("elicit_input")
    if isinstance(declared.get("sampling"), dict):
        ask(ctx, "sample_input", ctx.sampling_request("Sample request", 50))
        asked.append("sample_input")
    return ok(f"capabilities-ok: asked {', '.join(asked) or 'nothing'}")


@tool("test_streaming_elicitation", "Pregunta algo: la respuesta es un resultado, no una "
      "petición del servidor.")
def streaming_elicitation(ctx):
    answer = ask(ctx, "note", ctx.form_request("Anything to add?", {"note": {"type": "string"}}))
    return ok(f"Streaming complete: {answered(answer)}")


@tool("test_logging_tool", "Este servidor no registra nada: nunca envía notifications/message.")
def logging_tool(ctx):
    return ok("Logging evaluated: this server sends no log messages")
