"""Exercise 3B with your own clicks (lessons/mcp_ui/try_flow.py, `lab.try_backup()`), with the
reference solution: the lesson's 2025-11-25 client follows the −32042 of `notes_backup`
(consent, the connect page, Nube de Copias, the callback, the completion notice) and calls
again; at 2026-07-28 the URL comes inside the call. In JupyterLite, a person's page is a
`FlowPage` that follows the redirects and presses the form's buttons, and so is it where the
browser cannot reach the kernel (Colab).
"""

from __future__ import annotations

import pytest
from notebook_helpers import import_mcp_ui, lab_run

from grader.paths import REFERENCE_DIR

pytestmark = pytest.mark.instructor_only("runs the reference solution of exercise 3B")
ui = import_mcp_ui()
REFERENCE_3B = f"{REFERENCE_DIR}/soluciones/ejercicio3b.py"


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setenv("LESSON_USER", "scripted")


def test_the_client_follows_the_32042_to_the_copy(scripted, capsys):
    result = lab_run(lambda lab: lab.try_backup(solution=REFERENCE_3B))
    assert result.data == {"status": "done", "notes": 4}
    out = capsys.readouterr().out
    assert "error -32042" in out and "↻ El cliente repite la llamada" in out
    assert "« ✓ Copia hecha: 4 nota(s)." in out


def test_at_2026_07_28_the_url_comes_in_the_call_and_the_copy_follows(scripted):
    result = lab_run(lambda lab: lab.try_backup("2026-07-28", solution=REFERENCE_3B))
    assert result.data == {"status": "done", "notes": 4}


def test_declining_the_consent_opens_nothing_and_calls_no_more(scripted, capsys):
    result = lab_run(lambda lab: lab.try_backup(solution=REFERENCE_3B,
                                                scripted=[{"action": "decline"}]))
    assert result.error["code"] == -32042
    assert "repite la llamada" not in capsys.readouterr().out


def test_in_jupyterlite_a_person_follows_the_redirects_and_presses_autorizar(monkeypatch):
    """A FlowPage (no web server): your connect page → Nube de Copias's consent, with its two
    buttons → «Autorizar» → your callback's «Listo»; then the tool makes the copy."""
    monkeypatch.setenv("LESSON_KERNEL", "lite")
    monkeypatch.delenv("LESSON_USER", raising=False)
    from mcp_ui.pages import PAGES
    from mcp_ui.try_flow import FlowPage, url_required

    async def body(lab):
        conn = await lab.connect(solution=REFERENCE_3B, quiet=True)
        params = url_required(await conn.call("notes_backup"))
        page = FlowPage(params["url"], PAGES.fetch)
        assert "/nube-copias/autorizar?" in page.url
        assert [b.description for b in page.buttons.children] == ["Autorizar", "Rechazar"]
        answer = page.press("allow")
        assert answer["status"] == 200 and "Nube de Copias quedó autorizado" in page.view.value
        assert page.buttons.children == ()  # the callback's page has no form
        return await conn.call("notes_backup")
    assert lab_run(body).data == {"status": "done", "notes": 4}


# -- what the learner sees when the flow breaks (newcomer report F1, F2, F12) --------------------
def reference_with(tmp_path, find, replace):
    """The reference 3B with one line changed (a novice's bug)."""
    source = open(REFERENCE_3B, encoding="utf-8").read()
    assert source.count(find) == 1
    solution = tmp_path / "ejercicio3b.py"
    solution.write_text(source.replace(find, replace), encoding="utf-8")
    return solution


def panel_texts(widget) -> str:
    parts = [widget.value] if isinstance(getattr(widget, "value", None), str) else []
    return "\n".join(parts + [panel_texts(c) for c in getattr(widget, "children", ())])


def test_a_callback_that_raises_is_shown_in_the_waiting_panel_with_its_exception_and_line(
        scripted, tmp_path, monkeypatch):
    solution = reference_with(tmp_path, "        flow.notify(flow_id)\n",
                              "        flow.notify()\n")
    monkeypatch.setattr(ui.try_flow, "SCRIPTED_WAIT", 0.5)  # no notification will come
    panels = []
    monkeypatch.setattr(ui.try_flow, "CallPanel", lambda: panels.append(ui.users.CallPanel())
                        or panels[-1])
    lab_run(lambda lab: lab.try_backup(solution=solution))
    shown = panel_texts(panels[0].box)
    line = next(n for n, text in enumerate(solution.read_text().splitlines(), 1)
                if text == "        flow.notify()")
    assert "⚠ servidor: la página /copias/vuelta falló: TypeError:" in shown
    assert f"(línea {line} de ejercicio3b.py)" in shown
    assert shown.index("⚠ servidor") < shown.index("No llegó la notificación de fin")


def test_a_32042_with_a_bare_url_is_not_followed_and_the_client_says_why(scripted, tmp_path,
                                                                         capsys):
    solution = reference_with(
        tmp_path, "    raise URLElicitationRequired([ctx.url_params(MESSAGE, url, flow_id)])\n",
        "    raise URLElicitationRequired([url])\n")
    result = lab_run(lambda lab: lab.try_backup(solution=solution))
    out = capsys.readouterr().out
    assert result.error["code"] == -32042 and "repite la llamada" not in out
    assert "⚠ El cliente no puede seguir este −32042: data.elicitations no trae ninguna " \
        "elicitación en modo URL (su primer elemento es un texto" in out
    assert "ctx.url_params(MESSAGE, url, flow_id)" in out


def test_the_simulated_browser_labels_its_address_as_the_browsers_not_the_clients(monkeypatch):
    monkeypatch.setenv("LESSON_KERNEL", "lite")
    monkeypatch.delenv("LESSON_USER", raising=False)
    from mcp_ui.pages import PAGES
    from mcp_ui.try_flow import FlowPage, url_required

    async def body(lab):
        conn = await lab.connect(solution=REFERENCE_3B, quiet=True)
        page = FlowPage(url_required(await conn.call("notes_backup"))["url"], PAGES.fetch)
        page.press("allow")
        return page.url, page.view.value
    url, shown = lab_run(body)
    assert "code=" in url and "state=" in url  # the callback's address, as the browser has it
    assert "Dirección en tu navegador (el cliente MCP no la ve)" in shown


def test_on_colab_exercise_3b_follows_its_redirects_on_the_simulated_page(monkeypatch):
    """Where the browser cannot reach the kernel (Colab's marker, nothing of a hub), the page
    is drawn in the notebook and the 3B flow still ends in the copy."""
    from test_page_placement import MARKERS

    for name in MARKERS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20260101")
    from mcp_ui.pages import PAGES
    from mcp_ui.try_flow import FlowPage, url_required

    async def body(lab):
        conn = await lab.connect(solution=REFERENCE_3B, quiet=True)
        page = FlowPage(url_required(await conn.call("notes_backup"))["url"], PAGES.fetch)
        assert "/nube-copias/autorizar?" in page.url
        page.press("allow")
        return await conn.call("notes_backup")
    assert lab_run(body).data == {"status": "done", "notes": 4}
