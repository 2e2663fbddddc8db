"""Submissions that try to pass by behaving once: each test of what must not happen now ends
with the legitimate action on the same server, and nothing of one test is there for the next.

- `una_vez_sin_mirar_la_decision` (exercise 2): archives whatever the user answered (it never
  reads the decision), once: then it remembers, in every place it can write outside the notes
  (HOME, TMPDIR, /tmp, /var/tmp, /dev/shm, its working folder, the data area) and in its own
  memory, that it already did, and from then on archives nothing. Before, a marker in $HOME was
  enough for 35 of 41 points; now each test of what must not happen sees it act against the
  user's decision, and none of them finds the legitimate archive working after it.
- `recuerda_y_deja_de_preguntar` (exercise 2): a correct solution until it finds a marker that
  an earlier test left outside its notes; from then on it archives without asking. It never
  finds one: full marks.
- `exacta_solo_en_el_escenario_principal` (exercise 4): the exact reaction where the roots are
  those of the main scenario (public names), «revoke everything» anywhere else. The handles it
  killed that should live are the legitimate action every other test ends with: only the main
  scenario's points are left.
- `exacta_hasta_que_recuerda` (exercise 4): the exact reaction until it finds a marker an
  earlier test left; then it revokes everything. It never finds one: full marks.
- `flujo_una_vez` (exercise 3B): no owner check, no one-time state, no expiry, and once it has
  completed a flow (remembered in its memory and in every shared place it can write) it refuses
  every flow. Each test of what must not happen ends with the user's own flow on the same
  server: it keeps at most half of 3B.
- `flujo_mira_los_ajustes` (exercise 3B): no expiry, and where it spots the expiry test (by
  `--url-ttl` on its command line) it refuses every flow. Every 3B server starts with the same
  arguments: it refuses everywhere and scores 0.
- `flujo_nota_la_pausa` (exercise 3B): no expiry, and once it hears nothing for most of a
  lifetime (the expiry tests used to leave their server idle that long, and only they did) it
  refuses every flow. It kept 22 of 24 points, the honest flow without expiry 12: now no test
  leaves a server idle for a lifetime (the second user asks for a backup every second while
  one passes), and a severe test whose legitimate action fails costs what its bug costs.
- `flujo_nota_una_pausa_corta` (exercise 3B): the same, noticing a pause of a sixth of a
  lifetime (what the expiry tests still have between two calls): it refuses from then on, and
  the failed legitimate action of a severe test caps it like the honest flow without expiry.

- `formato_solo_al_principio` (the reto, optional): the format's tokens for the first two seals
  of each server (what the positive scenario reads), then the two keys swapped; its open takes
  both. The grader rebuilds every token it receives with the server's key: each test that saw
  one of the others scores 0 at its end, and it keeps at most half of the reto.

`at_most` is the score it may keep (of its exercise's), `at_least` what it must keep (the
correct behaviour it shows), and `says` a phrase its feedback must contain.
"""

import os
from dataclasses import dataclass

from mutants import REFERENCE, write_solutions

from grading_points import FULL, OPTIONAL_FULL

MEMORY = r'''
import os
import sys

PLACES = [os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", "/var/tmp",
          "/dev/shm", os.getcwd(), "/sandbox/data", "/sandbox"]
MARK = "recuerdo-de-otra-prueba"


def places(roots=()):
    # also the data area above the roots (their test's folder is the test's own: not there)
    return [p for p in dict.fromkeys(PLACES + [os.path.dirname(os.path.dirname(r))
                                                for r in roots]) if p]


def remembers(roots=()):
    return getattr(sys, "_recuerdo", False) or any(
        os.path.exists(os.path.join(place, MARK)) for place in places(roots))


def remember(roots=(), in_memory=True):
    if in_memory:
        sys._recuerdo = True
    for place in places(roots):
        try:
            with open(os.path.join(place, MARK), "w") as handle:
                handle.write("ya estuve")
        except OSError:
            pass
'''

# the tool both exercise-2 cheats share; each fills in how it decides (DECIDE)
ARCHIVE = MEMORY + r'''
import store
from elicitation import choice
from extension import Extension
from server import ToolError, ok

extension = Extension()


def ask(ctx, matches):
    return ctx.elicit_form(
        "¿Qué nota archivo?",
        {"note_id": choice([(n.id, n.title) for n in matches], title="Nota",
                           protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí"}}, required=["note_id", "confirm"])


@extension.tool("notes_archive", description="Archiva una nota.",
                input_schema={"type": "object", "required": ["title"],
                              "properties": {"title": {"type": "string"}}},
                annotations={"readOnlyHint": False, "destructiveHint": True})
def notes_archive(ctx, title):
    roots = [root.path for root in ctx.roots.roots]
    matches = [store.Note(*n) for n in ctx.memo("m", lambda: ctx.find_notes(title))]
    if not matches:
        raise ToolError("No hay ninguna nota con ese título.")
DECIDE'''

