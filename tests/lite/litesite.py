"""Harness for the JupyterLite edition: build, serve on 127.0.0.1, drive in Debian chromium.

Used by tests/lite/conftest.py and benchmarks/lite_bench.py; also works alone::

    site = build_site(stage_probe_content(tmp), REPO / "build" / "lite-test")
    server = serve(site.out)                    # python3 -m http.server on a free port
    with NetworkRecorder() as proxy:            # every non-loopback request lands here
        browser = chromium.launch(executable_path=find_chromium(),
                                  args=chromium_args(proxy.port))
        page = ...; blocked = guard_network(page.context, server.url)
        open_notebook(page, server.url, "probe/lite_probe.ipynb")   # -> kernel idle
        run_cell(page, "PROBE:imports"); wait_output(page, "PROBE:imports", "PROBE-IMPORT")
    server.stop()                               # by PID

Cells are found by a marker in their source (e.g. ``# PROBE:form``); a cell without one is
found by its position (``cell_at``). Every wait waits for a state (the status bar's "Idle", a
cell's new execution count, a text in its outputs), bounded by tests/waits.py's PATIENCE.
Nothing here asks anything of a host other than 127.0.0.1: chromium gets a proxy that records
what would have left the machine (and refuses it), and every page request to another origin is
aborted and recorded.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # tests/, outside pytest too
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from waits import PATIENCE, ms, wait_until_current  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ARTIFACTS = REPO / "tests" / "artifacts"
BUILD_SCRIPT = REPO / "editions" / "lite" / "build.py"
LITE_PYTHON = REPO / ".venv-lite" / "bin" / "python"
PROBE_NOTEBOOK = HERE / "probe" / "lite_probe.ipynb"
PROBE_PATH = "probe/lite_probe.ipynb"
KERNEL_IDLE = "Python (Pyodide) | Idle"
# The notebook on show: JupyterLite reopens the tabs of the last visit, hidden behind it.
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def find_chromium() -> str | None:
    """The system chromium ($CHROMIUM, `command -v chromium`, /usr/bin/chromium) or None."""
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def chromium_args(proxy_port: int) -> list[str]:
    """The flags of the environment notes, plus a proxy for everything but loopback
    (chromium always connects to localhost/127.0.0.1 directly)."""
    return [*CHROMIUM_FLAGS, f"--proxy-server=http://127.0.0.1:{proxy_port}"]


def load_build_module():
    """editions/lite/build.py as a module (stdlib only, so any Python can import it)."""
    spec = importlib.util.spec_from_file_location("lite_build", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- build


def student_edition(dest: Path) -> Path:
    """The course folder `make lite` builds from: the student edition. In the instructors'
    source it is built here by editions/release/build.py (as `make release` does); in the
    student edition (no editions/release/build.py) it is this repository."""
    builder = REPO / "editions" / "release" / "build.py"
    if not builder.exists():
        return REPO
    proc = subprocess.run([sys.executable, str(builder), "--out", str(dest)],
                          capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise BuildFailed(f"editions/release/build.py exited {proc.returncode}:\n"
                          f"{(proc.stdout + proc.stderr)[-4000:]}")
    return Path(dest) / "student"


def stage_probe_content(dest: Path, course: Path = REPO) -> Path:
    """The site's content as `make lite` stages it from ``course``, plus the probe notebook
    in probe/."""
    content = load_build_module().stage_course(Path(course), Path(dest))
    (content / "probe").mkdir()
    shutil.copy2(PROBE_NOTEBOOK, content / "probe" / PROBE_NOTEBOOK.name)
    return content


@dataclass
class Build:
    out: Path
    seconds: float
    log: str
    reused: bool


class BuildFailed(RuntimeError):
    pass


def build_site(content: Path, out: Path, *extra: str) -> Build:
    """Run editions/lite/build.py with .venv-lite's Python (skips the work when up to date)."""
    start = time.monotonic()
    proc = subprocess.run([str(LITE_PYTHON), str(BUILD_SCRIPT), "--content", str(content),
                           "--out", str(out), *extra], capture_output=True, text=True,
                          cwd=REPO)
    seconds = time.monotonic() - start
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise BuildFailed(f"editions/lite/build.py exited {proc.returncode}:\n{log[-6000:]}")
    return Build(out, seconds, log, reused="está al día" in log)


