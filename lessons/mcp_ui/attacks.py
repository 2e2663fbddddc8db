"""The attacks on requestState that notebook 6 runs live, on the 2026-07-28 wire.

Each attack plays `notes_delete("TPS report")` (three notes match, so the server asks which to
delete) one `tools/call` frame at a time through a lab connection's client, so that it, not the
client's loop, chooses what goes back as `requestState`; then it does to the token what an
attacker can do and prints what happened, on the wire and on disk:

    await forge(conn)     open the round-2 token, keep only the oldest TPS report in the list
                          the server found, close it again without the key: the server
                          deletes it without ever asking
    await read(conn)      what anyone reads in the round-2 token without the key
    await move(conn)      the round-2 token of «TPS report» sent in a call to delete «Lista de
                          la compra»: the form then offers the TPS reports as the shopping list
    await replay(conn)    the user declines; the same round is sent again with a «sí»
    await lockout(conn)   the round-2 token sent first with one character of its tag changed;
                          then the user's own answer with the real token
    await expired(conn)   the round-2 token used after its lifetime (connect with state_ttl=1);
                          the server's clock stands still during the honest rounds 1 and 2
                          (HeldClock), so only the attacker's wait ages the token

Each one first puts the lab's notes back as they were (`demo.LESSON_NOTES`) and returns an
`Outcome`: refused with -32602 or not, what changed on disk, what could be read.

The attacker knows the token's format (the code is public), never the server's key: a token is
rewritten by decoding its base64 JSON part, editing it, encoding it again and, where a part is
the SHA-256 of the old JSON, computing it anew (`rewrite`). Whatever else the token carries (a
keyed tag) stays as it was, which is all an attacker without the key can do.

Deliberate simplifications: one scenario per attack, on the lesson's own notes; the grader
(grader/checks/reto.py) runs many more variants of each on the challenge.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field

from cli.demo import LESSON_NOTES, write_lesson_notes
from shared import wire

TOOL, TITLE, OTHER_TITLE = "notes_delete", "TPS report", "Lista de la compra"
INVALID_PARAMS = -32602
# the three lesson notes titled TPS report, oldest first (demo.LESSON_NOTES: 2023, 2024, 2025)
OLDEST, MIDDLE, NEWEST = (note[2] for note in sorted(
    (n for n in LESSON_NOTES if n[3] == TITLE), key=lambda n: n[4]))


@dataclass
class Outcome:
    """What one attack got: refused (-32602), what changed on disk, what could be read."""

    refused: bool = False
    changes: list = field(default_factory=list)
    revealed: list = field(default_factory=list)
    text: str = ""

    @property
    def acted(self) -> bool:
        """The server did something it should not have: the notes changed."""
        return bool(self.changes)


def pick(note_id: str) -> dict:
    return {"action": "accept", "content": {"note_id": note_id, "confirm": True}}


class Rounds:
    """notes_delete on one lab connection, one tools/call frame at a time."""

    def __init__(self, conn, title: str = TITLE):
        self.conn, self.title = conn, title

    def roots(self) -> dict:
        return {"roots": {"roots": [{"uri": self.conn.lab.uri("Notas"), "name": "Notas"}]}}

    async def send(self, token=None, responses=None, title=None) -> dict:
        """One tools/call: {"result": ...} or {"error": {"code", "message"}}."""
        params = {"name": TOOL, "arguments": {"title": title or self.title}}
        if token is not None:
            params["requestState"] = token
        if responses is not None:
            params["inputResponses"] = responses
        try:
            return {"result": await self.conn.client.request("tools/call", params)}
        except wire.RpcError as exc:
            return {"error": {"code": exc.code, "message": exc.message}}

    async def to_the_form(self) -> tuple[str, str]:
        """Rounds 1 (the roots are asked) and 2 (which note?): the round-2 token and the key
        of its question."""
        first = (await self.send())["result"]
        second = (await self.send(first["requestState"], self.roots()))["result"]
        (key,) = second["inputRequests"]
        print(f"Rondas 1 y 2 de {TOOL}({self.title!r}): el servidor pide las roots y luego "
              "pregunta cuál borrar; cada respuesta lleva su requestState.")
        return second["requestState"], key


# -- what an attacker without the key does to a token --------------------------------------------
def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _json_part(part: str):
    """(the bytes, the JSON) of a base64 part of a token, or None."""
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        return raw, json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def readable(token: str):
    """The JSON anyone can read in `token` without a key (None: nothing readable)."""
    for part in token.split("."):
        found = _json_part(part)
        if found is not None and isinstance(found[1], dict):
            return found[1]
    return None


def payload_of(body: dict) -> dict:
    """The server's payload inside a token's JSON (some sealers wrap it in "data")."""
    return body if "memos" in body else body.get("data", {})


def rewrite(token: str, change) -> str | None:
    """`token` with its JSON part changed by `change(payload)`, re-encoded, and a SHA-256 of the
    old JSON replaced by that of the new one; a keyed tag stays as it was. None: no JSON."""
    parts = token.split(".")
    for at, part in enumerate(parts):
        found = _json_part(part)
        if found is None or not isinstance(found[1], dict):
            continue
        old, body = found
        change(payload_of(body))
        new = json.dumps(body, separators=(",", ":")).encode()
        parts[at] = _b64(new)
        old_hash = hashlib.sha256(old).hexdigest()
        parts = [hashlib.sha256(new).hexdigest() if p == old_hash else p for p in parts]
        return ".".join(parts)
    return None


def keep_only(note_id: str):
    """A `change` for `rewrite`: the notes the server found become just `note_id`."""
    def change(payload):
        memos = payload.get("memos", {})
        memos["matches"] = [m for m in memos.get("matches", []) if m[0] == note_id]
    return change


# -- what happened -------------------------------------------------------------------------------
def fresh_notes(lab) -> None:
    """The lesson's notes as they were at the start (a deleted one comes back)."""
    from .lab import note_body
    write_lesson_notes(str(lab.base), LESSON_NOTES, body=note_body)


