"""The lesson on the real wire: three scenarios, then roots changing and URL mode.

The lesson's client (sync_client.py) and the server (server.py, session.py) share this process but
talk only through serialized JSON-RPC lines (transport.Loopback), so every line printed after
`C→S` or `S→C` is exactly what crossed. The user is scripted (simulated_user.ScriptedUser) and
so is the browser (simulated_user.Browser, on the real local setup page). Everything happens
in a temporary folder, removed at the end.

By default every message that crosses is printed as one short line (`brief`): who sent it,
its id, its method (or `⤷` for an answer) and what a learner needs from it (the tool, the form's
fields, the action, the error code...), so the story can be followed without reading every
byte. `python3 code/main.py --full` prints each message's JSON instead.

Deliberate simplifications: long values (requestState, instructions, a result's text and
structured data, which the `«` line under it says whole, or in brief up to its first sentence)
are shortened on screen, in the full frames too; there, the 2026-07-28 `_meta` envelope and a
form asked again unchanged are printed in full once and then only mentioned; the second
client's handshake shows only what it declares; the temporary folder is printed as `/…`.
"""

import json
import os
import tempfile
import textwrap

from client.simulated_user import Browser, ScriptedUser
from client.sync_client import Client
from lesson.server import Config, NotesServer
from notes import store
from shared import wire
from shared.protocol import FORM_MODE, LATEST_HANDSHAKE, STATELESS_VERSION

ABBREVIATE = {"requestState": 24, "instructions": 40, "url": 90, "text": 40}
SAME_FORM = "   (el mismo formulario de antes)"
SHORT_DATA = 60  # a longer structuredContent is shown as "…" (the « line says it in words)
LONG_RESULT = 120  # in brief, a longer result text is shown up to its first sentence

# The lesson's notes: (folder, file, id, title, created). The demo, the notebooks and the
# tests all start from these.
LESSON_NOTES = (
    ("Notas", "compra.md", "note-1", "Lista de la compra", "2025-06-01"),
    ("Notas", "tps-2023.md", "note-3", "TPS report", "2023-04-12"),
    ("Notas", "tps-2024.md", "note-7", "TPS report", "2024-04-10"),
    ("Notas", "tps-2025.md", "note-14", "TPS report", "2025-04-09"),
    ("Notas-privadas", "diario.md", "note-99", "Diario", "2025-01-01"),
    ("Trabajo", "plan.md", "note-21", "Plan del trimestre", "2025-07-01"),
)


def write_lesson_notes(base, notes=LESSON_NOTES, body=lambda note_id: "…\n"):
    """Create the lesson's folders under `base` and write its notes into them.

    They are fixtures, not the server's writes: each note goes to a hidden temporary name and
    is renamed over its target (a server reading it never sees half a note), but it is not
    synced to disk as the server's own writes are (store.write_note): an fsync per fixture
    note made the demo wait on the disk longer than all its imports."""
    for folder in sorted({entry[0] for entry in notes}):
        os.makedirs(os.path.join(base, folder), exist_ok=True)
    for folder, name, note_id, title, created in notes:
        path = os.path.join(base, folder, name)
        temporary = os.path.join(base, folder, f".{name}.{os.getpid()}.tmp")
        with open(temporary, "wb") as out:
            out.write(store.render(note_id, title, created, body(note_id)).encode("utf-8"))
        os.replace(temporary, path)


