"""Every quiz answer in the notebooks is the right one, we can show why, and its length does not
give it away.

The key below is written separately from the quizzes (lessons/mcp_ui/quizzes/, which the
notebooks' `ui.quiz("NN")` cells draw): for each question, the option that is right and where
that comes from. A source is either something this test runs (the official
JSON schemas, the lesson's server in the kernel-side lab, the official SDK in memory, the
lesson's own checkers) or, for what only the prose of the specification says, the rule of the
spec checklist (SPEC_RULES.md, shared notes) and the section a learner would open. A notebook
whose marked answer differs from the key, a question without a key entry or a key entry
without a question fails, and so does any runnable source that stops holding.

A test-wise learner picks the longest option. So in every quiz file the right option is the
strictly longest one in at most half of its questions, and in at most a third of all the
questions of all the quiz files together.
"""

import asyncio
import os
import urllib.parse
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from notebook_helpers import LESSONS, NOTEBOOKS, against_both, import_mcp_ui, lab_run, read
from test_lesson_structure import quiz_questions

import elicitation  # code/, put on sys.path by notebook_helpers
import nube_copias
import roots
from mcp_schema import _revision, request_methods
from urlflow import setup_page

ui = import_mcp_ui()
OLD, NEW = "2025-11-25", "2026-07-28"


@dataclass(frozen=True)
class Answer:
    question: str                     # how the question starts
    right: str                        # the option that is right
    source: str                       # where a learner checks it
    proof: Callable[[], None] | None = None   # runs and asserts, when it can be run


# -- what can be run --------------------------------------------------------------------------
def defs(revision):
    return _revision(revision).defs



def frames_from_server(conn):
    return [m for d, m in conn.frames if d == "←"]


def containment_is_per_component():
    assert not roots.is_within("/casa/Notas-privadas/robo.md", "/casa/Notas")
    assert roots.is_within("/casa/Notas/sub/idea.md", "/casa/Notas")
    # the `..` distractor: resolved, it is inside, so letting it through is right
    assert roots.is_within(os.path.normpath("/casa/Notas/../Notas/idea.md"), "/casa/Notas")


def roots_travel_inside_input_required_at_2026():
    assert "roots/list" in request_methods(OLD, "server")
    assert "roots/list" not in request_methods(NEW, "server")
    inputs = {r["$ref"].rsplit("/", 1)[1] for r in defs(NEW)["InputRequest"]["anyOf"]}
    assert "ListRootsRequest" in inputs


def forms_travel_inside_input_required_at_2026():
    assert "elicitation/create" not in request_methods(NEW, "server")

    async def body(lab):
        conn = await lab.connect(NEW, quiet=True)
        answer = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                        scripted=[answer], echo=False)
        return frames_from_server(conn), lab.snapshot()
    frames, after = lab_run(body)
    asked = [m for m in frames if (m.get("result") or {}).get("resultType") == "input_required"
             and any(r.get("method") == "elicitation/create"
                     for r in m["result"]["inputRequests"].values())]
    assert asked and not any(m.get("method") == "elicitation/create" for m in frames)
    assert "Notas/tps-2024.md" not in after


def cancel_changes_nothing_and_is_asked_once():
    async def body(lab):
        conn = await lab.connect(quiet=True)
        before = lab.snapshot()
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                        scripted=[{"action": "cancel"}], echo=False)
        asked = [m for m in frames_from_server(conn) if m.get("method") == "elicitation/create"]
        return before, lab.snapshot(), asked
    before, after, asked = lab_run(body)
    assert before == after and len(asked) == 1


def answers_outside_the_options_are_refused():
    async def body(lab):
        conn = await lab.connect(quiet=True)
        before = lab.snapshot()
        result = await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                                 echo=False, scripted=[ui.Raw({"action": "accept", "content": {
                                     "note_id": "note-99", "confirm": True}})])
        return before, lab.snapshot(), result
    before, after, result = lab_run(body)
    assert before == after and result.is_error