def changes(before: dict, after: dict) -> list[str]:
    gone = [f"desapareció {p}" for p in before if p not in after]
    return gone + [f"apareció {p}" for p in after if p not in before]


def verdict(lab, before: dict, reply: dict) -> Outcome:
    """Print what the server did with the attacker's frame, and what changed on disk."""
    done = changes(before, lab.snapshot())
    disk = "; ".join(done) if done else "nada cambió en el disco"
    if "error" in reply:
        error = reply["error"]
        refused = error["code"] == INVALID_PARAMS
        print(f"{'🛡' if refused else '⚠'} El servidor responde el error {error['code']} "
              f"(«{error['message']}») · {disk}.")
        return Outcome(refused=refused, changes=done, text=error["message"])
    result = reply["result"]
    text = lab.hide(" ".join(c.get("text", "") for c in result.get("content") or []))
    if result.get("resultType") == "input_required":
        text = "input_required (sigue adelante y pregunta)"
    print(f"{'💥' if done else '⚠'} El servidor lo acepta: «{text}» · {disk}.")
    return Outcome(changes=done, text=text)


def _prepare(conn) -> dict:
    fresh_notes(conn.lab)
    print(f"── {who_seals(conn)} ──")
    return conn.lab.snapshot()


def who_seals(conn) -> str:
    sealer = conn.server.states.sealer
    mine = type(sealer).__module__ == "core.request_state"
    return "el sello del servidor (request_state.Sealer)" if mine \
        else f"el sello roto {type(sealer).__name__}"


# -- the attacks ---------------------------------------------------------------------------------
async def forge(conn) -> Outcome:
    """The round-2 token, rewritten without the key to name only the oldest TPS report: no
    question left."""
    _prepare(conn)
    rounds = Rounds(conn)
    token, _ = await rounds.to_the_form()
    forged = rewrite(token, keep_only(OLDEST))
    if forged is None:
        print("🕵 No hay JSON legible en el token: el atacante no sabe por dónde cambiarlo.")
        return Outcome(refused=True)
    print(f"🕵 El atacante abre el token, deja solo {OLDEST} en la lista de notas encontradas, "
          "lo vuelve a cerrar sin la clave y lo envía sin contestar la pregunta.")
    before = conn.lab.snapshot()
    return verdict(conn.lab, before, await rounds.send(forged, {}))


async def read(conn) -> Outcome:
    """What the round-2 token shows to anyone, without the key."""
    _prepare(conn)
    token, _ = await Rounds(conn).to_the_form()
    body = readable(token)
    if body is None:
        print("🛡 Sin la clave no se lee nada: el token no contiene JSON a la vista.")
        return Outcome()
    payload = payload_of(body)
    shown = [f"{m[0]} en {conn.lab.hide(m[3])}" for m in payload.get("memos", {})
             .get("matches", [])]
    roots = [r.get("uri", "") for r in (payload.get("answers", {}).get("roots") or {})
             .get("roots", [])]
    print("🕵 Sin la clave, el atacante lee en el token las notas que el servidor encontró: "
          + "; ".join(shown) + ". Y las roots del usuario: "
          + ", ".join(conn.lab.hide(r) for r in roots) + ".")
    return Outcome(revealed=shown + roots)


