"""The lesson on the real wire: three scenarios, then roots changing and URL mode.

The lesson's client (client.py) and the server (server.py, session.py) share this process but
talk only through serialized JSON-RPC lines (transport.Loopback), so every line printed after
`C→S` or `S→C` is exactly what crossed. The user is scripted (simulated_user.ScriptedUser) and
so is the browser (simulated_user.Browser, on the real local setup page). Everything happens
in a temporary folder, removed at the end.

Deliberate simplifications: long values (requestState, instructions) are shortened on screen,
the 2026-07-28 `_meta` envelope is printed in full once and then only mentioned, and the
temporary folder is printed as `/…`.
"""

import json
import os
import tempfile
import textwrap

import store
import wire
from client import Client
from protocol import LATEST_HANDSHAKE, STATELESS_VERSION
from server import Config, NotesServer
from simulated_user import Browser, ScriptedUser

ABBREVIATE = {"requestState": 24, "instructions": 40, "url": 90}

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


class Demo:
    def __init__(self, tmp, protocol, sdk_version, out=print):
        self.tmp, self.protocol, self.out = tmp, protocol, out
        self.stateless = protocol == STATELESS_VERSION
        self.notes = os.path.join(tmp, "Notas")
        self.private = os.path.join(tmp, "Notas-privadas")  # shares a prefix with Notas
        self.work = os.path.join(tmp, "Trabajo")
        self.server = NotesServer(Config(sdk_version=sdk_version, setup_wait=10,
                                         demo_url_guard=True))
        self.envelope = None  # the last 2026-07-28 _meta envelope printed in full

    # -- printing ------------------------------------------------------------------------
    def title(self, text):
        self.out(f"\n{'═' * 4} {text} {'═' * max(4, 84 - len(text))}")

    def say(self, text):
        self.out(textwrap.fill(" ".join(text.split()), 92))

    def frame(self, direction, msg):
        who = "C→S" if direction == "→" else "S→C"
        params, note = msg.get("params"), ""
        if isinstance(params, dict) and "_meta" in params:
            if params["_meta"] == self.envelope:  # the same 2026-07-28 envelope, again
                msg = {**msg, "params": {k: v for k, v in params.items() if k != "_meta"}}
                note = "   (+ el mismo _meta de antes)"
            self.envelope = params["_meta"]
        text = json.dumps(_abbreviate(msg), ensure_ascii=False).replace(self.tmp, "/…")
        self.out(textwrap.fill(text + note, 100, initial_indent=f"  {who} ",
                               subsequent_indent=" " * 6, break_long_words=False))

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
        self.out(f"« {mark} {result['content'][0]['text']}".replace(self.tmp, "/…"))
        return result

    # -- the story -----------------------------------------------------------------------
    def setup_files(self):
        write_lesson_notes(self.tmp)

    def intro(self):
        self.title("Roots y Elicitación · demo con los mensajes reales")
        sdk = self.server.config.sdk_version or "desconocida"
        self.say(f"Servidor de notas escrito solo con la biblioteca estándar; para la guarda del "
                 f"modo URL simula correr sobre el SDK mcp {sdk} (cámbialo con --sdk-version). "
                 f"Protocolo: {self.protocol}. Cliente y servidor están en este proceso, pero "
                 "solo se hablan con líneas JSON-RPC: lo que ves tras C→S y S→C son esos mensajes.")
        self.say("El usuario dio acceso a una sola carpeta, Notas/. Al lado hay Notas-privadas/ "
                 "(comparte prefijo, pero NO es una root) y Trabajo/ (aún no compartida).")
        for folder in (self.notes, self.private, self.work):
            self.listing(folder)

    def connect_main(self):
        self.title("Conexión")
        if self.stateless:
            self.say("En 2026-07-28 no hay initialize: cada petición lleva en _meta la versión y "
                     "las capacidades del cliente. El servidor debe implementar server/discover "
                     "(versiones, capacidades e identidad del servidor); el cliente puede "
                     "usarlo o no.")
        else:
            self.say("El cliente declara sus capacidades (roots con listChanged, elicitation en "
                     "modo formulario y URL). Tras notifications/initialized, el servidor pide "
                     "roots/list: a partir de ahí sabe qué carpetas puede tocar.")
        self.user = ScriptedUser(browser=Browser())
        self.client = self.connect(self.user)

    def happy_path(self):
        self.title("Escenario 1 · Camino feliz: una sola nota coincide")
        if self.stateless:
            self.say("El servidor no puede preguntar por su cuenta: responde input_required "
                     "pidiendo roots/list dentro del resultado, y el cliente repite la misma "
                     "llamada con la respuesta y el requestState firmado.")
        self.say("Solo hay una nota «Lista de la compra» dentro de las roots, así que "
                 "notes_delete la borra sin preguntar nada.")
        self.call(self.client, "notes_delete", {"title": "Lista de la compra"})
        self.listing(self.notes)

    def disambiguation(self):
        self.title("Escenario 2 · Desambiguación: tres notas «TPS report»")
        if self.stateless:
            self.say("Adivinar sería peligroso y borrar las tres, catastrófico. En 2026-07-28 el "
                     "servidor no puede enviar peticiones: responde input_required con el "
                     "formulario (note_id, una de las tres con su fecha, y confirm, un "
                     "booleano; ambos obligatorios) dentro de inputRequests. El cliente se lo "
                     "enseña al usuario y repite la llamada con la respuesta en inputResponses.")
        else:
            self.say("Adivinar sería peligroso y borrar las tres, catastrófico. El servidor deja "
                     "la llamada en pausa y envía elicitation/create en modo formulario: "
                     "note_id (una de las tres, con su fecha) y confirm (booleano), ambos "
                     "obligatorios. Cuando llega la respuesta, vuelve a ejecutar la herramienta "
                     "desde el principio, ya con ella.")
        self.say("Primero el usuario cierra el formulario con «Rechazar» (decline):")
        self.user.answers.append({"action": "decline"})
        self.call(self.client, "notes_delete", {"title": "TPS report"})
        self.say("Después lo descarta sin elegir (cancel), que no es un «no» de negocio sino "
                 "abandonar la operación:")
        self.user.answers.append({"action": "cancel"})
        self.call(self.client, "notes_delete", {"title": "TPS report"})
        self.listing(self.notes)
        self.say("Por último elige la de 2024 y marca la confirmación. El servidor vuelve a "
                 "validar la respuesta (¿era una de las ofrecidas?) y la nota (¿sigue siendo el "
                 "mismo archivo, dentro de la carpeta que compartiste?) antes de borrar:")
        self.user.answers.append({"action": "accept",
                                  "content": {"note_id": "note-7", "confirm": True}})
        self.call(self.client, "notes_delete", {"title": "TPS report"})
        self.listing(self.notes)

    def outside_roots(self):
        self.title("Escenario 3 · Escritura fuera de las roots")
        self.say("Notas-privadas/ empieza igual que Notas/, pero la contención se decide por "
                 "componentes de la ruta real, no por prefijo de texto. Tampoco cuela un «..» "
                 "codificado como %2e%2e:")
        self.call(self.client, "notes_write", {"uri": f"file://{self.private}/robo.md",
                                               "title": "Robo", "body": "x"})
        self.call(self.client, "notes_write",
                  {"uri": f"file://{self.notes}/%2e%2e/Notas-privadas/robo.md",
                   "title": "Robo", "body": "x"})
        self.listing(self.private)
        self.say("Dentro de la root, en cambio, escribir funciona (escritura atómica):")
        self.call(self.client, "notes_write", {"uri": f"file://{self.notes}/ideas.md",
                                               "title": "Ideas", "body": "…",
                                               "created": "2025-08-01"})

    def roots_change(self):
        self.title("Las roots cambian")
        if self.stateless:
            self.say("En 2026-07-28 ya no existe notifications/roots/list_changed: las roots "
                     "son orientativas y se piden en cada llamada que las necesita. Basta con "
                     "que el cliente responda otra lista la próxima vez:")
            self.client.set_roots([self.notes, self.work])
        else:
            self.say("El usuario comparte también Trabajo/. El cliente envía "
                     "notifications/roots/list_changed; el servidor vuelve a pedir roots/list "
                     "y cambia el límite de una sola vez (ninguna llamada ve media lista vieja y "
                     "media nueva).")
            self.client.set_roots([self.notes, self.work])
        self.call(self.client, "notes_list")

    def url_mode(self):
        self.title("notes_setup y notes_sync · modo URL")
        self.server.serve_page_http()  # this driver shows the page on 127.0.0.1, from here on
        self.say("Configurar la sincronización exige autorizar a un tercero, y eso nunca va "
                 "en un formulario. Un cliente que solo declaró elicitation: {} "
                 "(solo formulario) no recibe nunca una URL, y el servidor tampoco le pide la "
                 "clave en un formulario: le da instrucciones para hacerlo fuera.")
        form_only = self.connect(ScriptedUser(), elicitation={})
        self.call(form_only, "notes_setup")
        form_only.close()
        self.say("¿Puede este servidor usar el modo URL? Lo decide una guarda: sin guarda, "
                 "nunca. La demo usa una guarda fija que solo mira el protocolo y si el "
                 "cliente declaró elicitation.url; la de verdad también mira la versión del "
                 "SDK, y escribirla es el ejercicio 3.")
        if self.stateless:
            self.say("notes_sync necesita la configuración hecha. Sin ella, en 2026-07-28 pide "
                     "el modo URL dentro de input_required (el error -32042 de 2025-11-25 ya no "
                     "existe). Esta vez el usuario dice que no:")
            self.user.answers.append({"action": "decline"})
        else:
            self.say("notes_sync necesita la configuración hecha. Sin ella responde con el error "
                     "-32042 (URLElicitationRequiredError): la petición no puede seguir hasta "
                     "que el usuario complete la URL que va en data.elicitations; el cliente "
                     "podría abrirla y reintentar. (Aquí configuraremos después con notes_setup.)")
        self.call(self.client, "notes_sync")
        self.say("El cliente principal sí declaró elicitation.url. El servidor lo manda a una "
                 "página (aquí, una página local en 127.0.0.1 que simula al proveedor). "
                 "«accept» solo significa «acepto abrirla»: la configuración termina cuando la "
                 "página se lo confirma al servidor. La llamada espera como mucho unos "
                 "segundos (nunca lo que tarda un cliente en rendirse); si el usuario tarda "
                 "más, responde «pendiente» y basta con volver a llamar.")
        if self.stateless:
            self.say("En 2026-07-28 la petición URL ya no lleva elicitationId ni hay "
                     "notifications/elicitation/complete: el cliente reintenta cuando el usuario "
                     "termina, y el servidor consulta el estado del flujo, que guardó él mismo.")
        self.user.answers.append({"action": "accept"})
        self.call(self.client, "notes_setup")
        self.say("Con la sincronización configurada, notes_sync ya funciona:")
        self.call(self.client, "notes_sync")

    def finish(self):
        self.client.close()
        if self.stateless:
            self.title("Qué cambió respecto a 2025-11-25")
            for line in DIFFERENCES:
                self.out(textwrap.fill(line, 92, initial_indent="  • ", subsequent_indent="    "))
        self.title("Resumen")
        self.say("Se borró una nota en el escenario 1, exactamente la elegida en el 2 (y nada "
                 "al rechazar o cancelar), nada fuera de las roots en el 3, el límite siguió "
                 "al cambio de roots y la credencial del modo URL se quedó en el servidor. "
                 "La carpeta temporal se borra ahora.")
        for folder in (self.notes, self.private, self.work):
            self.listing(folder)