class Brief:
    """One short line per message: `#id method detail` for a request, `method detail` for a
    notification, `⤷ #id detail` for an answer (what it answers is looked up by its id, per
    direction). Nothing is left out: every message that crosses has its line."""

    def __init__(self):
        self.asked = {}  # (direction of the request, id) -> its method

    def line(self, direction, msg):
        method, params = msg.get("method"), msg.get("params")
        params = params if isinstance(params, dict) else {}
        if method is not None:
            if "id" in msg:
                self.asked[(direction, msg["id"])] = method
                head = f"#{msg['id']} {method}"
            else:
                head = method
            return " ".join(filter(None, (head, self.request(method, params))))
        answered = self.asked.pop(("←" if direction == "→" else "→", msg.get("id")), None)
        if "error" in msg:
            error = msg["error"] if isinstance(msg["error"], dict) else {}
            return f"⤷ #{msg.get('id')} error {error.get('code')}: {error.get('message')}" + \
                self.urls(error.get("data"))
        result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
        return " ".join(filter(None, (f"⤷ #{msg.get('id')}", self.result(answered, result))))

    def request(self, method, params):
        if method == "tools/call":
            said = [str(params.get("name"))]
            if isinstance(params.get("inputResponses"), dict):
                said.append(f"+ inputResponses ({answers(params['inputResponses'])})")
            return " ".join(said + ["+ requestState"] * ("requestState" in params))
        if method == "initialize":
            return f"{params.get('protocolVersion')}, declara {capabilities(params)}"
        if method == "server/discover":
            return f"declara en _meta {capabilities(params.get('_meta', {}))}"
        if method == "elicitation/create":
            return ask(params)
        if method == "notifications/elicitation/complete":
            return f"elicitationId {short(params.get('elicitationId'), 8)}"
        if method == "notifications/cancelled":
            return f"requestId {params.get('requestId')}"
        return ""

    def result(self, method, result):
        if result.get("resultType") == "input_required":
            asked = result.get("inputRequests") if isinstance(result.get("inputRequests"),
                                                             dict) else {}
            listed = ", ".join(
                f"{key}: {request.get('method')}" + (
                    f" {ask(request.get('params'))}"
                    if request.get("method") == "elicitation/create" else "")
                for key, request in asked.items() if isinstance(request, dict))
            return f"input_required ({listed}) + requestState"
        if method == "tools/call":
            data = result.get("structuredContent")
            status = data.get("status") if isinstance(data, dict) else None
            return "resultado" + (" con isError" if result.get("isError") else "") + (
                f", status: {status}" if status else "")
        if method == "elicitation/create":
            content = result.get("content")
            return str(result.get("action")) + (
                " " + json.dumps(content, ensure_ascii=False) if content else "")
        if method == "roots/list":
            roots = result.get("roots") if isinstance(result.get("roots"), list) else []
            return "roots: " + (", ".join(str(r.get("name")) for r in roots
                                         if isinstance(r, dict)) or "ninguna")
        if method == "initialize":
            return f"{result.get('protocolVersion')}, el servidor ofrece {capabilities(result)}"
        if method == "server/discover":
            return f"habla {', '.join(result.get('supportedVersions') or [])}"
        return ""

    @staticmethod
    def urls(data):
        listed = data.get("elicitations") if isinstance(data, dict) else None
        return f" (data.elicitations: {len(listed)} URL)" if isinstance(listed, list) else ""


def capabilities(params):
    """«roots, elicitation (form, url)»: the capabilities a message declares, one level down."""
    declared = params.get("capabilities") or params.get(
        "io.modelcontextprotocol/clientCapabilities") or {}
    return ", ".join(f"{name} ({', '.join(inner)})" if isinstance(inner, dict) and inner
                     and name != "roots" else name for name, inner in declared.items())


def answers(responses):
    """The client's answers to input_required, in brief: «roots: 1, ask-1: accept»."""
    said = []
    for key, response in responses.items():
        response = response if isinstance(response, dict) else {}
        if "action" in response:
            said.append(f"{key}: {response['action']}")
        else:
            roots = response.get("roots")
            count = len(roots) if isinstance(roots, list) else 0
            said.append(f"{key}: {count} root" + ("" if count == 1 else "s"))
    return ", ".join(said)


def ask(params):
    """An elicitation/create in brief: its mode and what it asks (form fields, or the URL)."""
    params = params if isinstance(params, dict) else {}
    if params.get("mode") == "url":
        return " ".join(filter(None, (f"url {short(params.get('url'), 40)}", params.get(
            "elicitationId") and f"elicitationId {short(params['elicitationId'], 8)}")))
    schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"),
                                                         dict) else {}
    return f"form: {', '.join(schema.get('properties') or {})}"


def short(text, limit):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


