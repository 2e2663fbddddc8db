"""The requestState challenge ("reto", notebook 6): what a client, and an attacker who has the
learner's code but not the server's key, can do with the learner's tokens.

The learner's `@extension.request_state` sealer seals and opens every 2026-07-28 requestState of
the server (code/request_state.py). The statement fixes the token's format and gives its
cryptography (code/sealkit.py): the learner writes what the token is bound to, the order of
the checks in `open` and the memory of used tokens. The grader plays notes_delete round by
round with its own client (one `tools/call` frame at a time, so that it chooses what goes back
as `requestState`) and looks at the answer on the wire (-32602 or not) and the notes on disk.

Two kinds of attack:
- what anyone can do with a token without reading it: change a character, cut it, lengthen it,
  spell it another way, send it again, move it to another tool (`notes_list` and `notes_sync`
  take the same arguments: none), other arguments, another user or another server;
- what someone with the learner's code can do: the grader gave each server its key, so it reads
  the learner's tokens with the statement's format (grader/checks/reto_tokens.py: `read`) and
  finds which keys made them and what their tag covers. A tag or a cipher whose key is not the
  server's (a hash with no key, a key made from the public `binding.key_id`, a constant in
  reto.py) is attacked with that key: the round-2 token is rewritten to name only n-a and sent
  back (`forged`), or its content is read. A tag that does not cover the tool, the arguments or
  the user fails the test that moves tokens there (`binds`), severely. A token valid in every
  other respect but expired is made the same way (`mint`), so no test waits on the clock and
  every server has the same lifetime. A tag made with the server's key that is not the
  format's (the keys swapped, `binding.key` itself, the fields in another order) is a severe
  failure of the forgery test: the statement says what is not the format cannot be vouched
  for. Every token a server gives is recorded (`Served.received`) and rebuilt at the end of
  its test the way the positive scenario's were (`stray`, reto_tokens.rebuilt): a sealer that
  follows the format only for the first tokens fails every test that saw another one.

The notes (`notes`): in Notas/, two notes titled "Informe" (n-a; n-b, whose file name carries a
marker made for this submission) and one titled "Otra". A flow (`Flow`) is
notes_delete("Informe"): round 1 asks for the roots (its token is T1), round 2 asks which note
and to confirm (T2), round 3 deletes the one chosen.

The positive scenario (`positive`, once per submission) gates every test: reto.py registers a
sealer class defined in it, the flow deletes exactly n-b, and its tokens follow the format
(the starter's, the server's own `request_state.Sealer`, does not). Every test of what must not
happen ends with the legitimate flow on the server it attacked (`still_works`): a sealer that
behaves once and then refuses everything scores 0 there. Every server has the same lifetime
(STATE_TTL), a key of the grader's and a user name made for this submission.

What is read in reto.py (as text, never run; grader/checks/reto_source.py): that it defines
and registers the sealer on an Extension the server loads, whether that sealer's `open` reaches
`compare_digest` (a comparison that takes the same time wherever two tags differ cannot be told
from `==` on the wire, in a test that must not depend on timing), and its constants (an
attacker with the code knows them: a key written there is known). Those structural facts count
only for the sealer the server installs: every reto server loads reto.py alone (`server`), and
the positive scenario holds the class and the `open` the server reports it installed
(code/server.py, `installed`) against the ones the text registers (`not_installed`); any other
code the submission has, in reto.py or elsewhere, is never what they look at.
"""

import secrets
import string
import time
import weakref
from dataclasses import dataclass

from grader.checks.grading import Abort, short
from grader.checks.lab import STATE_TTL
from grader.checks.notes_tree import describe_changes
from grader.checks.reto_source import RetoSource
from grader.checks.reto_tokens import (
    FIELD_NAMES,
    FORMAT_TAG,
    forged,
    mint,
    read,
    rebuilt,
    tag_off_format,
)
from grader.spoken import spoken
from request_state import Binding, Sealer, ServerKey, digest
from shared.protocol import SOLUTION_META_KEY, STATELESS_VERSION

REVISION = STATELESS_VERSION
FILE = "reto.py"
TOOL, TITLE = "notes_delete", "Informe"
NO_ARGUMENTS, SAME_ARGUMENTS = "notes_list", ("notes_sync", "notes_setup")  # all take none
INVALID_PARAMS = -32602
POSITIVE = ("con tu sello, un borrado legítimo funciona ronda a ronda (el cliente devuelve el "
            "token intacto) y el token sigue el formato del enunciado")
