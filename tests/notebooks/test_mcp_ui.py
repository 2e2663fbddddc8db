"""The notebooks' client UI (lessons/mcp_ui/), without a browser: widgets are plain objects
here, a click is `button.click()`, and the event loop is asyncio's. The lab's server runs in
this process (the same core as `main.py serve`), so every test drives the real wire."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings

import ipywidgets as w
import pytest
from notebook_helpers import REPO, import_mcp_ui

from cli.demo import LESSON_NOTES
from client import simulated_user
from shared.protocol import REVISIONS

ui = import_mcp_ui()
SHIMS = REPO / "editions" / "lite" / "shims"  # JupyterLite's stand-ins for compiled packages

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
    """All the visible text of a widget tree, in order (descriptions, HTML, option labels)."""
    parts = []
    for attr in ("description", "value", "placeholder"):
        value = getattr(widget, attr, None)
        if isinstance(value, str):
            parts.append(value)
    if hasattr(widget, "options"):
        parts += [str(o[0] if isinstance(o, tuple) else o) for o in widget.options]
    parts += [texts(child) for child in getattr(widget, "children", ())]
    return "\n".join(parts)


async def until(condition, patience=240.0):
    """Let the loop run until `condition()` holds: the event, however slow the machine;
    `patience` only turns one that never comes into a failure."""
    deadline = time.monotonic() + patience
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.01)


def sent(conn, method):
    return [m for d, m in conn.frames if d == "→" and m.get("method") == method]


def received(conn, method):
    return [m for d, m in conn.frames if d == "←" and m.get("method") == method]


# -- the form ---------------------------------------------------------------------------------
def test_form_draws_one_field_per_property_with_the_right_widget():
    async def go():
        form = ui.ElicitationForm(form_params())
        kinds = {f.name: type(f.input).__name__ for f in form.fields}
        assert kinds == {"nombre": "Text", "correo": "Text", "desde": "DatePicker",
                         "edad": "Text", "nota": "Text", "avisos": "Checkbox",
                         "plan": "RadioButtons", "color": "RadioButtons", "dias": "VBox"}
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


def test_a_text_field_sends_its_value_when_it_loses_focus_not_at_every_keystroke():
    """A click is not held behind a widget's pending update (see mcp_ui/forms.py)."""
    async def go():
        form = ui.ElicitationForm(form_params())
        text_fields = [f.input for f in form.fields if isinstance(f.input, w.Text)]
        assert text_fields and not any(t.continuous_update for t in text_fields)
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


def test_a_refused_form_names_every_missing_field_and_what_an_unticked_box_sends():
    async def go():
        schema = {"type": "object", "required": ["note_id", "plan", "confirm"], "properties": {
            "note_id": {"type": "string", "title": "Nota", "enum": ["a", "b"]},
            "plan": {"type": "string", "title": "Plan", "enum": ["s", "l"]},
            "confirm": {"type": "boolean", "title": "Sí, bórrala"}}}
        form = ui.ElicitationForm(form_params(schema))
        form.buttons["accept"].click()
        return form
    form = in_loop(go)
    assert not form.answered
    assert "faltan «Nota» y «Plan» (obligatorios)" in form.status.value
    assert "«Sí, bórrala» sin marcar se enviará como «no»" in form.status.value


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


def test_check_form_gives_the_servers_verdict(capsys):
    assert ui.check_form("¿Entorno?", {"type": "object", "properties": {
        "entorno": {"type": "string", "enum": ["a", "b"]}}})
    assert not ui.check_form("Dame acceso.", {"type": "object", "properties": {
        "api_key": {"type": "string"}}})
    out = capsys.readouterr().out
    assert "✓ El servidor lo enviaría" in out and "✗ El servidor se niega a enviarlo" in out


# -- the URL consent dialog -------------------------------------------------------------------
def consent(url, **options):
    async def go():
        return ui.ConsentDialog({"mode": "url", "message": "Conecta", "url": url,
                                 "elicitationId": "e1"}, **options)
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


def test_consent_says_where_the_page_will_open():
    assert "verás un enlace" in consent("http://127.0.0.1:1/connect").html.value
    inline = consent("http://notas-sync.localhost/connect", opens="inline").html.value
    assert "simulación de esa página" in inline


def test_the_page_link_appears_only_after_consent():
    async def go():
        user = ui.WidgetUser(ui.CallPanel(visible=False))
        url = "http://127.0.0.1:9/connect?elicitation=e1"
        task = asyncio.ensure_future(user.elicit({"mode": "url", "message": "m", "url": url,
                                                  "elicitationId": "e1"}))
        await asyncio.sleep(0)
        assert "href" not in texts(user.panel.box)
        user._open[-1].buttons["accept"].click()
        assert await task == {"action": "accept"}
        assert "href" not in texts(user.panel.box)
        await user.open_url(url)
        assert f'href="{url}"' in texts(user.panel.box)
    in_loop(go)


# -- the lab, in this process -----------------------------------------------------------------
@pytest.fixture
def lab(monkeypatch):
    monkeypatch.delenv("LESSON_USER", raising=False)
    monkeypatch.delenv("LESSON_KEEP_LAB", raising=False)
    monkeypatch.delenv("LESSON_KERNEL", raising=False)
    notes = ui.NotesLab(quiet=True)
    yield notes
    notes.close()


@pytest.fixture
def lite_lab(monkeypatch):
    """A lab that behaves as in JupyterLite (the setup page inline), without a shell."""
    monkeypatch.delenv("LESSON_USER", raising=False)
    monkeypatch.delenv("LESSON_KEEP_LAB", raising=False)
    notes = ui.NotesLab(quiet=True, kernel=ui.env.JUPYTERLITE)
    yield notes
    notes.close()