async def arrived(conn, method, patience=240.0):
    """Until the server has sent a `method` message: the event itself, however slow the
    machine; `patience` only turns one that never comes into a failure."""
    deadline = asyncio.get_running_loop().time() + patience
    while not any(m.get("method") == method for m in frames_from_server(conn)):
        assert asyncio.get_running_loop().time() < deadline, f"no {method} from the server"
        await asyncio.sleep(0.01)


def a_cancelled_call_withdraws_its_form(monkeypatch):
    monkeypatch.delenv("LESSON_USER", raising=False)  # a person, who does not answer

    async def body(lab):
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call("notes_delete", {"title": "TPS report"},
                                               echo=False))
        await arrived(conn, "elicitation/create")  # the form is open: now cancel the call
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await arrived(conn, "notifications/cancelled")
        await asyncio.sleep(0.05)  # a result for the cancelled call would come by now: none may
        return conn.frames, lab.snapshot()
    frames, after = lab_run(body)
    question = next(m["id"] for d, m in frames if d == "←"
                    and m.get("method") == "elicitation/create")
    call_id = next(m["id"] for d, m in frames if d == "→" and m.get("method") == "tools/call")
    withdrawn = [m["params"]["requestId"] for d, m in frames if d == "←"
                 and m.get("method") == "notifications/cancelled"]
    assert withdrawn == [question]
    assert not any(d == "←" and m.get("id") == call_id and "method" not in m
                   for d, m in frames), "a cancelled call gets no response"
    assert sum(p.startswith("Notas/tps-") for p in after) == 3


def url_accept_carries_no_content():
    assert "content" not in defs(OLD)["ElicitResult"].get("required", [])

    async def body(lab):
        conn = await lab.connect(quiet=True)
        await conn.call("notes_setup", simulate=True, scripted=[{"action": "accept"}],
                        echo=False)
        return conn.frames
    frames = lab_run(body)
    url_ids = [m["id"] for d, m in frames if d == "←" and m.get("method") ==
               "elicitation/create" and m["params"].get("mode") == "url"]
    answers = [m["result"] for d, m in frames if d == "→" and m.get("id") in url_ids
               and "result" in m]
    assert answers == [{"action": "accept"}]


def url_accept_configures_nothing_until_the_page():
    async def body(lab):
        conn = await lab.connect(quiet=True, setup_wait=0.5)
        return await conn.call("notes_setup", simulate=True, scripted=[{"action": "accept"}],
                               browser="later", echo=False)
    assert lab_run(body).data == {"status": "pending"}


def nothing_of_a_declined_32042_reaches_the_server():
    async def body(lab):
        conn = await lab.connect(OLD, quiet=True)
        result = await ui.try_flow.call_following_url(conn, "notes_sync", simulate=True,
                                                      scripted=[{"action": "decline"}])
        return result, conn.frames
    result, frames = lab_run(body)
    assert result.error["code"] == -32042
    ended = max(i for i, (d, m) in enumerate(frames) if d == "←" and "error" in m
                and m["error"]["code"] == -32042)
    assert not [m for d, m in frames[ended + 1:] if d == "→"], "the «no» stays in the client"


def sync_asks_url_and_roots_in_one_round():
    _, frames = sync_before_setup(NEW)
    first = next(m["result"] for m in frames
                 if (m.get("result") or {}).get("resultType") == "input_required")
    assert sorted(r["method"] for r in first["inputRequests"].values()) == [
        "elicitation/create", "roots/list"]


def a_client_without_roots_gets_no_file_touched():
    async def body(lab):
        conn = await lab.connect(OLD, roots=None, quiet=True)
        before = lab.snapshot()
        result = await conn.call("notes_write", {"uri": lab.uri("Notas", "x.md"),
                                                 "title": "x", "body": "x"}, echo=False)
        return result, before, lab.snapshot(), frames_from_server(conn)
    result, before, after, frames = lab_run(body)
    assert result.is_error and "--root" in result.text and "roots" in result.text
    assert before == after
    assert not [m for m in frames if m.get("method") == "roots/list"]


def minus_32042_is_retired_at_2026():
    error_codes_by_revision()
    url_inside_input_required_at_2026()


