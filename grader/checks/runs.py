"""Runs of a learner's server: one server in the host and the grader's own client talking to it.

`lab.server(revision, ...)` starts a notes server with the learner's solution and connects the
grader's MCP client to it (code/client.py, trusted code in the grader process); `run.call(...)`
returns a `CallTrace` with the result and every elicitation the server sent during that call.
Everything a test decides is read from the wire and from the files, never from what the
learner's process says about itself.

Where the servers run is the state's *host* (grader/hosts/), and the checks never know which:
- the official sandbox (grader/hosts/sandbox.py) and the portable self-check
  (grader/hosts/portable.py) run each server as a process: its `ProcessChannel` reads and
  writes its pipes, within the caps of grader/checks/intake.py (`process_run`);
- the in-process self-check (grader/hosts/inprocess.py, JupyterLite: no process, no thread)
  builds the server in this interpreter: its `LocalChannel` speaks to it with `Client.local`
  (transport.Loopback) (`local_run`).
A `Run` is what a test does with a session, over either channel, so every check is the same
code in every mode; a second user's session on the same server is a Run over the same channel.

How frames reach the server, within the grader's caps against a hostile one, is
grader/checks/channels.py.

Deliberate simplifications: a test runs its calls sequentially; timeouts are generous
constants (a correct server answers in milliseconds); an in-process server cannot be stopped
in the middle of a learner's endless loop (that mode is a formative self-check, said so).
"""

import time
from urllib.parse import urlsplit

from client.client_core import questions_in
from client.simulated_user import ScriptedUser
from grader.checks.channels import CONNECT_TIMEOUT, LocalChannel, ProcessChannel
from grader.checks.grading import Broken, short
from grader.errors import HostError
from grader.escape import one_line
from grader.state import OUT_OF_TIME
from nube_copias import CODE_PREFIX, TOKEN_PREFIX
from shared import wire
from shared.protocol import (
    FORM_MODE,
    PROVIDER_METHOD,
    SETUP_PAGE_METHOD,
    URL_MODE,
)

CALL_TIMEOUT = 10.0
MAX_PROMPTS = 3  # per call; beyond this the grader stops answering
SECRETS = ((CODE_PREFIX.encode(), "un code de Nube de Copias"),
           (TOKEN_PREFIX.encode(), "un token de Nube de Copias"))


def scripted_user(answers=()):
    """The scripted user (code/simulated_user.py): answers from a list; asked more than MAX_PROMPTS
    times in one call it answers with an error, never an endless conversation."""
    return ScriptedUser(*answers, max_per_call=MAX_PROMPTS)


class CallTrace:
    """What happened during one tools/call: its result (or JSON-RPC error), the elicitations the
    server sent during it and every frame. (Not session.Call: that is the server's own record.)"""

    def __init__(self, result=None, error=None, prompts=(), frames=(), error_code=None,
                 error_data=None):
        self.result, self.error = result, error
        self.error_code, self.error_data = error_code, error_data  # of a JSON-RPC error
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
        return [p for p in self.prompts if p.get("mode", FORM_MODE) == FORM_MODE]

    def urls(self):
        return [p for p in self.prompts if p.get("mode") == URL_MODE]