@pytest.fixture
def no_thread_process_or_socket(monkeypatch):
    """What Pyodide lacks, made to fail loudly here."""
    def refuse(*args, **kwargs):
        raise AssertionError("JupyterLite cannot do this")
    monkeypatch.setattr(threading.Thread, "start", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    for use in ("bind", "listen", "connect", "connect_ex"):  # the loop's own pipe may stay
        monkeypatch.setattr(socket.socket, use, refuse)


def test_the_lab_starts_with_the_lessons_notes(lab):
    assert sorted(lab.snapshot().values()) == sorted(n[2] for n in LESSON_NOTES)


def test_in_jupyterlab_the_server_runs_in_the_kernel_and_the_page_is_a_real_local_page(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        await conn.call("notes_setup", simulate=True, scripted=[{"action": "decline"}],
                        echo=False)
        return conn
    conn = in_loop(go)
    assert conn.server.config.page_transport == "http" and conn.server.config.demo_url_guard
    assert conn.last_url().startswith("http://127.0.0.1:")
    assert conn.page_visits() == 0


def test_a_call_stays_paused_until_the_form_is_answered(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call("notes_delete", {"title": "TPS report"},
                                               scripted=[TPS]))  # ignored: nobody scripted
        await until(lambda: conn.user._open)
        await asyncio.sleep(0.5)
        assert not call.done(), "the call finished without an answer"
        assert "Notas/tps-2024.md" in lab.snapshot()
        form = conn.user._open[-1]
        form.fill({"note_id": "note-14", "confirm": True})
        form.buttons["accept"].click()
        return await call
    result = in_loop(go)
    assert not result.is_error and result.data["deleted"]["id"] == "note-14"
    assert "Notas/tps-2025.md" not in lab.snapshot() and "Notas/tps-2024.md" in lab.snapshot()


def test_the_scripted_user_plays_its_answers_through_the_form(lab, monkeypatch):
    monkeypatch.setenv("LESSON_USER", "scripted")

    async def go():
        conn = await lab.connect(quiet=True)
        result = await conn.call("notes_delete", {"title": "TPS report"}, scripted=[TPS])
        status = [d for d in conn.user.panel.box.children if isinstance(d, w.VBox)][0]
        return result, conn.user.history[-1], texts(status)
    result, (params, answer), shown = in_loop(go)
    assert result.data["deleted"]["id"] == "note-7"
    assert answer == TPS and params["requestedSchema"]["required"] == ["note_id", "confirm"]
    assert "El usuario simulado (LESSON_USER=scripted) envió <b>Aceptar</b>" in shown
    assert "Enviaste" not in shown  # the learner sent nothing
    assert "Notas/tps-2024.md" not in lab.snapshot()


def test_a_cells_simulated_user_is_not_said_to_be_lesson_user_scripted(lab, monkeypatch):
    monkeypatch.delenv("LESSON_USER", raising=False)

    async def go():
        conn = await lab.connect(quiet=True)
        await conn.call("notes_delete", {"title": "TPS report"}, scripted=[TPS], simulate=True)
        return texts(conn.last.panel.box)
    shown = in_loop(go)
    assert "El usuario simulado envió <b>Aceptar</b>" in shown
    assert "LESSON_USER" not in shown and "Enviaste" not in shown


def test_scripted_answers_the_form_refuses_are_sent_as_cancel(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True, echo=False,
                        scripted=[{"action": "accept", "content": {"note_id": "note-99",
                                                                   "confirm": True}}])
        return conn
    conn = in_loop(go)
    assert conn.last.questions[-1][1] == {"action": "cancel"}
    assert [m["result"] for d, m in conn.frames[conn.last.frames[0]:] if d == "→"
            and "action" in m.get("result", {})] == [{"action": "cancel"}]
    assert sum(p.startswith("Notas/tps-") for p in lab.snapshot()) == 3


def test_a_raw_answer_skips_the_form_and_the_server_still_refuses_it(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        return await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                               echo=False, scripted=[ui.Raw({"action": "accept", "content": {
                                   "note_id": "note-99", "confirm": True}})])
    result = in_loop(go)
    assert result.is_error and "no es una de las opciones" in result.text
    assert sum(p.startswith("Notas/tps-") for p in lab.snapshot()) == 3


def test_scripted_answers_are_ignored_without_lesson_user_scripted(monkeypatch):
    monkeypatch.setenv("LESSON_USER", "alguien")
    assert not ui.scripted_mode()
    monkeypatch.setenv("LESSON_USER", "scripted")
    assert ui.scripted_mode()


def test_a_form_left_open_when_the_call_ends_is_closed_with_cancel():
    async def go():
        user = ui.WidgetUser(ui.CallPanel(visible=False))
        task = asyncio.ensure_future(user.elicit({"mode": "form", "message": "¿Cuál?",
                                                  "requestedSchema": {"type": "object",
                                                                      "properties": {}}}))
        await asyncio.sleep(0)
        user.end("La llamada terminó")
        return await task, user
    result, user = in_loop(go)
    assert result == {"action": "cancel"}
    assert "La llamada terminó" in texts(user.panel.box)


def test_stopping_the_cell_cancels_the_call_on_the_wire_and_closes_the_form(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call("notes_delete", {"title": "TPS report"}))
        await until(lambda: conn.user._open)
        form = conn.user._open[-1]
        question = received(conn, "elicitation/create")[-1]["id"]
        call.cancel()
        with pytest.raises(asyncio.CancelledError) as stopped:
            await call
        await until(lambda: received(conn, "notifications/cancelled"))
        await asyncio.sleep(0.05)
        return conn, form, question, stopped.value
    conn, form, question, stopped = in_loop(go)
    assert str(stopped).startswith("⏹ Detuviste la celda: el cliente canceló la llamada")
    call_id = sent(conn, "tools/call")[-1]["id"]
    assert [m["params"]["requestId"] for m in sent(conn, "notifications/cancelled")] == [call_id]
    assert [m["params"]["requestId"] for m in received(conn, "notifications/cancelled")] \
        == [question]
    assert form.answered and all(b.disabled for b in form.buttons.values())
    shown = texts(conn.last.panel.box)
    assert "Detuviste la celda" in shown and "notifications/cancelled" in shown
    assert "⚠ servidor: el cliente canceló la llamada" in shown  # its own account, in Spanish
    assert "cancelled by the client" not in shown
    assert "S→C notifications/cancelled" in "\n".join(conn.transcript_lines(last_call=True))
    assert not [m for d, m in conn.frames if d == "→" and m.get("id") == question
                and "method" not in m]  # a withdrawn question gets no answer
    assert sum(p.startswith("Notas/tps-") for p in lab.snapshot()) == 3


def test_after_stopping_a_call_with_its_form_open_the_check_says_so_not_that_no_form_came(
        lab, capsys):
    async def go():
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call("notes_delete", {"title": "TPS report"},
                                               echo=False))
        await until(lambda: conn.user._open)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        return conn
    conn = in_loop(go)
    capsys.readouterr()
    lab.check_chosen_note_deleted(conn)
    out = capsys.readouterr().out
    assert out.startswith("✓ Detuviste la celda con el formulario abierto: el cliente canceló "
                          "la llamada (notifications/cancelled)")
    assert "no se borró nada" in out and "no mostró ningún formulario" not in out


def test_ipython_shows_a_stopped_cell_as_its_one_spanish_line(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns["ui"] = ui
    result = shell.run_cell("raise ui.stops.CellStopped(ui.lab_client.STOPPED_CELL)")
    out = capsys.readouterr().out
    assert isinstance(result.error_in_exec, asyncio.CancelledError)
    assert out.strip() == ui.lab_client.STOPPED_CELL
    assert "Traceback" not in out and "lab_client.py" not in out


def test_a_form_the_server_withdraws_closes_with_a_note(lab, monkeypatch):
    drawn = []  # every form the user is shown (withdrawn 0.3 s later, however slow the test)
    form_class = ui.users.ElicitationForm
    monkeypatch.setattr(ui.users, "ElicitationForm",
                        lambda *args, **kwargs: drawn.append(form_class(*args, **kwargs))
                        or drawn[-1])

    async def go():
        conn = await lab.connect(quiet=True, elicit_timeout=0.3)
        result = await conn.call("notes_delete", {"title": "TPS report"}, echo=False)
        return result, drawn[-1], conn
    result, form, conn = in_loop(go)
    assert result.text == "Nadie respondió a tiempo; no hice nada."
    assert form.answered and "El servidor retiró esta pregunta" in form.status.value
    assert "Nadie respondió a tiempo." in form.status.value
    assert not [m for d, m in conn.frames if d == "→" and "result" in m
                and "action" in m["result"]]  # nothing was answered for the withdrawn form
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
    assert received(conn, "notifications/elicitation/complete")


def test_declining_in_the_browser_configures_nothing(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        return await conn.call("notes_setup", simulate=True, browser="deny", echo=False,
                               scripted=[{"action": "accept"}])
    result = in_loop(go)
    assert result.data == {"status": "not_configured", "reason": "denied"}


def test_close_stops_the_servers_and_removes_the_practice_folder(monkeypatch):
    monkeypatch.delenv("LESSON_KEEP_LAB", raising=False)
    monkeypatch.delenv("LESSON_KERNEL", raising=False)
    notes = ui.NotesLab(quiet=True)

    async def go():
        conn = await notes.connect(quiet=True)
        await conn.call("notes_setup", simulate=True, scripted=[{"action": "decline"}],
                        echo=False)
        return conn
    conn = in_loop(go)
    url = conn.last_url()
    assert simulated_user.http_fetch(url).get("status") == 410  # the page answers while it runs
    # (410: a declined consent retires its link)
    notes.close()
    assert "error" in simulated_user.http_fetch(url)  # and no longer listens
    assert conn.server not in ui.pages.PAGES.servers
    assert not notes.base.exists()


def test_a_closed_lab_stops_the_cell_with_one_line_that_says_how_to_open_a_new_one(lab):
    lab.close()
    for use in (lambda: in_loop(lab.connect), lab.show, lab.snapshot,
                lambda: in_loop(lab.try_backup)):
        with pytest.raises(ui.stops.LabClosed) as closed:
            use()
        assert closed.value._render_traceback_() == [ui.lab.LAB_CLOSED]
    assert "lab.close()" in ui.lab.LAB_CLOSED and "lab = ui.NotesLab()" in ui.lab.LAB_CLOSED


def test_in_jupyterlite_a_closed_lab_shows_its_one_line_in_the_cell(lite_shell):
    async def go():
        panel = await run_cell(lite_shell, "lab = ui.NotesLab(quiet=True)\nlab.close()\n"
                                           "conn = await lab.connect()")
        await until(lambda: "mcp-cell-done" in panel.box._dom_classes)
        return panel
    panel = in_loop(go)
    [error] = [out for out in panel.out.outputs if out["output_type"] == "error"]
    assert error["traceback"] == [ui.lab.LAB_CLOSED + "\n"]


def test_check_fails_the_cell_only_in_unattended_runs(monkeypatch, capsys):
    monkeypatch.delenv("LESSON_USER", raising=False)
    ui.check(False, "bien", "mal")
    assert "✗ mal" in capsys.readouterr().out
    monkeypatch.setenv("LESSON_USER", "scripted")
    with pytest.raises(AssertionError, match="mal"):
        ui.check(False, "bien", "mal")


def test_connect_reports_the_equivalent_serve_command_with_configs_defaults(lab, capsys):
    async def go():
        return await lab.connect(solution="soluciones/", sdk_version="1.23.0")
    in_loop(go)
    out = capsys.readouterr().out
    assert "Servidor: en este kernel, como `python code/main.py serve --demo-url-guard " \
        "--setup-wait 45 --solution soluciones/ --sdk-version 1.23.0`" in out
    assert "--setup-wait" not in " ".join(lab.server_argv(setup_wait=10.0))
    assert ui.lab.Config().setup_wait == 10.0


# -- JupyterLite: a cell that awaits runs as a task and fills in its own output -------------
@pytest.fixture
def lite_shell(monkeypatch):
    """An IPython shell as JupyterLite's kernel runs the lessons: LESSON_KERNEL=lite, the
    runner of cells.py installed (course_lite.setup() does it there)."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("LESSON_KERNEL", "lite")
    monkeypatch.delenv("LESSON_USER", raising=False)
    monkeypatch.delenv("LESSON_KEEP_LAB", raising=False)
    shell = InteractiveShell.instance()
    shell.user_ns["ui"] = ui
    assert ui.cells.install(shell)
    yield shell
    ui.cells.uninstall(shell)
    if "lab" in shell.user_ns:
        shell.user_ns["lab"].close()
    for name in ("ui", "lab", "conn"):
        shell.user_ns.pop(name, None)


async def run_cell(shell, source):
    """One cell, as the kernel runs it; the CellPanel it made if it ran as a task."""
    made = len(ui.cells.recent)
    result = await shell.run_cell_async(source, store_history=True,
                                        transformed_cell=shell.transform_cell(source))
    panel = ui.cells.recent[-1] if len(ui.cells.recent) > made else None
    if panel is not None:
        panel.prompt = result.execution_count  # the number the notebook shows, [n]
    return panel


def shown(panel) -> str:
    """The text a CellPanel shows: streams, tracebacks' names and the plain text of displays."""
    parts = []
    for out in panel.out.outputs:
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] == "error":
            parts.append(f"{out['ename']}: {out['evalue']}\n")
        else:
            parts.append(out["data"].get("text/plain", "") + "\n")
    return "".join(parts)


SETUP = "lab = ui.NotesLab(quiet=True)\nconn = await lab.connect(quiet=True)"


async def opened_form(shell):
    """The connection, once the setup cell ran and its call's form is open."""
    await until(lambda: "conn" in shell.user_ns and shell.user_ns["conn"].user._open)
    return shell.user_ns["conn"]
DELETE_THEN_LIST = 'await conn.call("notes_delete", {"title": "TPS report"})\nlab.show("Notas")'


def test_in_jupyterlite_what_a_cell_shows_after_its_call_comes_after_the_answer(
        lite_shell, no_thread_process_or_socket):
    async def go():
        await run_cell(lite_shell, SETUP)
        form_cell = await run_cell(lite_shell, DELETE_THEN_LIST)
        check_cell = await run_cell(lite_shell, "lab.check_chosen_note_deleted(conn)")
        conn = await opened_form(lite_shell)
        assert "📁" not in shown(form_cell)  # nothing from before the answer
        # it names the cell it waits for by the number that cell shows
        assert f"Espera su turno: la celda [{form_cell.prompt}]" in check_cell.line.value
        assert shown(check_cell) == ""
        form = conn.user._open[-1]
        form.fill({"note_id": "note-7", "confirm": True})
        form.press("accept")  # the click, which reaches the kernel once the cell has ended
        await until(lambda: not ui.cells.pending())
        return form_cell, check_cell, conn
    form_cell, check_cell, conn = in_loop(go)
    text = shown(form_cell)
    assert text.index("« ✓ Borrada la nota note-7") < text.index(
        "📁 Notas/: compra.md, tps-2023.md, tps-2025.md")
    assert "✓ Elegiste note-7 y solo desapareció Notas/tps-2024.md" in shown(check_cell)
    assert check_cell.line.value == ""
    assert all("mcp-cell-done" in p.box._dom_classes for p in (form_cell, check_cell))
    assert [m["params"]["name"] for m in sent(conn, "tools/call")] == ["notes_delete"]


def test_in_jupyterlite_detener_cancels_the_waiting_call_on_the_wire_and_the_cells_behind(
        lite_shell, no_thread_process_or_socket):
    async def go():
        await run_cell(lite_shell, SETUP)
        form_cell = await run_cell(lite_shell, DELETE_THEN_LIST)
        later = await run_cell(lite_shell, 'print("no debería ejecutarse")')
        conn = await opened_form(lite_shell)
        assert form_cell.stop.layout.display != "none"
        form_cell.stop.click()  # «⏹ Detener»: what ■ does in JupyterLab
        await until(lambda: not ui.cells.pending())
        await until(lambda: received(conn, "notifications/cancelled"))
        return form_cell, later, conn
    form_cell, later, conn = in_loop(go)
    assert "Detuviste esta celda" in form_cell.line.value
    assert "Detuviste esta celda" in later.line.value and shown(later) == ""
    assert form_cell.stop.layout.display == "none"
    assert sent(conn, "notifications/cancelled")
    assert "Detuviste la celda" in texts(conn.last.panel.box)
    assert "📁" not in shown(form_cell)
    assert "Notas/tps-2024.md" in lite_shell.user_ns["lab"].snapshot()


def test_in_jupyterlite_a_task_cell_shows_its_last_value_and_its_traceback(lite_shell):
    async def go():
        value = await run_cell(lite_shell, "import asyncio\nawait asyncio.sleep(0)\n6 * 7")
        quiet = await run_cell(lite_shell, "await asyncio.sleep(0)\n6 * 7;")
        failed = await run_cell(lite_shell, "await asyncio.sleep(0)\n1 / 0")
        after = await run_cell(lite_shell, 'print("sigue")')
        await until(lambda: not ui.cells.pending())
        return value, quiet, failed, after
    value, quiet, failed, after = in_loop(go)
    assert shown(value) == "42\n" and shown(quiet) == ""
    assert shown(failed) == "ZeroDivisionError: division by zero\n"
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(failed.out.outputs[0]["traceback"]))
    assert "1 / 0" in traceback and "<celda" in traceback  # the cell's own line, numbered
    assert shown(after) == "sigue\n"  # queued behind the failure, it still ran


def test_in_jupyterlite_a_cell_that_does_not_wait_runs_as_ever_when_nothing_is_pending(
        lite_shell, capsys):
    async def go():
        return await run_cell(lite_shell, 'print("directo")')
    assert in_loop(go) is None
    assert "directo" in capsys.readouterr().out
    assert ui.cells.transform(["x = 1\n"]) == ["x = 1\n"]
    assert ui.cells.transform(["await x\n"])[0].startswith(ui.cells.ENTRY)


@pytest.mark.parametrize("protocol", REVISIONS)
def test_in_jupyterlite_the_setup_page_is_drawn_in_the_notebook_and_its_button_posts(
        lite_lab, protocol, capsys, no_thread_process_or_socket):
    async def go():
        conn = await lite_lab.connect(protocol, quiet=True)
        call = asyncio.ensure_future(conn.call("notes_setup"))
        await until(lambda: conn.user._open)
        conn.user._open[-1].press("accept")
        await until(lambda: any("mcp-simulated-page" in c._dom_classes
                                for c in conn.last.panel.box.children))
        page = next(c for c in conn.last.panel.box.children
                    if "mcp-simulated-page" in c._dom_classes)
        assert "Simulación" in texts(page) and "Notas Sync" in texts(page)
        assert not call.done()
        next(b for b in page.children[1].children if b.description == "Autorizar").click()
        if protocol == "2026-07-28":  # no completion notice: the person says when
            await until(lambda: any(isinstance(c, w.Button) for c in
                                    conn.last.panel.box.children))
            assert not call.done()
            [b for b in conn.last.panel.box.children if isinstance(b, w.Button)][-1].click()
        await call
        lite_lab.check_url_flow(conn) if protocol == "2025-11-25" else None
        return conn, texts(page)
    conn, page = in_loop(go)
    assert conn.last.result.data == {"status": "configured"}
    assert "Notas Sync quedó autorizado" in page
    assert conn.last_url().startswith("http://notas-sync.localhost/connect?elicitation=")
    assert conn.page_visits() == 1
    if protocol == "2025-11-25":
        assert "✓ Consentimiento → página" in capsys.readouterr().out
        assert "Llegó <code>notifications/elicitation/complete" \
            in texts(conn.last.panel.box)


@pytest.mark.parametrize("protocol", REVISIONS)
def test_scripted_runs_answer_at_once_in_jupyterlite_too(lite_lab, monkeypatch, protocol,
                                                         no_thread_process_or_socket):
    monkeypatch.setenv("LESSON_USER", "scripted")

    async def go():
        conn = await lite_lab.connect(protocol, quiet=True)
        deleted = await conn.call("notes_delete", {"title": "TPS report"}, scripted=[TPS])
        setup = await conn.call("notes_setup", scripted=[{"action": "accept"}])
        return deleted, setup
    deleted, setup = in_loop(go)
    assert deleted.data["deleted"]["id"] == "note-7"
    assert setup.data == {"status": "configured"}


def test_in_jupyterlite_the_probes_reach_the_server_that_issued_the_link(
        lite_lab, capsys, no_thread_process_or_socket):
    async def go():
        first = await lite_lab.connect(quiet=True)
        await first.call("notes_setup", simulate=True, scripted=[{"action": "accept"}])
        other = await lite_lab.connect(quiet=True)
        call = asyncio.ensure_future(other.call("notes_setup", echo=False))
        await until(lambda: other.user._open)  # its consent waits
        used, pending = first.last_url(), other.last_url()
        capsys.readouterr()
        ui.open_page(used)
        assert ui.submit_page(pending, state="inventado") == 400
        ui.open_page(pending.replace("elicitation=", "elicitation=otro"))
        ui.open_page(pending)
        other.user._open[-1].press("decline")
        await call
        return other
    other = in_loop(go)
    out = capsys.readouterr().out.splitlines()
    # the page's title and its text are told apart
    assert out[0] == "HTTP 410: Enlace no válido — este enlace ya se usó."
    assert out[1] == ("POST → HTTP 400: No se pudo completar — el estado no coincide "
                      "(¿enlace manipulado?). No se vinculó ninguna cuenta.")
    assert out[2] == "HTTP 410: Enlace no válido — enlace desconocido."
    assert out[3].startswith("HTTP 200: Autorizar Notas Sync — Notas Sync (proveedor simulado")
    assert other.page_visits() == 2  # the unknown link and the real one: both its page
    assert other.last.result.data["status"] == "not_configured"


# -- the official SDK ------------------------------------------------------------------------
def test_a_pages_text_keeps_words_that_touch_together_and_a_heading_apart():
    from mcp_ui.text import visible_text

    page = ("<html><head><title>T</title></head><body><h1>Hecho</h1><p>con el servidor MCP "
            "<b>notas-roots-elicitacion</b>. Tu clave</p><p>se queda aquí.</p></body></html>")
    assert visible_text(page) == ("Hecho — con el servidor MCP notas-roots-elicitacion. Tu "
                                  "clave se queda aquí.")


def test_the_sdk_elicitation_callback_returns_the_widget_answer():
    import mcp.types as types

    params = types.ElicitRequestFormParams(
        message="¿Cuál?", requested_schema={"type": "object", "required": ["n"], "properties": {
            "n": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}}})

    async def go():
        user = ui.WidgetUser(ui.CallPanel(visible=False))
        user.begin(user.panel, [{"action": "accept", "content": {"n": "a"}}])
        return await user.sdk_elicitation(None, params)
    result = in_loop(go)
    assert isinstance(result, types.ElicitResult)
    assert (result.action, result.content) == ("accept", {"n": "a"})


