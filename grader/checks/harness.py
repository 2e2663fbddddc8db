"""What a grading test works with: fresh notes folders, a fresh server, a scripted user.

A test gets a `Lab` (one per test) and a `Grade`. `lab.folders(...)` lays out notes inside the
sandbox's data area; `lab.server(revision, ...)` forks a notes server with the learner's
solution and connects the grader's own MCP client to it (code/client.py, trusted code in the
grader process); `run.call(...)` returns a `Call` with the result and every elicitation the
server sent during that call. Everything a test decides is read from the wire and from the
files, never from what the learner's process says about itself.

`Grade.check` records one expectation in Spanish (what was sent, what came back, what was
expected); `Grade.require` is a gate: when it fails the test scores 0 with that reason.
`Broken` means the server crashed, hung or sent garbage: the test scores 0 with status
"error".

Deliberate simplifications: a test runs its calls sequentially, except where concurrency is
the point; timeouts are generous constants (a correct server answers in milliseconds).
"""

import hashlib
import json
import os
import re
import threading
import urllib.parse

import store  # noqa: E402  (the grader's own trusted copy of the server code)
import wire  # noqa: E402
from client import Client  # noqa: E402
from grader.paths import CODE_DIR  # noqa: F401  (puts code/ on sys.path)

REVISIONS = ("2025-11-25", "2026-07-28")
CALL_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
MAX_FRAMES = 4000
MAX_PROMPTS = 3  # per call; beyond this the grader stops answering


class Abort(Exception):
    """A gate failed: the behaviour under test never happened, so nothing else counts."""


class Broken(Exception):
    """The server crashed, hung or broke the protocol: zero for this test, status error."""


class Grade:
    def __init__(self):
        self.checks = []   # (passed, text)
        self.notes = []    # context lines shown before the checks

    def note(self, text):
        self.notes.append(text)

    def check(self, passed, text, got=None, expected=None):
        detail = text
        if not passed and (got is not None or expected is not None):
            detail += f" — recibido: {short(got)}; esperado: {expected}"
        self.checks.append((bool(passed), detail))
        return bool(passed)

    def require(self, passed, text):
        if not passed:
            raise Abort(text)

    def fraction(self):
        if not self.checks:
            return 0.0
        return sum(1 for ok, _ in self.checks if ok) / len(self.checks)

    def lines(self):
        return self.notes + [("✔ " if ok else "✘ ") + text for ok, text in self.checks]


def short(value, limit=300):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                          sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


# -- notes on disk -------------------------------------------------------------------------------
class Tree:
    """A test's private folder in the sandbox: notes written by the grader, read back by it."""

    def __init__(self, lab, name):
        self.lab = lab
        self.inner = f"{lab.sub.sandbox.inner('data')}/{name}"
        self.host = lab.sub.sandbox.host_path(self.inner)
        os.makedirs(self.host)
        lab.sub.sandbox.give(self.host)
        self.ids = {}  # note id -> relative path

    def add(self, folder, filename, note_id, title, created="2025-03-02", body=None):
        path = self.host
        for part in folder.split("/"):
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                os.mkdir(path)
                self.lab.sub.sandbox.give(path)
        text = store.render(note_id, title, created, body or f"Cuerpo de {note_id}.\n")
        with open(os.path.join(path, filename), "w", encoding="utf-8") as handle:
            handle.write(text)
        self.lab.sub.sandbox.give(os.path.join(path, filename))
        self.ids[note_id] = f"{folder}/{filename}"
        return self

    def uri(self, folder):
        return "file://" + urllib.parse.quote(f"{self.inner}/{folder}")

    def path(self, relative):
        return os.path.join(self.host, relative)

    def snapshot(self):
        """{relative path: (sha256, inode)} of every file below this folder."""
        files = {}
        for folder, dirs, names in os.walk(self.host):
            dirs.sort()
            for name in sorted(names):
                full = os.path.join(folder, name)
                try:
                    stat = os.lstat(full)
                    with open(full, "rb") as handle:
                        digest = hashlib.sha256(handle.read(1 << 20)).hexdigest()
                except OSError:
                    continue
                files[os.path.relpath(full, self.host)] = (digest, stat.st_ino)
        return files


def describe_changes(before, after):
    """Spanish summary of what differs between two snapshots ('' when nothing does)."""
    parts = []
    for path in sorted(set(before) - set(after)):
        parts.append(f"desapareció {path}")
    for path in sorted(set(after) - set(before)):
        parts.append(f"apareció {path}")
    for path in sorted(set(before) & set(after)):
        if before[path][0] != after[path][0]:
            parts.append(f"cambió el contenido de {path}")
    return "; ".join(parts)


