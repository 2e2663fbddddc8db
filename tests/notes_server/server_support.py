"""Helpers for the notes server tests: a notes tree on disk, the server command line, and a
checker that validates every frame the server wrote against the official schema."""

import json
import os
import sys
from pathlib import Path

CODE = Path(__file__).resolve().parents[2] / "code"
if str(CODE) not in sys.path:
    sys.path.insert(0, str(CODE))

import store  # noqa: E402
from mcp_schema import validate_frame  # noqa: E402
from wire import valid_id  # noqa: E402

MAIN = str(CODE / "main.py")
STATELESS = "2026-07-28"


class NotesTree:
    """Notas/ (the root), Notas-privadas/ (a sibling sharing its prefix), Trabajo/ (not shared
    yet), with the lesson's notes: one "Lista de la compra" and three "TPS report"."""

    NOTES = [("Notas", "compra.md", "note-1", "Lista de la compra", "2025-06-01"),
             ("Notas", "tps-2023.md", "note-3", "TPS report", "2023-04-12"),
             ("Notas", "tps-2024.md", "note-7", "TPS report", "2024-04-10"),
             ("Notas", "tps-2025.md", "note-14", "TPS report", "2025-04-09"),
             ("Notas-privadas", "diario.md", "note-99", "Diario", "2025-01-01"),
             ("Trabajo", "plan.md", "note-21", "Plan del trimestre", "2025-07-01")]

    def __init__(self, base):
        self.base = Path(os.path.realpath(base))
        self.notes = self.base / "Notas"
        self.private = self.base / "Notas-privadas"
        self.work = self.base / "Trabajo"
        for folder in (self.notes, self.private, self.work):
            folder.mkdir(parents=True)
        for folder, name, note_id, title, created in self.NOTES:
            store.write_atomic(str(self.base / folder / name),
                               store.render(note_id, title, created, f"cuerpo de {note_id}\n"))

    def snapshot(self):
        """Every file below the base folder, with its content: to prove nothing else changed."""
        return {str(p.relative_to(self.base)): p.read_bytes()
                for p in sorted(self.base.rglob("*")) if p.is_file()}

    def files(self, folder):
        return sorted(p.name for p in Path(folder).glob("*.md"))


def serve_argv(*args, trace=None):
    argv = [sys.executable, "-I", MAIN, "serve", *map(str, args)]
    return argv + (["--trace", str(trace)] if trace else [])


def validate_trace(path):
    """Validate each server-written frame; responses against the method they answer."""
    asked_by_client, asked_by_server, revision_of = {}, {}, {}
    legacy = "2025-11-25"
    checked = 0
    for line in Path(path).read_text().splitlines():
        entry = json.loads(line)
        try:
            frame = json.loads(entry["frame"])
        except ValueError:
            continue  # garbage the tests sent on purpose
        if not isinstance(frame, dict):
            continue
        if entry["dir"] == "in":
            params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
            if "method" in frame and valid_id(frame.get("id")):
                meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
                stateless = "io.modelcontextprotocol/protocolVersion" in meta \
                    or frame["method"] == "server/discover"
                asked_by_client[frame["id"]] = frame["method"]
                revision_of[frame["id"]] = STATELESS if stateless else legacy
                if frame["method"] == "initialize":
                    legacy = params.get("protocolVersion", legacy)
                    legacy = legacy if legacy in ("2025-06-18", "2025-11-25") else "2025-11-25"
            continue
        if "method" in frame:
            if "id" in frame:
                asked_by_server[frame["id"]] = frame["method"]
            validate_frame(frame, legacy, "server")
        elif valid_id(frame.get("id")) and frame["id"] in asked_by_client:
            method = asked_by_client[frame["id"]]
            validate_frame(frame, revision_of[frame["id"]], "server",
                           result_of=None if "error" in frame else method)
        else:
            validate_frame(frame, legacy, "server")
        checked += 1
    assert checked, "no server frame was validated"
    return checked
