"""What is done to a token in the requestState challenge (grader/checks/reto.py): by anyone who
sees it, by someone who has the learner's reto.py but not the server's key, and by the grader,
which has that key.

- Anyone: one character changed (`changed`, `content_flips`), cut or lengthened
  (`cut_or_lengthened`), the same bytes spelled another way (`respelled`), and what can be read
  in it with no key at all (`revealed`: base64, hex, base32, base85, compressed, three layers
  deep).
- With the format and the server's key (the grader gave each server its key): `read` finds
  which key decrypts the sobre and which key and which binding fields make the tag, among the
  server's own and the keys an attacker with reto.py knows too (`candidate_keys`:
  `binding.key_id`, an empty key, the file's constants, a sha256 with no key); `mint` makes a
  token the same way with another sobre (an expired copy); `forged` is notebook 6.2's attack on
  this format, with the key that made the tag when an attacker knows it.

Deliberate simplifications: the binding fields a tag may cover are the three of the format, in
any order and any subset; a construction outside the candidates is "unknown", and the tests
count that as a tag nobody can vouch for.
"""

import base64
import binascii
import bz2
import hashlib
import itertools
import json
import lzma
import re
import secrets
import string
import zlib
from dataclasses import dataclass

from grader.checks.grading import short
from sealkit import NONCE, TAG, decode, encode, keys_from, stream_xor, tag_of

FIELDS = ("tool", "arguments", "principal")  # the format's `atado`, in the format's order
FIELD_NAMES = {"tool": "binding.tool", "arguments": "binding.arguments",
               "principal": "binding.principal"}
FORMAT_KEY = "keys_from(binding.key)"  # the label of the format's keys: the first encrypts,
#                                        the second tags
FORMAT_TAG = ("tag_of(clave_firmar, [binding.tool, binding.arguments, binding.principal], nonce, "
              "cifrado), con clave_firmar la segunda de keys_from(binding.key)")
MAX_READ = 64 << 10   # characters of a token the grader reads with the format