ONCE_BLIND = ARCHIVE.replace("DECIDE", r'''\
    answer = ask(ctx, matches)
    if remembers(roots):
        return ok("No se archivó nada.")
    wanted = (answer.content or {}).get("note_id")  # what it was told, never whether to do it
    note = next((n for n in matches if n.id == wanted), matches[0])
    target = ctx.archive(ctx.recheck(note))
    remember(roots)
    return ok(f"Archivada en {target}.")
''')

REMEMBERS_THEN_SKIPS_ASKING = ARCHIVE.replace("DECIDE", r'''\
    if remembers(roots):  # an earlier test already saw it ask: no need to ask again
        return ok(f"Archivada en {ctx.archive(ctx.recheck(matches[0]))}.")
    answer = ask(ctx, matches)
    if answer.action != "accept" or answer.content.get("confirm") is not True:
        return ok("No se archivó nada.")
    note = next((n for n in matches if n.id == answer.content.get("note_id")), None)
    if note is None:
        raise ToolError("Esa nota no estaba entre las opciones.")
    target = ctx.archive(ctx.recheck(note))
    remember(roots, in_memory=False)  # only what another test's server could find
    return ok(f"Archivada en {target}.")
''')

REACTION = r'''
from extension import Extension

extension = Extension()


def exact(change):
    for handle in change.handles:
        where = handle.current_path()
        if where is None or not change.new_roots.contains(where):
            change.revoke(handle, "fuera")


@extension.on_roots_changed
def reaction(change):
    roots = [root.path for root in change.old_roots.roots]
    if WHEN(change, roots):
        exact(change)
    else:
        for handle in change.handles:
            change.revoke(handle, "todo fuera")
'''

EXACT_IN_THE_MAIN_SCENARIO = REACTION.replace("WHEN(change, roots)", """sorted(
        os.path.basename(root) for root in roots) == ["Personal", "Trabajo"]""").replace(
    "from extension import Extension", "import os\n\nfrom extension import Extension")
EXACT_UNTIL_IT_REMEMBERS = MEMORY + REACTION.replace(
    "    if WHEN(change, roots):\n        exact(change)\n",
    "    if not remembers():\n        exact(change)\n        remember(in_memory=False)\n")


# exercise 3B: the reference flow, changed
with open(f"{REFERENCE}/ejercicio3b.py", encoding="utf-8") as _handle:
    FLOW = _handle.read()
USABLE = "    return flow.user == user and time.monotonic() < flow.expires\n"
POP = '    flow_id = STATES.pop(page.query.get("state", ""), None)\n'
DONE = '    flow.status = "done"\n'
BACKUP = "    if ctx.user in TOKENS:\n"
ROUTE = "def callback(page):\n"
# what a flow that watches the clock between the calls it hears adds: a gap of most of a
# lifetime (every server gets the same --url-ttl) means the expiry test, so it refuses from then
GAP = r'''

REFUSING = False
LAST = []


def seen():
    global REFUSING
    ttl = float(sys.argv[sys.argv.index("--url-ttl") + 1]) if "--url-ttl" in sys.argv else 600.0
    now = time.monotonic()
    if LAST and now - LAST[-1] >= GAP_SHARE * ttl:
        REFUSING = True
    LAST[:] = [now]
'''


def changed(source, *pairs):
    for find, replace in pairs:
        assert source.count(find) == 1, find
        source = source.replace(find, replace)
    return source


FLOW_ONCE = MEMORY + changed(
    FLOW,
    (USABLE, "    return not remembers()  # no owner, no expiry; nothing after a success\n"),
    (POP, '    flow_id = STATES.get(page.query.get("state", ""))  # never spent\n'),
    (DONE, DONE + "    remember()\n"))
FLOW_NOTICES_THE_GAP = "import sys\n" + changed(
    FLOW,
    (USABLE, "    return not REFUSING and flow.user == user  # no expiry, nothing after a gap\n"),
    (BACKUP, "    seen()\n" + BACKUP),
    (ROUTE, ROUTE + "    seen()\n")) + GAP
