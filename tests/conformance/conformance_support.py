"""Running the pinned official suite (package.json here; `make clients` installs it with the
Node it needs) and reading what it found: one `checks.json` per scenario run."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NOTES_SERVER = REPO / "tests" / "notes_server"
if str(NOTES_SERVER) not in sys.path:
    sys.path.insert(0, str(NOTES_SERVER))

from server_support import CODE, MAIN  # noqa: E402

BIN = HERE / "node_modules" / ".bin"
SUITE, NODE = BIN / "conformance", BIN / "node"
FIXTURE = HERE / "fixture.py"
CLIENT_DRIVER = HERE / "client_driver.py"
FAILED = ("FAILURE",)  # a scenario fails when one of its checks does (a WARNING does not)
RUN_DIR = re.compile(r"^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")  # a scenario's results


def require_suite():
    """Skip (saying how to install it) when the pinned suite or its Node is missing; under
    CI=true that is a failure, never a skip."""
    if SUITE.exists() and NODE.exists():
        return
    message = ("the official MCP conformance suite is not installed: run `make clients` (npm ci "
               "in tests/conformance: @modelcontextprotocol/conformance and Node 22).")
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail("CI=true, so this is a failure, not a skip: " + message, pytrace=False)
    pytest.skip(message)


def node_env(home):
    """The suite's environment: the pinned Node first on PATH, HOME in the test's folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("npm_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env["NOTES_CODE_DIR"] = str(CODE)
    return env


def suite(*args, home, timeout=600):
    """Run `conformance ARGS`; its CompletedProcess (it exits 1 when any scenario fails)."""
    return subprocess.run([str(NODE), str(SUITE), *map(str, args)], cwd=home, env=node_env(home),
                          capture_output=True, text=True, timeout=timeout)


def known_scenarios(home):
    """Every scenario name this version of the suite knows (servers and clients)."""
    names = set()
    for side in ("--server", "--client"):
        listed = suite("list", side, home=home, timeout=120)
        names |= set(re.findall(r"^\s+- (\S+)", listed.stdout, re.M))
    return names


def results(folder):
    """{scenario: [checks]} from a run's output folder (-o): `server-NAME-TIME/checks.json`
    for a server scenario, `NAME-TIME/checks.json` for a client one (NAME may hold a /)."""
    found = {}
    for checks in sorted(Path(folder).rglob("checks.json")):
        match = RUN_DIR.match(checks.parent.relative_to(folder).as_posix())
        if match:
            found[match[1]] = json.loads(checks.read_text())
    return found


def failures(checks):
    return [c for c in checks if c.get("status") in FAILED]


def describe(found, names):
    """What failed in these scenarios, one line per failing check."""
    lines = []
    for name in sorted(names):
        for check in failures(found.get(name, [])):
            lines.append(f"{name}: {check.get('id')}: {check.get('errorMessage', '')[:300]}")
    return "\n".join(lines)


def client_command():
    return f"{sys.executable} {CLIENT_DRIVER}"


def serve_command(*args):
    return [sys.executable, "-I", MAIN, "serve", *map(str, args)]