# -- the user and the browser ------------------------------------------------------------------
class User:
    """Answers elicitations from a script; refuses to be asked more than MAX_PROMPTS times
    in one call (a server that keeps asking gets an error, never an endless conversation)."""

    def __init__(self, answers=(), browser=None):
        self.answers = list(answers)
        self.seen = []
        self.browser = browser
        self.visits = []
        self._per_call = 0

    def new_call(self):
        self._per_call = 0

    def elicit(self, params):
        self.seen.append(params)
        self._per_call += 1
        if self._per_call > MAX_PROMPTS:
            raise wire.RpcError(wire.INVALID_REQUEST, "Demasiadas preguntas en una llamada")
        if not self.answers:
            return {"action": "cancel"}
        answer = self.answers.pop(0)
        return answer(params) if callable(answer) else answer

    def open_url(self, url):
        self.visits.append(url)
        if self.browser is not None and len(self.visits) <= MAX_PROMPTS:
            self.browser.visit(url)


class SandboxBrowser:
    """Opens the setup page from inside the sandbox: load it, then press a button.

    `events` gets a "post" marker just before the form is submitted, so a test can tell
    whether the server announced completion before or after the page was used."""

    def __init__(self, sandbox, run, decision="allow"):
        self.sandbox, self.run, self.decision = sandbox, run, decision
        self.pages = []
        self.busy = threading.Lock()

    def wait(self, timeout=30.0):
        """Until no visit is in progress (a visit runs on the client's thread)."""
        if self.busy.acquire(timeout=timeout):
            self.busy.release()

    def visit(self, url):
        with self.busy:
            self._visit(url)

    def _visit(self, url):
        page = self.sandbox.browse(url)
        self.pages.append(page)
        if page.get("status") != 200:
            return
        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.get("body", "")))
        fields["decision"] = self.decision
        target = urllib.parse.urljoin(url, "/connect")
        self.run.mark("post")
        self.pages.append(self.sandbox.browse(target, method="POST",
                                              data=urllib.parse.urlencode(fields)))


# -- one server and the grader's client -------------------------------------------------------
class Call:
    """What happened during one tools/call."""

    def __init__(self, result=None, error=None, prompts=(), frames=()):
        self.result, self.error = result, error
        self.prompts = list(prompts)   # elicitation/create params sent during this call
        self.frames = list(frames)

    @property
    def is_error(self):
        return self.error is not None or not isinstance(self.result, dict) \
            or self.result.get("isError") is True

    @property
    def structured(self):
        data = self.result.get("structuredContent") if isinstance(self.result, dict) else None
        return data if isinstance(data, dict) else {}

    def text(self):
        if self.error is not None:
            return f"error JSON-RPC {self.error}"
        try:
            return " ".join(c.get("text", "") for c in self.result["content"])
        except (TypeError, KeyError, AttributeError):
            return short(self.result)

    def forms(self):
        return [p for p in self.prompts if p.get("mode", "form") == "form"]

    def urls(self):
        return [p for p in self.prompts if p.get("mode") == "url"]