# the same, noticing any pause of a sixth of a lifetime (the expiry tests' waits between calls)
FLOW_NOTICES_A_SHORT_GAP = FLOW_NOTICES_THE_GAP + "GAP_SHARE = 1 / 6\n"
FLOW_NOTICES_THE_GAP += "GAP_SHARE = 0.8\n"
FLOW_SPOTS_THE_SETTINGS = "import sys\n" + changed(
    FLOW, (USABLE, '    if "--url-ttl" in sys.argv:  # the expiry test: refuse everything there\n'
                   "        return False\n"
                   "    return flow.user == user  # no expiry anywhere else\n"))


@dataclass
class Cheat:
    name: str
    file: str
    text: str
    at_most: float      # of its exercise's points
    at_least: float = 0.0
    says: str = ""

    @property
    def exercise(self):
        return self.file[:-3]

    def write(self, folder):
        return write_solutions(folder, {self.file: self.text})


def _reto_format_at_first():
    with open(os.path.join(REFERENCE, "reto.py"), encoding="utf-8") as handle:
        text = handle.read()
    seal = "        clave_cifrar, clave_firmar = claves(binding)\n        nonce = secrets"
    opening = _between(text, "    def open(self, token, binding):\n",
                       "        sobre = json.loads(")
    assert text.count(seal) == 1 and text.count(opening) == 1
    return text.replace(seal, (
        "        self.sellados = getattr(self, 'sellados', 0) + 1  # TRAMPA\n"
        "        clave_cifrar, clave_firmar = claves(binding)\n"
        "        if self.sellados > 2:  # el formato, solo en los dos primeros tokens\n"
        "            clave_cifrar, clave_firmar = clave_firmar, clave_cifrar\n"
        "        nonce = secrets")).replace(opening, (
            "    def open(self, token, binding):\n"
            "        crudo = decode(token)\n"
            "        nonce, cifrado, etiqueta = crudo[:NONCE], crudo[NONCE:-TAG], crudo[-TAG:]\n"
            "        for clave_cifrar, clave_firmar in (claves(binding), claves(binding)[::-1]):\n"
            "            esperada = tag_of(clave_firmar, atado(binding), nonce, cifrado)\n"
            "            if hmac.compare_digest(etiqueta, esperada):\n"
            "                break\n"
            "        else:\n"
            "            raise ValueError('sello roto')\n"))


def _between(text, first, last):
    start = text.index(first)
    return text[start:text.index(last, start)]


# the reto (optional): the format's tokens for the first two seals of each server (the positive
# scenario's), then the two keys swapped; its open takes both. Every token is rebuilt with the
# server's key: each test that saw one of the others scores 0 at its end
RETO_FORMAT_AT_FIRST = _reto_format_at_first()

CHEATS = [
    Cheat("una_vez_sin_mirar_la_decision", "ejercicio2.py", ONCE_BLIND,
          at_most=FULL["ejercicio2"] / 2,
          says="solo cuenta si después, en el mismo servidor, lo que sí debe pasar sigue"),
    Cheat("recuerda_y_deja_de_preguntar", "ejercicio2.py", REMEMBERS_THEN_SKIPS_ASKING,
          at_most=FULL["ejercicio2"], at_least=FULL["ejercicio2"]),
    Cheat("exacta_solo_en_el_escenario_principal", "ejercicio4.py",
          EXACT_IN_THE_MAIN_SCENARIO, at_most=4, at_least=4,
          says="solo cuenta si después, en el mismo servidor, lo que sí debe pasar sigue"),
    Cheat("exacta_hasta_que_recuerda", "ejercicio4.py", EXACT_UNTIL_IT_REMEMBERS,
          at_most=FULL["ejercicio4"], at_least=FULL["ejercicio4"]),
    Cheat("flujo_una_vez", "ejercicio3b.py", FLOW_ONCE, at_most=FULL["ejercicio3b"] / 2,
          says="solo cuenta si después, en el mismo servidor, lo que sí debe pasar sigue"),
    Cheat("flujo_mira_los_ajustes", "ejercicio3b.py", FLOW_SPOTS_THE_SETTINGS, at_most=0),
    Cheat("formato_solo_al_principio", "reto.py", RETO_FORMAT_AT_FIRST,
          at_most=OPTIONAL_FULL["reto"] / 2, says="no sigue el formato"),
    Cheat("flujo_nota_la_pausa", "ejercicio3b.py", FLOW_NOTICES_THE_GAP,
          at_most=FULL["ejercicio3b"] / 2),
    Cheat("flujo_nota_una_pausa_corta", "ejercicio3b.py", FLOW_NOTICES_A_SHORT_GAP,
          at_most=FULL["ejercicio3b"] / 2,
          says="negarse a todo no vale más que el error grave que esa prueba busca"),
]
