"""`ui.diagnostico()`: is this notebook set up for the lesson? Each line says what to fix.

It checks, and says in Spanish:

- the kernel: Python's version, and where the notebook runs when that can be told (JupyterLite,
  JupyterLab or Jupyter Server, VS Code, Colab, JupyterHub, Codespaces);
- how notebook 3's setup page is shown there and why (where.py): a real page on 127.0.0.1, the
  same page through a JupyterHub's proxy, or the simulation drawn in the notebook;
- the widget packages against the pinned versions: ipywidgets, jupyterlab_widgets and
  ipykernel from requirements.txt, or in JupyterLite the wheels the site was built with
  (editions/lite/piplite-wheels.txt, packed into the course wheel as `course_lite.pins()`);
- the widget channel, with a real round trip the learner triggers: a button whose click the
  kernel answers by changing the text under it (the forms need exactly this);
- which self-check host `ui.revisar` will use (grader/hosts/): the sandbox on Linux when it
  can start, the portable host elsewhere, the in-process host in the browser.

`diagnostico()` displays a table plus the button and returns the `Diagnosis` (its `rows` are
`Finding`s; the tests read them).

Deliberate simplifications: the frontend is recognised by the environment variables its
kernels get, which a custom launcher may not set ("no se reconoce" is then said plainly);
versions are compared for equality with the pins, not for compatibility.
"""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata

import ipywidgets as w
from IPython.display import display

from .env import REPO, import_grader
from .focus import keep_selection
from .text import esc
from .where import HUB, INLINE, LOCAL, Place, where

PYTHON_MINIMUM = (3, 11, 5)  # tools/lab.py's (JupyterLab's HTML sanitiser needs it)
WIDGET_PACKAGES = ("ipywidgets", "jupyterlab_widgets", "ipykernel")
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", re.M)
# A finding's status: a word too, since an emoji alone can render as an empty box
MARKS = {True: "✅ bien", False: "❌ arréglalo", None: "ℹ️ información"}
TEXT_MARKS = {True: "✓ bien", False: "✗ arréglalo", None: "· información"}


@dataclass
class Finding:
    what: str
    ok: bool | None  # None: nothing to check here (said for information)
    found: str
    fix: str = ""


@dataclass
class Diagnosis:
    rows: list[Finding] = field(default_factory=list)
    probe: ClickProbe | None = None

    def to_text(self) -> str:
        return "\n".join(f"{TEXT_MARKS[r.ok]} {r.what}: {r.found}"
                         + (f" → {r.fix}" if r.fix else "") for r in self.rows)

    def to_html(self) -> str:
        rows = "".join(f"<tr><td style='white-space:nowrap'>{MARKS[r.ok]}</td>"
                       f"<td><b>{esc(r.what)}</b></td>"
                       f"<td style='text-align:left'>{esc(r.found)}</td>"
                       f"<td style='text-align:left'>{esc(r.fix)}</td></tr>" for r in self.rows)
        return ("<table style='font-size:92%'><tr><th></th><th>Qué</th><th>Encontrado</th>"
                f"<th>Qué hacer</th></tr>{rows}</table>")

    def show(self) -> None:
        display({"text/plain": self.to_text(), "text/html": self.to_html()}, raw=True)
        if self.probe is not None:
            display(self.probe.box)

    def _ipython_display_(self):
        """Nothing: `diagnostico()` already drew it (as a cell's last value it would be twice)."""


def in_browser() -> bool:
    return sys.platform == "emscripten"


def frontend(environ=os.environ, modules=sys.modules) -> str:
    """Where this kernel runs, as far as its environment tells."""
    if in_browser():
        return "JupyterLite"
    if "google.colab" in modules or "COLAB_RELEASE_TAG" in environ:
        return "Colab"
    if any(name.startswith("VSCODE_") for name in environ):
        return "VS Code"
    if environ.get("CODESPACES") == "true":
        return "Codespaces"
    if "JUPYTERHUB_API_URL" in environ or "JUPYTERHUB_USER" in environ:
        return "JupyterHub"
    if "JPY_SESSION_NAME" in environ or "JPY_PARENT_PID" in environ:
        return "JupyterLab"
    return ""


def kernel_finding(where: str) -> Finding:
    version = platform.python_version()
    if in_browser():
        return Finding("Kernel", True, f"Python {version} en el navegador (Pyodide, "
                       "JupyterLite)", "")
    if sys.version_info[:3] < PYTHON_MINIMUM:
        return Finding("Kernel", False, f"Python {version}",
                       f"usa Python {'.'.join(map(str, PYTHON_MINIMUM))} o posterior "
                       "(`python3 tools/lab.py` lo comprueba y prepara el entorno)")
    return Finding("Kernel", True, f"Python {version} ({sys.executable})", "")


def frontend_finding(where: str) -> Finding:
    if where == "Colab":
        return Finding("Dónde se ejecuta", None, where,
                       "si los formularios no aparecen, Colab no está dibujando los widgets de "
                       "ipywidgets 8: usa un JupyterHub, JupyterLab en tu máquina (`make lab` "
                       "o `python3 tools/lab.py`) o la edición JupyterLite")
    if where == "VS Code":
        return Finding("Dónde se ejecuta", None, "VS Code",
                       "funciona con el entorno .venv como kernel; si los formularios no "
                       "aparecen, instala la extensión Jupyter y sus renderizadores de widgets")
    if where:
        return Finding("Dónde se ejecuta", True, where, "")
    return Finding("Dónde se ejecuta", None, "no se reconoce (¿otra interfaz, o sin interfaz?)",
                   "los formularios necesitan una interfaz con widgets: JupyterLab, "
                   "JupyterLite o VS Code")


