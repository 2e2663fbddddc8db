"""Real-browser harness: a private headless JupyterLab driven by Debian's chromium.

The pytest fixtures that use this live in tests/browser/conftest.py. The functions here
also work outside pytest::

    lab = start_lab(root_dir)            # JupyterLab on 127.0.0.1:<free port>, random token
    open_notebook(page, lab, "x.ipynb")  # waits for "Python 3 (ipykernel) | Idle"
    run_all(page)                        # notebook:run-all-cells, then waits for idle
    screenshot(page, "x")                # -> tests/artifacts/x.png
    stop_lab(lab)                        # SIGTERM to its process group, SIGKILL if needed

One cell at a time, as a learner with Shift+Enter::

    wait_for_cell(page, run_cell(page, 2))   # -> the text of its outputs

A run that pauses for clicks (a form waits for the learner) is split in two::

    start_run_all(page)                  # returns as soon as the first cell started
    ...click what the notebook asks...
    wait_until_all_ran(page)             # no cell left at [*], kernel idle
    notebook_cells(page)                 # the cells as nbformat dicts, outputs included

For the lessons: copy_course(dest) makes a private copy of the course (JupyterLab autosaves
what it runs), write_starter_solutions() fills its soluciones/ the way notebooks 01-03 do, and
type_in_solutions() puts solutions into the notebooks' exercise cells, as a learner would.

Every wait here waits for a state (the status bar's "Idle", a cell's execution count, no
cell at [*]) and is bounded by tests/waits.py, which says why: PATIENCE, plus the seconds a
notebook's cells wait on purpose for a whole run.

Pitfalls handled (see the environment notes): --allow-root when root; wait for the
status-bar text, not the toolbar indicator, before running (otherwise a "Select Kernel"
dialog swallows the run); news toast disabled and notebook windowing off through the
settings dir; Run All through window.jupyterapp (needs --LabApp.expose_app_in_browser=True);
the Debian chromium, never a browser that Playwright downloads itself.
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # tests/, outside pytest too
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from course_notebooks import write_lessons  # noqa: E402
from waits import PATIENCE, ms, wait_until_current  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
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
    "Playwright's own browser download cannot work here: its CDN is not reachable."
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

    def notebook_url(self, relpath: str, workspace: str | None = None) -> str:
        """The notebook's URL; a named workspace keeps tabs opened by other pages away."""
        prefix = f"lab/workspaces/{quote(workspace)}" if workspace else "lab"
        return self.url(f"{prefix}/tree/{quote(str(relpath))}")

    def api(self, path: str, method: str = "GET") -> object:
        """Call a JSON endpoint of the server, e.g. lab.api("api/kernelspecs")."""
        req = urllib.request.Request(f"{self.base_url}/{path.lstrip('/')}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=PATIENCE) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """End every notebook session (and its kernel), e.g. between tests sharing a server."""
        for session in self.api("api/sessions"):
            self.api(f"api/sessions/{session['id']}", method="DELETE")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SETTINGS = {
    # Suppresses the "get notified about official Jupyter news?" toast.
    ("apputils-extension", "notification"): {"fetchNews": "false", "checkForUpdates": False},
    # Every cell attached and laid out normally. With the default "contentVisibility",
    # offscreen cells get their real height only when drawn, so the layout can shift under
    # a click while a run fills outputs. Seen with it (not since): a radio click that did
    # not register, and the notebook panel painted blank for the 30 s of an assertion.
    ("notebook-extension", "tracker"): {"windowingMode": "none"},
}


def _write_settings(settings_dir: Path) -> None:
    for (extension, plugin), values in SETTINGS.items():
        folder = settings_dir / "@jupyterlab" / extension
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{plugin}.jupyterlab-settings").write_text(json.dumps(values))


def start_lab(root_dir: str | os.PathLike, *, timeout: float = PATIENCE, attempts: int = 3,
              env: Mapping[str, str | None] | None = None) -> Lab:
    """Start JupyterLab serving ``root_dir``; return once /api/status answers 200.

    ``env`` changes the environment of the server and of its kernels (None removes a
    variable), e.g. ``{"LESSON_USER": None, "TMPDIR": "/some/dir"}``. A server that exits
    before it answers is started again, on another free port (``attempts`` in all): between
    picking a free port and binding it, another process may take it, and nothing can make
    that observation deterministic.
    """
    root = Path(root_dir).resolve()
    last_error = ""
    for _ in range(attempts):  # retry only if the server dies early (e.g. port race)
        home = Path(tempfile.mkdtemp(prefix="jupyterlab-harness-"))
        server_env = dict(os.environ)
        for var, value in (env or {}).items():
            if value is None:
                server_env.pop(var, None)
            else:
                server_env[var] = value
        for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                         ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]:
            (home / sub).mkdir()
            server_env[var] = str(home / sub)
        server_env["JUPYTER_PREFER_ENV_PATH"] = "1"
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
            proc = subprocess.Popen(cmd, cwd=root, env=server_env, stdin=subprocess.DEVNULL,
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


def wait_for_idle(page, timeout: float = ms(PATIENCE)) -> None:
    """Wait until the status bar says the Python 3 kernel is idle."""
    page.locator("#jp-main-statusbar").get_by_text(KERNEL_IDLE).first.wait_for(
        state="visible", timeout=timeout
    )


def open_notebook(page, lab: Lab, relpath: str, timeout: float = ms(PATIENCE),
                  workspace: str | None = None) -> None:
    """Open ``relpath`` (relative to the lab's root_dir) and wait until it is the current tab
    and its kernel is idle."""
    page.goto(lab.notebook_url(relpath, workspace), timeout=timeout)
    wait_until_current(page, relpath, timeout)
    wait_for_idle(page, timeout)


_NOTEBOOK = "window.jupyterapp.shell.currentWidget.content"
_RUNNING = ("[...document.querySelectorAll('.jp-InputArea-prompt')]"
            ".some(p => p.textContent.includes('[*]'))")
_STARTED = (f"() => {_RUNNING} || {_NOTEBOOK}.widgets"
            ".some(c => c.model.type === 'code' && c.model.executionCount !== null)")


def clear_all_outputs(page) -> None:
    """Clear every output and execution count of the current notebook (stored outputs
    could otherwise pass for the ones a run is expected to produce)."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.wait_for_function(f"() => {_NOTEBOOK}.widgets.every(c => c.model.type !== 'code' || "
                           "(c.model.executionCount === null && c.model.outputs.length === 0))")


def start_run_all(page, timeout: float = ms(PATIENCE)) -> None:
    """Run All without waiting for the end (a form may pause the run until someone clicks);
    returns once a cell is running or has run. Clear the outputs first (clear_all_outputs)."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(_STARTED, timeout=timeout)


def wait_until_all_ran(page, deliberate: float = 0.0) -> None:
    """Wait until no cell is queued or running ([*]) and the kernel is idle: PATIENCE, plus
    the seconds the cells still to run wait on purpose (waits.deliberate_waits).

    A cell that raises stops Run All: the cells after it end up never run, which
    notebook_cells() shows as execution_count None.
    """
    timeout = ms(PATIENCE + deliberate)
    page.wait_for_function(f"() => !{_RUNNING}", timeout=timeout)
    wait_for_idle(page, timeout)


def run_all(page, deliberate: float = 0.0) -> None:
    """Run every cell of the current notebook and wait until the kernel is idle again."""
    start_run_all(page)
    wait_until_all_ran(page, deliberate)


def notebook_cells(page) -> list[dict]:
    """The current notebook's cells as JupyterLab holds them (nbformat dicts with source,
    execution_count and outputs)."""
    return page.evaluate(f"() => {_NOTEBOOK}.widgets.map(c => c.model.toJSON())")


def copy_course(dest: str | os.PathLike) -> Path:
    """A private copy of the course (code/, lessons/, grader/) in ``dest``, as a learner has
    it: without the learner's soluciones/, caches, or anything instructor-only (the reference,
    the hidden tests), so the instructors' source and the student edition copy the same.
    Returns ``dest``."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from editions.common import INSTRUCTOR_ONLY, matches

    root = Path(dest)
    # (".tmp-nbval-*": tests/notebooks/test_lesson_notebooks's scratch copies, which come and
    # go in lessons/ while another group of make test copies it)
    plain = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "soluciones",
                                   ".tmp-nbval-*")

    def skip(folder, names):
        inside = Path(folder).relative_to(REPO).as_posix()
        return plain(folder, names) | {name for name in names
                                       if matches(f"{inside}/{name}", INSTRUCTOR_ONLY)
                                       or matches(f"{inside}/{name}/", INSTRUCTOR_ONLY)}

    for name in ("code", "lessons", "grader"):
        shutil.copytree(REPO / name, root / name, ignore=skip)
    write_lessons(root / "lessons")  # the course's notebooks, not a learner's workspace
    return root