NO_FILE = ("no entregaste reto.py (el reto es opcional: sin ese archivo no se califica; añade la "
           "celda %%writefile soluciones/reto.py)")
NOT_HERE = ("tu reto.py no define y registra el sello (una clase con @extension.request_state "
            "escrita en reto.py): el reto se califica en ese archivo")
NOT_INSTALLED = ("el sello que instala tu servidor con reto.py no es la clase que reto.py define "
                 "y registra con @extension.request_state ({why}): el reto se califica en el "
                 "sello que se usa")
SERVERS_OWN = ("tu sello todavía devuelve el token del propio servidor (request_state.Sealer, el "
               "de la plantilla): escribe tu seal y tu open con la receta de «Qué escribes»")
NOT_THE_FORMAT = ("tu token no sigue el formato del enunciado: no se lee como encode(nonce + "
                  "cifrado + etiqueta) con un sobre {{\"caduca\", \"datos\"}} cifrado con "
                  "stream_xor ({why}). Sigue la receta de «Qué escribes»")
MARKER_LETTERS = string.ascii_lowercase
CLOCK_SLACK = 1.0  # seconds: the server's clock read when it sealed vs the grader's around it


def source_of(lab):
    """What the grader read in this submission's reto.py (grader/checks/sources.py)."""
    return lab.state.sources.get("reto.py") or RetoSource()


# -- the notes and the servers ----------------------------------------------------------------
def pick(note_id, action="accept"):
    """An answer to the question of round 2: choose `note_id` and confirm; or decline, cancel,
    or choose it without confirming ("unconfirmed")."""
    if action == "unconfirmed":
        return {"action": "accept", "content": {"note_id": note_id, "confirm": False}}
    if action != "accept":
        return {"action": action}
    return {"action": "accept", "content": {"note_id": note_id, "confirm": True}}


def notes(lab, marker, *extra):
    return lab.folders(("Notas", "informe-a.md", "n-a", TITLE),
                       ("Notas", f"informe-{marker}.md", "n-b", TITLE),
                       ("Notas", "otra.md", "n-otra", "Otra"), *extra)


def new_marker():
    return "".join(secrets.choice(MARKER_LETTERS) for _ in range(10))


def new_user():
    return "local:" + new_marker()


def fleet_key():
    """A server key of the grader's, in hex (two servers given the same one are replicas)."""
    return secrets.token_hex(32)


class Served:
    """A server with the learner's sealer, and what the grader gave it: its key and its user;
    and every token it gave (`received`: the token, the binding of the call it answered, when
    the call was sent and when the answer came, time.time())."""

    def __init__(self, run, key, principal):
        self.run, self.principal = run, principal
        self.secret = bytes.fromhex(key)
        self.key_id = ServerKey(self.secret).id
        self.received = []

    def binding(self, name, arguments):
        """What a token of `name(arguments)` on this server is bound to (request_state.Binding's
        fields that a tag covers)."""
        return {"tool": name, "arguments": digest(arguments), "principal": self.principal}


def server(lab, facts, tree, key=None, principal=None):
    """A server with the learner's sealer, a key of the grader's (`key`: a fleet's, in hex) and
    a user (`principal`; default: this submission's), its client sharing Notas/ as its root.
    It loads reto.py alone (as 3A's and 3B's load their file): the sealer it installs is the
    reto's or none. Every server gets the same options; only their values differ."""
    key = key or fleet_key()
    principal = principal or facts.principal
    run = lab.server(REVISION, roots=[tree.uri("Notas")], solution=FILE,
                     state={"sealer": "solution", "key": key, "subject": principal})
    served = Served(run, key, principal)
    SERVED.setdefault(lab, []).append(served)
    return served


SERVED = weakref.WeakKeyDictionary()  # a test's Lab -> the reto servers it started


def stray(lab, facts):
    """Why a token one of this test's servers gave is not made as the positive scenario's were
    (the format's way, when those follow it), rebuilt with that server's key and the binding of
    the call it answered (Spanish; "" when every one is)."""
    if facts.reading is None:
        return ""
    for served in SERVED.get(lab, ()):
        for token, fields, _, _ in served.received:
            why = rebuilt(token, served, fields, facts.reading)
            if why:
                return (f"un token que dio tu servidor en esta prueba no sigue el formato: "
                        f"{why}. Cada token, no solo los primeros, se hace con la receta del "
                        "enunciado")
    return ""


