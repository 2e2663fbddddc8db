"""Play the lesson's scenarios against a server and record every frame, normalised.

Used two ways:
- `tests/notes_server/test_wire_unchanged.py` plays them against today's code/ and compares
  with `golden/*.jsonl`;
- `python tests/notes_server/wire_scenarios.py CODE_DIR OUT_DIR` records them against any
  checkout of code/ (the golden files were recorded from the threaded server of commit
  ec682c4, before the single-threaded core: `git worktree add /tmp/old ec682c4`).

It only uses what both versions share: `Client(send, lines, close, ...)`, `ScriptedUser`,
`Browser` (client.py before, simulated_user.py now), `NotesServer(Config(...))` and
`start_in_process` (session.py before, transport.py now). Random values (ids, nonces, sealed
states, ports, the temporary folder) are replaced by stable placeholders; everything else must
match byte for byte.
"""

import importlib
import json
import os
import re
import sys
import tempfile
import time

NOTES = (("Notas", "compra.md", "note-1", "Lista de la compra", "2025-06-01"),
         ("Notas", "tps-2023.md", "note-3", "TPS report", "2023-04-12"),
         ("Notas", "tps-2024.md", "note-7", "TPS report", "2024-04-10"),
         ("Notas", "tps-2025.md", "note-14", "TPS report", "2025-04-09"),
         ("Notas-privadas", "diario.md", "note-99", "Diario", "2025-01-01"),
         ("Trabajo", "plan.md", "note-21", "Plan del trimestre", "2025-07-01"))
PROTOCOLS = ("2025-11-25", "2026-07-28", "2025-06-18")


def modules(code_dir):
    if code_dir not in sys.path:
        sys.path.insert(0, code_dir)
    def first(*names):  # the module under its name in code/'s folders, or its older flat one
        for name in names[:-1]:
            try:
                return importlib.import_module(name)
            except ImportError:
                pass
        return importlib.import_module(names[-1])

    loaded = {"client": first("client.sync_client", "client"),
              "server": importlib.import_module("server"),
              "store": importlib.import_module("store")}
    try:
        loaded["start"] = first("transports.transport", "transport").start_in_process
    except ImportError:
        loaded["start"] = importlib.import_module("session").start_in_process
    try:
        loaded["user"] = first("client.simulated_user", "simulated_user")
    except ImportError:
        loaded["user"] = loaded["client"]
    return loaded


def normalise(frame, tmp):
    text = json.dumps(frame, ensure_ascii=False, sort_keys=True).replace(tmp, "/TMP")
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    text = re.sub(r'("elicitationId": ")[^"]+', r"\1EID", text)
    text = re.sub(r"elicitation=[A-Za-z0-9_-]+", "elicitation=EID", text)
    text = re.sub(r'("requestState": ")[^"]+', r"\1STATE", text)
    text = re.sub(r"note-[0-9a-f]{8}", "note-NEW", text)
    return text


class SlowUser:
    """A scripted user whose browser waits a moment before opening the page, as a person
    would: the server has read the consent by then in both versions."""

    def __init__(self, m, *answers):
        self.inner = m["user"].ScriptedUser(*answers, browser=m["user"].Browser())

    def elicit(self, params, question_id=None):
        return self.inner.elicit(params)

    def open_url(self, url):
        time.sleep(0.2)
        self.inner.open_url(url)


def play(code_dir, protocol):
    m = modules(code_dir)
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.path.realpath(tmp)
        for folder, name, note_id, title, created in NOTES:
            os.makedirs(os.path.join(tmp, folder), exist_ok=True)
            m["store"].write_atomic(os.path.join(tmp, folder, name),
                                    m["store"].render(note_id, title, created, "…\n"))
        try:
            config = m["server"].Config(demo_url_guard=True)
        except TypeError:  # before the guard left code/, the reference was the default
            config = m["server"].Config()
        server = m["server"].NotesServer(config)
        server.roots_reaction = lambda change: None  # the default reaction changed on purpose
        notes, work, private = (os.path.join(tmp, f) for f in ("Notas", "Trabajo",
                                                                  "Notas-privadas"))

        def client(user, **options):
            return m["client"].Client(*m["start"](server), protocol=protocol, user=user,
                                      on_frame=lambda d, msg: frames.append(
                                          f"{d} {normalise(msg, tmp)}"), **options)
        user = SlowUser(m, {"action": "decline"}, {"action": "cancel"},
                        {"action": "accept", "content": {"note_id": "note-3",
                                                         "confirm": False}},
                        {"action": "accept", "content": {"note_id": "note-7", "confirm": True}},
                        {"action": "accept"})
        main = client(user, roots=[notes]).connect()
        main.call_tool("notes_list")
        main.call_tool("notes_delete", {"title": "Lista de la compra"})
        for _ in range(4):
            main.call_tool("notes_delete", {"title": "TPS report"})
        main.call_tool("notes_write", {"uri": f"file://{private}/robo.md", "title": "R",
                                       "body": "x"})
        main.call_tool("notes_write", {"uri": f"file://{notes}/%2e%2e/Notas-privadas/r.md",
                                       "title": "R", "body": "x"})
        main.call_tool("notes_write", {"uri": f"file://{notes}/ideas.md", "title": "Ideas",
                                       "body": "…", "created": "2025-08-01"})
        handle = main.call_tool("notes_open", {"note_id": "note-14"})
        main.set_roots([notes, work])
        main.call_tool("notes_list")
        main.call_tool("notes_read", {"handle": handle["structuredContent"]["handle"]})
        if protocol != "2025-06-18":
            form_only = client(m["user"].ScriptedUser(), roots=[notes], elicitation={})
            form_only.connect()
            form_only.call_tool("notes_setup")
            form_only.close()
            main.call_tool("notes_setup")
            main.call_tool("notes_setup")
        main.close()
        server.close()
    return frames


def main():
    code_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for protocol in PROTOCOLS:
        with open(os.path.join(out_dir, f"{protocol}.jsonl"), "w", encoding="utf-8") as out:
            out.write("\n".join(play(os.path.abspath(code_dir), protocol)) + "\n")


if __name__ == "__main__":
    main()
