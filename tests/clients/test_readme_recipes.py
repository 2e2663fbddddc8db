"""Every client recipe in MAINTAINERS.md's "Using the server with real clients" (linked from the
README) runs as written, with the pinned clients, and shows what the guide says the user will
see.

The code and configuration blocks are read from MAINTAINERS.md itself, so the guide and these
tests cannot drift apart; only the placeholders (/path/to/the/repository, the user's folders)
are replaced by this checkout and a temporary notes folder."""

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest
from clients_support import (
    MAIN,
    REPO,
    inline_command,
    node_env,
    readme_section,
    recipe,
    text_of,
)

from server_support import NotesTree

NOTES = ["note-1", "note-3", "note-7", "note-14"]


@pytest.fixture
def home(tmp_path):
    """A home folder with the lesson's notes in ~/Notas, as the recipes assume."""
    tree = NotesTree(tmp_path / "casa")
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(tree.notes, home / "Notas")
    return home


def personal(text, home):
    """The guide's placeholders, pointed at this checkout and the test's home folder."""
    for placeholder in ("/Users/your-name/Documents/Notas", "/home/your-name/Notas"):
        text = text.replace(placeholder, str(home / "Notas"))
    return text.replace("/path/to/the/repository", str(REPO))


def python_env(home):
    env = dict(os.environ, HOME=str(home))
    env.pop("PYTHONPATH", None)
    return env


# -- Claude Desktop -----------------------------------------------------------------------------
def test_claude_desktop_config_has_the_documented_shape():
    config = json.loads(recipe("Claude Desktop", "json"))
    assert list(config) == ["mcpServers"]
    for name, server in config["mcpServers"].items():
        assert name and set(server) <= {"command", "args", "env"}, server
        assert isinstance(server["command"], str)
        assert all(isinstance(arg, str) for arg in server["args"])
        assert all(isinstance(k, str) and isinstance(v, str)
                   for k, v in server.get("env", {}).items())
        assert os.path.isabs(server["args"][0]), "Claude Desktop needs absolute paths"