# -- one round, and what it gave --------------------------------------------------------------
@dataclass
class Reply:
    """What one tools/call frame got: a JSON-RPC error, or a result."""

    code: int | None = None
    message: str = ""
    result: dict | None = None
    hidden: bool = False  # sent during a hidden test: `describe` never quotes the server

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

    def asked(self, method):
        """The key of the input request of `method` in this round (None: not asked)."""
        for key, request in self.requests.items():
            if isinstance(request, dict) and request.get("method") == method:
                return key
        return None

    def text(self):
        try:
            return " ".join(c.get("text", "") for c in self.result["content"])
        except (TypeError, KeyError, AttributeError):
            return short(self.result, 160)

    def describe(self):
        """What happened, in Spanish, for feedback (in a hidden test, without the server's
        words: they could echo the test's inputs)."""
        if self.hidden:
            return ("lo rechazó" if self.refused else "respondió otra cosa") + \
                " (en una prueba oculta no se muestra qué)"
        if self.code is not None:
            return f"respondió el error {self.code} ({short(self.message, 120)})"
        if (self.result or {}).get("resultType") == "input_required":
            asked = ", ".join(f"{r.get('method')}" for r in self.requests.values()
                              if isinstance(r, dict)) or "nada"
            return f"la aceptó y siguió adelante (input_required: pidió {short(asked, 80)})"
        return f"la aceptó y terminó la llamada («{short(self.text(), 160)}»)"


class Flow:
    """notes_delete (or `name`) on one server, one round at a time; a round that does not go
    as a legitimate client expects is an Abort naming it."""

    def __init__(self, served, tree, arguments=None, name=TOOL):
        self.served, self.tree, self.name = served, tree, name
        self.arguments = {"title": TITLE} if arguments is None else arguments

    def send(self, state=None, responses=None, name=None, arguments=None):
        params = {"name": name or self.name,
                  "arguments": self.arguments if arguments is None else arguments}
        if state is not None:
            params["requestState"] = state
        if responses is not None:
            params["inputResponses"] = responses
        sent = time.time()
        result, error = self.served.run.request("tools/call", params)
        hidden = self.served.run.lab.state.hidden_now
        if error is not None:
            return Reply(code=error.code, message=error.message, hidden=hidden)
        reply = Reply(result=result, hidden=hidden)
        if reply.state is not None:
            self.served.received.append((reply.state, self.served.binding(
                params["name"], params["arguments"]), sent, time.time()))
        return reply

    def roots(self):
        """The inputResponses of the roots round: this flow's Notas/ folder."""
        return {"roots": {"roots": [{"uri": self.tree.uri("Notas"), "name": "Notas"}]}}

    def binding(self):
        return self.served.binding(self.name, self.arguments)

    def first(self):
        """Round 1: the roots are asked; T1."""
        reply = self.send()
        if reply.state is None or reply.asked("roots/list") is None:
            raise Abort(f"{self.name}({short(self.arguments)}) debía pedir las roots con un "
                        f"requestState, y {reply.describe()}" + sealing_hint(reply))
        return reply.state

    def second(self, roots_token):
        """Round 2, with T1 and the roots: which note and to confirm; (T2, the question key)."""
        reply = self.send(roots_token, self.roots())
        key = reply.asked("elicitation/create")
        if reply.state is None or key is None:
            raise Abort("al reintentar con las roots y el requestState intacto, el servidor "
                        f"debía preguntar qué nota borrar, y {reply.describe()}"
                        + sealing_hint(reply))
        return reply.state, key

    def third(self, form_token, key, answer):
        return self.send(form_token, {key: answer})


def sealing_hint(reply):
    if reply.refused:
        return (": tu open rechazó el token que acababa de dar tu seal (¿sellas y abres con lo "
                "mismo: las mismas claves, el mismo atado, la misma caducidad?)")
    if "No pude sellar" in reply.text():
        return ": tu seal falló o no devolvió un texto (mira el registro del servidor)"
    return ""


