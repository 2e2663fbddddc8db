"""The notebooks' client UI (lessons/mcp_ui.py), without a browser: widgets are plain objects
here, a click is `button.click()`, and the event loop is asyncio's."""

from __future__ import annotations

import asyncio
import os

import ipywidgets as w
import pytest
from notebook_helpers import import_mcp_ui

ui = import_mcp_ui()

TPS = {"action": "accept", "content": {"note_id": "note-7", "confirm": True}}
FULL_SCHEMA = {
    "type": "object",
    "required": ["nombre", "edad", "plan"],
    "properties": {
        "nombre": {"type": "string", "title": "Nombre", "minLength": 2, "maxLength": 20},
        "correo": {"type": "string", "format": "email", "title": "Correo"},
        "desde": {"type": "string", "format": "date", "title": "Desde"},
        "edad": {"type": "integer", "minimum": 18, "maximum": 99, "title": "Edad"},
        "nota": {"type": "number", "minimum": 0, "maximum": 10, "default": 5},
        "avisos": {"type": "boolean", "title": "Avisarme", "default": True},
        "plan": {"type": "string", "title": "Plan", "oneOf": [
            {"const": "s", "title": "Pequeño"}, {"const": "l", "title": "Grande"}]},
        "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Rojo", "Verde"]},
        "dias": {"type": "array", "title": "Días", "minItems": 1,
                 "items": {"anyOf": [{"const": "lu", "title": "Lunes"},
                                     {"const": "ma", "title": "Martes"}]}},
    },
}


def form_params(schema=FULL_SCHEMA, message="Rellena esto, por favor."):
    return {"mode": "form", "message": message, "requestedSchema": schema}


def in_loop(coro_fn):
    """Run `coro_fn()` on a fresh event loop (widgets need a running loop for futures)."""
    return asyncio.run(coro_fn())


def texts(widget) -> str:
    """All the visible text of a widget tree (descriptions, HTML, option labels)."""
    parts = []
    stack = [widget]
    while stack:
        node = stack.pop()
        for attr in ("description", "value", "placeholder"):
            value = getattr(node, attr, None)
            if isinstance(value, str):
                parts.append(value)
        if hasattr(node, "options"):
            parts += [str(o[0] if isinstance(o, tuple) else o) for o in node.options]
        stack += list(getattr(node, "children", ()))
    return "\n".join(parts)


# -- the form ---------------------------------------------------------------------------------
def test_form_draws_one_field_per_property_with_the_right_widget():
    async def go():
        form = ui.ElicitationForm(form_params())
        kinds = {f.name: type(f.input).__name__ for f in form.fields}
        assert kinds == {"nombre": "Text", "correo": "Text", "desde": "DatePicker",
                         "edad": "Text", "nota": "Text", "avisos": "Checkbox",
                         "plan": "RadioButtons", "color": "RadioButtons", "dias": "VBox"}
        return form
    in_loop(go)


def test_form_shows_titles_option_labels_required_marks_and_defaults():
    async def go():
        form = ui.ElicitationForm(form_params())
        shown = texts(form.widget)
        for label in ("Nombre", "Edad", "Pequeño", "Grande", "Rojo", "Verde", "Lunes",
                      "Avisarme", "Rellena esto, por favor.", "* obligatorio"):
            assert label in shown, label
        by_name = {f.name: f for f in form.fields}
        assert "obligatorio" in by_name["plan"].widget.children[0].value  # required mark
        assert "obligatorio" not in by_name["color"].widget.children[0].value
        assert by_name["avisos"].input.value is True and by_name["nota"].input.value == "5"
        assert "entre 18 y 99" in texts(by_name["edad"].widget)
    in_loop(go)


def test_a_long_single_select_becomes_a_dropdown():
    async def go():
        options = [{"const": f"n{i}", "title": f"Nota {i}"} for i in range(9)]
        form = ui.ElicitationForm(form_params({"type": "object", "properties": {
            "n": {"type": "string", "oneOf": options}}}))
        assert isinstance(form.fields[0].input, w.Dropdown)
        assert form.fields[0].input.value is None  # nothing chosen for the user
    in_loop(go)


def test_accept_sends_nothing_while_a_required_field_is_empty():
    async def go():
        form = ui.ElicitationForm(form_params())
        form.buttons["accept"].click()
        assert not form.answered
        assert "Nombre" in form.status.value and "obligatorio" in form.status.value
    in_loop(go)