def test_the_sdk_client_waits_for_the_widget_click(lab):
    from mcp import Client

    async def go():
        user = lab.user()
        async with Client(lab.stdio_server(), mode="legacy",
                          elicitation_callback=user.sdk_elicitation,
                          list_roots_callback=lab.sdk_roots(["Notas"])) as sdk:
            call = asyncio.ensure_future(sdk.call_tool("notes_delete", {"title": "TPS report"}))
            await until(lambda: user._open)
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
        await until(lambda: conn.user._open)
        conn.user._open[-1].buttons["accept"].click()
        await until(lambda: any(isinstance(b, w.Button) and b.description ==
                                "Ya terminé en la página" for b in conn.user.panel.box.children))
        retries_before = len(sent(conn, "tools/call"))
        assert ui.submit_page(conn.last_url()) == 200
        await asyncio.sleep(0.3)
        assert not call.done(), "the client retried before the user said they were done"
        assert len(sent(conn, "tools/call")) == retries_before
        [b for b in conn.user.panel.box.children if isinstance(b, w.Button)][-1].click()
        return await call
    result = in_loop(go)
    assert result.data == {"status": "configured"}


# -- the learner's solution runs in the kernel ------------------------------------------------
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
    assert "⚠ servidor: la herramienta notes_archive falló: ZeroDivisionError: division by " \
        "zero (línea 10 de mi_solucion.py)" in out