def deletes_n_b(flow, marker, answer=None):
    """The legitimate flow, rounds 1 to 3, choosing n-b: (T1, T2, the question key, the last
    reply, what changed on disk)."""
    before = flow.tree.snapshot()
    roots_token = flow.first()
    form_token, key = flow.second(roots_token)
    done = flow.third(form_token, key, answer or pick("n-b"))
    changes = describe_changes(before, flow.tree.snapshot())
    return roots_token, form_token, key, done, changes


def wanted(marker):
    return f"desapareció Notas/informe-{marker}.md"


def still_works(lab, grade, facts, *servers):
    """The end of every test of what must not happen: on each server it attacked, a new
    legitimate notes_delete still deletes exactly the note chosen. If not, the test scores 0
    (a sealer that refuses everything is not safe, it is broken)."""
    for served in servers:
        tree = notes(lab, facts.marker)
        try:
            *_, done, changes = deletes_n_b(Flow(served, tree), facts.marker)
            worked = changes == wanted(facts.marker)
            said = (f"el servidor {done.describe()} y en el disco {changes or 'nada cambió'}"
                    if not worked else "borró exactamente la nota elegida")
        except Abort as exc:
            worked, said = False, str(exc)
        ended(grade, worked, f"después de los ataques, un borrado legítimo en el mismo servidor: "
              f"{said}" + ("" if worked else "; tu sello debe seguir aceptando los tokens "
                           "buenos, no negarse a todo"))
    why = stray(lab, facts)
    if why:  # a token the grader cannot rebuild: nothing this test saw can be vouched for
        ended(grade, False, why)


def every_token_follows_the_format(lab, grade, facts):
    """In a test with no legitimate action at its end: a check that every token its servers
    gave was made as the positive scenario's were (only said when one was not)."""
    why = stray(lab, facts)
    if why:
        grade.check(False, why)


def ended(grade, worked, text):
    """A must-not test's legitimate action, recorded (`Grade.still_works`): unless it worked,
    the test scores 0."""
    grade.still_works(worked, text)


@dataclass
class RetoFacts:
    """The challenge's positive scenario: notes_delete played round by round with the learner's
    sealer, and its round-2 token read with the statement's format and the server's key."""
    marker: str = ""                  # the secret-looking part of n-b's file name
    principal: str = ""               # the user every server of this submission acts for
    intruder: str = ""                # another user, for the servers of the other-user tests
    problem: str = ""                 # why the positive scenario failed ("" when it worked)
    form_token: str = ""              # T2: the state of the round that asks which note
    reading: object = None            # grader.checks.reto.Reading of T2: its keys and binding
    constant_time: bool = False       # the installed sealer's open reaches compare_digest


# -- the positive scenario ----------------------------------------------------------------------
def positive(lab):
    """The positive scenario's facts (played once per submission)."""
    return lab.once(("reto", "positive"), lambda: play_positive(lab))


def play_positive(lab):
    lab.require_solution()
    source = source_of(lab)
    facts = RetoFacts(marker=new_marker(), principal=new_user(), intruder=new_user())
    if not source.present:
        facts.problem = NO_FILE
        return facts
    if not source.sealer_here:
        facts.problem = NOT_HERE
        return facts
    tree = notes(lab, facts.marker)
    served = server(lab, facts, tree)
    flow = Flow(served, tree)
    try:
        roots_token, form_token, _, done, changes = deletes_n_b(flow, facts.marker)
    except Abort as exc:
        facts.problem = str(exc)
        return facts
    if changes != wanted(facts.marker):
        facts.problem = (f"al reintentar con la respuesta (n-b, confirm: true) y el requestState "
                         f"intacto, el servidor {done.describe()}, y en el disco "
                         f"{changes or 'nada cambió'}; debía borrarse exactamente n-b")
        return facts
    why = not_installed(served, source)
    if why:
        facts.problem = NOT_INSTALLED.format(why=why)
        return facts
    facts.constant_time = source.compare_digest  # of the open the server installed
    facts.form_token = form_token
    readings = [read(token, served, flow.binding(), source.literals)
                for token in (roots_token, form_token)]
    if None in readings:
        facts.problem = SERVERS_OWN if servers_own(form_token, served, flow) else \
            NOT_THE_FORMAT.format(why=short(form_token, 60))
        return facts
    first, second = readings
    facts.reading = second
    if construction(first) != construction(second):
        second.tag, second.bound = None, ()  # two constructions: neither can be trusted
    return facts