DIFFERENCES = (
    "Sin initialize: versión y capacidades viajan en _meta en cada petición.",
    "El servidor ya no envía peticiones: roots/list y elicitation/create llegan dentro de "
    "un resultado input_required, y el cliente repite la llamada con inputResponses.",
    "Lo que el servidor necesita recordar entre rondas va en requestState, firmado con HMAC; "
    "si alguien lo altera, o lo reutiliza con otros argumentos, la respuesta es -32602.",
    "No hay notifications/roots/list_changed: las roots se piden en cada llamada y son solo "
    "orientativas. El límite lo sigue imponiendo el servidor.",
    "En modo URL desaparecen elicitationId y notifications/elicitation/complete: el cliente "
    "reintenta cuando el usuario termina.",
    "El error -32042 (URLElicitationRequiredError) queda reservado y no se usa: una petición "
    "que necesita el modo URL lo pide dentro de input_required.",
)


def _abbreviate(value, key=None):
    if isinstance(value, dict):
        return {k: _abbreviate(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_abbreviate(v) for v in value]
    limit = ABBREVIATE.get(key)
    if isinstance(value, str) and limit and len(value) > limit:
        return value[:limit] + "…"
    return value


def run(protocol=LATEST_HANDSHAKE, sdk_version=None, out=print):
    with tempfile.TemporaryDirectory(prefix="notas-demo-") as tmp:
        demo = Demo(os.path.realpath(tmp), protocol, sdk_version, out)
        try:
            demo.setup_files()
            for step in (demo.intro, demo.connect_main, demo.happy_path, demo.disambiguation,
                         demo.outside_roots, demo.roots_change, demo.url_mode, demo.finish):
                step()
        finally:
            demo.server.close()
    return 0