def test_a_solution_that_does_not_load_is_reported_even_when_quiet(lab, capsys):
    solution = lab.base / "roto.py"
    solution.write_text("from extension import Extension\nextension = Extension(\n", "utf-8")

    async def go():
        await lab.connect(solution=str(solution), quiet=True)
    in_loop(go)
    assert "⚠ No se cargó roto.py: SyntaxError en la línea 2" in capsys.readouterr().out


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


# -- check my work ---------------------------------------------------------------------------
def test_revisar_says_so_where_no_checks_can_run(monkeypatch, tmp_path):
    (tmp_path / "ejercicio2.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(ui.review, "runner", None)  # a kernel without processes
    review = ui.revisar("ejercicio2", folder=tmp_path)
    assert review.score is None and "no puede ejecutar el corrector" in review.problem


def test_revisar_takes_its_verdict_from_the_runner_plugged_in(monkeypatch, tmp_path):
    (tmp_path / "ejercicio2.py").write_text("x = 1\n", encoding="utf-8")
    asked = []

    def runner(exercise, folder, timeout):
        asked.append((exercise, folder))
        return ('{"score": 2, "max_score": 3, "tests": [{"name": "t", "score": 2, '
                '"max_score": 3, "status": "failed", "output": "casi"}]}\n', "")
    monkeypatch.setattr(ui.review, "runner", runner)
    review = ui.revisar("ejercicio2", folder=tmp_path)
    assert asked == [("ejercicio2", tmp_path)]
    assert review.summary() == "ejercicio2: 2 de 3 puntos" and review.tests[0]["output"] == "casi"


def test_a_client_timeout_cancels_a_call_whose_form_was_left_open(lab, capsys):
    async def go():
        conn = await lab.connect(quiet=True)
        result = await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                                 scripted=[ui.NoAnswer()], cancel_after=0.3)
        await until(lambda: received(conn, "notifications/cancelled"))
        return conn, result
    conn, result = in_loop(go)
    assert result.error == {"code": None, "message": "cancelada por el cliente"}
    out = capsys.readouterr().out
    assert "« ⏹ El cliente dejó de esperar a los 0.3 s y canceló la llamada" in out
    assert len(sent(conn, "notifications/cancelled")) == 1
    assert sum(p.startswith("Notas/tps-") for p in lab.snapshot()) == 3