def installed(served):
    """What the server reports it installed as its sealer ({"class", "file", "line"}: the
    class, and the file and line where the code of its `open` starts; code/server.py,
    `installed`), or empty values. Only ever a reason to lose points: reto.py is looked up at
    that place, and only the code found there can meet the structural checks."""
    result, error = served.run.request("server/discover", {})
    meta = ((result or {}).get("_meta") or {}) if error is None else {}
    found = meta.get(SOLUTION_META_KEY) if isinstance(meta, dict) else None
    sealer = found.get("sealer") if isinstance(found, dict) else None
    sealer = sealer if isinstance(sealer, dict) else {}
    line = sealer.get("line")
    return {"class": sealer.get("class") if isinstance(sealer.get("class"), str) else "",
            "file": sealer.get("file") if isinstance(sealer.get("file"), str) else "",
            "line": line if isinstance(line, int) and not isinstance(line, bool) else 0}


def not_installed(served, source):
    """Why the sealer the server installed is not the one reto.py defines and registers
    (Spanish; "" when it is): its class, and the file and line of its `open`."""
    sealer = installed(served)
    if sealer["class"] != source.sealer:
        return (f"es la clase {short(sealer['class'] or 'desconocida', 60)}, y reto.py "
                f"registra {source.sealer}")
    if sealer["file"] != FILE or not source.open_line or sealer["line"] != source.open_line:
        where = f"{sealer['file']}, línea {sealer['line']}" if sealer["file"] else "otro sitio"
        return (f"su open no es el que {source.sealer} define en reto.py: está en "
                f"{short(where, 80)}")
    return ""


def construction(reading):
    """Which keys made a token and what its tag covers, comparable between two tokens."""
    return reading.cipher.label, reading.tag and reading.tag.label, reading.bound


def servers_own(token, served, flow):
    """Is `token` the server's own (request_state.Sealer's) for this call?"""
    fields = flow.binding()
    binding = Binding(served.secret, served.key_id, fields["tool"], fields["arguments"],
                      fields["principal"], 0.0, 0.0, True)
    try:
        Sealer().open(token, binding)
    except Exception:
        return False
    return True


def require_positive(lab, grade, first=False):
    """Gate: reto.py has the sealer, the legitimate flow works with it, and its tokens follow the
    format. The first test says why not; the others point to it (one cause, once)."""
    facts = positive(lab)
    grade.require(not facts.problem, facts.problem, gate=None if first else POSITIVE)
    return facts


def scene(lab, grade):
    """How most tests start: the positive scenario's gate, then a fresh tree of notes and a
    server of this submission on it: (facts, the server, notes_delete's flow on it)."""
    facts = require_positive(lab, grade)
    tree = notes(lab, facts.marker)
    served = server(lab, facts, tree)
    return facts, served, Flow(served, tree)


def named(reading):
    """How the feedback names what made a tag or a cipher."""
    key = reading.tag
    return "un sha256, sin clave" if key.make is None else f"la clave {key.label}"


# -- shared by the tests ----------------------------------------------------------------------
def attempts(grade, flow, variants, responses, what, hidden=False, name=None, arguments=None,
             severe_if_changed=False):
    """Send each variant as the requestState of a round; each must be refused (-32602) and change
    nothing. One check for all: the first that got through, named, and how many more. With
    `severe_if_changed`, a variant that changed the notes is a severe failure (the test must be
    declared severe)."""
    accepted, changed_notes = [], False
    for label, token in variants:
        before = flow.tree.snapshot()
        reply = flow.send(token, responses, name=name, arguments=arguments)
        changes = describe_changes(before, flow.tree.snapshot())
        if not reply.refused or changes:
            accepted.append(f"el token {label}: {reply.describe()}"
                            + (f" y {changes}" if changes else ""))
            if changes:
                changed_notes = True
                break  # the scenario is spent: nothing after this would mean anything
    if hidden:
        text = (f"{what}: todos se rechazan sin cambiar nada" if not accepted else
                f"{what}: alguno se aceptó; el servidor debía responder -32602 sin hacer nada")
    else:
        refused = "se rechaza" if len(variants) == 1 else f"los {len(variants)} se rechazan"
        text = (f"{what}: {refused} con -32602 y nada cambia"
                if not accepted else f"{what}: {accepted[0]}"
                + (f" (y {len(accepted) - 1} más)" if len(accepted) > 1 else "")
                + "; debía responder -32602 sin hacer nada")
    if severe_if_changed and changed_notes:
        return grade.check(False, text, severe=True)
    return grade.check(not accepted, text)