def roots_changed_in_2026_and_travel_inside_input_required():
    roots_page_changed_in_2026()
    roots_travel_inside_input_required_at_2026()


def sync_before_setup(protocol):
    async def body(lab):
        conn = await lab.connect(protocol, quiet=True)
        result = await conn.call("notes_sync", simulate=True, scripted=[{"action": "decline"}],
                                 echo=False)
        return result, frames_from_server(conn)
    return lab_run(body)


def minus_32042_at_2025():
    result, _ = sync_before_setup(OLD)
    assert result.error["code"] == -32042
    (asked,) = result.error["data"]["elicitations"]
    assert asked["mode"] == "url" and asked["elicitationId"]
    assert -32042 in _revision(OLD).error_codes


def url_inside_input_required_at_2026():
    _, frames = sync_before_setup(NEW)
    asked = [r["params"] for m in frames
             if (m.get("result") or {}).get("resultType") == "input_required"
             for r in m["result"]["inputRequests"].values()
             if r["method"] == "elicitation/create"]
    assert [p["mode"] for p in asked] == ["url"] and "elicitationId" not in asked[0]
    assert -32042 not in _revision(NEW).error_codes
    assert "elicitationId" not in defs(NEW)["ElicitRequestURLParams"]["properties"]


def minus_32042_at_2025_and_a_url_inside_input_required_at_2026():
    minus_32042_at_2025()
    url_inside_input_required_at_2026()


def a_code_comes_back_with_the_state_and_is_exchanged_once():
    provider = nube_copias.Provider(lambda: "http://127.0.0.1:9")
    asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(
        provider.authorize_url("el-state-del-flujo")).query))
    page = setup_page.PageRequest("POST", nube_copias.AUTHORIZE_PATH, {},
                                  {**asked, "decision": "allow"}, "ana",
                                  "http://127.0.0.1:9", provider)
    back = urllib.parse.parse_qs(urllib.parse.urlsplit(provider.authorize(page).location).query)
    assert back["state"] == ["el-state-del-flujo"]
    assert provider.exchange(back["code"][0]).startswith(nube_copias.TOKEN_PREFIX)
    with pytest.raises(nube_copias.ProviderError):
        provider.exchange(back["code"][0])


def error_codes_by_revision():
    assert _revision(OLD).error_codes[-32042][0] == "URLElicitationRequiredError"
    assert -32042 not in _revision(NEW).error_codes
    assert _revision(NEW).error_codes[-32021][0] == "MissingRequiredClientCapabilityError"
    assert _revision(NEW).error_codes[-32022][0] == "UnsupportedProtocolVersionError"


def secrets_never_go_in_a_form_and_a_form_only_client_gets_instructions():
    with pytest.raises(elicitation.SchemaError):
        elicitation.check_schema("Necesito acceso.", {"type": "object", "properties": {
            "api_key": {"type": "string"}}})

    async def body(lab):
        conn = await lab.connect(quiet=True, elicitation={})
        return await conn.call("notes_setup", echo=False)
    assert lab_run(body).data.get("status") == "manual"


def userinfo_is_not_the_host():
    assert urllib.parse.urlsplit(
        "https://notas-sync.example@evil.example/connect").hostname == "evil.example"


_SDK: dict = {}