def scratch_notebook(tmp_path: Path, name: str, cells: list[str]) -> tuple[Path, Path]:
    """A private course in ``tmp_path`` with one more notebook in its lessons/, ``name``, made
    of these code cells; returns (its lessons/ folder, an empty folder for the lab's TMPDIR)."""
    import nbformat

    lessons = copy_course(tmp_path / "curso") / "lessons"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, lessons / name)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    return lessons, scratch


def code_cell(page, index: int):
    """The notebook's ``index``-th code cell."""
    return page.locator(".jp-Notebook .jp-CodeCell").nth(index)


# A scratch notebook's first cells: the lab and its connection, then a call that asks a form.
LAB_CELL = ("import mcp_ui as ui\n\nlab = ui.NotesLab(quiet=True)\n"
            "conn = await lab.connect(quiet=True)")
FORM_CALL = 'await conn.call("notes_delete", {"title": "TPS report"})'
# An open dialog (a form or a consent) in the page: a box whose row of buttons still answers.
OPEN_DIALOG = ".widget-vbox:has(> .widget-hbox > button.widget-button:enabled)"
WRITEFILE = re.compile(r"^%%writefile (soluciones/(?:ejercicio\d+[ab]?|reto)\.py)[ \t]*$")


def _exercise_cells(lessons: Path):
    """(notebook path, notebook JSON, cell, "soluciones/ejercicioN.py") for every starter."""
    for notebook in sorted(p for p in lessons.glob("*.ipynb") if not p.name.startswith(".")):
        data = json.loads(notebook.read_text(encoding="utf-8"))
        for cell in data["cells"]:
            source = cell["source"]
            source = "".join(source) if isinstance(source, list) else source
            match = WRITEFILE.match(source.partition("\n")[0])
            if cell["cell_type"] == "code" and match:
                yield notebook, data, cell, match[1]


