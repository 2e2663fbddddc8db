"""The requestState challenge ("reto", notebook 6): what a client can do with the learner's tokens.

The learner's `@extension.request_state` sealer seals and opens every 2026-07-28 requestState of
the server (code/request_state.py). The grader never learns the tokens' format: it plays
notes_delete round by round with its own client (one `tools/call` frame at a time, so that it
chooses what goes back as `requestState`), does to a token what an attacker can do (change a
character, cut it, lengthen it, spell it another way, send it again, move it to another tool,
other arguments, another user or another server) and looks at two things only: the answer on the
wire (-32602 or not) and the notes on disk.

The notes (`notes`): in Notas/, two notes titled "Informe" (n-a; n-b, whose file name carries a
marker made for this submission) and one titled "Otra". A flow (`Flow`) is
notes_delete("Informe"): round 1 asks for the roots (its token is T1), round 2 asks which note
and to confirm (T2), round 3 deletes the one chosen.

The positive scenario (`positive`, once per submission) gates every test: the flow deletes
exactly n-b, and the sealer does at least one thing the server's own sealer never does: refuse a
replay of the round that deleted, refuse a token moved to another user, or keep what the server
found on disk unreadable. Without that the tokens may all be the server's own (the starter
delegates to `request_state.Sealer`, which resists every other attack here), and nothing counts.

Servers: each scenario starts its own with the learner's sealer (`state={"sealer":
"solution"}`); two servers share a key (`key`, as a fleet's workers do) to tell a token moved to
another user (`subject`) from one sealed with another key, and to check that a retry served by
the other replica of the same user works (what the server remembers between rounds travels in
the token, not in one process's memory). Every server's lifetime (`STATE_TTL`, the same in
every test: grader/checks/lab.py) and a wait past it give an expired token; the people a token
is bound to are new in each run (`person`).

What is graded where: the wire and the disk, except one structural check (`source_facts`):
whether reto.py calls `compare_digest` (a comparison that takes the same time wherever two tags
differ cannot be told from `==` on the wire, in a test that must not depend on timing).
"""

import base64
import binascii
import bz2
import lzma
import re
import secrets
import string
import tokenize
import zlib
from dataclasses import dataclass
from io import StringIO

from grader.checks.grading import Abort, Broken, short
from grader.checks.lab import STATE_TTL
from grader.checks.notes_tree import describe_changes
from grader.state import RetoFacts, RetoSource

REVISION = "2026-07-28"
TOOL, TITLE = "notes_delete", "Informe"
INVALID_PARAMS = -32602
POSITIVE = ("con tu sello, un borrado legítimo funciona ronda a ronda (el cliente devuelve el "
            "token intacto) y tu sello hace algo más que el del servidor")
NOT_BEYOND = ("tu sello no hace nada que no haga ya el del servidor: deja repetir la ronda que "
              "borró, acepta el token en el servidor de otro usuario y deja leer lo que el "
              "servidor encontró en el disco. Las pruebas del reto solo cuentan cuando tu sello "
              "hace al menos una de esas tres cosas bien (repasa «Qué se califica»)")
NO_FILE = ("no entregaste reto.py (el reto es opcional: sin ese archivo no se califica; añade la "
           "celda %%writefile soluciones/reto.py)")
EXPIRY_TTL = STATE_TTL               # seconds: every server's requestState lifetime
EXPIRY_WAIT = STATE_TTL + 1.2       # the wait past it
MARKER_LETTERS = string.ascii_lowercase


# -- what the grader reads in reto.py (as text, never run) -------------------------------------
def source_facts(text):
    """RetoSource of reto.py's text (None: not handed in): does its code (not a comment or a
    string) call `compare_digest`? Read with the tokenizer: linear, nothing is run."""
    if text is None:
        return RetoSource()
    found = False
    try:
        previous = None
        for token in tokenize.generate_tokens(StringIO(text).readline):
            if token.type == tokenize.OP and token.string == "(" and previous is not None \
                    and previous.type == tokenize.NAME and previous.string == "compare_digest":
                found = True
                break
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                previous = token
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # the server reports a file that does not load; here only the calls found count
    return RetoSource(present=True, compare_digest=found)