def sdk_probe() -> dict:
    """The official SDK in memory: what a client with an elicitation callback declares, the
    revision it speaks without `mode`, and what `ctx.elicit_url` does there."""
    if _SDK:
        return _SDK
    import mcp.types as types
    from mcp import Client
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("sonda")

    @server.tool()
    async def probe(ctx: Context) -> str:
        caps = ctx.client_capabilities
        seen = {"version": ctx.protocol_version,
                "elicitation": caps.elicitation.model_dump(exclude_none=True)}
        try:
            await ctx.elicit_url("m", "https://x.example/c", "e1")
            seen["url"] = "sent"
        except Exception as exc:  # noqa: BLE001 (the kind of failure is what we look at)
            seen["url"] = type(exc).__name__
        _SDK.setdefault(ctx.protocol_version, seen)
        return "ok"

    async def decline(context, params):
        return types.ElicitResult(action="decline")

    async def go():
        for mode in ("auto", "legacy"):
            async with Client(server, mode=mode, elicitation_callback=decline) as client:
                await client.call_tool("probe", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asyncio.run(go())
    _SDK["default"] = next(v for k, v in _SDK.items() if k != OLD)
    return _SDK


def sdk_callback_declares_both_modes():
    assert sdk_probe()["default"]["elicitation"] == {"form": {}, "url": {}}


def sdk_default_is_2026():
    assert sdk_probe()["default"]["version"] == NEW


def sdk_elicit_url_has_no_back_channel_at_2026():
    assert sdk_probe()[NEW]["url"] == "NoBackChannelError"
    assert sdk_probe()[OLD]["url"] == "sent"


def meta_on_every_2026_request():
    assert "initialize" in request_methods(OLD, "client")
    assert "initialize" not in request_methods(NEW, "client")
    required = set(defs(NEW)["RequestMetaObject"]["required"])
    assert {"io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities"} <= required


def retry_is_a_new_request_with_the_answers():
    async def body(lab):
        conn = await lab.connect(NEW, quiet=True)
        answer = {"action": "decline"}
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                        scripted=[answer], echo=False)
        return [m for d, m in conn.frames if d == "→" and m.get("method") == "tools/call"]
    calls = lab_run(body)
    assert len({c["id"] for c in calls}) == len(calls) >= 2
    last = calls[-1]["params"]
    assert last["inputResponses"] and last["requestState"]



# notebook 06's attacks quiz: each answer is what the attack of lessons/mcp_ui/attacks.py does

def an_encoded_state_shows_the_notes_found_and_the_roots():
    broken, _ = against_both(ui.attacks.read, ui.weak_sealers.EncodedOnly())
    assert any("tps-2023.md" in r for r in broken.revealed)
    assert any(r.startswith("file://") for r in broken.revealed)


def an_unkeyed_hash_is_recomputed_by_the_forger():
    broken, server = against_both(ui.attacks.forge, ui.weak_sealers.UnkeyedHash())
    assert broken.changes and server.refused and not server.changes


def an_unbound_state_works_in_another_call():
    broken, server = against_both(ui.attacks.move, ui.weak_sealers.KeyedButUnbound())
    assert broken.changes and server.refused and not server.changes


def a_forged_try_spends_the_token_when_open_notes_it_first():
    broken, _ = against_both(ui.attacks.lockout, ui.weak_sealers.SpendsFirst())
    assert broken.refused and not broken.changes


def an_expiry_inside_the_seal_stops_a_late_token():
    broken, server = against_both(ui.attacks.expired, ui.weak_sealers.ForeverReusable(),
                                     state_ttl=1)
    assert broken.changes and server.refused and not server.changes

def server_limit_narrows_client_roots():
    async def body(lab):
        conn = await lab.connect(NEW, roots=["Notas", "Notas-privadas"], server_roots=["Notas"],
                                 quiet=True)
        outside = await conn.call("notes_write", {"uri": lab.uri("Notas-privadas", "x.md"),
                                                  "title": "x", "body": "x"}, echo=False)
        inside = await conn.call("notes_write", {"uri": lab.uri("Notas", "x.md"),
                                                 "title": "x", "body": "x"}, echo=False)
        return outside, inside
    outside, inside = lab_run(body)
    assert outside.is_error and not inside.is_error


def a_late_revocation_lets_the_first_read_through():
    async def body(lab):
        reads = []
        for connect in (ui.naive.connect, lambda lab, **kw: lab.connect(quiet=True, **kw)):
            conn = await connect(lab, roots=["Notas", "Trabajo"])
            await conn.call("notes_open", {"note_id": "note-21"}, echo=False)
            await conn.client.set_roots([lab.path("Notas")])
            await asyncio.sleep(0)
            reads.append(await conn.call("notes_read", {"handle": "h-1"}, echo=False))
        return reads
    late, at_once = lab_run(body)
    assert not late.is_error and at_once.is_error