PAGE_MODES = {LOCAL: "real, en http://127.0.0.1:<puerto> (se abre en una pestaña nueva)",
              HUB: "real, a través del hub: {url}proxy/<puerto>/… (pestaña nueva, con tu "
                   "sesión)",
              INLINE: "simulada: el cuaderno dibuja la página (mismo servidor, mismos clics)"}


def page_finding(place: Place) -> Finding:
    """How notebook 3's setup page (URL mode) is shown here, and why (where.py)."""
    found = PAGE_MODES[place.page].format(url=place.public_url)
    return Finding("Página del modo URL (cuaderno 3)", None if place.page == INLINE else True,
                   found, "por qué: " + place.why
                   + ("; LESSON_PAGE=local fuerza la página real si tu navegador llega al "
                      "127.0.0.1 del kernel (un túnel SSH)" if place.page == INLINE
                      and place.name != "JupyterLite" else ""))


def pins() -> tuple[dict[str, str], str]:
    """{normalized name: version} of the pins that apply here, and where they come from."""
    if in_browser():
        try:
            import course_lite
            return _parse(course_lite.pins()), "las versiones con que se construyó la web"
        except (ImportError, AttributeError, OSError):
            return {}, ""
    requirements = REPO / "requirements.txt"
    if requirements.is_file():
        return _parse(requirements.read_text(encoding="utf-8")), "requirements.txt"
    return {}, ""


def _parse(text: str) -> dict[str, str]:
    return {_norm(name): version for name, version in PIN.findall(text)}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_findings(pinned: dict[str, str], source: str) -> list[Finding]:
    rows = []
    for name in WIDGET_PACKAGES:
        have, want = installed(name), pinned.get(_norm(name))
        if in_browser() and name != "ipywidgets":
            shown = have or "—"
            rows.append(Finding(name, None, f"{shown} (lo pone el kernel de JupyterLite)"))
            continue
        if have is None:
            rows.append(Finding(name, False, "no instalado",
                                f"instala las versiones fijadas: `make venv` o "
                                f"`python3 tools/lab.py` ({name}=={want or '?'})"))
        elif want is None:
            rows.append(Finding(name, None, f"{have} (sin versión fijada aquí)"))
        elif have != want:
            rows.append(Finding(name, False, f"{have}; fijada: {want} ({source})",
                                "abre el cuaderno con el entorno del curso (`make lab` o "
                                "`python3 tools/lab.py`): con otras versiones los formularios "
                                "pueden no esperar tu clic"))
        else:
            rows.append(Finding(name, True, f"{have} (la fijada en {source})"))
    return rows


def selfcheck_finding(environ=os.environ) -> Finding:
    """Which host `ui.revisar` uses (review.py runs the grader with `--host auto`)."""
    if not (REPO / "grader").is_dir():
        return Finding("Autoevaluación (ui.revisar)", False, "no está la carpeta grader/",
                       "usa la edición para estudiantes completa (incluye el corrector)")
    if in_browser():
        return Finding("Autoevaluación (ui.revisar)", None, "en esta misma página del "
                       "navegador, sin aislamiento ni límites",
                       "un bucle infinito en tu solución bloquea la pestaña; la nota la pone "
                       "el corrector oficial")
    import_grader()
    from grader.hosts import kinds

    forced = environ.get("GRADER_HOST")
    if forced:
        return Finding("Autoevaluación (ui.revisar)", None, f"{forced} (GRADER_HOST)", "")
    if kinds.sandbox_possible():
        return Finding("Autoevaluación (ui.revisar)", True,
                       "el corrector aislado, como en la calificación", "")
    return Finding("Autoevaluación (ui.revisar)", None,
                   "modo local (sin aislamiento): tu solución corre como un programa normal "
                   "de tu ordenador", "es una autoevaluación; la nota la pone el corrector "
                   "oficial")


class ClickProbe:
    """A button whose click the kernel answers: the widget channel, both ways."""

    def __init__(self):
        self.shown_at = time.monotonic()
        self.clicks = 0
        self.button = w.Button(description="Pulsa aquí para probar el clic",
                               button_style="primary", layout=w.Layout(width="auto"))
        self.answer = w.HTML("<span style='color:#555'>⏳ Esperando tu clic: pulsa el botón. "
                             "Si en unos segundos no aparece aquí la confirmación, los clics no "
                             "llegan al kernel (revisa ipywidgets y jupyterlab_widgets "
                             "arriba).</span>")
        self.button.on_click(self.clicked)
        self.box = keep_selection(w.VBox([self.button, self.answer]))
        self.box.add_class("mcp-click-probe")

    def clicked(self, _button) -> None:
        self.clicks += 1
        self.answer.value = ("<span style='color:#1e6b30'>✓ El clic llegó al kernel y esta "
                             "respuesta volvió a la página: los formularios funcionarán.</span>")


def diagnostico() -> Diagnosis:
    """Check the set-up for the lesson and say what to fix (see the module's doc)."""
    name = frontend()
    pinned, source = pins()
    diagnosis = Diagnosis([kernel_finding(name), frontend_finding(name), page_finding(where()),
                           *package_findings(pinned, source), selfcheck_finding()],
                          ClickProbe())
    diagnosis.show()
    return diagnosis