# ---------------------------------------------------------------- serving


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    url: str = field(init=False)

    def __post_init__(self) -> None:
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """SIGTERM to this server's process group (its own session), then SIGKILL."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def serve(site: Path, timeout: float = PATIENCE) -> Server:
    """`python3 -m http.server --bind 127.0.0.1 --directory SITE PORT`, as editions/lite/README.md
    tells instructors; returns once it answers. A server that exits first is started again on
    another free port (3 attempts): another process may take the port between picking it and
    binding it, which no wait can make deterministic."""
    for _ in range(3):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                                 "--directory", str(site), str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        server = Server(proc, port)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{server.url}/jupyter-lite.json", timeout=2):
                    return server
            except OSError:
                time.sleep(0.05)
        server.stop()
    raise RuntimeError(f"http.server did not serve {site}")


class NetworkRecorder:
    """An HTTP proxy on 127.0.0.1 that answers 403 to everything and records the request
    line (``CONNECT host:443`` or ``GET http://...``): what would have left the machine."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        recorder = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(PATIENCE)  # chromium may be slow, not silent
                try:
                    line = self.request.makefile("rb").readline(4096)
                    recorder.attempts.append(line.decode("latin-1").strip())
                    self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                                         b"Connection: close\r\n\r\n")
                except OSError:
                    pass

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> NetworkRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


# Chromium itself (not the page) calls these Google services whatever the flags: the
# component and extension updater, sign-in, autofill and optimization hints. They reach the
# recording proxy, which refuses them; any other host there means the site tried to leave.
CHROMIUM_OWN_HOSTS = frozenset({
    "update.googleapis.com",
    "accounts.google.com",
    "content-autofill.googleapis.com",
    "clients2.google.com",
    "optimizationguide-pa.googleapis.com",
})


def proxied_host(request_line: str) -> str:
    """The host of a proxy request line: ``CONNECT h:443 HTTP/1.1`` or ``GET http://h/...``."""
    parts = request_line.split()
    target = parts[1] if len(parts) > 1 else ""
    if parts and parts[0] == "CONNECT":
        return target.rpartition(":")[0] or target
    return urllib.parse.urlsplit(target).hostname or target


def left_the_machine(attempts: list[str]) -> list[str]:
    """Proxy request lines that were not chromium's own housekeeping."""
    return [line for line in attempts if proxied_host(line) not in CHROMIUM_OWN_HOSTS]


def guard_network(context, origin: str) -> dict[str, list[str]]:
    """Abort every request of ``context`` that is not for ``origin``; record it, and every
    failed local request (status >= 400 or no response), and the console errors."""
    seen: dict[str, list[str]] = {"local": [], "blocked": [], "failed": [], "console": []}

    def route(route) -> None:
        url = route.request.url
        if url.startswith(origin + "/") or url == origin:
            seen["local"].append(url)
            route.continue_()
        else:
            seen["blocked"].append(url)
            route.abort("blockedbyclient")

    def response(resp) -> None:
        if resp.status >= 400:
            seen["failed"].append(f"{resp.url} {resp.status}")

    context.route("**/*", route)
    context.on("response", response)
    context.on("requestfailed", lambda req: req.url.startswith(origin) and seen["failed"].append(
        f"{req.url} failed: {req.failure}"))
    context.on("console", lambda msg: msg.type == "error" and seen["console"].append(msg.text))
    return seen


def unexpected_failures(seen: dict[str, list[str]]) -> list[str]:
    """Failed local requests for files of the site ("URL why", as guard_network records them).
    Left out, whether answered 404 or aborted (a page closed while the browser fetched it): the
    favicon no site ships, and contents-API lookups (JupyterLite probes a listing, e.g. while
    making a folder)."""
    def expected(failure: str) -> bool:
        path = urllib.parse.urlsplit(failure.split(" ", 1)[0]).path
        return path.endswith("/favicon.ico") or "/api/contents/" in path
    return [failure for failure in seen["failed"] if not expected(failure)]


# ---------------------------------------------------------------- the notebook


def notebook_url(base: str, path: str) -> str:
    return f"{base}/lab/index.html?path={path}"


def wait_for_kernel_idle(page, timeout: float = ms(PATIENCE)) -> None:
    """Until the status bar reads "Python (Pyodide) | Idle" (the toolbar's idle indicator
    shows before a kernel exists, and a run started then is lost)."""
    page.locator("#jp-main-statusbar").get_by_text(KERNEL_IDLE).first.wait_for(
        state="visible", timeout=timeout)


def open_notebook(page, base: str, path: str, timeout: float = ms(PATIENCE),
                  first_visit: bool = False) -> float:
    """Open ``path`` of the site and wait until it is the current tab and its kernel is idle
    (the status bar speaks of the current tab); returns the seconds it took. `first_visit`:
    the page is in a browser context that never saw the site (nothing saved to restore), so
    the notebook's link is opened at once, as a learner's first visit does."""
    start = time.monotonic()
    # First an empty layout: `?reset` clears the saved workspace (the tabs this browser left
    # open, never the files) and the site shows its Launcher. Otherwise it restores every
    # notebook opened before in this browser, each starting its kernel, and opening ``path``
    # races that restore: under load ``path`` was seen never to get a tab. (`reset` and `path`
    # in one URL do not work: the reset drops the path.)
    if not first_visit:
        page.goto(f"{base}/lab/index.html?reset", timeout=timeout)
        wait_until_current(page, "Launcher", timeout)
    page.goto(notebook_url(base, path), timeout=timeout)
    wait_until_current(page, path, timeout)
    wait_for_kernel_idle(page, timeout)
    return time.monotonic() - start