def roots_page_changed_in_2026():
    assert "RootsListChangedNotification" in defs(OLD)
    assert "RootsListChangedNotification" not in defs(NEW)
    assert "listChanged" in defs(OLD)["ClientCapabilities"]["properties"]["roots"]["properties"]
    assert "properties" not in defs(NEW)["ClientCapabilities"]["properties"]["roots"] or \
        "listChanged" not in defs(NEW)["ClientCapabilities"]["properties"]["roots"]["properties"]


def completion_notification_is_2025_only():
    assert "ElicitationCompleteNotification" in defs(OLD)
    assert "elicitationId" in defs(OLD)["ElicitationCompleteNotification"]["properties"]["params"][
        "properties"]
    assert not any("ElicitationComplete" in name for name in defs(NEW))


def a_url_only_client_declares_no_form_mode():
    assert not elicitation.supports_form({"elicitation": {"url": {}}})
    assert elicitation.supports_form({"elicitation": {}})
    assert elicitation.supports_form({"elicitation": {"form": {}, "url": {}}})


# -- the key ----------------------------------------------------------------------------------
E25 = "especificación 2025-11-25, Client › Elicitation"
KEY = {
    "01_roots.ipynb": [
        Answer("Un compañero dice",
               "No: solo las respeta el propio servidor",
               "SPEC_RULES 12; 2025-11-25 Client › Roots › Security Considerations"),
        Answer("Revisas este código: if path.startswith(root)",
               "/casa/Notas-privadas/robo.md: empieza igual, pero es otra carpeta",
               "code/notes/roots.py is_within", containment_is_per_component),
        Answer("Diseñas hoy un servidor nuevo",
               "No adoptas roots: un parámetro de herramienta, una URI de recurso o la "
               "configuración del servidor, con las mismas comprobaciones de rutas",
               "SPEC_RULES 82; 2026-07-28 Client › Roots and Deprecated"),
    ],
    "02_formularios.ipynb": [
        Answer("El usuario cierra el formulario de borrado con Escape",
               "cancel: no borra nada ni insiste en bucle",
               f"SPEC_RULES 48, 50; {E25} › Response Actions",
               cancel_changes_nothing_and_is_asked_once),
        Answer("Un cliente responde accept con un note_id",
               "Lo rechaza: vuelve a validar contra las opciones ofrecidas y contra las roots, "
               "y no toca nada",
               f"SPEC_RULES 31; {E25} › Form Mode Security",
               answers_outside_the_options_are_refused),
        Answer("(2025-11-25) La llamada se cancela con el formulario abierto",
               "El servidor descarta la llamada: no responde, no borra y retira su propia pregunta",
               "Basic › Utilities › Cancellation; the lesson server (issue 10)",
               a_cancelled_call_withdraws_its_form),
    ],
    "03_modo_url.ipynb": [
        Answer("Tu servidor 2025-11-25 pide en modo URL",
               "Espera a que su página confirme el final",
               f"SPEC_RULES 38, 48-49; {E25} › Response Actions; the lesson server's pending",
               url_accept_configures_nothing_until_the_page),
        Answer("Un cliente 2025-11-25 recibe el −32042 de notes_sync",
               "Nada: con −32042 la llamada ya terminó y ese «no» se queda en el cliente",
               f"SPEC_RULES 44-47; {E25} › URL Elicitation Required Error; notebook 3, 3B",
               nothing_of_a_declined_32042_reaches_the_server),
        Answer("El navegador vuelve a la página de retorno",
               "Consume el state, comprueba el flujo y canjea él mismo el code",
               f"SPEC_RULES 54-55; {E25} › URL Mode Elicitation for OAuth Flows; RFC 6749 "
               "§4.1.2 and §10.12 (state against forged returns); code/urlflow/nube_copias.py",
               a_code_comes_back_with_the_state_and_is_exchanged_once),
    ],
    "04_seguridad.ipynb": [
        Answer("Un flujo necesita una clave de API",
               "Da la alternativa manual (instrucciones fuera de la conversación) o lo rechaza con "
               "claridad", "SPEC_RULES 18, 19, 32-33, 58",
               secrets_never_go_in_a_form_and_a_form_only_client_gets_instructions),
        Answer("El usuario acepta un formulario que aprueba una operación",
               "Volver a comprobar identidad, permisos, política y estado antes de actuar",
               f"SPEC_RULES 31, 52-53; {E25} › Security Considerations"),
        Answer("El servidor necesita llamar a la API de Notas Sync",
               "No: sería token passthrough; necesita su propio permiso del tercero",
               f"SPEC_RULES 54; {E25} › URL Mode Elicitation for OAuth Flows"),
        Answer("El diálogo de consentimiento muestra",
               "evil.example", "RFC 3986 userinfo; SPEC_RULES 65", userinfo_is_not_the_host),
        Answer("Alicia le reenvía su enlace",
               "Comprobar que quien abre es quien inició el flujo, antes de ir al proveedor",
               f"SPEC_RULES 67-69; {E25} › Phishing"),
    ],
    "05_sdk_oficial.ipynb": [
        Answer("Con el SDK mcp 2.x escribes un cliente",
               "Sí: con el callback, el SDK declara form y url, así que te pueden llegar las dos",
               "mcp 2.3.0, run in memory; SPEC_RULES 18", sdk_callback_declares_both_modes),
        Answer("Tu cliente usa Client del SDK 2.x sin mode=",
               "2026-07-28, y la repite el SDK él solo",
               "mcp 2.3.0, run in memory", sdk_default_is_2026),
        Answer("Una herramienta de MCPServer llama a await ctx.elicit_url",
               "Falla con NoBackChannelError en 2026-07-28",
               "mcp 2.3.0, run in memory; SPEC_RULES 75",
               sdk_elicit_url_has_no_back_channel_at_2026),
        Answer("En notes_delete del cuaderno 5",
               "Le llega un formulario que no declaró: hay que comprobar el modo formulario",
               f"SPEC_RULES 16, 18; {E25} › Capabilities; mcp 2.3.0 elicit_form sends without "
               "checking (SDK_FACTS)", a_url_only_client_declares_no_form_mode),
    ],
    "06_revision_2026.ipynb": [
        Answer("Sin initialize previo llega",
               "La atiende con el _meta de esa petición",
               "SPEC_RULES 73-74", meta_on_every_2026_request),
        Answer("Tu cliente 2026 repite una llamada",
               "El servidor empieza de cero: lo que recordaba de la llamada iba en él",
               "SPEC_RULES 79; the lesson server", retry_is_a_new_request_with_the_answers),
        Answer("En 2026-07-28, notes_sync necesita tu permiso",
               "Una: las dos van en el mismo inputRequests y el cliente reintenta una sola vez",
               "SPEC_RULES 75, 77, 79; notebook 6 §1; the lesson server",
               sync_asks_url_and_roots_in_one_round),
        Answer("Un cliente 2026 comparte Notas y Notas-privadas",
               "Solo en Notas",
               "SPEC_RULES 86; the lesson server's --root", server_limit_narrows_client_roots),
    ],
    "07_terminos_clave.ipynb": [
        Answer("Un cliente 2025-11-25 que no declaró la capacidad roots",
               "No toca ningún archivo y dice cómo arreglarlo: declarar roots en el cliente o "
               "arrancar con --root",
               "SPEC_RULES 1, 4, 5, 12; the lesson server (revisions.NO_ROOTS)",
               a_client_without_roots_gets_no_file_touched),
        Answer("El usuario pulsa «Cancelar»",
               "No borrar nada ni repetir la llamada ahora",
               "SPEC_RULES 48, 50 (cancel: ask again later); not asking in a loop is this "
               "course's rule", cancel_changes_nothing_and_is_asked_once),
        Answer("Tu cliente 2025-11-25 recibe notifications/elicitation/complete",
               "La ignora",
               f"SPEC_RULES 40-42; {E25} › Completion Notifications for URL Mode Elicitation"),
        Answer("Revisas un servidor que, cuando a una llamada de un cliente 2026-07-28",
               "Que en 2026-07-28 −32042 no existe: la URL va dentro de input_required",
               "SPEC_RULES 44, 91, 93; the schemas' error codes; revisions.RETIRED_32042",
               minus_32042_is_retired_at_2026),
        Answer("Para ahorrar un paso, tu servidor manda en modo URL",
               "Que no: un enlace con credenciales incorporadas está prohibido",
               f"SPEC_RULES 56-57; {E25} › Safe URL Handling"),
    ],
    "08_lecturas.ipynb": [
        Answer("Un cliente solo reintenta cuando recibe",
               "Que el servidor puede no enviarla, así que debe dejar reintentar también a mano",
               "SPEC_RULES 40, 43; SEP1036.md (shared notes): SEP text SHOULD, shipped 2025-11-25 "
               "MAY; A1 (#1819), answered by PR #1825 (REVIEW-PEDAGOGY B4)"),
        Answer("Un compañero escribe un servidor 2026-07-28",
               "Que en 2026-07-28 esa notificación no existe, y roots/list solo va en "
               "input_required",
               "SPEC_RULES 83-85; the schemas",
               roots_changed_in_2026_and_travel_inside_input_required),
        Answer("Tras leer la issue #1819 y la PR #2891",
               "Respondes «todavía no» sin abrir otro flujo",
               "SEP1036.md A2 (#2891) and A4 (servers #4285)"),
    ],
}
# quizzes a notebook draws before its closing one, in a section: quiz id -> (notebook, key)
SECTION_QUIZZES = {
    "01-previo": ("01_roots.ipynb", [
        Answer("Un servidor comparte la root",
               "Que está fuera: compara la ruta real carpeta a carpeta",
               "code/notes/roots.py is_within", containment_is_per_component),
        Answer("En la revisión 2026-07-28 el servidor no puede enviar",
               "Responde input_required pidiendo las roots, y el cliente repite la llamada con "
               "la lista", "SPEC_RULES 84; the 2026-07-28 schema",
               roots_travel_inside_input_required_at_2026),
        Answer("El servidor tenía abierta una nota de Trabajo/",
               "Debe fallar ya: al cambiar las roots, el servidor revoca en el acto lo que quedó "
               "fuera", "SPEC_RULES 11-12; exercise 4 rules; notebook 1 §3 (mcp_ui.naive)",
               a_late_revocation_lets_the_first_read_through),
    ]),
    "06-ataques": ("06_revision_2026.ipynb", [
        Answer("Un servidor guarda su requestState como base64",
               "Las notas que encontró, sus rutas y las roots",
               "SPEC_RULES 77; the lesson server with weak_sealers.EncodedOnly",
               an_encoded_state_shows_the_notes_found_and_the_roots),
        Answer("Tu sello añade al JSON su SHA-256",
               "Sí: cambia el JSON y calcula su SHA-256 otra vez",
               "SPEC_RULES 77; the lesson server with weak_sealers.UnkeyedHash",
               an_unkeyed_hash_is_recomputed_by_the_forger),
        Answer("Un sello firma con HMAC y la clave del servidor",
               "Usarlo en otra llamada, como «borrar Lista de la compra», y que el servidor siga "
               "con la memoria de la primera",
               "SPEC_RULES 78; the lesson server with weak_sealers.KeyedButUnbound",
               an_unbound_state_works_in_another_call),
        Answer("Tu open apunta el nonce de un token como usado nada más empezar",
               "Se rechaza, y además deja inservible el token de la usuaria",
               "SPEC_RULES 78 (one-time use enforced by the server); the lesson server with "
               "weak_sealers.SpendsFirst", a_forged_try_spends_the_token_when_open_notes_it_first),
        Answer("Un atacante guardó ayer un requestState",
               "Una caducidad dentro de lo firmado, comparada al abrir con el reloj",
               "SPEC_RULES 78; the lesson server with state_ttl=1",
               an_expiry_inside_the_seal_stops_a_late_token),
    ]),
}
PROOFS = sorted({a.proof.__name__: a.proof
                 for keyed in [*KEY.values(), *(k for _, k in SECTION_QUIZZES.values())]
                 for a in keyed if a.proof}.items())