# -- the notes and the servers ----------------------------------------------------------------
def pick(note_id, action="accept"):
    if action != "accept":
        return {"action": action}
    return {"action": "accept", "content": {"note_id": note_id, "confirm": True}}


def notes(lab, marker, *extra):
    return lab.folders(("Notas", "informe-a.md", "n-a", TITLE),
                       ("Notas", f"informe-{marker}.md", "n-b", TITLE),
                       ("Notas", "otra.md", "n-otra", "Otra"), *extra)


def new_marker():
    return "".join(secrets.choice(MARKER_LETTERS) for _ in range(10))


def server(lab, tree, **state):
    """A server with the learner's sealer, its client sharing Notas/ as its root."""
    return lab.server(REVISION, roots=[tree.uri("Notas")], state={"sealer": "solution",
                                                                   **state})


def fleet_key():
    return secrets.token_hex(32)


def person():
    """Someone new to bind a token to (nothing in the name says which test it is)."""
    return f"local:{secrets.token_hex(4)}"


# -- one round, and what it gave --------------------------------------------------------------
@dataclass
class Reply:
    """What one tools/call frame got: a JSON-RPC error, or a result."""

    code: int | None = None
    message: str = ""
    result: dict | None = None

    @property
    def refused(self):
        return self.code == INVALID_PARAMS

    @property
    def state(self):
        token = (self.result or {}).get("requestState")
        return token if isinstance(token, str) else None

    @property
    def requests(self):
        found = (self.result or {}).get("inputRequests")
        return found if isinstance(found, dict) else {}

    def text(self):
        try:
            return " ".join(c.get("text", "") for c in self.result["content"])
        except (TypeError, KeyError, AttributeError):
            return short(self.result, 160)

    def describe(self):
        """What happened, in Spanish, for feedback."""
        if self.code is not None:
            return f"respondió el error {self.code} ({short(self.message, 120)})"
        if (self.result or {}).get("resultType") == "input_required":
            asked = ", ".join(f"{r.get('method')}" for r in self.requests.values()
                              if isinstance(r, dict)) or "nada"
            return f"la aceptó y siguió adelante (input_required: pidió {short(asked, 80)})"
        return f"la aceptó y terminó la llamada («{short(self.text(), 160)}»)"


class Flow:
    """notes_delete on one server, one round at a time; a round that does not go as a legitimate
    client expects is an Abort naming it (the legitimate flow must work to grade anything; a
    hidden test shows only the positive scenario's title)."""

    def __init__(self, run, tree, arguments=None):
        self.run, self.tree = run, tree
        self.arguments = arguments or {"title": TITLE}

    def send(self, state=None, responses=None, name=TOOL, arguments=None):
        params = {"name": name, "arguments": self.arguments if arguments is None else arguments}
        if state is not None:
            params["requestState"] = state
        if responses is not None:
            params["inputResponses"] = responses
        result, error = self.run.request("tools/call", params)
        if error is not None:
            return Reply(code=error.code, message=error.message)
        return Reply(result=result)

    def roots(self):
        return {"roots": {"roots": [{"uri": self.tree.uri("Notas"), "name": "Notas"}]}}

    def first(self):
        """Round 1: the roots are asked; T1."""
        reply = self.send()
        request = next(iter(reply.requests.values()), {})
        if reply.state is None or not isinstance(request, dict) or \
                request.get("method") != "roots/list":
            raise Abort(f"{TOOL}({{'title': {TITLE!r}}}) debía pedir las roots con un "
                        f"requestState, y {reply.describe()}" + sealing_hint(reply),
                        gate=POSITIVE)
        return reply.state

    def second(self, roots_token):
        """Round 2, with T1 and the roots: which note and to confirm; (T2, the question key)."""
        reply = self.send(roots_token, self.roots())
        key, request = next(iter(reply.requests.items()), (None, {}))
        if reply.state is None or not isinstance(request, dict) or \
                request.get("method") != "elicitation/create":
            raise Abort("al reintentar con las roots y el requestState intacto, el servidor "
                        f"debía preguntar qué nota borrar, y {reply.describe()}"
                        + sealing_hint(reply), gate=POSITIVE)
        return reply.state, key

    def third(self, form_token, key, answer):
        return self.send(form_token, {key: answer})