def test_a_client_timeout_is_told_as_such_and_shows_the_servers_retraction(lab, capsys):
    # notebook 02 §4: what its text promises, and nothing it does not
    async def go():
        conn = await lab.connect("2025-11-25", quiet=True)
        await conn.call("notes_delete", {"title": "TPS report"}, simulate=True,
                        scripted=[ui.NoAnswer()], cancel_after=0.3)
        conn.transcript(last_call=True)  # at once, as the notebook's cell does
        return conn
    conn = in_loop(go)
    out = capsys.readouterr().out
    last = [line for line in out.splitlines() if "notifications/cancelled" in line]
    assert [line.split()[0] for line in last] == ["C→S", "S→C"]  # the client's, the server's
    assert "El cliente dejó de esperar" in last[0]
    panel = texts(conn.last.panel.box)
    assert "Detuviste" not in panel and "persona" not in panel
    assert "El cliente dejó de esperar" in panel and "El servidor retiró esta pregunta" in panel
    assert ".." not in panel.replace("…", "")
    assert "cancelled by the client" not in out + panel


def test_a_request_shows_what_the_server_logged_about_it_and_the_next_call_does_not(
        lab, capsys):
    async def go():
        conn = await lab.connect("2026-07-28", quiet=True)
        call = {"name": "notes_delete", "arguments": {"title": "TPS report"}}
        first = await conn.request("tools/call", call)
        tampered = first["requestState"][:-3] + "AAA"
        await conn.request("tools/call", {**call, "requestState": tampered, "inputResponses": {
            "roots": {"roots": [{"uri": lab.uri("Notas")}]}}})
        refused = capsys.readouterr().out
        await conn.call("notes_list")
        return refused, capsys.readouterr().out
    refused, later = in_loop(go)
    assert "⚠ servidor: rechazó un requestState: " in refused
    assert "refused" not in refused
    assert "⚠ servidor" not in later


def test_a_call_after_lab_close_says_the_lab_is_closed_and_how_to_start_again(lab, capsys):
    async def go():
        conn = await lab.connect(quiet=True)
        lab.close()
        return await conn.call("notes_list")
    result = in_loop(go)
    out = capsys.readouterr().out
    assert "lab.close()" in out and "ui.NotesLab()" in out and "roots" not in out
    assert result.is_error