def entries():
    return [(name, answer) for name in NOTEBOOKS for answer in KEY[name]]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_question_has_a_key_entry_and_every_entry_a_question(name):
    asked = [q for q, *_ in quiz_questions(name)]
    keyed = [a.question for a in KEY[name]]
    matches = {k: [q for q in asked if q.startswith(k)] for k in keyed}
    assert all(len(found) == 1 for found in matches.values()), matches
    assert len(asked) == len(keyed)


@pytest.mark.parametrize("name,answer", entries(), ids=lambda v: v if isinstance(v, str)
                         else v.question[:40])
def test_the_notebook_marks_the_answer_of_the_key(name, answer):
    question, options, right, _ = next(q for q in quiz_questions(name)
                                       if q[0].startswith(answer.question))
    assert answer.right in options, f"{question}: the right answer is not an option"
    assert options[right] == answer.right, f"{question}: marks {options[right]!r}"
    assert answer.source


@pytest.mark.parametrize("quiz_id", sorted(SECTION_QUIZZES))
def test_every_question_of_a_section_quiz_has_a_key_entry_and_is_marked_as_the_key(quiz_id):
    name, key = SECTION_QUIZZES[quiz_id]
    assert f'ui.quiz("{quiz_id}")' in "".join(c.source for c in read(name).cells)
    asked = quiz_questions(name, quiz_id)
    assert len(asked) == len(key)
    for answer in key:
        (question,) = [q for q in asked if q[0].startswith(answer.question)]
        _, options, right, _ = question
        assert options[right] == answer.right, f"{question[0]}: marks {options[right]!r}"
        assert answer.source