def binds(grade, facts, wanted_fields, hidden=False):
    """The tag, rebuilt with the server's key, covers `wanted_fields` (severe when it does not:
    such a token is accepted by any call or user that differs only there)."""
    reading = facts.reading
    if reading.tag is None:
        return  # the forgery test says it: the grader cannot tell what your tag covers
    missing = [FIELD_NAMES[f] for f in wanted_fields if f not in reading.bound]
    grade.check(not missing, "tu etiqueta, rehecha con la clave del servidor, cubre "
                + " y ".join(FIELD_NAMES[f] for f in wanted_fields) if not missing else
                "tu etiqueta, rehecha con la clave del servidor, no cubre "
                + " ni ".join(missing) + (": el mismo token vale en otra llamada o para otro "
                                          "usuario; pon en el atado [binding.tool, "
                                          "binding.arguments, binding.principal]"
                                          if not hidden else ""), severe=True)


def expired_copies(lab, grade, facts, past, hidden=False):
    """Copies of this server's T1 and T2 made with the learner's format and the server's key,
    valid in every respect but `past` seconds expired: each refused and nothing changes. First a
    copy that is still valid must be accepted (the copies are made as the learner's are)."""
    reading = facts.reading
    grade.require(reading.tag is not None, "no pude hacer copias caducadas de tus tokens: tu "
                  "etiqueta no es ninguna que el corrector sepa rehacer con la clave del servidor "
                  "(mira «un token hecho sin la clave de tu servidor se rechaza»)")
    tree = notes(lab, facts.marker)
    served = server(lab, facts, tree)
    flow = Flow(served, tree)
    literals = source_of(lab).literals
    roots_token = flow.first()
    first = read(roots_token, served, flow.binding(), literals)
    grade.require(first is not None, "el token de la ronda de las roots no se lee con el formato")
    lives_its_lifetime(grade, served, first)
    control = mint(reading, served, flow.binding(), {"caduca": time.time() + 600,
                                                     "datos": first.envelope["datos"]})
    accepted = flow.send(control, flow.roots())
    grade.require(accepted.asked("elicitation/create") is not None, "tu open rechazó una copia "
                  "válida de su propio token (hecha con tu formato, la clave del servidor y una "
                  f"caducidad futura): el servidor {accepted.describe()}; ¿guardas algo fuera "
                  "del token, o compruebas algo que el formato del enunciado no lleva?")
    form_token, key = flow.second(flow.first())
    second = read(form_token, served, flow.binding(), literals)
    copies = [(label, mint(reading, served, flow.binding(), {"caduca": time.time() - past,
                                                             "datos": part.envelope["datos"]}),
               responses)
              for label, part, responses in (
                  ("de la ronda de las roots", first, flow.roots()),
                  ("de la ronda que borra, con n-b elegida", second, {key: pick("n-b")}))
              if part is not None]
    for label, token, responses in copies:
        what = "un token caducado hace un momento" if hidden else \
            f"un token caducado hace {spoken(past)} s, {label}"
        attempts(grade, flow, [(label, token)], responses, what, hidden=hidden)
    still_works(lab, grade, facts, served)


def lives_its_lifetime(grade, served, reading):
    """A failed check unless the sobre of the token `reading` read (the last one `served`
    gave) says the expiry the format says: binding.expires_at, the server's clock when it
    sealed plus the lifetime every server is given (STATE_TTL), within CLOCK_SLACK seconds of
    when it was asked and answered."""
    *_, sent, came = served.received[-1]
    caduca = reading.envelope["caduca"]
    good = sent + STATE_TTL - CLOCK_SLACK <= caduca <= came + STATE_TTL + CLOCK_SLACK
    if not good:  # said only when it fails: the refusals keep their weight in the test
        grade.check(False, "el sobre no lleva caduca = binding.expires_at (el reloj del "
                    "servidor al sellar más la vida de un estado): un token debe caducar cuando "
                    "dice binding, ni antes ni después")