class Demo:
    def __init__(self, tmp, protocol, sdk_version, out=print, full=False):
        self.tmp, self.protocol, self.out, self.full = tmp, protocol, out, full
        self.brief = Brief()
        self.stateless = protocol == STATELESS_VERSION
        self.notes = os.path.join(tmp, "Notas")
        self.private = os.path.join(tmp, "Notas-privadas")  # shares a prefix with Notas
        self.work = os.path.join(tmp, "Trabajo")
        self.server = NotesServer(Config(sdk_version=sdk_version, setup_wait=10,
                                         demo_url_guard=True))
        self.envelope = None  # the last 2026-07-28 _meta envelope printed in full
        self.form = None      # the last form printed in full (elicitation/create params)
        self.muted = False    # a second client's handshake: only its initialize is shown

    # -- printing ------------------------------------------------------------------------
    def title(self, text):
        self.out(f"\n{'═' * 4} {text} {'═' * max(4, 84 - len(text))}")

    def say(self, text):
        self.out(textwrap.fill(" ".join(text.split()), 92, break_on_hyphens=False))

    def frame(self, direction, msg):
        if self.muted and msg.get("method") not in ("initialize", "server/discover"):
            return
        who = "C→S" if direction == "→" else "S→C"
        if not self.full:
            line = self.brief.line(direction, msg).replace(self.tmp, "/…")
            self.out(textwrap.fill(line, 100, initial_indent=f"  {who} ",
                                   subsequent_indent=" " * 6, break_long_words=False,
                                   break_on_hyphens=False))
            return
        params, note = msg.get("params"), ""
        if isinstance(params, dict) and "_meta" in params:
            if params["_meta"] == self.envelope:  # the same 2026-07-28 envelope, again
                msg = {**msg, "params": {k: v for k, v in params.items() if k != "_meta"}}
                note = "   (+ el mismo _meta de antes)"
            self.envelope = params["_meta"]
        msg, same = self._same_form(msg)
        hidden = json.dumps(msg, ensure_ascii=False).replace(json.dumps(self.tmp)[1:-1], "/…")
        text = json.dumps(_abbreviate(json.loads(hidden)), ensure_ascii=False)
        self.out(textwrap.fill(text + note + same, 100, initial_indent=f"  {who} ",
                               subsequent_indent=" " * 6, break_long_words=False,
                               break_on_hyphens=False))

    def _same_form(self, msg):
        """(msg, note): a form-mode elicitation/create (2026-07-28: inside input_required)
        whose params equal the last form printed shows them as "…" and says so."""
        result = msg.get("result")
        asked = result.get("inputRequests") if isinstance(result, dict) else None
        if isinstance(asked, dict):
            requests = {key: self._same_form(request) for key, request in asked.items()}
            if not any(note for _, note in requests.values()):
                return msg, ""
            return {**msg, "result": {**result, "inputRequests": {
                key: request for key, (request, _) in requests.items()}}}, SAME_FORM
        params = msg.get("params") if isinstance(msg, dict) else None
        if msg.get("method") != "elicitation/create" or not isinstance(params, dict) \
                or params.get("mode", FORM_MODE) != FORM_MODE:
            return msg, ""
        if params == self.form:
            return {**msg, "params": "…"}, SAME_FORM
        self.form = params
        return msg, ""

    def listing(self, folder):
        names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
        self.out(f"  📁 {os.path.basename(folder)}/: " + (", ".join(names) or "(vacía)"))

    # -- driving the client --------------------------------------------------------------
    def connect(self, user=None, roots=None, elicitation=None):
        client = Client.local(self.server, roots=roots or [self.notes],
                              elicitation=elicitation, protocol=self.protocol, user=user,
                              on_frame=self.frame)
        return client.connect()

    def call(self, client, tool, arguments=None):
        self.out(f"» {tool} {json.dumps(arguments or {}, ensure_ascii=False)}"
                 .replace(self.tmp, "/…"))
        try:
            result = client.call_tool(tool, arguments or {})
        except wire.RpcError as exc:
            self.out(f"« ✗ error JSON-RPC {exc.code}: {exc.message}")
            return exc
        mark = "✗" if result.get("isError") else "✓"
        text = result["content"][0]["text"]
        if not self.full and len(text) > LONG_RESULT and ". " in text:
            text = text.split(". ", 1)[0] + ". (…)"  # its first sentence; --full: all of it
        self.out(f"« {mark} {text}".replace(self.tmp, "/…"))
        return result

    # -- the story -----------------------------------------------------------------------
    def setup_files(self):
        write_lesson_notes(self.tmp)

    def intro(self):
        self.title("Roots y Elicitación · demo con los mensajes reales")
        sdk = self.server.config.sdk_version or "desconocida"
        if self.full:
            self.say("Cliente y servidor en este proceso; tras C→S y S→C, las líneas JSON-RPC "
                     "que cruzaron.")
        else:
            self.say("Cliente y servidor en este proceso; tras C→S y S→C, cada mensaje que "
                     "cruzó, en una línea (--full: su JSON).")
        self.say(f"Protocolo {self.protocol}; SDK mcp {sdk} simulado (--sdk-version).")
        self.say("Solo Notas/ está compartida: Notas-privadas/ empieza igual, pero no es una "
                 "root.")
        for folder in (self.notes, self.private, self.work):
            self.listing(folder)

    def connect_main(self):
        self.title("Conexión")
        if self.stateless:
            self.say("En 2026-07-28 no hay initialize: cada petición lleva en _meta la versión y "
                     "las capacidades del cliente, y server/discover dice qué habla el "
                     "servidor.")
        else:
            self.say("El cliente declara roots y elicitation; tras notifications/initialized, "
                     "el servidor pide roots/list.")
        self.user = ScriptedUser(browser=Browser())
        self.client = self.connect(self.user)

    def happy_path(self):
        self.title("Escenario 1 · Camino feliz")
        if self.stateless:
            self.say("El servidor no puede enviar peticiones: pide roots/list dentro de un "
                     "resultado input_required, y el cliente repite la llamada con la "
                     "respuesta y el requestState.")
        self.say("Una sola nota «Lista de la compra»: se borra sin preguntar.")
        self.call(self.client, "notes_delete", {"title": "Lista de la compra"})
        self.listing(self.notes)

    def disambiguation(self):
        self.title("Escenario 2 · Desambiguación")
        if self.stateless:
            self.say("Tres notas «TPS report»: en vez de adivinar, el servidor responde "
                     "input_required con un formulario (note_id y confirm), y el cliente repite "
                     "la llamada con la respuesta en inputResponses.")
        else:
            self.say("Tres notas «TPS report»: en vez de adivinar, el servidor pausa la llamada "
                     "y pregunta con elicitation/create. Con la respuesta, vuelve a ejecutar la "
                     "herramienta.")
        self.say("El usuario pulsa «Rechazar» (decline):")
        self.user.answers.append({"action": "decline"})
        self.call(self.client, "notes_delete", {"title": "TPS report"})
        self.say("Ahora cierra el formulario sin decidir (cancel):")
        self.user.answers.append({"action": "cancel"})
        self.call(self.client, "notes_delete", {"title": "TPS report"})
        self.say("Por último elige la de 2024 y confirma; el servidor lo revalida todo antes "
                 "de borrar:")
        self.user.answers.append({"action": "accept",
                                  "content": {"note_id": "note-7", "confirm": True}})
        self.call(self.client, "notes_delete", {"title": "TPS report"})
        self.listing(self.notes)

    def outside_roots(self):
        self.title("Escenario 3 · Escritura fuera de las roots")
        self.say("Notas-privadas/ empieza como Notas/, pero el servidor compara rutas reales "
                 "carpeta a carpeta; un «..» escrito %2e%2e tampoco pasa:")
        self.call(self.client, "notes_write", {"uri": f"file://{self.private}/robo.md",
                                               "title": "Robo", "body": "x"})
        self.call(self.client, "notes_write",
                  {"uri": f"file://{self.notes}/%2e%2e/Notas-privadas/robo.md",
                   "title": "Robo", "body": "x"})
        self.listing(self.private)
        self.say("Dentro de la root, sí:")
        self.call(self.client, "notes_write", {"uri": f"file://{self.notes}/ideas.md",
                                               "title": "Ideas", "body": "…",
                                               "created": "2025-08-01"})

    def roots_change(self):
        self.title("Las roots cambian")
        if self.stateless:
            self.say("En 2026-07-28 no hay aviso de cambios: el servidor pide las roots en cada "
                     "llamada que las necesita, y el cliente responde la lista nueva. Ya se abre "
                     "una nota de Trabajo/:")
        else:
            self.say("El usuario comparte también Trabajo/: el cliente avisa, el servidor vuelve "
                     "a pedir roots/list y cambia el límite entre dos llamadas. Ya se abre una "
                     "nota de Trabajo/:")
        self.client.set_roots([self.notes, self.work])
        self.call(self.client, "notes_open", {"note_id": "note-21"})

    def url_mode(self):
        self.title("El modo URL")
        self.server.serve_page_http()  # this driver shows the page on 127.0.0.1, from here on
        self.say("Autorizar a un tercero nunca va en un formulario: a un cliente solo de "
                 "formularios (elicitation: {}), notes_setup le da instrucciones.")
        self.muted = True  # its handshake is the main client's again: only what it declares
        form_only = self.connect(ScriptedUser(), elicitation={})
        self.muted = False
        self.call(form_only, "notes_setup")
        form_only.close()
        self.say("El modo URL lo permite una guarda: aquí, una guarda fija (protocolo y "
                 "capacidad); la de verdad mira también el SDK (ejercicio 3).")
        if self.stateless:
            self.say("Sin configurar, notes_sync pide el modo URL dentro de input_required (en "
                     "2026-07-28 no existe el error -32042). Esta vez el usuario dice que no:")
            self.user.answers.append({"action": "decline"})
        else:
            self.say("Sin configurar, notes_sync responde -32042 con la URL que hay que "
                     "completar:")
        self.call(self.client, "notes_sync")
        self.say("El cliente principal sí declaró url. accept solo significa «acepto abrirla»; "
                 "el flujo acaba cuando la página (local: simula al proveedor) avisa al servidor.")
        if self.stateless:
            self.say("En 2026-07-28 no hay elicitationId ni notificación de fin: el cliente "
                     "repite la llamada y el servidor consulta el estado del flujo, que guarda "
                     "él.")
        self.user.answers.append({"action": "accept"})
        self.call(self.client, "notes_setup")

    def finish(self):
        self.client.close()
        if self.stateless:
            self.title("Qué cambió respecto a 2025-11-25")
            for line in DIFFERENCES:
                self.out(textwrap.fill(line, 92, initial_indent="  • ", subsequent_indent="    ",
                                       break_on_hyphens=False))
        self.title("Resumen")
        self.say("Borradas: la única del escenario 1 y la elegida en el 2. Nada al rechazar o "
                 "cancelar ni fuera de las roots; la credencial, en el servidor.")
        for folder in (self.notes, self.private, self.work):
            self.listing(folder)