@pytest.mark.timeout(120)
@pytest.mark.parametrize("proof", [p for _, p in PROOFS], ids=[n for n, _ in PROOFS])
def test_the_source_of_the_answer_holds(proof, monkeypatch):
    if "monkeypatch" in proof.__code__.co_varnames[:proof.__code__.co_argcount]:
        proof(monkeypatch)
    else:
        proof()


# -- the right option is not given away by its length ------------------------------------------
QUIZ_IDS = sorted(path.stem for path in (LESSONS / "mcp_ui" / "quizzes").glob("*.json"))


def right_option_is_strictly_longest(question) -> bool:
    lengths = [len(option.text) for option in question.options]
    return all(lengths[question.right] > length
               for index, length in enumerate(lengths) if index != question.right)


def test_an_option_counts_as_longest_only_when_it_is_strictly_longer_than_every_other():
    recap = ui.recap
    def asked(*texts):
        return recap.Question("¿?", tuple(recap.Option(t, i == 0, "") for i, t in enumerate(texts)))
    assert right_option_is_strictly_longest(asked("la correcta, más larga", "corta", "otra"))
    assert not right_option_is_strictly_longest(asked("igual", "igual", "x"))
    assert not right_option_is_strictly_longest(asked("corta", "la incorrecta, más larga"))


@pytest.mark.parametrize("quiz_id", QUIZ_IDS)
def test_the_right_option_is_the_longest_in_at_most_half_of_a_quizs_questions(quiz_id):
    questions = ui.recap.load_quiz(quiz_id).questions
    longest = [q.question[:50] for q in questions if right_option_is_strictly_longest(q)]
    assert len(longest) <= len(questions) / 2, f"{quiz_id}: {len(longest)} of {len(questions)}: " \
        f"{longest}"


def test_the_right_option_is_the_longest_in_at_most_a_third_of_all_questions():
    counts = {quiz_id: [right_option_is_strictly_longest(q)
                        for q in ui.recap.load_quiz(quiz_id).questions] for quiz_id in QUIZ_IDS}
    longest, total = sum(map(sum, counts.values())), sum(map(len, counts.values()))
    where = {quiz_id: sum(marks) for quiz_id, marks in counts.items() if any(marks)}
    assert longest <= total / 3, f"{longest} of {total} questions: {where}"