class Run:
    def __init__(self, lab, revision, argv, roots, elicitation, user, protocol=None):
        self.lab, self.revision = lab, revision
        self.sandbox = lab.sub.sandbox
        self.user = user or User()
        self.frames = []
        self._lock = threading.Lock()
        self.flooded = False
        self.dead = False
        self.process = self.sandbox.spawn(argv)
        self.client = Client(self.process.send, wire.read_lines(self.process.stdout),
                             self.process.close_input, roots=roots, elicitation=elicitation,
                             protocol=protocol or revision, user=self.user,
                             on_frame=self._on_frame, timeout=CONNECT_TIMEOUT)

    def _on_frame(self, direction, msg):
        with self._lock:
            if len(self.frames) >= MAX_FRAMES:
                if not self.flooded:
                    self.flooded = True
                    threading.Thread(target=self.kill, daemon=True).start()
                    self.lab.sub.dirty = True
                return
            self.frames.append((direction, msg))

    def mark(self, name):
        with self._lock:
            self.frames.append(("mark", name))

    def kill(self):
        try:
            self.sandbox.command("kill", pid=self.process.pid)
        except Exception:
            pass

    def died(self):
        """Why the server stopped answering (its exit code, the end of its stderr)."""
        self.dead = True
        self.lab.sub.dirty = True
        code = self.process.status(wait=2.0)  # it may still be on its way out
        tail = self.process.stderr().strip().splitlines()[-3:]
        why = f"el servidor terminó (código {code})" if code is not None \
            else "el servidor dejó de responder"
        if self.flooded:
            why = f"el servidor envió más de {MAX_FRAMES} mensajes"
        return why + (": " + " | ".join(tail) if tail else "")

    def connect(self):
        try:
            self.client.connect()
        except Exception as exc:
            raise Broken(f"no se pudo iniciar la sesión MCP ({type(exc).__name__}): "
                         + self.died()) from None
        return self

    def prompts_since(self, start):
        found = []
        with self._lock:
            frames = self.frames[start:]
        for direction, msg in frames:
            if direction != "←" or not isinstance(msg, dict):
                continue
            if msg.get("method") == "elicitation/create":
                found.append(msg.get("params") if isinstance(msg.get("params"), dict) else {})
            result = msg.get("result")
            if isinstance(result, dict) and isinstance(result.get("inputRequests"), dict):
                for request in result["inputRequests"].values():
                    if isinstance(request, dict) and request.get("method") == "elicitation/create":
                        params = request.get("params")
                        found.append(params if isinstance(params, dict) else {})
        return found

    def call(self, name, arguments=None, timeout=CALL_TIMEOUT):
        strikes = self.lab.sub.strikes
        if name in strikes:
            raise Broken(strikes[name])
        self.user.new_call()
        start = len(self.frames)
        result = error = None
        try:
            result = self.client.call_tool(name, arguments or {}, timeout=timeout,
                                           max_rounds=MAX_PROMPTS + 3)
        except TimeoutError:
            strikes[name] = f"{name} no respondió en {timeout:.0f} s (en esta u otra prueba)"
            self.kill()
            self.died()
            raise Broken(f"{name} no respondió en {timeout:.0f} s") from None
        except wire.RpcError as exc:
            error = f"{exc.code}: {exc.message}"
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{name}: {self.died()} ({type(exc).__name__})") from None
        except RuntimeError as exc:  # still input_required after the rounds we allow
            error = f"sin resultado final: {exc}"
        if self.flooded:
            raise Broken(self.died())
        if result is not None and not isinstance(result, dict):
            raise Broken(f"{name} devolvió algo que no es un resultado: {short(result)}")
        return Call(result, error, self.prompts_since(start), self.frames[start:])

    def set_roots(self, uris):
        try:
            self.client.set_roots(uris)
        except Exception as exc:
            raise Broken(f"tras cambiar las roots el servidor no volvió a pedirlas "
                         f"({type(exc).__name__}): {self.died()}") from None

    def tools(self):
        try:
            return {t.get("name"): t for t in self.client.list_tools() if isinstance(t, dict)}
        except Exception as exc:
            raise Broken(f"tools/list falló ({type(exc).__name__}): {self.died()}") from None

    def notifications(self, method):
        return [n for n in list(self.client.notifications) if n.get("method") == method]

    def close(self):
        self.kill()  # SIGKILL to its process group; the zygote reaps it
        self.process.close_input()
        self.client.close()


class Lab:
    """One test's workspace: its folders, its servers; everything is stopped afterwards."""

    def __init__(self, sub, index):
        self.sub, self.index = sub, index
        self.runs = []
        self._trees = 0

    def require_solution(self):
        if self.sub.broken:
            raise Broken(self.sub.broken)

    def require_hook(self, hook, what):
        self.require_solution()
        if hook not in self.sub.meta.get("hooks", []):
            raise Abort(f"no registraste {hook} (falta {what} en tu solución; el servidor "
                        "no lo cargó)")

    def require_tool(self, name):
        self.require_solution()
        if name not in self.sub.meta.get("tools", []):
            raise Abort(f"no registraste la herramienta {name} en tu solución "
                        "(@extension.tool(\"{name}\", ...))".replace("{name}", name))

    def folders(self, *notes):
        """A fresh folder tree; each note is (folder, filename, id, title)."""
        self._trees += 1
        tree = Tree(self, f"t{self.index}-{self._trees}")
        for entry in notes:
            tree.add(*entry)
        return tree

    def shared_server(self, revision, *, roots, answers=()):
        """A server kept for the whole submission (one per revision) and re-pointed at this
        test's folders: 2025-11-25 through roots/list_changed, 2026-07-28 per request. A
        server that died or misbehaved is replaced, so one test's crash costs only itself."""
        shared = self.sub.memo.setdefault("shared", {})
        run = shared.get(revision)
        if run is not None and (run.dead or run.flooded or run.process.status() is not None):
            run.close()
            run = None
        if run is None:
            run = shared[revision] = self.server(revision, roots=roots, answers=answers,
                                                 keep=True)
            return run
        run.lab = self
        run.user = run.client.user = User(answers)
        if revision == "2026-07-28":
            run.client.roots = list(roots)
        else:
            run.set_roots(list(roots))
        return run

    def server(self, revision, *, roots=(), sdk="2.3.0", setup_wait=30.0, elicitation=None,
               answers=(), browser=None, protocol=None, connect=True, keep=False):
        self.require_solution()
        argv = ["serve", "--solution", self.sub.sandbox.inner("solution"),
                "--sdk-version", sdk, "--setup-wait", str(setup_wait)]
        user = User(answers)
        run = Run(self, revision, argv, list(roots) if roots is not None else None,
                  elicitation, user, protocol=protocol)
        (self.sub.memo.setdefault("kept", []) if keep else self.runs).append(run)
        if browser:
            user.browser = SandboxBrowser(self.sub.sandbox, run, decision=browser)
        return run.connect() if connect else run

    def close(self):
        for run in self.runs:
            try:
                run.close()
            except Exception:
                pass
        self.runs = []
