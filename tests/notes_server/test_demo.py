"""The demo: stdlib only, the real wire, in Spanish, fast, and it leaves nothing behind.

By default each message that crosses is one short line; `--full` prints its JSON. Both show
every message, in the same order: the tests on the wire's content read the full frames, and
the brief ones are checked against them."""

import ast
import glob
import os
import re
import subprocess
import sys

import pytest

from server_support import CODE, MAIN

DEBIAN_PYTHON = "/usr/bin/python3"


def run_demo(*args, python=sys.executable, env=None):
    return subprocess.run([python, "-I", "-S", MAIN, *args], capture_output=True, text=True,
                          timeout=60, env=env)


def leftovers(folder):
    return set(glob.glob(os.path.join(folder, "notas-demo-*")))


@pytest.fixture(scope="module")
def transcript():
    """The demo's full frames (2025-11-25, `--full`), run once for the tests that only read
    them."""
    return run_demo("--full").stdout


@pytest.fixture(scope="module")
def brief():
    """What a learner sees by default (2025-11-25): each message in one line."""
    return run_demo().stdout


FULL_FRAME = re.compile(r'\{"jsonrpc": "2\.0", (?:"id": (\d+), )?(?:"method": "([^"]+)"|'
                        r'"(?:result|error)")')
def frames(out):
    """[(direction, id, method or "⤷" for an answer)] of the messages a transcript shows, in
    order (a frame wrapped over several lines is one)."""
    found = []
    for line in out.splitlines():
        if line.startswith(("  C→S ", "  S→C ")):
            who, text = line[2:5], line[6:]
            full = FULL_FRAME.match(text)
            if text.startswith("{"):
                assert full, line
                found.append((who, full[1] and int(full[1]), full[2] or "⤷"))
                continue
            if text.startswith("⤷ #"):
                found.append((who, int(text[3:].split()[0]), "⤷"))
            elif text.startswith("#"):
                number, method = text[1:].split()[:2]
                found.append((who, int(number), method))
            else:
                found.append((who, None, text.split()[0]))
    return found


def section(out, title):
    """The transcript of the one section whose `════ ...` heading names `title`, up to the
    next heading (the banner above the sections may use the same words), with its line
    wrapping undone: every run of whitespace becomes one space."""
    chunks = out.split("\n════ ")[1:]
    found = [chunk for chunk in chunks if title in chunk.split("\n", 1)[0]]
    assert len(found) == 1, f"no single section named {title!r}"
    return " ".join(found[0].split("\n", 1)[1].split())


@pytest.mark.parametrize("args", [(), ("demo",), ("--protocol", "2026-07-28"), ("--full",)])
def test_demo_runs_isolated_without_site_packages_and_exits_zero(args, tmp_path):
    private = str(tmp_path)  # its own TMPDIR: other processes' demos cannot race the check
    done = run_demo(*args, env={**os.environ, "TMPDIR": private})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert leftovers(private) == set() and os.listdir(private) == []


@pytest.mark.skipif(not os.access(DEBIAN_PYTHON, os.X_OK), reason="no system python3 here")
def test_demo_runs_on_the_system_python_with_nothing_installed():
    assert run_demo(python=DEBIAN_PYTHON).returncode == 0


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_by_default_every_message_is_one_line_and_full_prints_the_same_messages(protocol):
    brief_run = run_demo("--protocol", protocol).stdout
    full_run = run_demo("--protocol", protocol, "--full").stdout
    shown = frames(brief_run)
    assert len(shown) > 20 and shown == frames(full_run)
    continued = [line for line in brief_run.splitlines() if line.startswith(" " * 6)]
    assert len(continued) <= 2, continued  # one line each, but for a long URL's
    assert "--full" in brief_run.split("════ Conexión")[0]  # said right at the start
    assert '"jsonrpc"' not in brief_run


