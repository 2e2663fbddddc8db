"""A naive server beside the lesson's: the weak half of the core's weak-vs-right predictions.

    ingenuo = await ui.naive.connect(lab, roots=["Notas"])   # same options as lab.connect

gives a connection like `lab.connect`'s, whose server takes the three shortcuts the lesson
warns about, so a notebook can run the same calls on it and on the lesson's server:

- `notes_write` decides with `startswith` on the URI's decoded text and writes by that path
  (notebook 1 §2: the shared prefix, an encoded `..`, a link, another host);
- `notes_delete` takes any `accept` as a yes, without looking at `confirm`, and deletes the
  chosen note by its path, without re-checking it (notebook 2 §3, where `compare` plays the
  same answers on both servers; notebook 4, a folder swapped while the form is open);
- on a roots change it decides at once to revoke every open handle, but the revocations land
  only after the next tool call, as a reaction that revokes from another thread might
  (notebook 1 §3: the race exercise 4's server avoids by applying them with the new roots).

Every other tool, and the rest of the server, is the lesson's.

Deliberate simplifications: the shortcuts replace tools and the roots reaction of the lab's
server in this kernel (the lab runs it in process); "later" is the end of the next tool run,
not a timer, so what a notebook prints does not depend on the machine's speed.
"""

from __future__ import annotations

import copy
import os
import secrets
import urllib.parse

import elicitation
import store
from tooling import ToolError, ok

LATE = "revocado tarde: las roots cambiaron antes de esta llamada"
COLUMN = 34  # characters of a server's column in `compare`'s table


def write_by_prefix(ctx, uri, title, body, created="2025-08-01"):
    """notes_write that compares text: the URI's path, decoded, against each root's path."""
    path = urllib.parse.unquote(urllib.parse.urlparse(uri).path)  # the host is ignored
    if not any(path.startswith(root.path) for root in ctx.roots.roots):
        raise ToolError(f"No escribí nada: {path} no empieza por ninguna root.")
    with open(path, "w", encoding="utf-8") as out:  # follows whatever the path names now
        out.write(store.render(f"note-{secrets.token_hex(4)}", title, created, body))
    return ok(f"Escribí {path}.")


def delete_by_path(ctx, title):
    """notes_delete that trusts `accept` alone and deletes by the path it listed."""
    # decided once per call, as notes_delete does: every run after the answer asks the same
    matches = [store.Note(*n) for n in ctx.memo("matches", lambda: ctx.find_notes(title))]
    if not matches:
        raise ToolError(f"No hay ninguna nota titulada {title!r} dentro de las roots.")
    answer = ctx.elicit_form(
        f"Hay {len(matches)} notas tituladas {title!r}. Elige cuál borrar y confirma.",
        {"note_id": elicitation.choice([(n.id, f"{n.created} · {n.id}") for n in matches],
                                       title="Nota", protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, bórrala"}},
        required=["note_id", "confirm"])
    if answer.action != "accept":  # confirm is never looked at
        return ok("No borré nada.")
    note = next(n for n in matches if n.id == answer.content["note_id"])
    os.remove(note.path)  # by its path: whatever that path names now
    return ok(f"Borré {note.path}.")


async def connect(lab, **options):
    """`lab.connect(**options)` (quiet) with the naive server's shortcuts in place."""
    conn = await lab.connect(**{"quiet": True, **options})
    server, late = conn.server, []
    shortcuts = {"notes_write": write_by_prefix, "notes_delete": delete_by_path}
    for name, tool in list(server.tools.items()):
        server.tools[name] = naive = copy.copy(tool)
        naive.handler = _then_revoke(shortcuts.get(name, tool.handler), late)
    server.roots_reaction = lambda change: late.extend(change.handles)  # decided; not done
    return conn


async def compare(lab, servers, tool, arguments, answers) -> dict:
    """Each answer of `answers` ({case: what a simulated user answers}) once on each server of
    `servers` ({name: connection}, in that order), a call of `tool` with `arguments` each;
    prints one row per case with what each server changed on disk, and returns
    {server name: {case: [paths that changed]}}."""
    changed = {name: {} for name in servers}
    for name, conn in servers.items():
        for case, answer in answers.items():
            before = lab.snapshot()
            await conn.call(tool, arguments, simulate=True, scripted=[answer], echo=False)
            after = lab.snapshot()
            changed[name][case] = sorted(path for path in before.keys() | after.keys()
                                         if before.get(path) != after.get(path))
    width = max(map(len, answers)) + 2
    print(("".ljust(width) + "".join(f"servidor {name}".ljust(COLUMN) for name in servers))
          .rstrip())
    for case in answers:
        print((case.ljust(width) + "".join(_outcome(changed[name][case]).ljust(COLUMN)
                                           for name in servers)).rstrip())
    return changed


def _outcome(paths) -> str:
    return "✅ nada cambió" if not paths else "❌ cambió " + ", ".join(paths)


def _then_revoke(handler, late):
    """The tool, then the revocations a roots change left waiting: they land after it ran."""
    def run(ctx, **arguments):
        try:
            return handler(ctx, **arguments)
        finally:
            while late:
                ctx.handles.revoke(late.pop(), LATE)
    return run
