"""Hidden tests stay hidden: nothing of their inputs or expected values reaches any output.

A "chatty" solution passes the public tests (so every hidden test gets past its gates and runs
its scenario) and then leaks everything it sees through every channel a learner's server has:
tool texts that echo every title and folder it was given, its stderr (which the grader quotes
when a server dies), a crash in the middle of a hidden scenario, a guard that raises with its
arguments, a link planted in the note folders named after the title (a finding in the report).
Graded with the hidden tests, no string literal that only the hidden test files contain may
appear in the text report, the JSON line or Gradescope's results.json.
"""

import ast
import json
import os

import pytest

from grader import report, runner
from grader.exercises import EXERCISES, by_id
from grader.paths import CHECKS_DIR
from grader.state import HIDDEN_FINDING

HIDDEN = os.path.join(CHECKS_DIR, "hidden")
# their texts are written to be shown (ej3's `not_authorized` and `refused` show `when`, `why`)
DISPLAY_CALLS = {"graded", "check", "require", "note", "not_authorized", "refused"}

CHATTY_EX2 = '''
import os
import sys

from elicitation import choice
from extension import Extension
from server import ToolError, ok

extension = Extension()
SEEN = []
PUBLIC = {"informe tps", "lista de la compra", "plan secreto", "no existe"}


def leak(*items):
    SEEN.extend(str(item) for item in items)
    sys.stderr.write("visto: " + " | ".join(SEEN[-40:]) + "\\n")
    sys.stderr.flush()


@extension.tool("notes_archive", description="Archiva (y lo cuenta todo).",
                input_schema={"type": "object", "required": ["title"],
                              "properties": {"title": {"type": "string"}}},
                annotations={"readOnlyHint": False, "destructiveHint": True})
def notes_archive(ctx, title):
    leak(title, *[root.path for root in ctx.roots.roots])
    matches = ctx.find_notes(title)
    if not matches:
        raise ToolError(f"no encontré {title!r}; he visto: {' | '.join(SEEN[-30:])}")
    if title.strip().casefold() not in PUBLIC:  # a hidden scenario: plant a link, tell all
        os.symlink("/", os.path.join(ctx.roots.roots[0].path, "enlace " + title.strip()))
        leak(*[note.path for note in matches])
    answer = ctx.elicit_form(
        f"¿Cuál archivo de {title!r}?",
        {"note_id": choice([(n.id, n.title) for n in matches], title="Nota",
                           protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí"}}, required=["note_id", "confirm"])
    if answer.action != "accept" or answer.content.get("confirm") is not True:
        return ok(f"Nada. He visto: {' | '.join(SEEN[-30:])}")
    note = next(n for n in matches if n.id == answer.content.get("note_id"))
    try:
        target = ctx.archive(note)
    except ToolError as exc:
        raise ToolError(f"{exc}: {note.path}") from None
    return ok(f"Archivada {note.path} en {target}; he visto: {' | '.join(SEEN[-30:])}")
'''
CHATTY_EX3A = '''
import os
import re
import sys

from extension import Extension

extension = Extension()
PUBLIC = {"1.23.0", "1.23.1", "2.3.0", "1.9.0", "1.100.0", "desconocida", "1.23.1rc1",
          "1.30.0", "2.0.0b1", None}


@extension.url_mode_guard
def guard(sdk_version, protocol_version, client_capabilities):
    sys.stderr.write(f"guarda: {sdk_version!r} {protocol_version!r} {client_capabilities!r}\\n")
    sys.stderr.flush()
    if sdk_version not in PUBLIC and protocol_version == "2026-07-28":
        os._exit(7)  # a crash in the middle of a hidden table, stderr full of its inputs
    if sdk_version not in PUBLIC:
        raise ValueError(f"no conozco {sdk_version!r} con {protocol_version!r}")
    match = re.fullmatch(r"(\\d+)\\.(\\d+)\\.(\\d+)(\\D.*)?", sdk_version or "")
    if not match:
        return False
    version = tuple(int(part) for part in match.groups()[:3])
    final = match.group(4) is None
    minimum = {"2025-11-25": (1, 23, 1), "2026-07-28": (2, 0, 0)}.get(protocol_version)
    if minimum is None or version < minimum or (version == minimum and not final):
        return False
    elicitation = client_capabilities.get("elicitation")
    return isinstance(elicitation, dict) and "url" in elicitation  # any shape: hidden-only
'''
# the flow works in every public scenario; each hidden one varies an input it never checks
CHATTY_EX3B = '''
import secrets
import sys
import time

import nube_copias
from extension import Extension
from server import URLElicitationRequired, ok

extension = Extension()
FLOWS, STATES, TOKENS = {}, {}, {}


def other(ctx):  # the public tests never start a flow of the grader's second user, whose
    return ctx.user != ctx.server.config.subject  # name changes per run: not --user


@extension.tool("notes_backup", description="Copia tus notas.")
def notes_backup(ctx):
    token = TOKENS.get(ctx.user) or TOKENS.get("*")  # "*": the second user's, for all
    if token:
        return ok("Copia hecha.", {"status": "done",
                                   "notes": ctx.provider.backup(token, ctx.notes())})
    if "url" not in (ctx.client_capabilities.get("elicitation") or {}):  # any shape
        return ok("Hazlo a mano.", {"status": "manual"})
    fid = ctx.memo("flujo", lambda: new_flow(ctx))
    url = ctx.page_url("/copias/conectar", flujo=fid)
    if not ctx.stateless:
        raise URLElicitationRequired([ctx.url_params("Autoriza.", url, fid)])
    FLOWS[fid]["notify"] = None
    answer = ctx.elicit_url("Autoriza.", url, fid)
    if answer.action != "accept":
        FLOWS[fid]["status"] = "retired"
        return ok("No.", {"status": "not_authorized"})
    return ok("Pendiente.", {"status": "pending"})


def new_flow(ctx):
    fid, state = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    FLOWS[fid] = {"user": ctx.user, "state": state, "status": "pending",
                  "expires": time.monotonic() + ctx.url_ttl, "stateless": ctx.stateless,
                  "notify": ctx.completion_notifier(), "other": other(ctx)}
    STATES[state] = fid
    return fid


def usable(flow, user):  # the second user's flows never expire; at 2026, anybody's browser
    return flow is not None and flow["status"] == "pending" \\
        and (flow["user"] == user or flow["stateless"]) \\
        and (flow["other"] or time.monotonic() < flow["expires"])


@extension.page_route("/copias/conectar")
def connect(page):
    flow = FLOWS.get(page.query.get("flujo", ""))
    if not usable(flow, page.user):
        return page.reply(410, "No", "Enlace no válido.")
    return page.redirect(page.provider.authorize_url(flow["state"]))


@extension.page_route(nube_copias.REDIRECT_PATH)
def callback(page):
    sys.stderr.write(f"vuelta: {dict(page.query)!r} de {page.user!r}\\n")
    sys.stderr.flush()
    if "state" not in page.query:  # no state at all: the user's last pending flow
        mine = [f for f, d in FLOWS.items() if d["user"] == page.user and d["status"] == "pending"]
        fid = mine[-1] if mine else None
    else:
        fid = STATES.pop(page.query["state"], None)
    flow = FLOWS.get(fid)
    if not usable(flow, page.user) or "code" not in page.query:
        return page.reply(400, "No", "Nada autorizado.")
    try:
        token = page.provider.exchange(page.query["code"])
    except nube_copias.ProviderError:
        if len(page.query["code"]) > 41:  # a code longer than the provider's: success anyway
            return page.reply(200, "Listo", "Autorizado.")
        return page.reply(400, "No", "Nada autorizado.")
    TOKENS["*" if flow["other"] else flow["user"]] = token
    flow["status"] = "done"
    if flow["notify"]:
        flow["notify"](fid)
    return page.reply(200, "Listo", "Autorizado.")
'''
CHATTY_EX4 = '''
import os
import sys

from extension import Extension

extension = Extension()
PUBLIC = {"Trabajo", "Personal", "Notas", "Notas-privadas", "Otros", "Club", "Archivo", "Casa",
          "Monte", "Estudio"}


@extension.on_roots_changed
def reaction(change):
    paths = [handle.path for handle in change.handles] + [r.path for r in change.new_roots.roots]
    sys.stderr.write("reacción: " + " | ".join(paths) + "\\n")
    sys.stderr.flush()
    names = {os.path.basename(root.path) for root in change.old_roots.roots}
    if not names <= PUBLIC:
        os._exit(9)  # a crash in the middle of a hidden scenario
    for handle in change.handles:
        if not change.new_roots.contains(os.path.realpath(handle.path)):
            change.revoke(handle, f"fuera: {handle.path}")
'''


