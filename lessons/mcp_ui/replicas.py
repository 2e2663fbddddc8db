"""Notebook 6: two replicas of the notes server for real, behind a round-robin front.

`flota = ui.replicas.start(lab)` starts two `serve --http` processes on 127.0.0.1 that share a
requestState key (`--state-key`) and a folder of spent states (`--spent-states`, in the lab's
folder), and `RoundRobin`, a tiny front that sends each request to the next replica in turn,
as a load balancer would. Then, with the lesson's client over HTTP (code/client/http_client.py):

- `flota.delete(title, answer)`: notes_delete through the front, so its rounds alternate
  between the replicas; prints which replica served each round and what it answered.
- `flota.replay()`: the last round again, byte for byte, straight to the other replica, as an
  attacker who saw it pass would; prints (and returns) what that replica answered.
- `flota.close()`: stops the front and both replicas (by their PIDs).

JupyterLite has no processes and no sockets: there `start` says so and returns None.

Deliberate simplifications: the front relays whole answers (no streaming), serves POSTs only
(2026-07-28 has no sessions to keep on one replica) and sets `Host` to each replica's address.
"""

import itertools
import json
import secrets
import threading
from urllib.parse import urlsplit

from shared.protocol import STATELESS_VERSION

from .env import current_kernel

# http.server, http.client, code/client/http_client.py and code/client/sync_client.py are
# imported where they are used: never in JupyterLite, where importing this module must work.

RELAYED = ("Content-Type", "Accept", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
NOT_HERE = ("En JupyterLite (el navegador) no hay procesos ni sockets: estas réplicas necesitan "
            "un Jupyter con Python normal (JupyterLab en tu ordenador). Aquí la celda no hace "
            "nada; lee lo que mostraría en el texto de abajo.")


class RoundRobin:
    """A front on 127.0.0.1 that sends each POST to the next of `urls` in turn and relays its
    answer. `served` keeps one record per request: (replica index, body, headers, status,
    answer)."""

    def __init__(self, urls):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.backends = [urlsplit(url) for url in urls]
        self.served, self._lock = [], threading.Lock()
        self._turns = itertools.cycle(range(len(urls)))
        front = self

        class Front(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: self.headers[k] for k in RELAYED if k in self.headers}
                with front._lock:
                    index = next(front._turns)
                status, kind, answer = front.forward(index, body, headers)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def do_GET(self):  # noqa: N802 (http.server's naming)
                self.send_error(405, "este frente solo reparte peticiones 2026-07-28 (POST)")

            do_DELETE = do_GET

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Front)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def forward(self, index, body, headers, record=True):
        """POST `body` with `headers` to replica `index`: (status, content type, answer)."""
        import http.client
        backend = self.backends[index]
        connection = http.client.HTTPConnection(backend.hostname, backend.port, timeout=30)
        try:
            connection.request("POST", backend.path, body=body, headers=headers)
            response = connection.getresponse()
            answer = (response.status, response.getheader("Content-Type", "application/json"),
                      response.read())
        finally:
            connection.close()
        if record:
            with self._lock:
                self.served.append((index, body, headers, answer[0], answer[2]))
        return answer

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def start(lab, count=2):
    """`count` replicas and their front, for `lab` (a NotesLab); None in JupyterLite."""
    if current_kernel().page_transport == "inline":
        print(NOT_HERE)
        return None
    return Fleet(lab, count)


class Fleet:
    """Replicas of one server (same key, same spent states) behind a RoundRobin front."""

    def __init__(self, lab, count=2):
        from client import http_client
        self.lab, self.replicas, self.front = lab, [], None
        key, spent = secrets.token_hex(32), lab.base / ".gastados"
        try:
            for _ in range(count):
                self.replicas.append(http_client.ServerProcess(
                    "--state-key", key, "--spent-states", spent, cwd=lab.base))
            self.front = RoundRobin([replica.url for replica in self.replicas])
        except BaseException:
            self.close()
            raise
        names = ", ".join(f"{letter(i)} ({r.url})" for i, r in enumerate(self.replicas))
        print(f"Réplicas: {names}. Frente: {self.front.url}, que reparte por turnos.")

    def delete(self, title, answer):
        """notes_delete(title) through the front at 2026-07-28, the form answered with
        `answer`; prints each round: which replica served it and what came back."""
        from client import http_client
        from client.simulated_user import ScriptedUser
        from client.sync_client import Client
        first = len(self.front.served)
        with Client(*http_client.connect(self.front.url), protocol=STATELESS_VERSION,
                    roots=[self.lab.path("Notas")], user=ScriptedUser(answer),
                    timeout=30) as client:
            result = client.call_tool("notes_delete", {"title": title}, timeout=30)
        rounds = [r for r in self.front.served[first:]
                  if json.loads(r[1]).get("method") == "tools/call"]
        for number, (index, _, _, _, body) in enumerate(rounds, 1):
            print(f"ronda {number} → réplica {letter(index)}: {summary(body)}")
        return result

    def replay(self):
        """The last round, byte for byte, sent straight to the replica that did not serve
        it; prints and returns the JSON-RPC answer."""
        index, body, headers, _, _ = next(r for r in reversed(self.front.served)
                                          if json.loads(r[1]).get("method") == "tools/call")
        other = (index + 1) % len(self.replicas)
        status, _, answer = self.front.forward(other, body, headers, record=False)
        print(f"la misma ronda, repetida en la réplica {letter(other)}: HTTP {status}, "
              f"{summary(answer)}")
        return json.loads(last_frame(answer))

    def close(self):
        if self.front is not None:
            self.front.close()
        for replica in self.replicas:
            replica.stop()


def letter(index):
    return "AB"[index] if index < 2 else str(index + 1)


def last_frame(answer):
    """The JSON-RPC answer in a body: JSON, or the last `data:` of an SSE stream."""
    lines = [line[5:].strip() for line in answer.splitlines() if line.startswith(b"data:")]
    return lines[-1] if lines else answer


def summary(answer):
    """One line about a JSON-RPC answer, in Spanish."""
    frame = json.loads(last_frame(answer))
    if "error" in frame:
        return f"error {frame['error']['code']} ({frame['error']['message']})"
    result = frame.get("result", {})
    if result.get("resultType") == "input_required":
        return f"input_required, pide: {', '.join(result.get('inputRequests', {}))}"
    return "complete: " + " ".join(c.get("text", "") for c in result.get("content", []))[:80]