@pytest.mark.parametrize("field,value,problem", [
    ("edad", "17", "menor que 18"),
    ("edad", "20.5", "entero"),
    ("nombre", "x", "longitud"),
    ("correo", "sin-arroba", "email"),
])
def test_accept_refuses_values_the_schema_does_not_allow(field, value, problem):
    async def go():
        form = ui.ElicitationForm(form_params())
        form.fill({"nombre": "Ana", "edad": "30", "plan": "s", "dias": ["lu"], field: value})
        form.buttons["accept"].click()
        assert not form.answered
        assert problem in form.status.value
    in_loop(go)


def test_accept_sends_typed_content_and_leaves_empty_optional_fields_out():
    async def go():
        form = ui.ElicitationForm(form_params())
        form.fill({"nombre": "Ana", "edad": "30", "nota": "7.5", "plan": "l",
                   "dias": ["lu", "ma"], "desde": "2025-04-10"})
        form.buttons["accept"].click()
        return await form.future
    result = in_loop(go)
    assert result == {"action": "accept", "content": {
        "nombre": "Ana", "desde": "2025-04-10", "edad": 30, "nota": 7.5, "avisos": True,
        "plan": "l", "dias": ["lu", "ma"]}}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_send_no_content_and_freeze_the_form(action):
    async def go():
        form = ui.ElicitationForm(form_params())
        form.buttons[action].click()
        result = await form.future
        assert all(b.disabled for b in form.buttons.values())
        assert all(f.input.disabled for f in form.fields if hasattr(f.input, "disabled"))
        return result
    assert in_loop(go) == {"action": action}


def test_legacy_enum_names_are_used_as_labels():
    assert ui.options_of({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}) \
        == [("A", "a"), ("B", "b")]


# -- the URL consent dialog -------------------------------------------------------------------
def consent(url):
    async def go():
        return ui.ConsentDialog({"mode": "url", "message": "Conecta", "url": url,
                                 "elicitationId": "e1"})
    return in_loop(go)


def test_consent_shows_the_full_url_with_its_host_marked_and_nothing_clickable():
    dialog = consent("https://notas-sync.example.evil.example/connect?elicitation=e1")
    page = dialog.html.value
    assert "<mark" in page and "evil.example</b></mark>" in page
    assert "/connect?elicitation=e1" in page
    assert "<a " not in page and "href" not in page


@pytest.mark.parametrize("url,warning", [
    ("https://xn--pypal-4ve.com/login", "punycode"),
    ("http://notas-sync.example/connect", "HTTP sin cifrar"),
    ("https://usuario@evil.example/connect", "credenciales"),
    ("https://раураl.com/login", "no ASCII"),
])
def test_consent_warns_about_suspicious_urls(url, warning):
    assert any(warning in text for text in consent(url).warnings)


def test_consent_does_not_warn_about_plain_http_on_loopback():
    assert consent("http://127.0.0.1:8123/connect?elicitation=e1").warnings == []


def test_the_page_link_appears_only_after_consent():
    async def go():
        user = ui.WidgetUser(ui.CallPanel(visible=False), asyncio.get_running_loop())
        url = "http://127.0.0.1:9/connect?elicitation=e1"
        task = asyncio.ensure_future(user.ask({"mode": "url", "message": "m", "url": url,
                                               "elicitationId": "e1"}))
        await asyncio.sleep(0)
        assert "href" not in texts(user.panel.box)
        dialog = user._open[-1]
        dialog.buttons["accept"].click()
        assert await task == {"action": "accept"}
        assert "href" not in texts(user.panel.box)
        await user.show_link(url)
        assert f'href="{url}"' in texts(user.panel.box)
    in_loop(go)


# -- the user inside a real call ------------------------------------------------------------
@pytest.fixture
def lab(monkeypatch):
    monkeypatch.delenv("LESSON_USER", raising=False)
    monkeypatch.delenv("LESSON_KEEP_LAB", raising=False)
    notes = ui.NotesLab(quiet=True)
    yield notes
    notes.close()


def test_a_call_stays_paused_until_the_form_is_answered(lab, capsys):
    async def go():
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call("notes_delete", {"title": "TPS report"},
                                               scripted=[TPS]))  # ignored: nobody scripted
        while not conn.user._open:
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        assert not call.done(), "the call finished without an answer"
        assert "Notas/tps-2024.md" in lab.snapshot()
        form = conn.user._open[-1]
        form.fill({"note_id": "note-14", "confirm": True})
        form.buttons["accept"].click()
        result = await call
        return result, lab.snapshot()
    result, after = in_loop(go)
    assert not result.is_error and result.data["deleted"]["id"] == "note-14"
    assert "Notas/tps-2025.md" not in after and "Notas/tps-2024.md" in after