def cell(page, marker: str):
    """The first code cell whose source contains ``marker`` (markdown may quote it too)."""
    return page.locator(f"{NOTEBOOK} .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea-editor", has_text=marker)).first


def code_cell_at(page, index: int):
    """The notebook's ``index``-th code cell (0: its first code cell)."""
    return page.locator(f"{NOTEBOOK} .jp-CodeCell").nth(index)


def cell_at(page, index: int):
    return page.locator(f"{NOTEBOOK} .jp-Cell").nth(index)


# run_cell watches the cell's prompt: a run always shows `[*]:` first (queued or running), so
# the prompt's number counts only once that was seen. The stored notebook may already show the
# very number (and outputs) this run will give, so neither can tell the run ended by itself.
WATCH_RUN = """prompt => {
    prompt.dataset.run = 'asked';
    new MutationObserver((_, observer) => {
        if (prompt.textContent.includes('*')) {
            prompt.dataset.run = 'started';
            observer.disconnect();
        }
    }).observe(prompt, {childList: true, characterData: true, subtree: true});
}"""
STARTED = "prompt => prompt.dataset.run !== 'asked'"  # no run_cell before: as it shows
RAN = f"""prompt => ({STARTED})(prompt) && /^\\[\\d+\\]:$/.test(prompt.textContent.trim())"""


def run_cell(page, target) -> None:
    """Click into the cell's editor and press Shift+Enter, as a learner does (WATCH_RUN
    lets wait_ran and wait_output tell this run from what the cell showed before)."""
    target = cell(page, target) if isinstance(target, str) else target
    target.locator(".jp-InputArea-prompt").evaluate(WATCH_RUN)
    target.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def output_text(target) -> str:
    """The text of the cell's outputs (an Output widget inside nests its own output area)."""
    area = target.locator(".jp-Cell-outputArea")
    return area.first.inner_text() if area.count() else ""


def error_text(target) -> str:
    errors = target.locator(".jp-OutputArea-output[data-mime-type="
                            "'application/vnd.jupyter.stderr']")
    return "\n".join(errors.all_inner_texts())


def wait_ran(page, target, timeout: float = PATIENCE) -> str:
    """Until the run run_cell started has ended: its prompt went through `[*]:` and shows a
    number again; returns its outputs, fails on a traceback."""
    target = cell(page, target) if isinstance(target, str) else target
    prompt = target.locator(".jp-InputArea-prompt")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if prompt.evaluate(RAN):
            if error_text(target):
                raise AssertionError(f"the cell raised:\n{error_text(target)}")
            return output_text(target)
        time.sleep(0.1)
    raise AssertionError(f"the cell did not finish in {timeout}s: {output_text(target)!r}")


def wait_output(page, target, text: str, timeout: float = PATIENCE) -> str:
    """Until ``text`` shows in the outputs of the run run_cell started (widgets included; a
    run clears the old ones when it starts); fails on a traceback."""
    target = cell(page, target) if isinstance(target, str) else target
    prompt = target.locator(".jp-InputArea-prompt")
    deadline = time.monotonic() + timeout
    shown = ""
    while time.monotonic() < deadline:
        if prompt.evaluate(STARTED):
            shown = output_text(target)
            if text in shown:
                return shown
            if error_text(target):
                raise AssertionError(f"the cell raised:\n{error_text(target)}")
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not show in {timeout}s; the cell shows: {shown!r}")


def wait_finished(page, target, task: bool | None = None, timeout: float = PATIENCE) -> str:
    """Until the run run_cell started has ended and, for a cell that runs as a task (one that
    awaits, or that was queued behind one: lessons/mcp_ui/cells.py), until its panel says it
    finished (`.mcp-cell-done`); returns its outputs, fails on a traceback. ``task=None``: a
    task if its source has a top-level await."""
    target = cell(page, target) if isinstance(target, str) else target
    text = wait_ran(page, target, timeout)
    if task is None:
        from mcp_ui.cells import awaits  # tests/waits.py put lessons/ on sys.path

        task = awaits(target.locator(".jp-InputArea-editor").inner_text())
    if not task:
        return text
    target.locator(".mcp-cell.mcp-cell-done").wait_for(timeout=ms(timeout))
    if error_text(target):
        raise AssertionError(f"the cell raised:\n{error_text(target)}")
    return output_text(target)


def press_shift_enter(page) -> None:
    """Shift+Enter where the keyboard is, without clicking anything first (a learner who
    just answered a form)."""
    page.keyboard.press("Shift+Enter")


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") + ".png")
    page.screenshot(path=str(path))
    return path