def type_in_solutions(lessons: str | os.PathLike, solutions: str | os.PathLike) -> list[str]:
    """Replace the body of every `%%writefile soluciones/ejercicioN.py` cell of the notebooks
    in ``lessons`` by ``solutions``/ejercicioN.py, as a learner who solved it would have;
    returns the notebooks changed."""
    lessons, changed = Path(lessons), []
    for notebook, data, cell, target in _exercise_cells(lessons):
        body = (Path(solutions) / Path(target).name).read_text(encoding="utf-8")
        cell["source"] = f"%%writefile {target}\n{body.rstrip()}".splitlines(keepends=True)
        notebook.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                            encoding="utf-8")
        changed.append(notebook.name)
    return changed


def write_starter_solutions(lessons: str | os.PathLike) -> list[str]:
    """Write the starter of every exercise (the `%%writefile soluciones/...` cells of the
    notebooks) into ``lessons``/soluciones, as running notebooks 01-03 does; returns the
    files written."""
    lessons, written = Path(lessons), []
    for _, _, cell, target in _exercise_cells(lessons):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        path = lessons / target
        path.parent.mkdir(exist_ok=True)
        path.write_text(source.partition("\n")[2] + "\n", encoding="utf-8")
        written.append(target)
    return written


def screenshot(page, name: str) -> Path:
    """Save a PNG of the viewport to tests/artifacts/<name>.png and return the path.

    JupyterLab scrolls inside its own panel, so full_page would not capture more.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") + ".png")
    page.screenshot(path=str(path))
    return path


def run_cell(page, index: int) -> int:
    """Run only the cell at ``index`` (as Shift+Enter would), its old outputs cleared first,
    without waiting; returns the index for wait_for_cell."""
    page.evaluate("""index => {
        const notebook = window.jupyterapp.shell.currentWidget.content;
        const cell = notebook.widgets[index];
        cell.model.outputs.clear();
        cell.model.executionCount = null;
        notebook.activeCellIndex = index;
        window.jupyterapp.commands.execute('notebook:run-cell');
    }""", index)
    return index


def wait_for_cell(page, index: int, timeout: float = ms(PATIENCE)) -> str:
    """Wait until the cell at ``index`` has run (not queued or running); returns the text of
    its outputs."""
    page.wait_for_function("""index => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
        const prompt = cell.node.querySelector('.jp-InputArea-prompt');
        return cell.model.executionCount !== null && !prompt.textContent.includes('[*]');
    }""", arg=index, timeout=timeout)
    return page.evaluate("""index => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
        return cell.node.querySelector('.jp-OutputArea') ?
            cell.node.querySelector('.jp-OutputArea').innerText : '';
    }""", index)