def test_the_brief_lines_say_what_a_learner_follows(brief):
    out = brief
    for line in ("C→S #1 initialize 2025-11-25, declara roots, elicitation (form, url)",
                 "S→C #1 roots/list", "C→S ⤷ #1 roots: Notas",
                 "C→S #3 tools/call notes_delete",
                 "S→C #2 elicitation/create form: note_id, confirm", "C→S ⤷ #2 decline",
                 "C→S ⤷ #3 cancel", 'C→S ⤷ #4 accept {"note_id": "note-7", "confirm": true}',
                 "C→S notifications/roots/list_changed", "S→C ⤷ #2 resultado, status: manual",
                 "S→C ⤷ #10 error -32042: URL elicitation required (data.elicitations: 1 URL)",
                 "S→C notifications/elicitation/complete elicitationId",
                 "resultado, status: configured"):
        assert line in out, line
    assert re.search(r"S→C #6 elicitation/create url http://127\.0\.0\.1:\d+/connect", out)


def test_demo_shows_the_three_scenarios_on_the_wire_in_spanish(transcript):
    out = transcript
    for heading in ("Escenario 1 · Camino feliz", "Escenario 2 · Desambiguación",
                    "Escenario 3 · Escritura fuera de las roots", "Las roots cambian",
                    "modo URL"):
        assert section(out, heading)
    for frame in ('"method": "initialize"', '"method": "roots/list"',
                  '"method": "elicitation/create"', '"mode": "form"', '"action": "decline"',
                  '"action": "cancel"'):
        assert frame in out, frame
    assert '"method": "notifications/roots/list_changed"' in section(out, "Las roots cambian")
    assert "SDK mcp 2.3.0" in out


def test_demo_url_mode_section_shows_the_2025_url_request_and_its_completion(transcript):
    url_mode = section(transcript, "modo URL")
    assert '"status": "manual"' in url_mode  # the form-only client first
    assert '"mode": "url"' in url_mode and '"elicitationId":' in url_mode
    assert '"method": "notifications/elicitation/complete"' in url_mode
    assert '"status": "configured"' in url_mode


def test_demo_deletes_exactly_the_chosen_note_and_writes_nothing_outside(transcript):
    out = transcript
    assert "Borrada la nota note-7 (TPS report, 2024-04-10)" in out
    assert out.count("« ✓ No se borró nada") == 2
    assert out.count("« ✗ No escribí nada") == 2
    assert out.rstrip().endswith("📁 Trabajo/: plan.md")
    assert "📁 Notas-privadas/: diario.md\n" in out
    assert "📁 Notas/: ideas.md, tps-2023.md, tps-2025.md" in out


def test_stateless_demo_shows_input_required_and_no_list_changed():
    out = run_demo("--protocol", "2026-07-28", "--full").stdout
    assert '"resultType": "input_required"' in out and '"inputResponses"' in out
    roots_change = section(out, "Las roots cambian")
    assert '"method": "roots/list"' in roots_change  # the roots travel as an input request
    assert "notifications/roots/list_changed\"" not in roots_change
    url_mode = section(out, "modo URL")
    assert '"mode": "url"' in url_mode and '"inputResponses"' in url_mode
    assert '"status": "configured"' in url_mode
    assert '"elicitationId"' not in url_mode  # the key is gone in 2026-07-28 (the text may
    assert "notifications/elicitation/complete\"" not in url_mode  # still name them)


def test_demo_says_which_sdk_version_it_simulates_and_that_its_guard_ignores_it():
    out = run_demo("--sdk-version", "1.22.0", "--full").stdout
    assert "SDK mcp 1.22.0" in out
    url_mode = section(out, "modo URL")
    assert "una guarda fija" in url_mode and "ejercicio 3" in url_mode
    assert '"mode": "url"' in url_mode  # the demo's fixed guard does not look at the version


# The one package code/ may load that is not the standard library: the Redis client of
# `serve --spent-states redis://...`, imported inside the function that opens that store only.
OPTIONAL = {("spent_states.py", "redis")}


def test_code_imports_nothing_outside_the_standard_library():
    local = {path.stem for path in CODE.glob("*.py")} | {  # its top modules, its layers
        folder.name for folder in CODE.iterdir() if (folder / "__init__.py").is_file()}
    for path in CODE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        in_functions = {id(node) for function in ast.walk(tree)
                        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                        for node in ast.walk(function)}
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                top = name.split(".")[0]
                if (path.name, top) in OPTIONAL and id(node) in in_functions:
                    continue  # loaded only when asked for, never at import time
                assert top in sys.stdlib_module_names or top in local, f"{path.name}: {name}"