async def move(conn) -> Outcome:
    """The round-2 token of «TPS report», sent in a call to delete «Lista de la compra»."""
    _prepare(conn)
    rounds = Rounds(conn)
    token, _ = await rounds.to_the_form()
    print(f"🕵 Ese token se cuela en otra llamada: {TOOL}({OTHER_TITLE!r}).")
    before = conn.lab.snapshot()
    reply = await rounds.send(token, {}, title=OTHER_TITLE)
    if "error" in reply or reply["result"].get("resultType") != "input_required":
        return verdict(conn.lab, before, reply)
    result = reply["result"]
    ((key, request),) = result["inputRequests"].items()
    asked = request["params"]
    choices = asked["requestedSchema"]["properties"]["note_id"]
    options = [o["const"] for o in choices.get("oneOf", [])] or list(choices.get("enum", []))
    print(f"El servidor lo acepta y pregunta: «{asked['message']}» · opciones: "
          f"{', '.join(options)}.")
    print("La usuaria, que pidió borrar su lista de la compra, elige la primera y confirma.")
    return verdict(conn.lab, before, await rounds.send(
        result["requestState"], {key: pick(options[0])}, title=OTHER_TITLE))


async def replay(conn) -> Outcome:
    """The user says «no» to round 2; the same round is sent again with a «sí»."""
    _prepare(conn)
    rounds = Rounds(conn)
    token, key = await rounds.to_the_form()
    said_no = (await rounds.send(token, {key: {"action": "decline"}}))["result"]
    print(f"La usuaria rechaza el formulario: «{said_no['content'][0]['text']}»")
    print(f"🕵 Alguien que vio pasar esa ronda la repite con el mismo token y un «sí» a {MIDDLE}.")
    before = conn.lab.snapshot()
    return verdict(conn.lab, before, await rounds.send(token, {key: pick(MIDDLE)}))


async def lockout(conn) -> Outcome:
    """Someone who sees round 2 pass sends its token first, with one character of its tag
    changed; then the user answers with the real token. `refused`: the user's answer was."""
    _prepare(conn)
    rounds = Rounds(conn)
    token, key = await rounds.to_the_form()
    changed = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    tried = await rounds.send(changed, {key: pick(MIDDLE)})
    print(f"🕵 Alguien envía antes ese token con un carácter cambiado: "
          f"{'−32602' if 'error' in tried else 'lo aceptó'}.")
    print(f"La usuaria contesta con el token de verdad y elige {MIDDLE}.")
    before = conn.lab.snapshot()
    return verdict(conn.lab, before, await rounds.send(token, {key: pick(MIDDLE)}))


class HeldClock:
    """The lab server's clock (`States.clock`), held still while the legitimate rounds run: a
    user who answers at once. Released, it runs on from where it stood, so a token's age is
    what the attacker waited, however long the machine took for rounds 1 and 2 (with a
    1-second lifetime, a busy machine or browser would otherwise refuse the honest round 2)."""

    def __init__(self, states):
        self.states, self.real = states, states.clock
        self.lag, self.held = 0.0, None

    def now(self) -> float:
        return self.held if self.held is not None else self.real() - self.lag

    def hold(self) -> None:
        self.held = self.now()

    def release(self) -> None:
        self.lag, self.held = self.real() - self.held, None

    def __enter__(self) -> HeldClock:
        self.states.clock = self.now
        return self

    def __exit__(self, *exc) -> None:
        self.states.clock = self.real


async def expired(conn, wait: float | None = None) -> Outcome:
    """The round-2 token used after its lifetime (`wait`: by default the lifetime + 0.6 s)."""
    _prepare(conn)
    rounds = Rounds(conn)
    with HeldClock(conn.server.states) as clock:
        clock.hold()
        token, key = await rounds.to_the_form()
        clock.release()
        ttl = conn.config.state_ttl
        wait = ttl + 0.6 if wait is None else wait
        print(f"El token vale {ttl:g} s; el atacante lo guarda y lo usa {wait:g} s después.")
        await asyncio.sleep(wait)
        before = conn.lab.snapshot()
        return verdict(conn.lab, before, await rounds.send(token, {key: pick(NEWEST)}))
