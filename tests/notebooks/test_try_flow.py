"""Exercise 3B with your own clicks (lessons/mcp_ui/try_flow.py, `lab.try_backup()`): what the
try-it cell shows for a tool that does not ask yet. The client following a working solution's
−32042 to the copy, at both revisions and in JupyterLite, is checked with the reference
solution in test_try_flow_reference.py (instructors' source only).
"""

from __future__ import annotations

import pytest
from notebook_helpers import import_mcp_ui, lab_run

ui = import_mcp_ui()


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setenv("LESSON_USER", "scripted")


def test_a_tool_that_never_asks_is_shown_as_it_answered(scripted, tmp_path, capsys):
    starter = tmp_path / "ejercicio3b.py"
    starter.write_text("from extension import Extension\nfrom server import ok\n\n"
                       "extension = Extension()\n\n\n"
                       "@extension.tool('notes_backup', description='x')\n"
                       "def notes_backup(ctx):\n    return ok('Aún no.', {'status': 'x'})\n")
    result = lab_run(lambda lab: lab.try_backup(solution=starter))
    assert result.data == {"status": "x"} and "repite la llamada" not in capsys.readouterr().out