def replays(lab, grade, facts, served, tree, variants):
    """After the legitimate flow deleted n-b, its last round sent again as each variant
    (label, how the token is written, the answer): each refused with nothing changed."""
    flow = Flow(served, tree)
    _, form_token, key, _, changes = deletes_n_b(flow, facts.marker)
    grade.require(changes == wanted(facts.marker), "el borrado legítimo de n-b no funcionó "
                  "en este servidor")
    accepted = []
    for label, respell, answer in variants:
        before = tree.snapshot()
        reply = flow.third(respell(form_token), key, answer)
        changes = describe_changes(before, tree.snapshot())
        if not reply.refused or changes:
            accepted.append(f"{label}: el servidor {reply.describe()}"
                            + (f" y {changes}" if changes else ""))
    grade.check(not accepted, f"las {len(variants)} repeticiones de la ronda que borró se "
                "rechazan con -32602 y nada cambia" if not accepted else
                f"se aceptó {accepted[0]}" + (f" (y {len(accepted) - 1} repeticiones más)"
                                               if len(accepted) > 1 else "")
                + "; un token de notes_delete (binding.one_time) vale una sola vez: apunta los "
                "que ya se usaron", severe=True)


NO = {"decline": "rechazó el formulario", "cancel": "lo canceló",
      "unconfirmed": "eligió una nota sin marcar la confirmación"}


def declined_then_yes(lab, grade, facts, served, action, hidden=False):
    """The user says no to round 2 (`action`: a key of NO); the same token sent again with a
    «sí»: refused, nothing changes."""
    tree = notes(lab, facts.marker)
    flow = Flow(served, tree)
    form_token, key = flow.second(flow.first())
    said_no = flow.third(form_token, key, pick("n-b", action))
    said = "dijo que no" if hidden else NO[action]  # a hidden test does not name its input
    grade.require(said_no.result is not None, f"la usuaria {said}: esa respuesta debía "
                  f"aceptarse sin borrar nada, y el servidor {said_no.describe()}")
    before = tree.snapshot()
    reply = flow.third(form_token, key, pick("n-a"))
    changes = describe_changes(before, tree.snapshot())
    good = reply.refused and not changes
    grade.check(good, f"la usuaria {said}; el mismo token con un sí se rechaza y nada cambia"
                if good else f"la usuaria {said}; el mismo token se aceptó con un sí"
                + ("" if hidden else f": el servidor {reply.describe()}"
                   + (f" y {changes}" if changes else ""))
                + ": el no de la usuaria se convirtió en un sí; el token ya se usó", severe=True)


def forgery_with_your_code(lab, grade, facts, served, hidden=False):
    """What someone with reto.py but without the key does: if the tag's key is not the
    server's, rewrite the round-2 token to name only n-a, tag it again and send it."""
    reading = facts.reading
    if reading.tag is None:
        grade.check(False, "tu etiqueta no es ninguna que el corrector sepa rehacer con la clave "
                    "del servidor (tag_of con la segunda clave de keys_from(binding.key) sobre "
                    "el atado, el nonce y el cifrado): no puede comprobar que solo tu servidor "
                    "sepa calcularla. Sigue el formato del enunciado", severe=True)
        return
    if reading.tag.secret:
        off = tag_off_format(reading)
        grade.check(not off, "tu etiqueta se calcula con una clave que sale de binding.key: sin "
                    "ella nadie la rehace" if not off else
                    f"tu etiqueta {off}: no es la del formato ({FORMAT_TAG}); el corrector la "
                    "rehace con la clave del servidor y lo que no es el formato no puede darlo "
                    "por seguro", severe=True)
        return
    tree = notes(lab, facts.marker)
    flow = Flow(served, tree)
    form_token, _ = flow.second(flow.first())
    mine = read(form_token, served, flow.binding(), source_of(lab).literals)
    token = forged(mine, served, flow.binding(), "n-a") if mine is not None else None
    if token is None:
        grade.check(False, f"tu etiqueta se rehace sin la clave del servidor (con "
                    f"{named(reading)}): quien tenga tu código falsifica tus tokens",
                    severe=True)
        return
    before = tree.snapshot()
    reply = flow.send(token, {})
    changes = describe_changes(before, tree.snapshot())
    said = "" if hidden else f" (el servidor {reply.describe()}" + \
        (f" y {changes})" if changes else ")")
    grade.check(False, "con tu código y sin la clave del servidor, el corrector rehízo el token "
                "de la ronda que pregunta para que solo nombrara n-a, calculó otra vez la "
                f"etiqueta (con {named(reading)}) y lo envió sin contestar{said}; "
                "la etiqueta necesita la clave del servidor: keys_from(binding.key)",
                severe=bool(changes))
