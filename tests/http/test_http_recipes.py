"""The README's HTTP recipes ("Usar el servidor con clientes reales", **Por HTTP** and
**MCP Inspector por HTTP**) run as written, with the pinned Inspector. What is read from the
README itself: the `serve --http` command, the client's URL and Inspector's configuration; only
the placeholders (the port, the user's folders) are replaced."""

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
if str(CLIENTS) not in sys.path:
    sys.path.insert(0, str(CLIENTS))

from clients_support import inline_command, node_env, recipe, require_node  # noqa: E402

from http_support import Served  # noqa: E402
from server_support import NotesTree  # noqa: E402

README_URL = "http://127.0.0.1:8000/mcp"


@pytest.fixture
def home(tmp_path):
    tree = NotesTree(tmp_path / "casa")
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(tree.notes, home / "Notas")
    return home


def serve_command():
    lines = [line for line in recipe("Por HTTP", "bash").splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return shlex.split(lines[0])


def test_the_readmes_serve_command_listens_where_its_clients_connect():
    argv = serve_command()
    assert argv[:3] == ["python3", "code/main.py", "serve"]
    assert argv[argv.index("--http") + 1] == "127.0.0.1:8000"
    claude = shlex.split(inline_command("Por HTTP", "claude mcp add"))
    assert claude == ["claude", "mcp", "add", "--transport", "http", "notas", README_URL]
    config = json.loads(recipe("MCP Inspector por HTTP", "json"))
    assert config["mcpServers"]["notas"]["url"] == README_URL


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_over_http_lists_the_notes_the_readme_says(home, tmp_path, era):
    require_node()
    argv = serve_command()
    folder = argv[argv.index("--root") + 1].replace("~", str(home))
    server = Served("--root", folder, cwd=tmp_path)  # the README's server, on a free port
    try:
        text = recipe("MCP Inspector por HTTP", "json").replace(README_URL, server.url)
        config = tmp_path / "inspector.json"
        config.write_text(text.replace("/home/tu-usuario/Notas", str(home / "Notas")))
        command = shlex.split(inline_command("MCP Inspector por HTTP", "npx"))
        command = [c.replace("inspector.json", str(config)) for c in command]
        command += ["--protocol-era", era] if era == "modern" else []
        run = subprocess.run(command, cwd=tmp_path, env=node_env(home), capture_output=True,
                             text=True, timeout=180)
    finally:
        assert server.stop() == 143
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["content"][0]["text"].startswith("4 nota(s) dentro de las roots:")
    assert [n["id"] for n in result["structuredContent"]["notes"]] == [
        "note-1", "note-3", "note-7", "note-14"]