def test_the_scripted_user_plays_its_answers_through_the_form(lab, monkeypatch):
    monkeypatch.setenv("LESSON_USER", "scripted")

    async def go():
        conn = await lab.connect(quiet=True)
        result = await conn.call("notes_delete", {"title": "TPS report"}, scripted=[TPS])
        form = conn.user.history[-1]
        status = [d for d in conn.user.panel.box.children if isinstance(d, w.VBox)][0]
        return result, form, texts(status)
    result, (params, answer), shown = in_loop(go)
    assert result.data["deleted"]["id"] == "note-7"
    assert answer == TPS and params["requestedSchema"]["required"] == ["note_id", "confirm"]
    assert "Usuario simulado (LESSON_USER=scripted)" in shown
    assert "Notas/tps-2024.md" not in lab.snapshot()


def test_scripted_answers_are_ignored_without_lesson_user_scripted(monkeypatch):
    monkeypatch.setenv("LESSON_USER", "alguien")
    assert not ui.scripted_mode()
    monkeypatch.setenv("LESSON_USER", "scripted")
    assert ui.scripted_mode()


def test_a_form_left_open_when_the_call_ends_is_closed_with_cancel():
    async def go():
        user = ui.WidgetUser(ui.CallPanel(visible=False), asyncio.get_running_loop())
        task = asyncio.ensure_future(user.ask({"mode": "form", "message": "¿Cuál?",
                                               "requestedSchema": {"type": "object",
                                                                   "properties": {}}}))
        await asyncio.sleep(0)
        user.end("La llamada terminó")
        result = await task
        return result, user
    result, user = in_loop(go)
    assert result == {"action": "cancel"}
    assert "La llamada terminó" in texts(user.panel.box)


def test_interrupting_the_cell_sends_cancel_and_deletes_nothing(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call("notes_delete", {"title": "TPS report"},
                                               echo=False))
        while not conn.user._open:
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.sleep(0.5)
        return conn.user.history
    history = in_loop(go)
    assert history[-1][1] == {"action": "cancel"}
    assert sum(p.startswith("Notas/tps-") for p in lab.snapshot()) == 3


def test_url_flow_completes_with_the_scripted_user_and_browser(lab, monkeypatch, capsys):
    monkeypatch.setenv("LESSON_USER", "scripted")

    async def go():
        conn = await lab.connect(quiet=True)
        await conn.call("notes_setup", scripted=[{"action": "accept"}])
        lab.check_url_flow(conn)
        return conn
    conn = in_loop(go)
    assert "✓ Consentimiento → página" in capsys.readouterr().out
    assert conn.page_visits() == 1
    assert any(m.get("method") == "notifications/elicitation/complete" for _, m in conn.frames)


def test_close_stops_the_servers_and_removes_the_practice_folder(monkeypatch):
    monkeypatch.delenv("LESSON_KEEP_LAB", raising=False)
    notes = ui.NotesLab(quiet=True)

    async def go():
        return await notes.connect(quiet=True)
    conn = in_loop(go)
    notes.close()
    assert conn.process.poll() is not None
    assert not notes.base.exists()


def test_check_fails_the_cell_only_in_unattended_runs(monkeypatch, capsys):
    monkeypatch.delenv("LESSON_USER", raising=False)
    ui.check(False, "bien", "mal")
    assert "✗ mal" in capsys.readouterr().out
    monkeypatch.setenv("LESSON_USER", "scripted")
    with pytest.raises(AssertionError, match="mal"):
        ui.check(False, "bien", "mal")


# -- transcripts ------------------------------------------------------------------------------
@pytest.mark.parametrize("direction,msg,expected", [
    ("→", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
           "params": {"name": "notes_delete", "arguments": {"title": "TPS report"}}},
     'C→S #3 tools/call notes_delete {"title":"TPS report"}'),
    ("←", {"jsonrpc": "2.0", "id": 2, "method": "elicitation/create",
           "params": form_params({"type": "object", "required": ["a"],
                                  "properties": {"a": {"type": "boolean"}, "b": {
                                      "type": "string"}}}, "¿Seguro?")},
     "S→C #2 elicitation/create [form] «¿Seguro?» campos: a*, b"),
    ("→", {"jsonrpc": "2.0", "id": 2, "result": {"action": "decline"}}, "C→S #2 ⤷ decline"),
    ("←", {"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
           "params": {"elicitationId": "abcdefghijklmnop"}},
     "S→C notifications/elicitation/complete elicitationId=abcdefghij…"),
    ("←", {"jsonrpc": "2.0", "id": 4, "result": {
        "resultType": "input_required", "requestState": "v1.abcdefghijklmnopq",
        "inputRequests": {"roots": {"method": "roots/list"}}}},
     "S→C #4 ⤷ input_required {roots: roots/list} requestState=v1.abcdefghi…"),
    ("←", {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "Invalid"}},
     "S→C #5 ⤷ error -32602: Invalid"),
])
def test_each_frame_is_summarized_on_one_line(direction, msg, expected):
    assert ui.summarize_frame(direction, msg) == expected


