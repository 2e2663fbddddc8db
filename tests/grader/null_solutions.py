"""The null solutions: submissions without the learner's own logic. Each must score 0 on every
graded test of its exercise, public and hidden (tests/grader/test_catalogue.py).

- the notebooks' starter cells, as shipped (read from lessons/*.ipynb);
- each hook delegated to something the student edition ships: the demo guard
  (`url_mode.demo_guard`), `elicitation.supports_url` alone, the server's own coarse reaction
  (`server.revoke_every_handle`), the lesson's `tools.notes_delete` registered as the archive
  handler;
- constant answers: the guard always True or always False, a reaction that revokes every handle
  or none;
- half a guard: only the version (compared as numbers, or as text), only the protocol;
- a tool that asks and never acts, one that asks and only says it archived, and a tool that
  acts without asking;
- a reaction that revokes only the handles whose file nobody can locate (in practice, none);
- exercise 3B's flow delegated to the lesson's Notas Sync machinery (`tools.notes_sync` or
  `tools.notes_setup` registered as notes_backup: their link is Notas Sync's page, which never
  sends the browser to Nube de Copias), answered with constants (the copy always "done",
  always the manual fallback), or the whole flow without its third party: every page and
  check, but the code never exchanged and the copy only said, never made;
- exercise 3B's optional part: 3B's starter, whose 2026-07-28 part gives the manual fallback;
- the optional challenge (reto.py): the server's own sealer handed back as the learner's (also
  one that opens each token at most twice), a token that is the payload in base64 with no seal
  at all, and a decoy reto.py that calls compare_digest while the real sealer (the reference's)
  is registered from another solution file.
"""

import json
import os
import re
from dataclasses import dataclass

from grader.exercises import BY_ID, EXERCISES

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LESSONS = os.path.join(REPO, "lessons")
WRITEFILE = re.compile(r"^%%writefile\s+soluciones/(ejercicio(?:[24]|3[ab])|reto)\.py\s*$")

HEADER = "from extension import Extension\n\nextension = Extension()\n"
ARCHIVE = '''
@extension.tool(
    "notes_archive", description="Archiva una nota en la .archive de su root.",
    input_schema={"type": "object", "required": ["title"],
                  "properties": {"title": {"type": "string"}}},
    annotations={"readOnlyHint": False, "destructiveHint": True})
'''


@dataclass
class Null:
    name: str
    exercise: str   # an exercise id of grader/exercises.py ("ejercicio3b", "reto"...)
    source: str
    others: tuple = ()  # (file name, text) of other solution files handed in with it

    def write(self, folder):
        os.makedirs(folder)
        for name, text in ((BY_ID[self.exercise].file, self.source), *self.others):
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        return folder


def reference(name):
    """The text of a reference solution file."""
    with open(os.path.join(REPO, "grader", "reference", "soluciones", name),
              encoding="utf-8") as handle:
        return handle.read()


def never_exchanged():
    """The reference flow (every page, the state, the notification) with no third party: the
    callback never exchanges the code and the tool says it made the copy without making it."""
    source = reference("ejercicio3b.py")
    for find, replace in (
            ("        copied = ctx.provider.backup(TOKENS[ctx.user], ctx.notes())\n",
             "        copied = len(ctx.notes())  # no copy is made\n"),
            ('        token = page.provider.exchange(page.query["code"])\n',
             '        token = "ncc_tok_" + page.query["code"]  # never exchanged\n')):
        assert source.count(find) == 1, find
        source = source.replace(find, replace)
    return source


def starters():
    """The starter cells of the notebooks, one null solution per exercise (and one per
    optional part, graded on its exercise's starter)."""
    found = []
    for name in sorted(os.listdir(LESSONS)):
        if not name.endswith(".ipynb"):
            continue
        with open(os.path.join(LESSONS, name), encoding="utf-8") as handle:
            cells = json.load(handle)["cells"]
        for cell in cells:
            source = "".join(cell.get("source", []))
            first, _, body = source.partition("\n")
            match = WRITEFILE.match(first) if cell.get("cell_type") == "code" else None
            if match:
                found.append(Null(f"plantilla_{match[1]}", match[1], body + "\n"))
    found += [Null(f"plantilla_{part.id}", part.id, null.source) for part in EXERCISES
              for null in list(found) if part.part == "optional"
              and BY_ID[null.exercise].file == part.file]
    return found