def sealing_hint(reply):
    if reply.refused:
        return (": tu open rechazó el token que acababa de dar tu seal (¿sellas y abres con lo "
                "mismo: la misma clave, la misma huella de argumentos?)")
    if "No pude sellar" in reply.text():
        return ": tu seal falló o no devolvió un texto (mira el registro del servidor)"
    return ""


# -- what an attacker does to a token -----------------------------------------------------------
B64 = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
STANDARD = {"+": 62, "/": 63}


def flip(token, position, bit):
    """`token` with the character at `position` (or the next one that base64 or hex could hold)
    replaced by the one whose base64 value differs in `bit`: 32 always changes the bytes it
    stands for, 1 may only touch bits that base64 does not use at the end of a block. None when
    there is no such character."""
    alphabet = B64 if not any(c in token for c in "+/") else B64[:62] + "+/"
    n = len(token)
    for step in range(n):
        at = (position + step) % n
        value = B64.find(token[at]) if token[at] not in STANDARD else STANDARD[token[at]]
        if value >= 0 and token[at] not in "=":
            return token[:at] + alphabet[value ^ bit] + token[at + 1:]
    return None


def last_data(token):
    """The position of the last character that base64 or hex could hold."""
    for at in range(len(token) - 1, -1, -1):
        if token[at] in B64 or token[at] in STANDARD:
            return at
    return len(token) - 1