DIFFERENCES = (
    "Sin initialize: versión y capacidades viajan en _meta en cada petición.",
    "El servidor ya no envía peticiones: roots/list y elicitation/create llegan dentro de "
    "un resultado input_required, y el cliente repite la llamada con inputResponses.",
    "Lo que el servidor recuerda de la llamada entre rondas va en requestState, firmado con HMAC; "
    "si alguien lo altera, o lo reutiliza con otros argumentos, la respuesta es -32602.",
    "No hay notifications/roots/list_changed: las roots se piden en cada llamada y son solo "
    "orientativas. El límite lo sigue imponiendo el servidor.",
    "En modo URL desaparecen elicitationId y notifications/elicitation/complete: el cliente "
    "repite la llamada y el servidor responde según el estado del flujo, que guarda él.",
    "El error -32042 (URLElicitationRequiredError) queda reservado y no se usa: una petición "
    "que necesita el modo URL lo pide dentro de input_required.",
)


def _abbreviate(value, key=None):
    if key == "structuredContent" and len(json.dumps(value, ensure_ascii=False)) > SHORT_DATA:
        return "…"
    if isinstance(value, dict):
        return {k: _abbreviate(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_abbreviate(v) for v in value]
    limit = ABBREVIATE.get(key)
    if isinstance(value, str) and limit and len(value) > limit:
        return value[:limit] + "…"
    return value


def run(protocol=LATEST_HANDSHAKE, sdk_version=None, out=print, full=False):
    """The demo, printed through `out`: each message in brief, or its JSON with `full`."""
    with tempfile.TemporaryDirectory(prefix="notas-demo-") as tmp:
        demo = Demo(os.path.realpath(tmp), protocol, sdk_version, out, full)
        try:
            demo.setup_files()
            for step in (demo.intro, demo.connect_main, demo.happy_path, demo.disambiguation,
                         demo.outside_roots, demo.roots_change, demo.url_mode, demo.finish):
                step()
        finally:
            demo.server.close()
    return 0