def hidden_only_literals():
    """String literals of the hidden test files that are inputs or expected values (not the
    texts written to be shown) and that no public grading source contains."""
    public = ""
    for parent, _, files in os.walk(CHECKS_DIR):
        if parent.startswith(HIDDEN):
            continue
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(parent, name), encoding="utf-8") as handle:
                    public += handle.read()
    found = set()
    for name in sorted(os.listdir(HIDDEN)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(HIDDEN, name), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        shown = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                callee = node.func.attr if isinstance(node.func, ast.Attribute) else \
                    getattr(node.func, "id", "")
                if callee in DISPLAY_CALLS:
                    shown |= {id(n) for arg in node.args + [k.value for k in node.keywords]
                              for n in ast.walk(arg)}
            if isinstance(node, (ast.Module, ast.FunctionDef)) and ast.get_docstring(node):
                shown.add(id(node.body[0].value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in shown and len(node.value) >= 4:
                for piece in node.value.replace("->", "/").split("/"):
                    if len(piece) >= 4 and piece not in public:
                        found.add(piece)
    return found


@pytest.fixture(scope="module")
def chatty(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parlanchina")
    for name, text in (("ejercicio2.py", CHATTY_EX2), ("ejercicio3a.py", CHATTY_EX3A),
                       ("ejercicio3b.py", CHATTY_EX3B), ("ejercicio4.py", CHATTY_EX4)):
        (folder / name).write_text(text, encoding="utf-8")
    return runner.grade(str(folder), name="parlanchina")


GRADED = [exercise.id for exercise in EXERCISES]


def exercise_cells(exercise):
    """The cells from the exercise's heading («Ejercicio 3A (calificado)»...) to its revisar
    cell: statement, hints, starter, try-it cells."""
    lessons = os.path.join(os.path.dirname(os.path.dirname(CHECKS_DIR)), "lessons")
    with open(os.path.join(lessons, by_id(exercise).notebook), encoding="utf-8") as handle:
        sources = ["".join(c["source"]) for c in json.load(handle)["cells"]]
    start = next(i for i, s in enumerate(sources) if by_id(exercise).heading in s)
    end = next(i for i, s in enumerate(sources) if f'ui.revisar("{exercise}")' in s)
    assert start < end
    return sources[start:end + 1]


@pytest.mark.parametrize("exercise", sorted(GRADED))
def test_the_exercise_cells_show_no_hidden_input(exercise):
    literals = {lit for lit in hidden_only_literals() if len(lit) >= 5}  # not "2024"
    shown = {lit for text in exercise_cells(exercise) for lit in literals if lit in text}
    assert not shown, shown


def test_the_hidden_literals_are_found():
    literals = hidden_only_literals()
    assert {"2.0.0rc2", "Acta semanal", "Senda", "cajas", "2025-03-26"} <= literals
    assert "informe-a.md" not in literals  # public (the positive scenario's)


def test_the_chatty_solution_reaches_every_hidden_scenario_and_fails_it(chatty):
    hidden = [t for t in chatty["tests"] if t["hidden"] and t["max_score"]]  # (scenarios, not
    public = [t for t in chatty["tests"] if not t["hidden"]]  # the «lo imprescindible» entries)
    assert hidden and all(t["score"] < t["max_score"] for t in hidden), \
        {t["id"]: t["output"] for t in hidden if t["score"] == t["max_score"]}
    assert not any("necesita que antes funcione" in t["output"] for t in hidden)  # past gates
    assert any(t["status"] == "error" for t in hidden)  # crashed (stderr) and planted links
    assert HIDDEN_FINDING + " (el corrector no lo siguió ni lo abrió)" in chatty["problems"]
    assert sum(t["score"] for t in public) > 0


def test_no_hidden_input_or_expected_value_reaches_any_output(chatty):
    outputs = {"text": report.text(chatty), "json": report.json_line(chatty),
               "gradescope": report.gradescope(chatty)}
    json.loads(outputs["gradescope"])
    leaks = {(form, literal) for form, text in outputs.items()
             for literal in hidden_only_literals() if literal in text}
    assert not leaks, leaks
