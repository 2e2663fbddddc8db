"""Helpers for the notes server tests: a notes tree on disk, the server command line, `serve`
as a process for the lesson's client (`spawn`), a raw JSON-lines pipe to `serve`, test-only
solution files, and a checker that validates every frame the server wrote against the
official schema.

`NOTES_CODE_DIR=/tmp/mut-code` points every test at another copy of `code/` (a mutated one, to
prove that a test can fail); by default the tests use the repository's `code/`.
"""

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

CODE = Path(os.environ.get("NOTES_CODE_DIR") or Path(__file__).resolve().parents[2] / "code")
if str(CODE) not in sys.path:
    sys.path.insert(0, str(CODE))

import store  # noqa: E402
from mcp_schema import validate_frame  # noqa: E402
from shared.wire import valid_id  # noqa: E402

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


def spawn(argv, **popen_args):
    """Start a server process on stdio for the lesson's `sync_client.Client(send, lines, close)`:
    returns (send, lines, close, process)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen_args)

    def send(data):
        proc.stdin.write(data)
        proc.stdin.flush()

    def close():
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return send, iter(proc.stdout.readline, b""), close, proc


def write_solution(folder, source, name="solucion_de_prueba.py"):
    """A test-only solution file for `serve --solution` (see code/lesson/extension.py)."""
    path = Path(folder) / name
    path.write_text(textwrap.dedent(source))
    return path


def server_with(folder, source, **config):
    """An in-process NotesServer(Config(**config)) with the test-only solution `source`."""
    import extension
    from server import Config, NotesServer
    return NotesServer(Config(**config), extension.load(str(write_solution(folder, source))))


class RawPipe:
    """`serve` on raw pipes: send JSON (or bytes) lines, receive parsed frames."""

    def __init__(self, *args, trace=None, cwd=None):
        self.proc = subprocess.Popen(serve_argv(*args, trace=trace), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, data):
        self.proc.stdin.write(data if isinstance(data, bytes) else
                              (json.dumps(data) + "\n").encode())
        self.proc.stdin.flush()

    def receive(self, timeout=10):
        return self.lines.get(timeout=timeout)

    def nothing_within(self, seconds):
        try:
            extra = self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        raise AssertionError(f"unexpected frame {extra}")

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=10)


def server_frames(path):
    """Every frame the server wrote, parsed, in order (from a `serve --trace` file)."""
    frames = []
    for line in Path(path).read_text().splitlines():
        entry = json.loads(line)
        if entry["dir"] == "out":
            frames.append(json.loads(entry["frame"]))
    return frames


def validate_trace(path):
    """Validate each server-written frame; responses against the method they answer. A trace
    of `serve --http` names each entry's channel (one session, or one 2026-07-28 exchange):
    ids repeat across channels, so each is validated on its own."""
    channels = {}
    for line in Path(path).read_text().splitlines():
        entry = json.loads(line)
        channels.setdefault(entry.get("channel"), []).append(entry)
    checked = sum(_validate_channel(entries) for entries in channels.values())
    assert checked, "no server frame was validated"
    return checked


def _validate_channel(entries):
    asked_by_client, asked_by_server, revision_of = {}, {}, {}
    legacy = "2025-11-25"
    checked = 0
    for entry in entries:
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
    return checked
