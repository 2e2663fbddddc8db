"""A real JupyterHub on 127.0.0.1 for the course's hub test (tests/hub/test_hub.py).

    env = binder_env()                 # a fresh venv built from binder/ (cached in build/)
    hub = start_hub(tmp, env, users=("ana", "beto"))   # the hub, its proxy, two learners
    hub.login(page, "ana"); page.goto(hub.url + "/user/ana/lab")
    stop_hub(hub)                      # SIGTERM to the hub and every process it started

What runs, and why:
- the hub and every learner's Jupyter server come from `binder_env()`: a fresh venv made with
  this Python from binder/requirements.txt, which is what repo2docker installs on Binder (no
  Docker here). It is kept in build/hub-env/ while binder/ and requirements.txt are unchanged
  (pip's own cache and the machine's wheels make the first build about a minute);
- JupyterHub's proxy is configurable-http-proxy from npm, pinned by tests/hub/package-lock.json
  (`make clients` installs it); the hub's DummyAuthenticator takes any listed user with one
  shared password; the hub's public URL is set (c.JupyterHub.public_url), as a class's hub has;
- the spawner is SimpleLocalProcessSpawner: every learner's server is a local process in a home
  of its own (tmp/home/<name>/, with a copy of the course in curso/), running as this test's
  user. Not LocalProcessSpawner with one system user each: the course's pinned Python lives
  under root's home (0700) on these machines, so another uid could not run it. What the cross-
  user checks need is real all the same: the second learner logs in through the hub in a
  browser of their own, and the direct loopback request is made by a separate system user
  (`other_uid()`, removed afterwards) with Debian's python3, as another learner's code on a
  shared hub machine would make it.

Every wait waits for a state (a port answering, a log line), bounded by tests/waits.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "browser"))
from lab import SETTINGS, copy_course  # noqa: E402
from waits import PATIENCE  # noqa: E402

ENV_DIR = REPO / "build" / "hub-env"
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
MISSING_PROXY = ("configurable-http-proxy is not installed in tests/hub/node_modules: run "
                 "`make clients` (needs node and npm)")
BINDER = (REPO / "binder" / "requirements.txt", REPO / "binder" / "runtime.txt",
          REPO / "requirements.txt")


def _fingerprint() -> str:
    digest = hashlib.sha256(sys.version.encode())
    for path in BINDER:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def binder_env(log=print) -> Path:
    """The Binder environment: a venv made from binder/requirements.txt (built once per
    version of binder/ and requirements.txt; raises with pip's output if pip fails)."""
    stamp = ENV_DIR / ".binder-fingerprint"
    if stamp.is_file() and stamp.read_text() == _fingerprint() \
            and (ENV_DIR / "bin" / "jupyterhub-singleuser").exists():
        return ENV_DIR
    shutil.rmtree(ENV_DIR, ignore_errors=True)
    log(f"hub test: building {ENV_DIR.relative_to(REPO)} from binder/requirements.txt")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(ENV_DIR)], check=True)
    done = subprocess.run([str(ENV_DIR / "bin" / "python"), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", "-r",
                           str(REPO / "binder" / "requirements.txt")],
                          capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError("pip could not build the Binder environment:\n"
                           + (done.stdout + done.stderr)[-4000:])
    stamp.write_text(_fingerprint())
    return ENV_DIR


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Hub:
    home: Path            # the hub's folder: config, database, log, learners' homes
    port: int
    proc: subprocess.Popen
    users: tuple
    password: str
    url: str = field(init=False)

    def __post_init__(self):
        self.url = f"http://127.0.0.1:{self.port}"

    def user_home(self, user: str) -> Path:
        return self.home / "home" / user

    def scratch(self, user: str) -> Path:
        return self.home / "tmp" / user

    def log(self) -> str:
        try:
            return (self.home / "hub.log").read_text(errors="replace")
        except OSError:
            return ""

    def login(self, page, user: str) -> None:
        """Log `user` in through the hub's login form (the page's context keeps the cookie)."""
        page.goto(f"{self.url}/hub/login")
        page.locator("#username_input").fill(user)
        page.locator("#password_input").fill(self.password)
        page.locator("#login_submit").click()
        page.wait_for_url(lambda url: "/hub/login" not in url)

    def as_lab(self, user: str) -> UserLab:
        return UserLab(self, user)


@dataclass
class UserLab:
    """What tests/browser's helpers need of a lab (notebook_url), for one hub user."""

    hub: Hub
    user: str

    def notebook_url(self, relpath: str, workspace: str | None = None) -> str:
        prefix = f"lab/workspaces/{quote(workspace)}" if workspace else "lab"
        return f"{self.hub.url}/user/{self.user}/{prefix}/tree/{quote(str(relpath))}"


CONFIG = '''
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.JupyterHub.public_url = "http://127.0.0.1:{port}/"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {home!r} + "/proxy.pid"
c.JupyterHub.db_url = "sqlite:///" + {home!r} + "/hub.sqlite"
c.JupyterHub.cookie_secret_file = {home!r} + "/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = set({users!r})
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {home!r} + "/home/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {patience}
c.Spawner.http_timeout = {patience}
c.Spawner.args = {args!r}


def _in(sub):
    return lambda spawner: {home!r} + "/" + sub.format(user=spawner.user.name)


c.Spawner.environment = {{
    "TMPDIR": _in("tmp/{{user}}"), "JUPYTER_CONFIG_DIR": _in("jupyter/{{user}}/config"),
    "JUPYTER_DATA_DIR": _in("jupyter/{{user}}/data"),
    "JUPYTER_RUNTIME_DIR": _in("jupyter/{{user}}/runtime"),
    "IPYTHONDIR": _in("jupyter/{{user}}/ipython"),
    "JUPYTERLAB_SETTINGS_DIR": _in("jupyter/{{user}}/settings"),
    "JUPYTERLAB_WORKSPACES_DIR": _in("jupyter/{{user}}/workspaces"),
    "JUPYTER_PREFER_ENV_PATH": "1"}}
'''


def start_hub(home: Path, env: Path, users=("ana", "beto"), timeout: float = PATIENCE) -> Hub:
    """A JupyterHub on 127.0.0.1 serving `users`, each with a copy of the course in
    ~/curso; returns once its API answers. Its log is home/hub.log."""
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    for user in users:
        copy_course(home / "home" / user / "curso")
        jupyter = home / "jupyter" / user
        for sub in ("config", "data", "runtime", "ipython", "workspaces"):
            (jupyter / sub).mkdir(parents=True)
        for (extension, plugin), values in SETTINGS.items():
            folder = jupyter / "settings" / "@jupyterlab" / extension
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{plugin}.jupyterlab-settings").write_text(json.dumps(values))
        (home / "tmp" / user).mkdir(parents=True)
    port, password = free_port(), secrets.token_urlsafe(12)
    args = ["--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly", "--LabApp.expose_app_in_browser=True"]
    if os.geteuid() == 0:
        args.append("--allow-root")
    (home / "jupyterhub_config.py").write_text(CONFIG.format(
        port=port, hub_port=free_port(), api_port=free_port(), proxy=str(PROXY),
        home=str(home), password=password, users=list(users), patience=int(timeout),
        singleuser=str(env / "bin" / "jupyterhub-singleuser"), args=args))
    server_env = {k: v for k, v in os.environ.items()
                  if not k.startswith(("LESSON_", "JUPYTER", "JPY_"))}
    server_env["PATH"] = f"{env / 'bin'}{os.pathsep}{server_env.get('PATH', '')}"
    with open(home / "hub.log", "wb") as log:
        proc = subprocess.Popen([str(env / "bin" / "jupyterhub"), "-f",
                                 str(home / "jupyterhub_config.py")], cwd=home, env=server_env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    hub = Hub(home, port, proc, tuple(users), password)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the hub exited ({proc.returncode}):\n{hub.log()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{hub.url}/hub/api", timeout=5) as answer:
                if answer.status == 200:
                    return hub
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            stop_hub(hub)
            raise RuntimeError(f"the hub did not answer in {timeout:.0f} s:\n"
                               f"{hub.log()[-4000:]}")
        time.sleep(0.2)  # polling a port: nothing to wait on but the port itself


def stop_hub(hub: Hub, grace: float = 15.0) -> None:
    """SIGTERM to the hub and to every process it started (its proxy, the learners' servers
    and their kernels), by PID; SIGKILL to whatever is left after `grace`."""
    import psutil

    try:
        family = psutil.Process(hub.proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    family.append(hub.proc)
    for proc in family:
        pid = proc.pid
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        hub.proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    for proc in family:
        try:
            if proc.pid != hub.proc.pid and proc.is_running() \
                    and proc.status() != psutil.STATUS_ZOMBIE:
                proc.wait(1)
        except (psutil.NoSuchProcess, psutil.TimeoutExpired):
            pass
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if hub.proc.poll() is None:
        hub.proc.wait(5)


# -- another local user of the hub's machine ---------------------------------------------------
class OtherUser:
    """A system user made for the test (useradd, removed by `remove()`): another learner's
    code on a shared hub machine, which can connect to 127.0.0.1 but owns nothing of ours."""

    def __init__(self):
        self.name = "hubtest-" + secrets.token_hex(4)
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", self.name], check=True, capture_output=True)
        entry = pwd.getpwnam(self.name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid

    def fetch(self, url: str, method: str = "GET", data: str | None = None,
              cookie: str | None = None) -> tuple[int, str]:
        """One HTTP request made by this user (setpriv + Debian's python3): (status, body)."""
        script = ("import sys, urllib.request, urllib.error\n"
                  "url, method, data, cookie = sys.argv[1:5]\n"
                  "req = urllib.request.Request(url, method=method, data=data.encode() or None)\n"
                  "req.add_header('Content-Type', 'application/x-www-form-urlencoded')\n"
                  "if cookie: req.add_header('Cookie', cookie)\n"
                  "try:\n"
                  "    r = urllib.request.urlopen(req, timeout=30)\n"
                  "except urllib.error.HTTPError as e:\n"
                  "    r = e\n"
                  "print(r.status if hasattr(r, 'status') else r.code)\n"
                  "print(r.read().decode('utf-8', 'replace'))\n")
        done = subprocess.run(["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}",
                               "--clear-groups", "--no-new-privs", "/usr/bin/python3", "-I",
                               "-c", script, url, method, data or "", cookie or ""],
                              capture_output=True, text=True, timeout=60, cwd="/")
        assert done.returncode == 0, done.stderr
        status, _, body = done.stdout.partition("\n")
        return int(status), body

    def remove(self) -> None:
        subprocess.run(["userdel", self.name], capture_output=True)


def can_make_users() -> str | None:
    """None when this test can make a system user and act as it, else why not."""
    if os.geteuid() != 0:
        return "the cross-user check makes a system user (useradd): run as root"
    for tool in ("useradd", "userdel", "setpriv"):
        if shutil.which(tool) is None:
            return f"{tool} is missing"
    if not os.access("/usr/bin/python3", os.X_OK):
        return "/usr/bin/python3 (Debian's) is missing"
    return None