def test_every_line_the_server_logs_has_a_spanish_version_for_the_learner():
    from mcp_ui import server_log

    unknown = []
    for module in sorted((REPO / "code").rglob("*.py")):  # its top and its layers
        # `serve`'s start-up lines and the `serve --http` driver's: an operator's stderr, never
        # under a notebook's call (notebook 06's replicas run it as processes, logs unread)
        if module.name in ("main.py", "streamable_http.py", "http_channels.py"):
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args and (
                    getattr(node.func, "attr", None) == "log"
                    or getattr(node.func, "id", None) == "log")):
                continue
            line = sample_of(node.args[0])
            said = None if line is None else server_log.spanish(line)
            if said is not None and said.startswith(server_log.UNKNOWN):
                unknown.append(f"{module.name}:{node.lineno}: {line}")
    assert unknown == []


def test_the_servers_lines_say_where_a_solution_raised_in_spanish():
    from mcp_ui import server_log

    assert server_log.spanish("page route /copias/vuelta crashed: KeyError: 'code' "
                              "(at ejercicio3b.py:7)") == \
        "la página /copias/vuelta falló: KeyError: 'code' (línea 7 de ejercicio3b.py)"
    assert server_log.spanish("roots reaction failed (TypeError: x (at ejercicio4.py:12)); "
                              "revoking every handle") == \
        "tu reacción al cambio de roots falló (TypeError: x (línea 12 de ejercicio4.py)): se " \
        "revocan todos los handles (fallo seguro)"