def test_the_sdk_elicitation_callback_returns_the_widget_answer(monkeypatch):
    import mcp.types as types

    monkeypatch.setenv("LESSON_USER", "scripted")
    params = types.ElicitRequestFormParams(
        message="¿Cuál?", requested_schema={"type": "object", "required": ["n"], "properties": {
            "n": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}}})

    async def go():
        user = ui.WidgetUser(ui.CallPanel(visible=False))
        user.script = [{"action": "accept", "content": {"n": "a"}}]
        return await user.sdk_elicitation(None, params)
    result = in_loop(go)
    assert isinstance(result, types.ElicitResult)
    assert (result.action, result.content) == ("accept", {"n": "a"})


def test_importing_the_module_puts_code_on_the_path_and_prepares_soluciones():
    assert os.path.isdir(ui.SOLUTIONS) and ui.SOLUTIONS.name == "soluciones"
    import roots

    assert os.path.dirname(roots.__file__) == str(ui.CODE)


def test_the_sdk_client_waits_for_the_widget_click(lab):
    from mcp import Client

    async def go():
        user = lab.user()
        async with Client(lab.stdio_server(), mode="legacy",
                          elicitation_callback=user.sdk_elicitation,
                          list_roots_callback=lab.sdk_roots(["Notas"])) as sdk:
            call = asyncio.ensure_future(sdk.call_tool("notes_delete", {"title": "TPS report"}))
            while not user._open:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            assert not call.done()
            form = user._open[-1]
            form.fill({"note_id": "note-3", "confirm": True})
            form.buttons["accept"].click()
            return await call
    result = in_loop(go)
    assert result.content[0].text.startswith("Borrada la nota note-3")
    assert "Notas/tps-2023.md" not in lab.snapshot()


def test_at_2026_07_28_the_url_flow_waits_for_i_am_done_then_retries(lab):
    async def go():
        conn = await lab.connect("2026-07-28", quiet=True)
        call = asyncio.ensure_future(conn.call("notes_setup", echo=False))
        while not conn.user._open:
            await asyncio.sleep(0.05)
        conn.user._open[-1].buttons["accept"].click()
        while not any(isinstance(b, w.Button) and b.description == "Ya terminé en la página"
                      for b in conn.user.panel.box.children):
            await asyncio.sleep(0.05)
        retries_before = sum(m.get("method") == "tools/call" for _, m in conn.frames)
        await asyncio.to_thread(ui.submit_page, conn.last_url())
        await asyncio.sleep(0.3)
        assert not call.done(), "the client retried before the user said they were done"
        assert sum(m.get("method") == "tools/call" for _, m in conn.frames) == retries_before
        done = [b for b in conn.user.panel.box.children if isinstance(b, w.Button)][-1]
        done.click()
        return await call
    result = in_loop(go)
    assert result.data == {"status": "configured"}


CRASHING = '''from extension import Extension

extension = Extension()


@extension.tool("notes_archive", description="x",
                input_schema={"type": "object", "properties": {"title": {"type": "string"}}})
def notes_archive(ctx, title):
    print("buscando", title)
    return 1 / 0
'''


def test_a_crash_in_the_solution_is_shown_under_the_call_with_its_prints(lab, capsys):
    solution = lab.base / "mi_solucion.py"
    solution.write_text(CRASHING, encoding="utf-8")

    async def go():
        conn = await lab.connect(solution=str(solution), quiet=True)
        await conn.call("notes_archive", {"title": "TPS report"})
    in_loop(go)
    out = capsys.readouterr().out
    assert "« ✗ Error interno en la herramienta notes_archive." in out
    assert "  │ buscando TPS report" in out
    assert "⚠ servidor: tool notes_archive crashed: ZeroDivisionError" in out


def test_a_solution_that_does_not_load_is_reported_even_when_quiet(lab, capsys):
    solution = lab.base / "roto.py"
    solution.write_text("from extension import Extension\nextension = Extension(\n", "utf-8")

    async def go():
        await lab.connect(solution=str(solution), quiet=True)
    in_loop(go)
    assert "⚠ No se cargó roto.py: SyntaxError en la línea 2" in capsys.readouterr().out
