"""Real-browser harness: a private headless JupyterLab driven by Debian's chromium.

The pytest fixtures that use this live in tests/browser/conftest.py. The functions here
also work outside pytest::

    lab = start_lab(root_dir)            # JupyterLab on 127.0.0.1:<free port>, random token
    open_notebook(page, lab, "x.ipynb")  # waits for "Python 3 (ipykernel) | Idle"
    run_all(page)                        # notebook:run-all-cells, then waits for idle
    screenshot(page, "x")                # -> tests/artifacts/x.png
    stop_lab(lab)                        # SIGTERM to its process group, SIGKILL if needed

Pitfalls handled (see the environment notes): --allow-root when root; wait for the
status-bar text, not the toolbar indicator, before running (otherwise a "Select Kernel"
dialog swallows the run); news toast disabled through the settings dir; Run All through
window.jupyterapp (needs --LabApp.expose_app_in_browser=True); no `playwright install`.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
KERNEL_IDLE = "Python 3 (ipykernel) | Idle"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MISSING_CHROMIUM = (
    "chromium not found (looked at $CHROMIUM, `command -v chromium`, /usr/bin/chromium). "
    "Run `make chromium` (as root on Debian: apt-get install chromium). "
    "Do not use `playwright install`: its CDN is not reachable here."
)


def find_chromium() -> str | None:
    """Path of the system chromium (override with $CHROMIUM), or None."""
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class Lab:
    """A running JupyterLab server started by start_lab()."""

    root_dir: Path
    port: int
    token: str
    proc: subprocess.Popen
    home: Path  # temp dir holding the JUPYTER_* dirs and the server log
    base_url: str = field(init=False)

    def __post_init__(self) -> None:
        self.base_url = f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.home / "server.log"

    def url(self, path: str = "lab") -> str:
        return f"{self.base_url}/{path.lstrip('/')}?token={self.token}"

    def notebook_url(self, relpath: str) -> str:
        return self.url(f"lab/tree/{quote(str(relpath))}")

    def api(self, path: str) -> object:
        """GET a JSON endpoint of the server, e.g. lab.api("api/kernelspecs")."""
        req = urllib.request.Request(f"{self.base_url}/{path.lstrip('/')}",
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.load(resp)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings_dir: Path) -> None:
    # Suppresses the "get notified about official Jupyter news?" toast.
    plugin = settings_dir / "@jupyterlab" / "apputils-extension"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )


def start_lab(root_dir: str | os.PathLike, *, timeout: float = 60.0, attempts: int = 3) -> Lab:
    """Start JupyterLab serving ``root_dir``; return once /api/status answers 200."""
    root = Path(root_dir).resolve()
    last_error = ""
    for _ in range(attempts):  # retry only if the server dies early (e.g. port race)
        home = Path(tempfile.mkdtemp(prefix="jupyterlab-harness-"))
        env = dict(os.environ)
        for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                         ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]:
            (home / sub).mkdir()
            env[var] = str(home / sub)
        env["JUPYTER_PREFER_ENV_PATH"] = "1"
        _write_settings(home / "settings")
        port, token = _free_port(), secrets.token_hex(24)
        cmd = [
            sys.executable, "-m", "jupyterlab", "--no-browser",
            f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        with open(home / "server.log", "wb") as log:
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        lab = Lab(root, port, token, proc, home)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                lab.api("api/status")
                return lab
            except (OSError, urllib.error.URLError, ValueError):
                time.sleep(0.2)
        last_error = lab.log()[-3000:]
        exited = proc.poll() is not None
        stop_lab(lab)
        if not exited:
            raise RuntimeError(f"JupyterLab did not answer within {timeout}s:\n{last_error}")
    raise RuntimeError(f"JupyterLab exited during start-up {attempts} times:\n{last_error}")


def stop_lab(lab: Lab, grace: float = 10.0) -> None:
    """Stop the server (and its kernels) by process group / pid, never by name."""
    try:
        import psutil  # comes with ipykernel; lets us reap kernels if SIGTERM is not enough

        children = psutil.Process(lab.proc.pid).children(recursive=True)
    except Exception:
        children = []
    if lab.proc.poll() is None:
        try:
            os.killpg(lab.proc.pid, signal.SIGTERM)  # server start_new_session: pgid == pid
        except ProcessLookupError:
            pass
        try:
            lab.proc.wait(grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(lab.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            lab.proc.wait(5)
    # Kernels run in their own sessions; the server normally shuts them down on SIGTERM.
    for child in children:
        try:
            child.wait(timeout=2)
        except Exception:
            try:
                child.kill()
            except Exception:
                pass
    shutil.rmtree(lab.home, ignore_errors=True)


def wait_for_idle(page, timeout: float = 60_000) -> None:
    """Wait until the status bar says the Python 3 kernel is idle."""
    page.locator("#jp-main-statusbar").get_by_text(KERNEL_IDLE).first.wait_for(
        state="visible", timeout=timeout
    )


def open_notebook(page, lab: Lab, relpath: str, timeout: float = 90_000) -> None:
    """Open ``relpath`` (relative to the lab's root_dir) and wait for an idle kernel."""
    page.goto(lab.notebook_url(relpath), timeout=timeout)
    wait_for_idle(page, timeout)


def run_all(page, timeout: float = 120_000) -> None:
    """Run every cell of the current notebook and wait until the kernel is idle again."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-InputArea-prompt')]"
        ".some(p => p.textContent.includes('[*]'))",
        timeout=timeout,
    )
    wait_for_idle(page, timeout)


def screenshot(page, name: str) -> Path:
    """Save a PNG of the viewport to tests/artifacts/<name>.png and return the path.

    JupyterLab scrolls inside its own panel, so full_page would not capture more.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") + ".png")
    page.screenshot(path=str(path))
    return path