def test_claude_desktop_command_line_starts_serve_with_the_folder_as_root(home):
    server = json.loads(personal(recipe("Claude Desktop", "json"), home))["mcpServers"]["notas"]
    assert server["args"][:2] == [MAIN, "serve"]
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                  "protocolVersion": "2025-11-25", "capabilities": {},
                  "clientInfo": {"name": "claude-ai", "version": "0.1.0"}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "notes_list", "arguments": {}}}]
    proc = subprocess.Popen([shutil.which(server["command"]), *server["args"]], cwd=home,
                            env={**python_env(home), **server.get("env", {})}, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    answers = {}
    try:
        for frame in frames:  # one at a time, the way a client waits for each answer
            proc.stdin.write(json.dumps(frame) + "\n")
            proc.stdin.flush()
            if "id" in frame:
                answer = json.loads(proc.stdout.readline())
                answers[answer["id"]] = answer
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    assert answers[1]["result"]["serverInfo"]["name"] == "notas-roots-elicitacion"
    listed = answers[2]["result"]["structuredContent"]["notes"]
    assert [n["id"] for n in listed] == NOTES
    assert all(n["uri"].startswith((home / "Notas").as_uri()) for n in listed)


# -- MCP Inspector ------------------------------------------------------------------------------
def inspector(home, argv, timeout=60):
    """Run the guide's `npx @modelcontextprotocol/inspector@2.12.0 ...` offline against the
    pinned install (tests/clients/node_modules), from the user's home folder."""
    assert argv[:2] == ["npx", "-y"], argv
    command = ["npx", "--offline", "--prefix", str(REPO / "tests" / "clients"), *argv[2:]]
    return subprocess.run(command, cwd=home, env=node_env(home), capture_output=True,
                          text=True, timeout=timeout)


def inspector_config(home):
    path = home / "inspector.json"
    path.write_text(personal(recipe("MCP Inspector", "json"), home))
    return path


def inspector_cli(home, *extra):
    argv = shlex.split(inline_command("MCP Inspector", "npx -y @modelcontextprotocol/inspector"))
    assert "--cli" in argv and argv[argv.index("--config") + 1] == "inspector.json"
    inspector_config(home)
    return inspector(home, argv + list(extra))


def test_inspector_is_pinned_in_the_recipe_and_in_package_json():
    pins = json.loads((REPO / "tests" / "clients" / "package.json").read_text())
    version = pins["dependencies"]["@modelcontextprotocol/inspector"]
    assert f"@modelcontextprotocol/inspector@{version}" in readme_section()
    assert f"**MCP Inspector** ({version}" in readme_section()


@pytest.mark.usefixtures("node")
def test_inspector_cli_recipe_lists_the_notes_of_the_folder_its_config_shares(home):
    done = inspector_cli(home)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert text_of(result).startswith("4 nota(s) dentro de las roots:")
    assert [n["id"] for n in result["structuredContent"]["notes"]] == NOTES
    assert "[notas] ready on stdio" in done.stderr


@pytest.mark.usefixtures("node")
def test_inspector_cli_recipe_gives_the_same_list_at_2026_07_28(home):
    done = inspector_cli(home, "--protocol-era", "modern")
    assert done.returncode == 0, done.stderr
    assert [n["id"] for n in json.loads(done.stdout)["structuredContent"]["notes"]] == NOTES


@pytest.mark.usefixtures("node")
def test_inspector_cli_without_elicitation_deletes_nothing_and_exits_5(home):
    argv = shlex.split(inline_command("MCP Inspector", "npx -y @modelcontextprotocol/inspector"))
    argv[argv.index("notes_list")] = "notes_delete"
    inspector_config(home)
    before = sorted(p.name for p in (home / "Notas").iterdir())
    done = inspector(home, argv + ["--tool-arg", "title=TPS report"])
    assert done.returncode == 5, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["isError"] is True and "elicitation" in text_of(result)
    assert sorted(p.name for p in (home / "Notas").iterdir()) == before


@pytest.mark.usefixtures("node")
def test_inspector_without_a_config_sees_no_note_and_is_told_why(home):
    """What the guide warns about: Inspector 2.x declares roots and shares an empty list,
    the server allows only what both the client and --root allow, so no note is listed; and
    (issue 10) the answer says that no folder was shared instead of a bare "0 nota(s)"."""
    argv = ["npx", "-y", "@modelcontextprotocol/inspector@2.12.0", "--cli", "python3", MAIN,
            "serve", "--root", str(home / "Notas"), "--method", "tools/call",
            "--tool-name", "notes_list"]
    result = json.loads(inspector(home, argv).stdout)
    assert not (result.get("structuredContent") or {}).get("notes")
    assert "note-1" not in text_of(result)
    assert "carpeta" in text_of(result), text_of(result)


@pytest.mark.usefixtures("node")
def test_inspector_without_a_config_is_told_its_client_shared_no_folder(home):
    """Issue 10: a refusal that comes from an empty boundary says so, in Spanish, and says
    how to share a folder; "(ninguna)" alone does not tell the user what to do."""
    target = (home / "Notas" / "nueva.md").as_uri()
    argv = ["npx", "-y", "@modelcontextprotocol/inspector@2.12.0", "--cli", "python3", MAIN,
            "serve", "--root", str(home / "Notas"), "--method", "tools/call",
            "--tool-name", "notes_write", "--tool-arg", f"uri={target}", "title=Nueva",
            "body=hola"]
    done = inspector(home, argv)
    result = json.loads(done.stdout)
    assert result["isError"] is True
    assert "carpeta" in text_of(result), text_of(result)
    assert not (home / "Notas" / "nueva.md").exists()


@pytest.mark.usefixtures("node")
def test_inspector_web_recipe_starts_with_the_config_on_loopback(home, tmp_path):
    """The web UI cannot be clicked here without a browser harness; this checks that its
    command line is accepted, that it serves its page on 127.0.0.1 and loads the config."""
    import socket
    import time
    import urllib.request

    argv = shlex.split(inline_command("MCP Inspector", "npx -y @modelcontextprotocol/inspector"
                                                      "@2.12.0 --config"))
    assert "--cli" not in argv
    inspector_config(home)
    ports = []
    for _ in range(3):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    env = dict(node_env(home), CLIENT_PORT=str(ports[0]), SERVER_PORT=str(ports[1]),
               MCP_SANDBOX_PORT=str(ports[2]), HOST="127.0.0.1", MCP_AUTO_OPEN_ENABLED="false",
               BROWSER="none")
    command = ["npx", "--offline", "--prefix", str(REPO / "tests" / "clients"), *argv[2:]]
    log = (tmp_path / "web.log").open("w")
    proc = subprocess.Popen(command, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/", timeout=5) as page:
                    assert page.status == 200
                    break
            except OSError:
                assert proc.poll() is None, (tmp_path / "web.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "web.log").read_text()
                time.sleep(0.5)
        output = (tmp_path / "web.log").read_text()
        assert f"http://127.0.0.1:{ports[0]}" in output
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
        log.close()


# -- the official Python SDK -------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_python_sdk_recipe_prints_the_notes(home, tmp_path, mode):
    code = recipe("The official Python SDK", "python")
    assert 'mode="legacy", ' in code
    if mode == "auto":  # what the guide says: drop mode="legacy" to get the default
        code = code.replace('mode="legacy", ', "")
    script = tmp_path / "receta.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=REPO, env=python_env(home),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "4 nota(s) dentro de las roots:"
    assert "- note-1: Lista de la compra (2025-06-01)" in lines


# -- the official TypeScript SDK ---------------------------------------------------------------
@pytest.mark.usefixtures("node")
def test_typescript_sdk_recipe_prints_the_notes(home, tmp_path):
    pins = json.loads((REPO / "tests" / "clients" / "package.json").read_text())
    version = pins["dependencies"]["@modelcontextprotocol/sdk"]
    assert f"npm install @modelcontextprotocol/sdk@{version}" in readme_section()
    project = tmp_path / "proyecto"
    project.mkdir()
    (project / "node_modules").symlink_to(REPO / "tests" / "clients" / "node_modules")
    (project / "notas.mjs").write_text(recipe("The official TypeScript SDK", "js"))
    done = subprocess.run([shutil.which("node"), str(project / "notas.mjs")], cwd=REPO,
                          env=dict(python_env(home)), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "4 nota(s) dentro de las roots:"
    assert "- note-1: Lista de la compra (2025-06-01)" in lines


# -- over HTTP (serve --http) -------------------------------------------------------------------
GUIDE_URL = "http://127.0.0.1:8000/mcp"


def http_serve_command():
    lines = [line for line in recipe("Over HTTP", "bash").splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return shlex.split(lines[0])


def test_the_http_recipe_serves_where_its_clients_connect():
    argv = http_serve_command()
    assert argv[:3] == ["python3", "code/main.py", "serve"]
    assert argv[argv.index("--http") + 1] == "127.0.0.1:8000"
    claude = shlex.split(inline_command("Over HTTP", "claude mcp add"))
    assert claude == ["claude", "mcp", "add", "--transport", "http", "notas", GUIDE_URL]
    config = json.loads(recipe("MCP Inspector over HTTP", "json"))
    assert config["mcpServers"]["notas"]["url"] == GUIDE_URL


@pytest.mark.usefixtures("node")
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_over_http_lists_the_notes_of_the_folder_its_config_shares(home, era):
    """The guide's server (on a free port instead of 8000, which may be taken here) and the
    guide's Inspector configuration and command, at both protocol eras."""
    from http_support import Served
    argv = http_serve_command()
    folder = argv[argv.index("--root") + 1].replace("~", str(home))
    server = Served("--root", folder, cwd=home)
    try:
        config = personal(recipe("MCP Inspector over HTTP", "json"), home)
        (home / "inspector.json").write_text(config.replace(GUIDE_URL, server.url))
        command = shlex.split(inline_command("MCP Inspector over HTTP", "npx -y"))
        done = inspector(home, command + (["--protocol-era", "modern"] if era == "modern"
                                          else []))
    finally:
        assert server.stop() == 143, server.log
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["content"][0]["text"].startswith("4 nota(s) dentro de las roots:")
    assert [n["id"] for n in result["structuredContent"]["notes"]] == NOTES