def sample_of(node):
    """A line a log call could write: each {…} of an f-string filled in with "x"."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "x"
                       for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = sample_of(node.left), sample_of(node.right)
        return None if left is None else left + (right or "")
    return None


def test_a_consent_whose_page_is_never_opened_ends_pending_within_the_wait(lab):
    async def go():
        conn = await lab.connect(quiet=True, setup_wait=0.5)
        return conn, await conn.call("notes_setup", simulate=True,
                                     scripted=[{"action": "accept"}], browser="later")
    conn, result = in_loop(go)
    assert result.data == {"status": "pending"} and conn.page_visits() == 0


class InlineServer:
    """Just what `Pages` asks of a lab server whose setup page is inline."""
    config = type("Config", (), {"page_transport": "inline"})()

    def __init__(self):
        self.flows = {"e-1": object()}

    def page(self):
        return type("Page", (), {"fetch": staticmethod(lambda *_: {"status": 200, "body": ""})})


def test_a_new_server_never_inherits_the_page_visits_of_a_closed_one():
    import gc
    pages = ui.pages.Pages()
    first = InlineServer()
    pages.add(first)
    pages.fetch(f"{ui.pages.INLINE_BASE}/connect?elicitation=e-1")
    assert pages.visits_of(first) == 1
    pages.remove(first)
    del first
    gc.collect()
    assert len(pages.visits) == 0  # nothing keyed by an id a new object could be given
    second = InlineServer()
    pages.add(second)
    assert pages.visits_of(second) == 0


def test_transcripts_hide_the_practice_folder_before_shortening(lab):
    async def go():
        conn = await lab.connect("2026-07-28", quiet=True)
        await conn.call("notes_list", echo=False)
        return conn
    conn = in_loop(go)
    lines = "\n".join(conn.transcript_lines())
    assert "inputResponses" in lines and str(lab.base) not in lines
    assert str(lab.base)[:8] not in lines.replace("file:///…", "")


def test_a_form_the_scripted_user_leaves_open_takes_no_clicks(lab):
    async def go():
        conn = await lab.connect(quiet=True)
        call = asyncio.ensure_future(conn.call(
            "notes_delete", {"title": "TPS report"}, simulate=True, scripted=[ui.NoAnswer()],
            cancel_after=5, echo=False))
        await until(lambda: conn.user._open)
        form = conn.user._open[-1]
        buttons = [b.disabled for b in form.buttons.values()]
        call.cancel()  # the cell is stopped before the client's own timeout
        with pytest.raises(asyncio.CancelledError):
            await call
        await until(lambda: received(conn, "notifications/cancelled"))
        return form, buttons, conn
    form, buttons, conn = in_loop(go)
    assert buttons == [True, True, True]
    assert len(sent(conn, "notifications/cancelled")) == 1  # the call went too


# -- answering keeps the notebook's selection -------------------------------------------------
def test_a_calls_panel_carries_the_script_that_keeps_the_selection_where_it_was():
    async def go():
        return ui.CallPanel(visible=False)
    panel = in_loop(go)
    assert "mcp-keep-selection" in panel.box._dom_classes
    script = panel.box.children[0]
    assert isinstance(script, w.Output) and script.layout.display == "none"
    code = script.outputs[0]["data"]["application/javascript"]
    for needed in ("'.mcp-keep-selection'", "stopPropagation", "'focusin'", "'mousedown'",
                   ".jp-Cell.jp-mod-active", "window.__mcpKeepSelection"):
        assert needed in code
    ui.focus.keep_selection(panel.box)  # marking twice adds no second script
    assert sum(isinstance(c, w.Output) for c in panel.box.children) == 1


# -- quizzes: the key lives in the package, each option explains itself ---------------------
def drawn_quiz(monkeypatch, quiz_id):
    shown = []
    monkeypatch.setattr(ui.recap, "display", shown.append)
    ui.quiz(quiz_id)
    (box,) = shown
    assert "mcp-keep-selection" in box._dom_classes
    return [c for c in box.children if isinstance(c, w.VBox)]


def answer(question_box, index):
    _, choice, row = question_box.children
    choice.index = index
    row.children[0].click()
    return row.children[1].value


def test_each_option_of_a_quiz_answers_with_its_own_explanation(monkeypatch):
    quiz = ui.load_quiz("02")
    boxes = drawn_quiz(monkeypatch, "02")
    assert len(boxes) == len(quiz.questions)
    first = quiz.questions[0]
    for index, option in enumerate(first.options):
        verdict = answer(boxes[0], index)
        assert ("✓ Correcto." if option.correct else "✗ No.") in verdict
        assert ui.text.esc(option.why) in verdict


def test_after_a_check_the_verdict_speaks_of_the_option_selected_now(monkeypatch):
    """On a busy kernel the click can arrive before the option picked just before it."""
    quiz = ui.load_quiz("02")
    (box, *_) = drawn_quiz(monkeypatch, "02")
    first = quiz.questions[0]
    right = next(i for i, option in enumerate(first.options) if option.correct)
    wrong = (right + 1) % len(first.options)
    assert "✗ No." in answer(box, wrong)
    _, choice, row = box.children
    choice.index = right  # the option arrives after the click was answered
    assert "✓ Correcto." in row.children[1].value
    assert ui.text.esc(first.options[right].why) in row.children[1].value


def test_picking_an_option_says_nothing_until_it_is_checked(monkeypatch):
    (box, *_) = drawn_quiz(monkeypatch, "02")
    _, choice, row = box.children
    choice.index = 0
    assert row.children[1].value == ""


def test_a_pre_check_says_what_to_read_after_any_answer(monkeypatch):
    quiz = ui.load_quiz("01-previo")
    (box, *_) = drawn_quiz(monkeypatch, "01-previo")
    question = quiz.questions[0]
    for index, option in enumerate(question.options):
        assert f"📖 Lee: {ui.text.esc(option.read or question.read)}" in answer(box, index)


def test_a_quiz_that_does_not_exist_or_has_two_right_answers_is_refused(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="ningún cuestionario"):
        ui.load_quiz("../02")
    monkeypatch.setattr(ui.recap, "QUIZZES", tmp_path)
    (tmp_path / "x.json").write_text('{"questions": [{"question": "¿?", "kind": "aplicar", '
                                     '"options": ['
                                     '{"text": "a", "correct": true, "why": "."},'
                                     '{"text": "b", "correct": true, "why": "."}]}]}')
    with pytest.raises(ValueError, match="exactly one correct option"):
        ui.load_quiz("x")


# -- ui.diagnostico(): is this notebook set up? -----------------------------------------------
def test_diagnostico_reports_kernel_widgets_against_the_pins_and_the_self_check_host(
        monkeypatch):
    shown = []
    monkeypatch.setattr(ui.diagnose, "display", lambda obj, **_: shown.append(obj))
    monkeypatch.delenv("GRADER_HOST", raising=False)

    async def go():
        return ui.diagnostico()
    diagnosis = in_loop(go)
    found = {row.what: row for row in diagnosis.rows}
    assert found["Kernel"].ok and sys.version.split()[0] in found["Kernel"].found
    for name in ("ipywidgets", "jupyterlab_widgets", "ipykernel"):  # the course's .venv
        assert found[name].ok, found[name]
        assert "requirements.txt" in found[name].found
    from grader.hosts import kinds  # diagnostico put the repository on sys.path

    host = found["Autoevaluación (ui.revisar)"]
    assert ("corrector aislado" in host.found) == kinds.sandbox_possible()
    assert shown[-1] is diagnosis.probe.box
    assert "mcp-keep-selection" in diagnosis.probe.box._dom_classes
    page = diagnosis.to_html()
    assert "<table" in page and "Qué hacer" in page
    marks = [row.split("</td>")[0].rsplit(">", 1)[1] for row in page.split("<tr>")[2:]]
    assert marks and all(" " in mark and mark.split(" ", 1)[1].isalpha() for mark in marks)
    passing = " ".join(row.fix for row in diagnosis.rows if row.ok)
    assert "espacios de nombres" not in passing and "sandbox" not in host.found


def test_diagnostico_says_what_to_fix_when_a_widget_package_is_not_the_pinned_one(
        monkeypatch):
    real = ui.diagnose.installed
    monkeypatch.setattr(ui.diagnose, "installed",
                        lambda name: "7.0.0" if name == "ipywidgets" else real(name))
    rows = {r.what: r for r in ui.diagnose.package_findings(*ui.diagnose.pins())}
    assert rows["ipywidgets"].ok is False
    assert "fijada: 8.1.9" in rows["ipywidgets"].found
    assert "make lab" in rows["ipywidgets"].fix


@pytest.mark.parametrize("environ,modules,where,ok", [
    ({"JPY_SESSION_NAME": "x.ipynb"}, {}, "JupyterLab", True),
    ({"VSCODE_PID": "1"}, {}, "VS Code", None),
    ({"COLAB_RELEASE_TAG": "r"}, {}, "Colab", None),
    ({"JUPYTERHUB_API_URL": "http://hub"}, {}, "JupyterHub", True),
    ({"CODESPACES": "true"}, {}, "Codespaces", True),
    ({}, {}, "", None),
])
def test_diagnostico_tells_where_the_notebook_runs(environ, modules, where, ok):
    assert ui.diagnose.frontend(environ, modules) == where
    finding = ui.diagnose.frontend_finding(where)
    assert finding.ok is ok
    if where == "Colab":
        assert "JupyterHub" in finding.fix and "JupyterLite" in finding.fix


def test_the_click_probe_answers_in_the_page_when_the_kernel_gets_the_click():
    async def go():
        return ui.diagnose.ClickProbe()
    probe = in_loop(go)
    assert "El clic llegó" not in probe.answer.value
    probe.button.click()
    assert "✓ El clic llegó al kernel" in probe.answer.value and probe.clicks == 1


# -- the official SDK in JupyterLite: the lesson's server in the page, over memory ------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_in_jupyterlite_the_sdk_client_talks_to_the_lessons_server_over_memory(
        lite_lab, mode, capsys, no_thread_process_or_socket):
    from mcp import Client

    async def go():
        user = lite_lab.user(scripted=[TPS], simulate=True)
        target = lite_lab.sdk_target()
        async with Client(target, mode=mode, elicitation_callback=user.sdk_elicitation,
                          list_roots_callback=lite_lab.sdk_roots(["Notas"])) as sdk:
            return await sdk.call_tool("notes_delete", {"title": "TPS report"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # roots: deprecated at 2026-07-28 (MCPDeprecationWarning)
        result = in_loop(go)
    assert result.content[0].text == "Borrada la nota note-7 (TPS report, 2024-04-10)."
    assert "Notas/tps-2024.md" not in lite_lab.snapshot()
    assert "en memoria, con los mismos mensajes JSON-RPC que por stdio" in capsys.readouterr().out


def test_the_cryptography_stand_in_derives_the_key_as_cryptography_does():
    import importlib.util

    from cryptography.hazmat.primitives import hashes as real_hashes
    from cryptography.hazmat.primitives.kdf import hkdf as real_hkdf

    shims = REPO / "editions" / "lite" / "shims" / "cryptography" / "hazmat" / "primitives"
    loaded = {}
    for name in ("hashes", "kdf/hkdf", "ciphers/aead"):
        spec = importlib.util.spec_from_file_location(f"shim_{name}", shims / f"{name}.py")
        loaded[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded[name])
    secret, info = b"s" * 40, b"mcp/request-state/v1/aes-256-gcm"
    mine = loaded["kdf/hkdf"].HKDF(algorithm=loaded["hashes"].SHA256(), length=32, salt=None,
                                   info=info).derive(secret)
    real = real_hkdf.HKDF(algorithm=real_hashes.SHA256(), length=32, salt=None,
                          info=info).derive(secret)
    assert mine == real
    with pytest.raises(NotImplementedError, match="no está disponible en JupyterLite"):
        loaded["ciphers/aead"].AESGCM(mine).encrypt(b"n" * 12, b"x", b"")


def test_the_rpds_stand_in_lets_jsonschema_check_a_tools_result(monkeypatch):
    """What the SDK's client does with an outputSchema in the browser (rpds-py has no
    WebAssembly wheel): jsonschema over the stand-in, in a fresh interpreter."""
    code = (
        "import importlib.abc, importlib.machinery, sys\n"
        "class Shims(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'rpds':\n"
        f"            return importlib.machinery.PathFinder.find_spec(name, [{str(SHIMS)!r}])\n"
        "sys.meta_path.insert(0, Shims())\n"
        "import rpds\n"
        "from jsonschema import exceptions\n"
        "from jsonschema.validators import validator_for\n"
        "schema = {'$defs': {'s': {'type': 'string'}}, 'type': 'object',\n"
        "          'properties': {'result': {'$ref': '#/$defs/s'}}, 'required': ['result']}\n"
        "check = validator_for(schema)(schema)\n"
        "assert not list(check.iter_errors({'result': 'ok'}))\n"
        "print(rpds.__file__)\n"
        "print(exceptions.best_match(check.iter_errors({'result': 3})).message)\n"
        "print(exceptions.best_match(check.iter_errors({})).message)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == [str(SHIMS / "rpds" / "__init__.py"), "3 is not of type 'string'",
                   "'result' is a required property"]


# -- a tool from an exercise not done yet: say which notebook builds it --------------------------
def test_calling_exercise_twos_tool_before_the_exercise_names_the_notebook_to_do_first(
        lab, capsys, tmp_path):
    async def go():
        conn = await lab.connect(solution=tmp_path, quiet=True)
        return await conn.call("notes_archive", {"title": "TPS report"})
    result = in_loop(go)
    out = capsys.readouterr().out
    assert result.error["code"] == -32602
    assert "ejercicio 2" in out and "02_formularios" in out and "no existe" in out


def test_a_solution_file_without_the_tool_is_named_in_the_hint(lab, capsys, tmp_path):
    (tmp_path / "ejercicio2.py").write_text("from extension import Extension\n\n"
                                           "extension = Extension()\n", encoding="utf-8")

    async def go():
        conn = await lab.connect(solution=tmp_path, quiet=True)
        await conn.call("notes_archive", {"title": "TPS report"})
    in_loop(go)
    assert "no registra ninguna herramienta notes_archive" in capsys.readouterr().out


def test_other_unknown_tools_get_no_exercise_hint(lab, capsys):
    async def go():
        conn = await lab.connect(quiet=True)
        await conn.call("notes_nothing")
    in_loop(go)
    assert "💡" not in capsys.readouterr().out


def test_an_interrupt_wakes_a_loop_that_only_waits_for_a_click():
    # ipykernel's SIGINT handler only queues the cell's cancellation (a plain call_soon): a
    # loop asleep in select(), as it is while a form waits, would run it at its next event
    # only (here, after the 30 s hang detector), not within a moment of the interrupt
    from mcp_ui.interrupt import waking_on_interrupt

    async def go():
        loop = asyncio.get_running_loop()
        stopped, sent = loop.create_future(), []

        def kernels_handler(signum, frame):
            loop.call_soon(lambda: stopped.done() or stopped.set_result(loop.time()))

        def interrupt():
            sent.append(loop.time())
            os.kill(os.getpid(), signal.SIGINT)
        previous = signal.signal(signal.SIGINT, kernels_handler)
        try:
            with waking_on_interrupt(loop):
                threading.Timer(0.2, interrupt).start()
                ran = await asyncio.wait_for(stopped, 30)
        finally:
            signal.signal(signal.SIGINT, previous)
        return ran - sent[0]
    assert in_loop(go) < 5


def review_of(*tests, **extra):
    line = {"score": sum(t["score"] for t in tests), "tests": list(tests),
            "max_score": sum(t["max_score"] for t in tests), **extra}
    return ui.Review.from_output("ejercicio2", json.dumps(line) + "\n")


def result(name, status, score, top, output):
    return {"name": f"ejercicio2 {name}", "status": status, "score": score, "max_score": top,
            "output": output}


def test_a_self_check_report_shows_the_first_cause_and_folds_the_tests_waiting_for_it():
    from grader.checks.grading import NEEDS  # the grader's own wording, kept in step

    waiting = "✘ " + NEEDS.format(gate="con varias coincidencias archiva la elegida")
    review = review_of(
        result("con varias coincidencias archiva la elegida", "failed", 0, 2,
             "✘ no envió ningún formulario (respondió: Sin implementar)"),
        *[result(f"caso {n}", "failed", 0, 1, waiting) for n in range(5)],
        result("otro caso", "passed", 1, 1, "✔ bien hecho"))
    page = review.to_html()
    table, _, folded = page.partition("</table>")
    assert "no envió ningún formulario" in table and "otro caso" in table
    assert "caso 3" not in table and "caso 3" in folded
    assert "<details" in folded and "5 pruebas más necesitan que antes funcione" in folded
    assert "ejercicio2 con varias" not in table  # the summary names the exercise once


def test_every_row_of_a_report_says_its_status_in_words_and_zero_point_rows_read_naturally():
    review = review_of(result("pide confirmación", "passed", 1, 1, "✔"),
                       result("archiva", "failed", 0, 2, "✘ no"),
                       result("se cuelga", "error", 0, 1, "✘ no respondió"),
                       result("lo imprescindible", "passed", 0, 0, "✔ ningún error grave"),
                       result("(oculta) lo imprescindible", "failed", -3.1, 0, "✘ un error"))
    rows = review.to_html().split("<tr>")[1:]
    assert [row.split("</td>")[0].rsplit(">", 1)[1] for row in rows] == [
        "✅ bien", "❌ falla", "💥 se rompió", "✅ bien", "❌ falla"]
    assert "0/0" not in rows[3] and "—" in rows[3]
    assert "−3,1 puntos" in rows[4] and "/0" not in rows[4]


def test_a_self_checks_scores_are_written_with_a_decimal_comma():
    review = review_of(result("archiva", "failed", 0.5, 2, "✘ casi"),
                       result("pide", "passed", 9, 9, "✔"))
    assert review.summary() == "ejercicio2: 9,5 de 11 puntos"
    assert "0,5/2" in review.to_html()


def test_a_self_check_that_fell_back_from_the_sandbox_says_local_mode_never_portable():
    assert "modo local (sin aislamiento)" in ui.review.SANDBOX_FAILED
    assert "portátil" not in ui.review.SANDBOX_FAILED + "".join(ui.review.PLACES.values())
    assert "revisión" not in ui.review.SANDBOX_FAILED + ui.review.NO_RUNNER
    # «revisión» is the protocol's revision only: the self-check is «autoevaluación»
    assert ui.Review("ejercicio2", problem="x").summary() == "ejercicio2: sin autoevaluación (x)"


def test_a_self_check_says_once_that_it_is_one_and_folds_what_is_off_in_plain_words():
    review = review_of(result("x", "failed", 0, 1, "✘"), notice="Autoevaluación en el navegador: "
                       "las pruebas corren aquí mismo, sin aislamiento ni límites.",
                       protections={"mode": "inprocess", "rlimits": None, "seccomp_denied": None,
                                    "grader_touches_data_only_through_descriptors": False})
    page = review.to_html()
    assert page.count("sin aislamiento") == 1 and "Dónde" not in page
    assert "<details><summary>Lo que el corrector oficial hace y aquí no (3)" in page
    for jargon in ("descriptores", "llamadas al sistema", "seccomp", "namespace"):
        assert jargon not in page


def test_the_code_tour_describes_every_module_of_code(capsys):
    ui.code_tour()
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == len([p for p in (REPO / "code").rglob("*.py")  # its layers too
                             if p.name != "__init__.py" and "__pycache__" not in p.parts])
    assert [row for row in rows if row.rstrip().endswith("líneas")] == []  # none left blank
