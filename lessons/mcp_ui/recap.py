"""Small things for the last notebooks: a self-check quiz and a guided tour of code/.

`quiz` draws one multiple-choice question per entry, each with its own «Comprobar» button and
explanation. `code_tour` lists the modules of code/ in reading order (each after the modules
it imports), with their length and what to look for in each.

Deliberate simplifications: the quiz keeps no score, and the tour's notes are fixed text.
"""

from __future__ import annotations

import ipywidgets as w
from IPython.display import display

from .env import CODE
from .text import esc


def quiz(questions) -> None:
    """Self-check questions: (question, [options], index of the right one, explanation).

    Displays itself and returns None: as the last line of a cell, a returned widget would
    be drawn a second time below the first.
    """
    rows = []
    for number, (question, options, right, why) in enumerate(questions, 1):
        choice = w.RadioButtons(options=options, value=None,
                                layout=w.Layout(width="max-content"))
        verdict = w.HTML()
        button = w.Button(description="Comprobar", layout=w.Layout(width="auto"))

        def check(_, choice=choice, verdict=verdict, right=right, why=why, options=options):
            if choice.value is None:
                verdict.value = "<i>Elige una opción.</i>"
            elif options.index(choice.value) == right:
                verdict.value = f"<span style='color:#1e6b30'>✓ Correcto. {esc(why)}</span>"
            else:
                verdict.value = f"<span style='color:#c0392b'>✗ No. {esc(why)}</span>"
        button.on_click(check)
        rows.append(w.VBox([w.HTML(f"<b>{number}. {esc(question)}</b>"), choice,
                            w.HBox([button, verdict])],
                           layout=w.Layout(margin="0 0 10px 0")))
    display(w.VBox(rows))


# code/ in import order: each module comes after the ones it uses.
CODE_GUIDE = {
    "protocol.py": "las constantes del cable: versiones, claves de _meta, códigos de error",
    "wire.py": "JSON-RPC 2.0, un objeto JSON por línea",
    "dirfd.py": "carpetas abiertas: actuar por nombre desde un descriptor, sin seguir enlaces",
    "roots.py": "qué carpetas permitió el usuario, si una ruta real está dentro; abrirlas",
    "store.py": "las notas en disco, siempre desde la carpeta abierta, y los handles abiertos",
    "elicitation.py": "qué modo puede usar cada cliente; el único sitio que revisa formularios",
    "url_mode.py": "modo URL: la guarda de la demo, la política de URLs y el estado de cada flujo",
    "request_state.py": "el requestState sellado con HMAC de 2026-07-28",
    "tooling.py": "qué es una herramienta: Tool, ok, ToolError",
    "context.py": "lo que ve una herramienta (ctx): roots, notas y preguntas al usuario",
    "server.py": "el servidor, su configuración y los dos ganchos de los ejercicios",
    "setup_page.py": "la página local que hace de proveedor en el modo URL",
    "tools.py": "las herramientas: listar, escribir, borrar (con desambiguación), configurar",
    "session.py": "el núcleo de un solo hilo: las dos revisiones, llamadas aparcadas y repetidas",
    "transport.py": "cómo llega el núcleo al mundo: stdio con hilos, o un bucle asyncio",
    "extension.py": "cómo se enchufa tu solución al servidor sin tocar code/",
    "client_core.py": "el cliente sin E/S: una llamada con formulario, de principio a fin",
    "client.py": "ese cliente con esperas que bloquean (la demo, las pruebas, el corrector)",
    "async_client.py": "ese cliente en un bucle asyncio (el que usan estos cuadernos)",
    "simulated_user.py": "el usuario y el navegador simulados (LESSON_USER=scripted)",
    "demo.py": "la demo completa que imprime el cable",
    "main.py": "la entrada: `demo` o `serve`",
}


def code_tour() -> None:
    """The modules of code/ in reading order, with what to look for in each (Spanish)."""
    files = {p.name: p for p in CODE.glob("*.py")}
    for name in [*CODE_GUIDE, *sorted(set(files) - set(CODE_GUIDE))]:
        if name in files:
            lines = len(files[name].read_text(encoding="utf-8").splitlines())
            print(f"code/{name:<17}{lines:>4} líneas  {CODE_GUIDE.get(name, '')}")