NULLS = starters() + [
    Null("guarda_de_la_demo", "ejercicio3a", HEADER + '''
from urlflow import url_mode

extension.url_mode_guard(url_mode.demo_guard)
'''),
    Null("guarda_solo_supports_url", "ejercicio3a", HEADER + '''
from elicitation import supports_url


@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    return supports_url(client_capabilities)
'''),
    Null("guarda_siempre_si", "ejercicio3a", HEADER + '''
@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    return True
'''),
    Null("guarda_siempre_no", "ejercicio3a", HEADER + '''
@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    return False
'''),
    Null("guarda_solo_version", "ejercicio3a", HEADER + '''
import re


@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    match = re.fullmatch(r"(\\d+)\\.(\\d+)(?:\\.(\\d+))?", sdk_version or "")
    return bool(match) and tuple(int(p or 0) for p in match.groups()) >= (1, 23, 1)
'''),
    Null("guarda_version_como_texto", "ejercicio3a", HEADER + '''
@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    return (sdk_version or "") >= "1.23.1"
'''),
    Null("guarda_solo_protocolo", "ejercicio3a", HEADER + '''
@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    return protocol_version in ("2025-11-25", "2026-07-28")
'''),
    # -- exercise 3's flow: delegated to Notas Sync, or constant -----------------------------
    Null("notes_sync_como_notes_backup", "ejercicio3b", HEADER + '''
from lesson import tools

extension.tool("notes_backup", description="Copia tus notas.",
               annotations={"readOnlyHint": True, "openWorldHint": True})(tools.notes_sync)
'''),
    Null("notes_setup_como_notes_backup", "ejercicio3b", HEADER + '''
from lesson import tools

extension.tool("notes_backup", description="Copia tus notas.",
               annotations={"readOnlyHint": True, "openWorldHint": True})(tools.notes_setup)
'''),
    Null("copia_siempre_hecha", "ejercicio3b", HEADER + '''
from server import ok


@extension.tool("notes_backup", description="Copia tus notas.")
def notes_backup(ctx):
    return ok("Copia hecha.", {"status": "done", "notes": len(ctx.notes())})
'''),
    Null("siempre_la_alternativa", "ejercicio3b", HEADER + '''
from server import ok


@extension.tool("notes_backup", description="Copia tus notas.")
def notes_backup(ctx):
    return ok("Autoriza Nube de Copias a mano.", {"status": "manual"})
'''),
    Null("nunca_canjea_y_dice_hecho", "ejercicio3b", never_exchanged()),
    Null("reaccion_del_servidor", "ejercicio4", HEADER + '''
import server

extension.on_roots_changed(server.revoke_every_handle)
'''),
    Null("revoca_todos", "ejercicio4", HEADER + '''
@extension.on_roots_changed
def reaction(change):
    for handle in change.handles:
        change.revoke(handle)
'''),
    Null("no_revoca_ninguno", "ejercicio4", HEADER + '''
@extension.on_roots_changed
def reaction(change):
    return None
'''),
    Null("archiva_con_notes_delete", "ejercicio2", HEADER + '''
from lesson import tools

extension.tool("notes_archive", description="Archiva una nota.",
               input_schema={"type": "object", "required": ["title"],
                             "properties": {"title": {"type": "string"}}},
               annotations={"readOnlyHint": False, "destructiveHint": True})(tools.notes_delete)
'''),
    Null("pregunta_y_nunca_archiva", "ejercicio2", HEADER + '''
from elicitation import choice
from server import ToolError, ok
''' + ARCHIVE + '''def notes_archive(ctx, title):
    matches = ctx.find_notes(title)
    if not matches:
        raise ToolError("No hay ninguna nota con ese título en tus roots.")
    answer = ctx.elicit_form(
        "¿Cuál archivo?",
        {"note_id": choice([(n.id, n.title) for n in matches], title="Nota",
                           protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    return ok(f"Entendido ({answer.action}).")
'''),
    Null("pregunta_y_dice_que_archiva", "ejercicio2", HEADER + '''
from elicitation import choice
from server import ToolError, ok
''' + ARCHIVE + '''def notes_archive(ctx, title):
    matches = ctx.find_notes(title)
    if not matches:
        raise ToolError("No hay ninguna nota con ese título en tus roots.")
    ctx.elicit_form(
        "¿Cuál archivo?",
        {"note_id": choice([(n.id, n.title) for n in matches], title="Nota",
                           protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    return ok("Archivada.")
'''),
    Null("revoca_solo_los_ilocalizables", "ejercicio4", HEADER + '''
@extension.on_roots_changed
def reaction(change):
    for handle in change.handles:
        if handle.current_path() is None:
            change.revoke(handle)
'''),
    Null("archiva_sin_preguntar", "ejercicio2", HEADER + '''
from server import ToolError, ok
''' + ARCHIVE + '''def notes_archive(ctx, title):
    matches = ctx.find_notes(title)
    if not matches:
        raise ToolError("No hay ninguna nota con ese título en tus roots.")
    note = matches[0]
    ctx.archive(note)
    return ok(f"Archivada {note.id}.")
'''),
    Null("sello_del_servidor", "reto", HEADER + '''
import request_state

extension.request_state(request_state.Sealer())
'''),
    Null("sello_del_servidor_dos_veces", "reto", HEADER + '''
import collections

import request_state


class DosVeces(request_state.Sealer):
    def __init__(self):
        self.veces = collections.Counter()

    def open(self, token, binding):
        self.veces[token] += 1
        if self.veces[token] > 2:
            raise ValueError("ya no")
        return super().open(token, binding)


extension.request_state(DosVeces())
'''),
    Null("sello_en_otro_archivo", "reto", HEADER + '''
import hmac


def parecer_seguro(a, b):  # never on the path that verifies: the sealer is in ejercicio2.py
    return hmac.compare_digest(a, b)
''', others=(("ejercicio2.py", reference("reto.py")),)),
    Null("sin_sello", "reto", HEADER + '''
import base64
import json


@extension.request_state
class SinSello:
    def seal(self, payload, binding):
        return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()

    def open(self, token, binding):
        return json.loads(base64.urlsafe_b64decode(token))
'''),
]