# -- what anyone does to a token ----------------------------------------------------------------
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
    """The same bytes written another way, as lenient decoders read them (always seven)."""
    n = len(token)
    variants = [("re-codificado: con relleno «=» al final", token + "="),
                ("re-codificado: con relleno «==» al final", token + "=="),
                ("re-codificado: con un salto de línea en medio", token[:n // 2] + "\n"
                 + token[n // 2:]),
                ("re-codificado: con un espacio al final", token + " ")]
    if n % 4 in (2, 3):  # base64 without padding ends in a part block: its last bits are unused
        variants.append(("re-codificado: con el último carácter cambiado solo en bits que "
                         "base64 no usa", flip(token, last_data(token), 1)))
    else:
        variants.append(("re-codificado: con un tabulador al final", token + "\t"))
    if any(c in token for c in "-_"):
        variants.append(("re-codificado: con el alfabeto base64 estándar (+ y / en vez de - y "
                         "_)", token.replace("-", "+").replace("_", "/")))
    elif any(c in token for c in "+/"):
        variants.append(("re-codificado: con el alfabeto base64 para las URL (- y _ en vez de + y "
                         "/)", token.replace("+", "-").replace("/", "_")))
    else:
        variants.append(("re-codificado: con un retorno de carro al final", token + "\r"))
    return unique(token, variants)


def unique(token, variants):
    seen, kept = {token}, []
    for label, variant in variants:
        if variant is not None and variant not in seen:
            seen.add(variant)
            kept.append((label, variant))
    return kept


# -- what someone with your code does: the format, read with the server's key ------------------
@dataclass(frozen=True)
class Key:
    """A key a token may have been made with: the server's (`secret`), or one an attacker who
    has reto.py knows too. `make(secret, key_id)` gives its bytes (None: no key at all)."""

    label: str
    secret: bool
    make: object
    spaced: bool = False  # no key: the hash of json.dumps with its default separators


def _public_bases(literals):
    bases = [("binding.key_id", lambda secret, key_id: key_id.encode()),
             ("una clave vacía", lambda secret, key_id: b"")]
    for literal in literals:
        bases.append((f"la constante {short(literal.decode('utf-8', 'replace'), 40)!s} de tu "
                      "reto.py", lambda secret, key_id, literal=literal: literal))
    return bases


def candidate_keys(use, literals=()):
    """Every key a token may have been made with for `use` (0: encrypt, 1: tag): the server's,
    first, then the ones an attacker with reto.py can compute too."""
    found = [Key(FORMAT_KEY, True, lambda secret, key_id: keys_from(secret)[use]),
             Key("binding.key", True, lambda secret, key_id: secret),
             Key("keys_from(binding.key), la otra de las dos", True,
                 lambda secret, key_id: keys_from(secret)[1 - use])]
    for label, base in _public_bases(literals):
        found.append(Key(f"keys_from({label})", False,
                         lambda secret, key_id, base=base: keys_from(base(secret, key_id))[use]))
        found.append(Key(label, False, base))
    if use == 0:
        found.append(Key("sin clave: sin cifrar", False, None))
    else:
        found += [Key("sin clave: un sha256", False, None),
                  Key("sin clave: un sha256", False, None, spaced=True)]
    return found


def orders():
    """Every list of distinct binding fields a tag may cover, longest first."""
    return [combo for size in range(len(FIELDS), -1, -1)
            for combo in itertools.permutations(FIELDS, size)]


def encrypt_with(key, secret, key_id, nonce, data):
    if key.make is None:
        return data
    return stream_xor(key.make(secret, key_id), nonce, data)


def tag_with(key, secret, key_id, bound, nonce, encrypted):
    if key.make is None:
        head = json.dumps(bound, separators=None if key.spaced else (",", ":"))
        return hashlib.sha256(head.encode("utf-8", "surrogatepass") + nonce + encrypted).digest()
    return tag_of(key.make(secret, key_id), bound, nonce, encrypted)


@dataclass
class Reading:
    """A token read with the statement's format: its parts, its sobre, and which keys and which
    binding fields made it (`tag` None: no construction the grader knows)."""

    nonce: bytes
    encrypted: bytes
    plain: bytes
    envelope: dict
    cipher: Key
    tag: Key | None = None
    bound: tuple = ()


def is_format(reading):
    """Is `reading` the format's construction: the sobre encrypted with the first key of
    keys_from(binding.key), the tag made with the second over the three fields in order?"""
    return reading.cipher.label == FORMAT_KEY and reading.tag is not None \
        and reading.tag.label == FORMAT_KEY and reading.bound == FIELDS


def tag_off_format(reading):
    """Why `reading`'s tag, made with the server's key, is still not the format's (Spanish; ""
    when it is, or when what is wrong is a field it leaves out: the tests that move tokens say
    that): the other key of keys_from, binding.key itself, or the three fields in another
    order."""
    tag = reading.tag
    if tag is None or not tag.secret:
        return ""
    if tag.label != FORMAT_KEY:
        return f"se hace con {tag.label}"
    if set(reading.bound) == set(FIELDS) and reading.bound != FIELDS:
        return "cubre " + ", ".join(FIELD_NAMES[f] for f in reading.bound) + " en ese orden"
    return ""


def rebuilt(token, served, fields, reading):
    """Why `token`, received from `served` for the call `fields`, is not made the way
    `reading` was (the format's way when the positive scenario's tokens follow it), rebuilt
    with the key the grader gave that server: its layout, its sobre and its tag (Spanish; ""
    when it is)."""
    if not isinstance(token, str) or len(token) > MAX_READ:
        return "no es un texto que el corrector lea"
    try:
        raw = decode(token)
    except (ValueError, binascii.Error):
        return "no es encode(nonce + cifrado + etiqueta)"
    if len(raw) < NONCE + TAG:
        return "es más corto que un nonce y una etiqueta"
    nonce, encrypted, tag = raw[:NONCE], raw[NONCE:-TAG], raw[-TAG:]
    if sobre(encrypt_with(reading.cipher, served.secret, served.key_id, nonce, encrypted)) \
            is None:
        return (f"su sobre no se descifra con {reading.cipher.label}"
                + (" (la primera de las dos claves)" if is_format(reading) else ""))
    if reading.tag is not None and tag != tag_with(
            reading.tag, served.secret, served.key_id, [fields[f] for f in reading.bound],
            nonce, encrypted):
        return ("su etiqueta no es " + FORMAT_TAG) if is_format(reading) else \
            "su etiqueta no se rehace como la de los tokens del primer borrado"
    return ""


def read(token, served, fields, literals=()):
    """The token of a server, read with the format and the key the grader gave that server;
    None when it is not the format (not base64url, too short, no sobre under any key)."""
    if not isinstance(token, str) or len(token) > MAX_READ:
        return None
    try:
        raw = decode(token)
    except (ValueError, binascii.Error):
        return None
    if len(raw) < NONCE + TAG:
        return None
    nonce, encrypted, tag = raw[:NONCE], raw[NONCE:-TAG], raw[-TAG:]
    for key in candidate_keys(0, literals):
        plain = encrypt_with(key, served.secret, served.key_id, nonce, encrypted)
        envelope = sobre(plain)
        if envelope is not None:
            reading = Reading(nonce, encrypted, plain, envelope, key)
            break
    else:
        return None
    for key in candidate_keys(1, literals):
        for bound in orders():
            values = [fields[f] for f in bound]
            if tag_with(key, served.secret, served.key_id, values, nonce, encrypted) == tag:
                reading.tag, reading.bound = key, bound
                return reading
    return reading


def sobre(plain):
    """The statement's sobre {"caduca": number, "datos": dict} in `plain`, or None."""
    try:
        envelope = json.loads(plain)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(envelope, dict) and isinstance(envelope.get("datos"), dict) \
            and isinstance(envelope.get("caduca"), (int, float)) \
            and not isinstance(envelope.get("caduca"), bool):
        return envelope
    return None


def mint(reading, served, fields, envelope):
    """A token made as `reading`'s was (the same keys, the same binding fields), for `served`
    and `fields`, with `envelope` as its sobre and a new nonce."""
    nonce = secrets.token_bytes(NONCE)
    encrypted = encrypt_with(reading.cipher, served.secret, served.key_id, nonce,
                             json.dumps(envelope).encode())
    tag = tag_with(reading.tag, served.secret, served.key_id, [fields[f] for f in reading.bound],
                   nonce, encrypted)
    return encode(nonce + encrypted + tag)


def forged(reading, served, fields, keep):
    """The attack of notebook 6.2 on this format, by someone with reto.py but without the key:
    the round-2 token with the notes it found cut to `keep` (each changed byte XOR-ed into the
    ciphertext, which needs no key; the rest padded with spaces) and its tag made again with the
    key that made it. None when the tag's key is the server's or the sobre cannot shrink."""
    if reading.tag is None or reading.tag.secret:
        return None
    envelope = json.loads(reading.plain)
    memos = envelope["datos"].get("memos")
    if not isinstance(memos, dict) or not isinstance(memos.get("matches"), list):
        return None
    memos["matches"] = [m for m in memos["matches"] if isinstance(m, list) and m[:1] == [keep]]
    shorter = json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()
    if len(shorter) > len(reading.plain):
        return None
    shorter += b" " * (len(reading.plain) - len(shorter))
    encrypted = bytes(c ^ old ^ new for c, old, new in
                      zip(reading.encrypted, reading.plain, shorter, strict=True))
    tag = tag_with(reading.tag, served.secret, served.key_id, [fields[f] for f in reading.bound],
                   reading.nonce, encrypted)
    return encode(reading.nonce + encrypted + tag)


# -- can a token be read without any key? ------------------------------------------------------
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
    for name, decode_85 in (("decodificado en base85", base64.b85decode),
                            ("decodificado en ascii85", base64.a85decode)):
        try:
            found.append((name, decode_85(data.strip())))
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
