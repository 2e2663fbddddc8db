"""Where this kernel runs, and so how the learner's browser reaches notebook 03's setup page.

`where()` looks at the kernel's environment (the markers each kind of host sets) and answers a
`Place`: a name for the learner, the page mode, and why (in Spanish, `ui.diagnostico()` shows
it). Three page modes:

- "local": the browser and the kernel are on one machine (JupyterLab on a laptop, VS Code):
  the page is a real web page on http://127.0.0.1:<port>, opened in a new tab;
- "hub": a JupyterHub with jupyter-server-proxy: the same real page, reached through the hub's
  own URL, `<public url>/user/<name>/proxy/<port>/<key>/...`, behind the hub's login
  (hub.py says how it is protected from the other users of the machine);
- "inline": the browser cannot reach the kernel's machine (JupyterLite, Colab, Codespaces, a
  remote Jupyter server, a hub without the proxy or without a public URL): the page is drawn
  inside the notebook, labelled as the simulation it is; the clicks reach the same server.

LESSON_PAGE=simulada (or local, hub) overrides the choice; LESSON_KERNEL=lite gives JupyterLite.

Deliberate simplifications: the markers are environment variables and the Jupyter server's
runtime file, not a probe from the browser; a remote server reached through an SSH tunnel to
its own loopback looks local (LESSON_PAGE=simulada then says otherwise). SSH_CONNECTION is not
taken as a marker: a maintainer running `make test` over SSH would get other outputs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

LOCAL, HUB, INLINE = "local", "hub", "inline"
CHOICES = {"simulada": INLINE, "inline": INLINE, "local": LOCAL, "hub": HUB}


@dataclass(frozen=True)
class Place:
    name: str      # where the kernel runs, for the learner ("JupyterHub", "Colab", ...)
    page: str      # LOCAL, HUB or INLINE
    why: str       # why that page mode, in Spanish
    public_url: str = ""  # HUB: this user's server's public URL (https://hub/user/<name>/)


def where(environ=os.environ, modules=sys.modules, has_module=None,
          runtime_dir: Path | None = None) -> Place:
    """Where this kernel runs and how its setup page is reached (see the module's doc)."""
    has_module = has_module or (lambda name: importlib.util.find_spec(name) is not None)
    if sys.platform == "emscripten" or environ.get("LESSON_KERNEL", "") == "lite":
        return Place("JupyterLite", INLINE, "el kernel corre dentro de tu navegador: no hay "
                     "servidor web, así que el cuaderno dibuja la página (una simulación)")
    place = _detected(environ, modules, has_module, runtime_dir)
    forced = CHOICES.get(environ.get("LESSON_PAGE", "").strip().lower())
    if forced is None or forced == place.page:
        return place
    if forced == HUB and place.page != HUB:
        return Place(place.name, INLINE, "LESSON_PAGE=hub, pero aquí no se puede: "
                     + place.why)
    return Place(place.name, forced, f"lo pide LESSON_PAGE={environ['LESSON_PAGE'].strip()}",
                 place.public_url if forced == HUB else "")


def _detected(environ, modules, has_module, runtime_dir) -> Place:
    if "google.colab" in modules or "COLAB_RELEASE_TAG" in environ:
        return Place("Colab", INLINE, "el kernel corre en una máquina de Google y Colab no "
                     "lleva tu navegador hasta sus puertos: el cuaderno dibuja la página "
                     "(una simulación)")
    if environ.get("CODESPACES") == "true":
        return Place("Codespaces", INLINE, "el kernel corre en la máquina del codespace y su "
                     "127.0.0.1 no es el de tu navegador: el cuaderno dibuja la página (una "
                     "simulación)")
    if environ.get("JUPYTERHUB_SERVICE_PREFIX") or environ.get("JUPYTERHUB_USER"):
        return _hub(environ, has_module)
    server = _jupyter_server(environ, runtime_dir)
    host = urlsplit(server.get("url", "")).hostname or ""
    if host and not _loopback(host):
        return Place("un servidor Jupyter remoto", INLINE, f"tu servidor Jupyter atiende en "
                     f"{host}, no solo en 127.0.0.1: tu navegador puede estar en otra máquina, "
                     "así que el cuaderno dibuja la página (una simulación)")
    name = "VS Code" if any(k.startswith("VSCODE_") for k in environ) else \
        "JupyterLab" if server or "JPY_PARENT_PID" in environ else "esta máquina"
    return Place(name, LOCAL, "el navegador y el kernel están en la misma máquina: la página "
                 "se abre en http://127.0.0.1:<puerto>, en una pestaña nueva")


def _hub(environ, has_module) -> Place:
    """A JupyterHub: through its proxy when jupyter-server-proxy and a public URL are there."""
    if not has_module("jupyter_server_proxy"):
        return Place("JupyterHub", INLINE, "el hub no tiene jupyter-server-proxy (va en "
                     "requirements.txt): tu navegador no puede llegar a la página del kernel, "
                     "así que el cuaderno la dibuja (una simulación)")
    public = public_url(environ)
    if not public:
        return Place("JupyterHub", INLINE, "el hub no dice su dirección pública "
                     "(JUPYTERHUB_PUBLIC_URL vacía: el administrador la fija con "
                     "c.JupyterHub.public_url, o LESSON_PUBLIC_URL): el cuaderno dibuja la "
                     "página (una simulación)")
    return Place("JupyterHub", HUB, "la página se abre a través del propio hub "
                 f"({urlsplit(public).netloc}), con tu sesión: nadie más puede verla",
                 public)


def public_url(environ=os.environ) -> str:
    """This user's server's public URL (ending in /), or "" when the hub does not say it.

    JUPYTERHUB_PUBLIC_URL when the hub sets it (it does when its public_url is configured),
    else LESSON_PUBLIC_URL (the hub's public origin, set by an instructor in the spawner's
    environment) joined with the server's prefix."""
    public = environ.get("JUPYTERHUB_PUBLIC_URL", "").strip()
    if not public:
        origin = environ.get("LESSON_PUBLIC_URL", "").strip().rstrip("/")
        prefix = environ.get("JUPYTERHUB_SERVICE_PREFIX", "")
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or not prefix:
            return ""
        public = f"{parts.scheme}://{parts.netloc}{prefix}"
    parts = urlsplit(public)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return public if public.endswith("/") else public + "/"


def _jupyter_server(environ, runtime_dir=None) -> dict:
    """The runtime file (jpserver-<pid>.json) of the Jupyter server that started this kernel
    (JPY_PARENT_PID), or {}."""
    pid = environ.get("JPY_PARENT_PID", "")
    if not pid.isdigit():
        return {}
    if runtime_dir is None:
        try:
            from jupyter_core.paths import jupyter_runtime_dir
            runtime_dir = Path(jupyter_runtime_dir())
        except ImportError:
            return {}
    try:
        info = json.loads((Path(runtime_dir) / f"jpserver-{pid}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")