class Run:
    """One MCP session with a learner's server, as tests use it, over its channel (a process:
    ProcessChannel; or in-process: LocalChannel): the same code for every host. `peer` is the
    second user's session on the same server (`second=`), a Run over the same channel."""

    def __init__(self, lab, revision, channel, roots, elicitation, user, protocol=None,
                 watch=False, second=None):
        self.lab, self.revision, self.state = lab, revision, lab.state
        self.channel = channel
        self.user = user or scripted_user()
        self.frames = []       # the questions it received (and the tests' marks)
        self.watching = watch  # look for the provider's credentials in every frame it gets
        self.leaks = []        # what of them reached the client (Spanish)
        self.page_ids = set()  # our requests to its pages: their answers are the browser's
        self.provider = None   # the grader's Nube de Copias, when the test asked for it
        self.client = channel.client(self, roots, elicitation, protocol or revision)
        self.peer = None if second is None else Run(lab, revision, channel, roots,
                                                    elicitation, second, protocol, watch)

    @property
    def flooded(self):
        """Why the server was cut off (it sent too much), or None."""
        return self.channel.flooded

    def kill(self):
        self.channel.kill()

    def alive(self):
        return self.channel.alive()

    def died(self):
        """Why the server stopped answering (Spanish)."""
        return self.channel.died()

    def close(self):
        self.channel.close()

    def mark(self, name):
        self.frames.append(("mark", name))

    def answer_with(self, *answers):
        """From now on the scripted user plays these answers (a test's next call)."""
        self.user = self.client.user = scripted_user(answers)

    def _budget(self, wanted):
        """`wanted` seconds, or what is left of the budget if that is less."""
        left = self.state.left()
        if left <= 0:
            raise Broken(OUT_OF_TIME)
        return min(wanted, left)

    def connect(self, timeout=CONNECT_TIMEOUT):
        self.client.timeout = self._budget(timeout)
        try:
            self.client.connect()
        except Exception as exc:
            raise Broken(f"no se pudo iniciar la sesión MCP ({type(exc).__name__}): "
                         + self.died()) from None
        finally:
            self.client.timeout = CONNECT_TIMEOUT
        return self

    def prompts_since(self, start):
        """The elicitation params the server sent since frame number `start`."""
        return questions_in(list(self.frames[start:]))

    def call(self, name, arguments=None, timeout=CALL_TIMEOUT):
        strikes = self.state.strikes
        if name in strikes:
            raise Broken(strikes[name])
        wait = self._budget(timeout)
        self.user.new_call()
        start = len(self.frames)
        result = error = code = data = None
        try:
            result = self.client.call_tool(name, arguments or {}, timeout=wait,
                                           max_rounds=MAX_PROMPTS + 3)
        except TimeoutError:
            if self.state.left() <= 0:
                raise Broken(OUT_OF_TIME) from None
            strikes[name] = f"{name} no respondió en {timeout:.0f} s (en esta u otra prueba)"
            self.kill()
            self.died()
            raise Broken(f"{name} no respondió en {timeout:.0f} s") from None
        except wire.RpcError as exc:
            error = f"{exc.code}: {one_line(exc.message, 300)}"
            code, data = exc.code, exc.data
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{name}: {self.died()} ({type(exc).__name__})") from None
        except RuntimeError as exc:  # still input_required after the rounds we allow
            error = f"sin resultado final: {one_line(exc, 300)}"
        if self.flooded:
            raise Broken(self.died())
        if result is not None and not isinstance(result, dict):
            raise Broken(f"{name} devolvió algo que no es un resultado: {short(result)}")
        return CallTrace(result, error, self.prompts_since(start), self.frames[start:], code,
                         data)

    def request(self, method, params, timeout=CALL_TIMEOUT):
        """One request and its raw answer, with no `input_required` loop: (result, None), or
        (None, the wire.RpcError it got). Broken when the server hangs, dies or floods."""
        wait = self._budget(timeout)
        result = error = None
        try:
            result = self.client.request(method, params, timeout=wait)
        except TimeoutError:
            if self.state.left() <= 0:
                raise Broken(OUT_OF_TIME) from None
            self.kill()
            self.died()
            raise Broken(f"{method} no respondió en {timeout:.0f} s") from None
        except wire.RpcError as exc:
            error = exc
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{method}: {self.died()} ({type(exc).__name__})") from None
        if self.flooded:
            raise Broken(self.died())
        if error is None and not isinstance(result, dict):
            raise Broken(f"{method} devolvió algo que no es un resultado: {short(result)}")
        return result, error

    def set_roots(self, uris):
        self.client.timeout = self._budget(CONNECT_TIMEOUT)
        try:
            self.client.set_roots(uris)
        except Exception as exc:
            raise Broken(f"tras cambiar las roots el servidor no volvió a pedirlas "
                         f"({type(exc).__name__}): {self.died()}") from None
        finally:
            self.client.timeout = CONNECT_TIMEOUT

    def tools(self):
        """{name: description} of what tools/list answers (names that are strings only)."""
        self.client.timeout = self._budget(CONNECT_TIMEOUT)
        try:
            listed = self.client.list_tools()
            if not isinstance(listed, list):
                raise TypeError("tools is not a list")
            return {t["name"]: t for t in listed
                    if isinstance(t, dict) and isinstance(t.get("name"), str)}
        except Exception as exc:
            raise Broken(f"tools/list falló ({type(exc).__name__}): {self.died()}") from None
        finally:
            self.client.timeout = CONNECT_TIMEOUT

    def notifications(self, method):
        return [n for n in list(self.client.notifications) if n.get("method") == method]

    def wait_for(self, found, timeout):
        """Wait until `found()` (e.g. a notification arrived), at most `timeout` seconds of
        the budget; whether it did. In-process, the wait pumps the session's frames."""
        deadline = time.monotonic() + self._budget(timeout)
        loopback = getattr(self.client, "_loopback", None)
        if loopback is not None:
            try:
                loopback.pump_until(found, max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                pass
            return bool(found())
        while not found() and time.monotonic() < deadline and not self.flooded:
            time.sleep(0.02)
        return bool(found())

    # -- the user's browser, through the server's private page channel ----------------------
    def fetch(self, url, method="GET", data=None):
        """One request of this run's user's browser to the server's pages, through the
        private rpc channel (`serve --setup-page rpc`, no socket): {"status", "body"},
        "location" for a redirect and "failure" when the page's route raised (its exception
        and line, setup_page.PageResponse), or {"error"}. The answers are the browser's, never
        the MCP client's (they are not scanned for credentials)."""
        parts = urlsplit(url) if isinstance(url, str) else urlsplit("")
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")

        def send():  # the id is known before the frame goes out (frames go after the lock)
            outcome = self.client.core.request(SETUP_PAGE_METHOD, {
                "method": method, "target": target, "body": data or ""})
            self.page_ids.add(outcome.request_id)
            return outcome
        try:
            result = self.client._wait(self.client._enter(send), self._budget(CALL_TIMEOUT))
        except TimeoutError:
            if self.state.left() <= 0:
                raise Broken(OUT_OF_TIME) from None
            raise Broken(f"la página {one_line(parts.path, 80)} de tu servidor no respondió "
                         f"en {CALL_TIMEOUT:.0f} s") from None
        except wire.RpcError as exc:
            return {"error": f"{exc.code}: {one_line(exc.message, 200)}"}
        except (wire.ConnectionClosed, OSError, ValueError) as exc:
            raise Broken(f"{self.died()} ({type(exc).__name__})") from None
        if self.flooded:
            raise Broken(self.died())
        if not isinstance(result, dict) or not isinstance(result.get("status"), int):
            return {"error": "la página respondió algo que no es una página"}
        fetched = {"status": result["status"],
                   "body": result["body"] if isinstance(result.get("body"), str) else ""}
        if isinstance(result.get("location"), str):
            fetched["location"] = result["location"]
        if isinstance(result.get("failure"), str):  # a route raised: what, and its line
            fetched["failure"] = one_line(result["failure"], 300)
        return fetched

    def scan(self, data, msg):
        """A frame to the client (not an answer to our page requests, nor a request to the
        grader's Nube de Copias, `--provider rpc`): does it carry one of the provider's
        credentials?"""
        if isinstance(msg, dict) and msg.get("kind", "response") == "response" \
                and msg.get("id") in self.page_ids and "method" not in msg:
            return
        if isinstance(msg, dict) and msg.get("method") == PROVIDER_METHOD:
            return
        for prefix, what in SECRETS:
            if prefix in data and what not in self.leaks:
                self.leaks.append(what)


def process_run(lab, revision, argv, private, roots, elicitation, user, protocol=None,
                watch=False, second=None):
    """A Run of a new server process of the host (its command line `argv`, this test's
    `private` options), as the test's identity."""
    state = lab.state
    try:
        process = state.host.spawn(argv, private, identity=lab.identity)
    except HostError as exc:
        if state.expired:
            raise Broken(OUT_OF_TIME) from None
        raise Broken(f"el entorno no pudo arrancar otro servidor ({exc})") from None
    return Run(lab, revision, ProcessChannel(state, process, second is not None), roots,
               elicitation, user, protocol, watch, second)


def local_run(lab, revision, server, roots, elicitation, user, protocol=None, watch=False,
              second=None):
    """A Run of `server`, a NotesServer the in-process host built in this interpreter."""
    return Run(lab, revision, LocalChannel(lab.state, server), roots, elicitation, user,
               protocol, watch, second)