def changed(token):
    """One character changed (its bytes always change), at the start, the middle and the end."""
    n = len(token)
    positions = sorted({0, 1, n // 4, n // 2, 3 * n // 4, max(0, n - 2), last_data(token)})
    variants = [(f"con el carácter {at + 1} de {n} cambiado", flip(token, at, 32))
                for at in positions]
    return unique(token, variants)


def content_flips(token, bits=32, count=8):
    """Characters in the middle of the token (20% to 80%) changed so that their bytes change."""
    n = len(token)
    spots = sorted({n * (20 + 60 * k // max(1, count - 1)) // 100 for k in range(count)})
    return unique(token, [(f"con el carácter {at + 1} de {n} cambiado", flip(token, at, bits))
                          for at in spots])


def cut_or_lengthened(token):
    n = len(token)
    return unique(token, [
        ("recortado: sin su último carácter", token[:-1]),
        ("recortado: sin sus 4 últimos caracteres", token[:-4]),
        ("recortado: sin su primer carácter", token[1:]),
        ("recortado a la mitad", token[:n // 2]),
        ("vacío", ""),
        ("alargado: con una «A» al final", token + "A"),
        ("alargado: con «AAAA» al final", token + "AAAA"),
        ("alargado: con una «A» delante", "A" + token),
        ("alargado: con sus 8 últimos caracteres repetidos al final", token + token[-8:]),
    ])


def respelled(token):
    """The same bytes written another way, as lenient decoders read them."""
    n = len(token)
    variants = [("re-codificado: con relleno «=» al final", token + "="),
                ("re-codificado: con relleno «==» al final", token + "=="),
                ("re-codificado: con un salto de línea en medio", token[:n // 2] + "\n"
                 + token[n // 2:]),
                ("re-codificado: con un espacio al final", token + " "),
                ("re-codificado: con el último carácter cambiado solo en bits que base64 no usa",
                 flip(token, last_data(token), 1))]
    if any(c in token for c in "-_"):
        variants.append(("re-codificado: con el alfabeto base64 estándar (+ y / en vez de - y "
                         "_)", token.replace("-", "+").replace("_", "/")))
    elif any(c in token for c in "+/"):
        variants.append(("re-codificado: con el alfabeto base64 para URLs (- y _ en vez de + y "
                         "/)", token.replace("+", "-").replace("/", "_")))
    if re.fullmatch(r"[0-9a-fA-F.:_-]+", token):
        variants.append(("re-codificado: el hexadecimal en mayúsculas o minúsculas",
                         token.upper() if token.upper() != token else token.lower()))
    return unique(token, variants)


def unique(token, variants):
    seen, kept = {token}, []
    for label, variant in variants:
        if variant is not None and variant not in seen:
            seen.add(variant)
            kept.append((label, variant))
    return kept


# -- can a token be read? -----------------------------------------------------------------------
B64_RUN = re.compile(rb"[A-Za-z0-9+/_-]{8,}")
HEX_RUN = re.compile(rb"(?:[0-9a-fA-F]{2}){4,}")
B32_RUN = re.compile(rb"[A-Za-z2-7]{16,}")
# bounds on what a hostile token can make the grader do: views, layers, bytes out of one
# decompression, bytes looked at in all
MAX_VIEWS, MAX_DEPTH, MAX_BYTES, MAX_TOTAL = 200, 3, 256 << 10, 4 << 20


def revealed(token, marker):
    """How `marker` can be read from `token` without any key ("" when it cannot): the token as it
    is, or decoded from base64 (either alphabet, any alignment), base32, base85, hex, and
    decompressed (zlib, deflate, gzip, bz2, lzma), up to three layers deep."""
    needle = marker.encode()
    queue, seen, total = [(token.encode("utf-8", "surrogatepass"), [])], set(), 0
    while queue and len(seen) < MAX_VIEWS and total < MAX_TOTAL:
        data, how = queue.pop(0)
        if data in seen:
            continue
        seen.add(data)
        total += len(data)
        if needle in data.lower():
            return " y luego ".join(how) or "tal cual, sin decodificar"
        if len(how) < MAX_DEPTH:
            queue += [(decoded, how + [name]) for name, decoded in decodings(data)]
    return ""


def decodings(data):
    found = []
    for run in B64_RUN.findall(data):
        standard = run.replace(b"-", b"+").replace(b"_", b"/")
        for offset in range(4):
            part = standard[offset:]
            part = part[:len(part) - len(part) % 4] if len(part) % 4 == 1 else part
            try:
                found.append(("decodificado en base64",
                              base64.b64decode(part + b"=" * (-len(part) % 4))))
            except (binascii.Error, ValueError):
                pass
    for run in HEX_RUN.findall(data):
        found.append(("decodificado en hexadecimal", bytes.fromhex(run.decode())))
    for run in B32_RUN.findall(data):
        try:
            found.append(("decodificado en base32", base64.b32decode(
                run.upper() + b"=" * (-len(run) % 8))))
        except (binascii.Error, ValueError):
            pass
    for name, decode in (("decodificado en base85", base64.b85decode),
                         ("decodificado en ascii85", base64.a85decode)):
        try:
            found.append((name, decode(data.strip())))
        except (ValueError, TypeError):
            pass
    for name, open_up in (("descomprimido (zlib)", lambda d: _inflate(d, 15)),
                          ("descomprimido (deflate)", lambda d: _inflate(d, -15)),
                          ("descomprimido (gzip)", lambda d: _inflate(d, 31)),
                          ("descomprimido (bz2)",
                           lambda d: bz2.BZ2Decompressor().decompress(d, MAX_BYTES)),
                          ("descomprimido (lzma)",
                           lambda d: lzma.LZMADecompressor().decompress(d, MAX_BYTES))):
        try:
            found.append((name, open_up(data)[:MAX_BYTES]))
        except (OSError, ValueError, EOFError, zlib.error, lzma.LZMAError):
            pass
    return [(name, decoded) for name, decoded in found if decoded]


def _inflate(data, window):
    return zlib.decompressobj(window).decompress(data, MAX_BYTES)


# -- the positive scenario ----------------------------------------------------------------------
def positive(lab):
    """The positive scenario's facts (played once per submission)."""
    if lab.state.reto is None:
        try:
            lab.state.reto = play_positive(lab)
        except Broken as exc:
            lab.state.reto = exc
    if isinstance(lab.state.reto, Broken):
        raise lab.state.reto
    return lab.state.reto


def play_positive(lab):
    lab.require_solution()
    facts = RetoFacts(marker=new_marker())
    if not lab.state.reto_source.present:
        facts.problem = NO_FILE
        return facts
    tree = notes(lab, facts.marker)
    before = tree.snapshot()
    flow = Flow(server(lab, tree), tree)
    try:
        facts.roots_token = flow.first()
        facts.form_token, key = flow.second(facts.roots_token)
        done = flow.third(facts.form_token, key, pick("n-b"))
    except Abort as exc:
        facts.problem = str(exc)
        return facts
    gone = describe_changes(before, tree.snapshot())
    wanted = f"desapareció Notas/informe-{facts.marker}.md"
    if gone != wanted:
        facts.problem = (f"al reintentar con la respuesta (n-b, confirm: true) y el requestState "
                         f"intacto, el servidor {done.describe()}, y en el disco "
                         f"{gone or 'nada cambió'}; debía borrarse exactamente n-b")
        return facts
    try:
        facts.replays = replays(flow, tree, facts.form_token, key)
        facts.other_user, facts.other_user_changed = moved_to_another_user(lab, facts.marker)
    except Abort as exc:  # the legitimate flow worked once and then not on another server
        facts.problem = str(exc)
    facts.readable = revealed(facts.form_token, facts.marker)
    return facts


def replays(flow, tree, form_token, key):
    """The round that deleted n-b, sent again: as it was, with n-a chosen, and respelled."""
    accepted = []
    for label, token, answer in (
            ("el mismo reintento, repetido tal cual", form_token, pick("n-b")),
            ("el mismo token con otra respuesta (n-a)", form_token, pick("n-a")),
            ("el mismo token con relleno «=» al final y otra respuesta (n-a)", form_token + "=",
             pick("n-a")),
            ("el mismo token con un salto de línea en medio y otra respuesta (n-a)",
             form_token[:len(form_token) // 2] + "\n" + form_token[len(form_token) // 2:],
             pick("n-a"))):
        before = tree.snapshot()
        reply = flow.third(token, key, answer)
        changes = describe_changes(before, tree.snapshot())
        if not reply.refused or changes:
            accepted.append((label, reply.describe() + (f" y {changes}" if changes else "")))
    return accepted


def moved_to_another_user(lab, marker):
    """T2 of a server acting for one user, sent to a server of the same fleet (same key) acting
    for another: ("" when refused with nothing changed, else what happened; whether the notes
    changed)."""
    tree = notes(lab, marker)
    key = fleet_key()
    mine = Flow(server(lab, tree, key=key, subject=person()), tree)
    theirs = Flow(server(lab, tree, key=key, subject=person()), tree)
    token, question = mine.second(mine.first())
    before = tree.snapshot()
    reply = theirs.third(token, question, pick("n-b"))
    changes = describe_changes(before, tree.snapshot())
    if reply.refused and not changes:
        return "", False
    return reply.describe() + (f" y {changes}" if changes else ""), bool(changes)


def require_positive(lab, grade, first=False):
    """Gate: the legitimate flow works with the learner's sealer, and the sealer is more than
    the server's own. The first test says why not; the others point to it (one cause, once)."""
    facts = positive(lab)
    shown = not facts.problem and facts.beyond_the_servers_own
    if not first:
        grade.require(shown, f"esta prueba necesita que antes funcione «{POSITIVE}» (mira esa "
                      "prueba)", gate=POSITIVE)
    grade.require(not facts.problem, facts.problem, gate=POSITIVE)
    grade.require(facts.beyond_the_servers_own, NOT_BEYOND, gate=POSITIVE)
    return facts


# -- shared by the tests ----------------------------------------------------------------------
def attempts(grade, flow, tree, variants, responses, what, hidden=False, name=TOOL,
             arguments=None, severe_if_changed=False):
    """Send each variant as the requestState of a round; each must be refused (-32602) and change
    nothing. One check for all: the first that got through, named, and how many more. With
    `severe_if_changed`, a variant that changed the notes is a severe failure (the test must be
    declared severe)."""
    accepted, changed = [], False
    for label, token in variants:
        before = tree.snapshot()
        reply = flow.send(token, responses, name=name, arguments=arguments)
        changes = describe_changes(before, tree.snapshot())
        if not reply.refused or changes:
            accepted.append(f"el token {label}: {reply.describe()}"
                            + (f" y {changes}" if changes else ""))
            if changes:
                changed = True
                break  # the scenario is spent: nothing after this would mean anything
    if hidden:
        text = (f"{what}: todos se rechazan sin cambiar nada" if not accepted else
                f"{what}: alguno se aceptó; el servidor debía responder -32602 sin hacer nada")
    else:
        text = (f"{what}: los {len(variants)} se rechazan con -32602 y nada cambia"
                if not accepted else f"{what}: {accepted[0]}"
                + (f" (y {len(accepted) - 1} más)" if len(accepted) > 1 else "")
                + "; debía responder -32602 sin hacer nada")
    if severe_if_changed and changed:
        return grade.check(False, text, severe=True)
    return grade.check(not accepted, text)
