"""Helpers for the foreign-client tests: the pinned Node toolchain, the guide's recipes, the
TypeScript SDK driver (ts_driver.mjs) and a scripted browser for the setup page."""

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NOTES_SERVER = REPO / "tests" / "notes_server"
if str(NOTES_SERVER) not in sys.path:
    sys.path.insert(0, str(NOTES_SERVER))

from server_support import MAIN, serve_argv  # noqa: E402

MODULES = HERE / "node_modules"
BIN = MODULES / ".bin"
DRIVER = HERE / "ts_driver.mjs"
SYSTEM_NODE = shutil.which("node")
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


# -- the Node toolchain -----------------------------------------------------------------------
def require_node():
    """Skip (with the reason) when Node.js or the pinned packages are missing; under CI=true
    with Node present a missing install is a failure, never a silent skip."""
    if SYSTEM_NODE is None or shutil.which("npm") is None:
        pytest.skip("Node.js/npm are not installed: the TypeScript SDK and MCP Inspector tests "
                    "need them (install Node.js >= 20, then `make clients`).")
    if not (MODULES / ".package-lock.json").exists():
        message = ("tests/clients/node_modules is missing: run `make clients` (npm ci of the "
                   "pinned TypeScript SDK and MCP Inspector).")
        if os.environ.get("CI") == "true":
            pytest.fail(message + " CI has Node, so these tests must run.")
        pytest.skip(message)


def node_env(home):
    """The environment of a Node client: the pinned node_modules/.bin first (the Inspector
    needs Node >= 22.19, pinned there), HOME in the test's folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("npm_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env.setdefault("MCP_INSPECTOR_SECRET_STORE", "memory")
    env["npm_config_update_notifier"] = "false"  # HOME moved: ~/.npmrc is not read
    return env


# -- the maintainers' guide ---------------------------------------------------------------------
GUIDE = "MAINTAINERS.md"  # where the client recipes live (README.md links it)


def readme_section(title="Using the server with real clients"):
    """The section `title` of the maintainers' guide, where the recipes are."""
    text = (REPO / GUIDE).read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def recipe(label, lang):
    """The first ```lang block after the paragraph that starts with **label**."""
    section = readme_section()
    start = section.index(f"**{label}**")
    match = re.compile(rf"```{lang}\n(.*?)```", re.S).search(section, start)
    assert match, f"no ```{lang} block after **{label}** in {GUIDE}"
    return match.group(1)


def inline_command(label, starts_with):
    """The first `inline code` after **label** that starts with `starts_with`."""
    section = re.sub(r"```.*?```", "", readme_section(), flags=re.S)
    start = section.index(f"**{label}**")
    for match in re.finditer(r"`([^`]+)`", section[start:]):
        if match.group(1).startswith(starts_with):
            return " ".join(match.group(1).split())
    raise AssertionError(f"no `{starts_with}...` command after **{label}** in {GUIDE}")


# -- the TypeScript SDK driver ----------------------------------------------------------------
class Report:
    def __init__(self, events):
        self.events = events
        final = [e for e in events if e["event"] in ("report", "crash")]
        assert final, f"the driver printed no report: {events[-3:]}"
        assert final[-1]["event"] == "report", f"the driver crashed: {final[-1]}"
        self.data = final[-1]
        self.steps = self.data["steps"]
        self.messages = self.data["messages"]

    def step(self, index):
        step = self.steps[index]
        assert step["index"] == index, step
        return step

    def elicitations(self):
        return [e for e in self.events if e["event"] == "elicitation"]

    def received(self, method=None, response_to=None):
        found = []
        for entry in self.messages:
            message = entry["message"]
            if entry["dir"] != "in":
                continue
            if method is not None and message.get("method") != method:
                continue
            if response_to is not None and ("method" in message
                                            or message.get("id") != response_to):
                continue
            found.append(entry)
        return found

    def sent(self, method):
        return [e for e in self.messages if e["dir"] == "out"
                and e["message"].get("method") == method]


def scenario(*, sdk="v1", era="legacy", serve=(), trace=None, roots=(),
             elicitation=None, answers=(), steps=()):
    return {"sdk": sdk, "era": era,
            "server": {"command": serve_argv()[0],
                       "args": serve_argv(*serve, trace=trace)[1:], "cwd": str(REPO)},
            "roots": None if roots is None else [Path(r).as_uri() for r in roots],
            "elicitation": elicitation, "answers": list(answers), "steps": list(steps)}


class Driver:
    """ts_driver.mjs running in the background; its events can be awaited as they come."""

    def __init__(self, spec, workdir, timeout=120):
        self.path = Path(workdir) / f"scenario-{time.monotonic_ns()}.json"
        self.path.write_text(json.dumps(spec))
        self.events = []
        self._new = threading.Condition()
        self.timeout = timeout
        self.proc = subprocess.Popen([SYSTEM_NODE, str(DRIVER), str(self.path)], cwd=HERE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=node_env(workdir), text=True)
        self._errors = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        threading.Thread(target=lambda: self._errors.put(self.proc.stderr.read()),
                         daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self._new:
                self.events.append(json.loads(line))
                self._new.notify_all()

    def wait(self, predicate, timeout=30):
        with self._new:
            if not self._new.wait_for(lambda: any(predicate(e) for e in self.events), timeout):
                raise AssertionError(f"no such driver event within {timeout} s: "
                                     f"{[e['event'] for e in self.events]}")
            return next(e for e in self.events if predicate(e))

    def report(self):
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the TypeScript driver did not finish") from None
        self._reader.join(timeout=5)
        stderr = self._errors.get(timeout=5)
        assert self.proc.returncode == 0, f"driver exit {self.proc.returncode}: {stderr[-2000:]}"
        return Report(self.events)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_driver(spec, workdir, timeout=120):
    driver = Driver(spec, workdir, timeout)
    try:
        return driver.report()
    finally:
        driver.stop()


# -- a person at the setup page ---------------------------------------------------------------
def complete_setup_page(url, decision="allow"):
    """GET the page the URL elicitation points at, then press its button (POST the form)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        page = response.read().decode()
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page))
    fields["decision"] = decision
    parts = urllib.parse.urlsplit(url)
    action = f"{parts.scheme}://{parts.netloc}/connect"
    with urllib.request.urlopen(action, urllib.parse.urlencode(fields).encode(),
                                timeout=10) as response:
        return response.read().decode()


def text_of(result):
    return "\n".join(block.get("text", "") for block in result.get("content", []))


__all__ = ["MAIN", "REPO", "INSPECTOR", "Driver", "Report", "complete_setup_page",
           "inline_command", "node_env", "readme_section", "recipe", "require_node",
           "run_driver", "scenario", "text_of"]
