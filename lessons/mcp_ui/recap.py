"""Small things for the notebooks: self-check quizzes and a guided tour of code/.

`quiz("02")` draws the quiz stored in `quizzes/02.json` (next to this module, so the answers
are not in the notebook's source): one multiple-choice question per entry, each with its own
«Comprobar» button, and for the option picked, its own explanation. A quiz file is::

    {"kind": "final" | "precheck",           # optional, "final" by default
     "intro": "text above the questions",    # optional
     "questions": [
       {"question": "…?", "kind": "aplicar" | "recordar",
        "read": "where to read (optional)",
        "options": [{"text": "…", "correct": false, "why": "why this option is (not) it",
                     "read": "where to read about this one (optional)"}, …]}]}

Exactly one option of each question is correct. Every question says what it asks for (`kind`,
required): "aplicar" when it puts the learner in a concrete situation (a scenario, code or a
message to review, a design to choose) and asks what happens or what to do, so that the answer
is not a sentence of the notebook restated; "recordar" when it asks for a fact, a definition or
where something is. An option's text carries no spec keyword (MUST, SHOULD, MAY) and no hedge
(«si acaso», «opcional»): those go in its `why`, so the wording never points at the answer
(tests/notebooks/test_quiz_patterns.py holds the patterns of all the quizzes). A pre-check
(`kind: precheck`, e.g. `quiz("01-previo")` at the start of notebook 1) also says, after each
answer, what to read: the option's `read`, or the question's. `load_quiz(id)` gives the parsed
quiz (the tests and the browser journeys read the key from there). Once a question has been
checked, its verdict follows the option selected now: ipywidgets holds a widget's next update
until the kernel has answered the one before, and a click is never held, so on a busy kernel
«Comprobar» can reach Python before the option picked just before it; the verdict is redone
when that option arrives, instead of speaking of the previous one. `code_tour` lists the
modules of code/ in reading order (each after the modules it imports), with their length and
what to look for.

Deliberate simplifications: the quiz keeps no score and the key is plain JSON in the package:
hidden from the notebook, not from someone who opens the file; the tour's notes are fixed text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w
from IPython.display import display

from .env import CODE
from .focus import keep_selection
from .text import esc

QUIZZES = Path(__file__).resolve().parent / "quizzes"
KINDS = ("final", "precheck")
QUESTION_KINDS = ("aplicar", "recordar")


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    why: str
    read: str = ""


@dataclass(frozen=True)
class Question:
    question: str
    options: tuple[Option, ...]
    read: str = ""
    kind: str = "aplicar"  # what it asks for: QUESTION_KINDS (see the module's doc)

    @property
    def right(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)


@dataclass(frozen=True)
class Quiz:
    id: str
    questions: tuple[Question, ...]
    kind: str = "final"
    intro: str = ""


def load_quiz(quiz_id: str) -> Quiz:
    """The quiz `quizzes/<quiz_id>.json`, checked: ValueError says what is wrong with it."""
    path = QUIZZES / f"{quiz_id}.json"
    if path.parent != QUIZZES or not path.is_file():
        raise ValueError(f"no hay ningún cuestionario llamado {quiz_id!r}")
    data = json.loads(path.read_text(encoding="utf-8"))
    for q in data["questions"]:
        if q.get("kind") not in QUESTION_KINDS:
            raise ValueError(f"{path.name}: every question says its kind, one of "
                             f"{QUESTION_KINDS}: {q.get('question', '')[:60]}")
    questions = tuple(
        Question(q["question"], tuple(Option(o["text"], bool(o["correct"]), o["why"],
                                             o.get("read", "")) for o in q["options"]),
                 q.get("read", ""), q["kind"])
        for q in data["questions"])
    quiz = Quiz(quiz_id, questions, data.get("kind", "final"), data.get("intro", ""))
    if quiz.kind not in KINDS:
        raise ValueError(f"{path.name}: kind must be one of {KINDS}")
    for question in questions:
        if sum(option.correct for option in question.options) != 1:
            raise ValueError(f"{path.name}: exactly one correct option: {question.question}")
    return quiz


def quiz(quiz_id: str) -> None:
    """Draw the quiz `quiz_id` (see the module's doc). Displays itself and returns None: as
    the last line of a cell, a returned widget would be drawn a second time."""
    data = load_quiz(quiz_id)
    rows = [w.HTML(f"<i>{esc(data.intro)}</i>")] if data.intro else []
    for number, question in enumerate(data.questions, 1):
        choice = w.RadioButtons(options=[o.text for o in question.options], value=None,
                                layout=w.Layout(width="max-content"))
        verdict = w.HTML()
        button = w.Button(description="Comprobar", layout=w.Layout(width="auto"))

        checked = []  # this question's «Comprobar» was pressed (see the module's doc)

        def check(_, choice=choice, verdict=verdict, question=question, checked=checked):
            checked.append(True)
            verdict.value = verdict_of(data, question, choice.index)

        def follow(_, choice=choice, verdict=verdict, question=question, checked=checked):
            if checked:
                verdict.value = verdict_of(data, question, choice.index)
        button.on_click(check)
        choice.observe(follow, "index")
        rows.append(w.VBox([w.HTML(f"<b>{number}. {esc(question.question)}</b>"), choice,
                            w.HBox([button, verdict])],
                           layout=w.Layout(margin="0 0 10px 0")))
    display(keep_selection(w.VBox(rows)))


def verdict_of(data, question, index) -> str:
    """What «Comprobar» says for option `index` of `question` (None: nothing picked yet)."""
    if index is None:
        return "<i>Elige una opción.</i>"
    option = question.options[index]
    read = option.read or question.read
    return (f"<span style='color:{'#1e6b30' if option.correct else '#c0392b'}'>"
            f"{'✓ Correcto.' if option.correct else '✗ No.'} {esc(option.why)}</span>"
            + (f"<br><span style='color:#555'>📖 Lee: {esc(read)}</span>"
               if read and (data.kind == "precheck" or not option.correct) else ""))


# code/ from the bottom layer up: each module comes after the ones it uses; then the top of
# code/ (main.py, and the modules a solution imports, each re-exporting one of a layer).
CODE_GUIDE = {
    "shared/protocol.py":
        "las constantes del protocolo: versiones, claves de _meta, códigos de error",
    "shared/wire.py": "JSON-RPC 2.0, un objeto JSON por línea",
    "shared/http_headers.py":
        "las cabeceras HTTP de MCP: qué viaja en ellas y cuándo coinciden; qué revisión habla",
    "notes/dirfd.py":
        "carpetas abiertas: actuar por nombre desde un descriptor, sin seguir enlaces",
    "notes/roots.py": "qué carpetas permitió el usuario, si una ruta real está dentro; abrirlas",
    "notes/note_format.py": "el texto de una nota: la cabecera (id, título, fecha) y el cuerpo",
    "notes/place.py":
        "dónde está un archivo: desde la carpeta abierta de su root, sin seguir enlaces",
    "notes/handles.py": "las notas abiertas (handles) y su comprobación antes de cada lectura",
    "notes/store.py": "las notas en disco: listar, actuar sobre la elegida, escribir en un paso",
    "core/tooling.py": "qué es una herramienta: Tool, ok, ToolError",
    "core/elicitation.py":
        "qué modo puede usar cada cliente; el único sitio que revisa formularios",
    "core/request_state.py": "el requestState firmado con HMAC de 2026-07-28",
    "core/context.py": "lo que ve una herramienta (ctx): roots, notas y preguntas al usuario",
    "core/revisions.py": "una clase por revisión: 2025-11-25 y 2026-07-28, una junto a otra",
    "core/calls.py": "el ciclo de una llamada: se ejecuta, se aparca, se repite y se responde",
    "core/session.py": "el núcleo de un solo hilo: la entrada, el reparto y el handshake",
    "core/spent_states.py": "réplicas: un requestState de un solo uso se gasta una vez en todas",
    "urlflow/url_mode.py":
        "modo URL: la guarda de la demo, la política de URL y el estado de cada flujo",
    "urlflow/setup_page.py": "la página local que hace de proveedor en el modo URL",
    "urlflow/nube_copias.py": "Nube de Copias, el proveedor OAuth simulado del ejercicio 3",
    "transports/transport.py": "cómo llega el núcleo al mundo: stdio con hilos, o un bucle asyncio",
    "transports/http_front.py":
        "la puerta de un servidor HTTP: lee las peticiones sin un hilo por conexión",
    "transports/client_spaces.py":
        "2026-07-28 por HTTP: los handles y preguntas de cada cliente son suyos",
    "transports/http_channels.py":
        "Streamable HTTP por dentro: a qué respuesta va cada mensaje de una sesión",
    "transports/streamable_http.py":
        "el núcleo por Streamable HTTP (`serve --http`), las dos revisiones",
    "transports/page_http.py":
        "la página local servida por HTTP en 127.0.0.1 (o tras el proxy de un JupyterHub)",
    "client/client_core.py": "el cliente sin E/S: una llamada con formulario, de principio a fin",
    "client/sync_client.py":
        "ese cliente con esperas que bloquean (la demo, las pruebas, el corrector)",
    "client/async_client.py": "ese cliente en un bucle asyncio (el que usan estos cuadernos)",
    "client/http_client.py":
        "el cliente de la lección por Streamable HTTP (las réplicas del cuaderno 6)",
    "client/simulated_user.py": "el usuario y el navegador simulados (LESSON_USER=scripted)",
    "lesson/tools.py":
        "las herramientas: listar, escribir, borrar (con desambiguación), configurar",
    "lesson/server.py": "el servidor, su configuración y los dos ganchos de los ejercicios",
    "lesson/extension.py": "cómo se enchufa tu solución al servidor sin tocar code/",
    "cli/demo.py": "la demo completa, que imprime cada mensaje",
    "cli/spanish_cli.py":
        "argparse en español, para las órdenes que ejecutas (el corrector, lab.py)",
    "main.py": "la entrada: `demo` o `serve`",
    "sealkit.py": "las piezas del reto del cuaderno 6: claves, cifrado y etiqueta (no es un AEAD)",
    "tooling.py": "lo que importa tu solución: lo de core/tooling.py",
    "elicitation.py": "lo que importa tu solución: lo de core/elicitation.py",
    "request_state.py": "lo que importa tu solución: lo de core/request_state.py",
    "roots.py": "lo que importa tu solución: lo de notes/roots.py",
    "store.py": "lo que importa tu solución: lo de notes/store.py",
    "nube_copias.py": "lo que importa tu solución: lo de urlflow/nube_copias.py",
    "server.py": "lo que importa tu solución: lo de lesson/server.py",
    "extension.py": "lo que importa tu solución: lo de lesson/extension.py",
}


def code_tour() -> None:
    """The modules of code/ in reading order, layer by layer, with what to look for in each
    (Spanish)."""
    files = {p.relative_to(CODE).as_posix(): p for p in CODE.rglob("*.py")
             if p.name != "__init__.py" and "__pycache__" not in p.parts}
    for name in [*CODE_GUIDE, *sorted(set(files) - set(CODE_GUIDE))]:
        if name in files:
            lines = len(files[name].read_text(encoding="utf-8").splitlines())
            print(f"code/{name:<29}{lines:>4} líneas  {CODE_GUIDE.get(name, '')}")
