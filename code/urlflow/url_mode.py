"""URL-mode elicitation: the demo guard, the URL policy, and single-use flow records.

URL mode (SEP-1036) sends the user to a web page instead of showing a form, so that secrets
never cross the MCP client. Three pieces live here:

- `demo_guard`: the fixed guard of the demo. The real decision (may this server use URL mode
  with this SDK, protocol and client?) is exercise 3: without a guard, no URL mode at all.
- `url_problems`: HTTPS except on loopback, no look-alike hosts, nothing secret in the URL.
- `FlowStore`: one record per URL elicitation (an unguessable `elicitationId`, a single-use
  nonce, the session and provider it belongs to, an expiry). Completing a record stores the
  credential server-side; it never leaves this module except as "configured: yes/no".
  Records are bounded: a flow that ends (completed, denied, retired) lets go of its session at
  once and keeps only its status, so that the page can say "ya se usó" and a 2026-07-28 retry
  can read how it ended; every record is dropped once it expires (url_ttl), oldest first, the
  next time a flow starts.

Deliberate simplifications: the "provider" is simulated by a local page (setup_page.py), the
credential is a random string, and the vault is a dict in memory keyed by the local user.
"""

import ipaddress
import re
import secrets
import threading
import time
import unicodedata
from collections import deque
from urllib.parse import parse_qsl, urlsplit

from core.elicitation import supports_url
from shared.protocol import REVISIONS


def demo_guard(sdk_version, protocol_version, client_capabilities):
    """The fixed guard of the demo and the notebooks (`serve --demo-url-guard`).

    It only checks the negotiated protocol and the client's declared `elicitation.url`, and
    ignores the SDK version on purpose: the demo knows what it runs on. It is NOT a guard for a
    real server (exercise 3 writes that one); without any guard the server never uses URL mode.
    """
    return protocol_version in REVISIONS and supports_url(client_capabilities)


# -- URL policy -------------------------------------------------------------------------------
SENSITIVE_QUERY = re.compile(
    r"token|secret|password|passwd|key|code|session|auth|email|mail|user|name|phone|ssn",
    re.IGNORECASE)


def is_loopback(host):
    """127.0.0.0/8, ::1, `localhost` and names under `.localhost` (RFC 6761)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problems(url, allowed_params=("elicitation",)):
    """Everything wrong with sending this URL to a user; an empty list means it is fine."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    problems = []
    if parts.scheme not in ("https", "http") or not host:
        problems.append("solo se admiten URLs http(s) con host")
    elif parts.scheme == "http" and not is_loopback(host):
        problems.append("HTTP sin cifrar fuera de loopback: usa HTTPS")
    if parts.username or parts.password:
        problems.append("la URL lleva credenciales (usuario:clave@)")
    if any(label.startswith("xn--") for label in host.split(".")):
        problems.append(f"host en punycode ({host}): puede imitar a otro dominio")
    elif _mixed_scripts(host):
        problems.append(f"host con alfabetos mezclados ({host}): puede imitar a otro dominio")
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        if name not in allowed_params and SENSITIVE_QUERY.search(name):
            problems.append(f"el parámetro {name!r} podría llevar datos personales o secretos")
    return problems


def _mixed_scripts(host):
    scripts = set()
    for char in host:
        if char.isalpha():
            name = unicodedata.name(char, "UNKNOWN")
            scripts.add(name.split(" ")[0])
    return len(scripts) > 1 or (scripts and scripts != {"LATIN"})


# -- flow records -----------------------------------------------------------------------------
class FlowError(Exception):
    """A completion attempt that must attach nothing (unknown, used, expired, tampered)."""


class FlowRecord:
    """One URL elicitation: its public `elicitation_id`, the single-use `nonce` its page's form
    posts back, whose it is (`session_id`, `subject`), the `provider`, when it expires
    (`expires_at`, on the store's clock), its `status` (pending -> completed, denied or
    retired, once; expiry on use) and `on_complete`, the session's flow_finished."""

    status = "pending"

    def __init__(self, elicitation_id, nonce, session_id, subject, provider, expires_at,
                 on_complete=None):
        self.elicitation_id, self.nonce, self.session_id = elicitation_id, nonce, session_id
        self.subject, self.provider, self.expires_at = subject, provider, expires_at
        self.on_complete = on_complete

    def __repr__(self):
        return (f"FlowRecord({self.elicitation_id!r}, session_id={self.session_id!r}, "
                f"subject={self.subject!r}, provider={self.provider!r}, "
                f"status={self.status!r})")


class FlowStore:
    """URL elicitation records and the credential vault, both in memory."""

    def __init__(self, ttl_seconds=600.0, clock=time.monotonic):
        self.ttl = ttl_seconds
        self.clock = clock
        self._records = {}
        self._expiry = deque()  # (expires_at, elicitation_id), oldest first: one ttl for all
        self._vault = {}  # (subject, provider) -> credential; never returned to callers
        self._lock = threading.RLock()

    def __len__(self):
        with self._lock:
            return len(self._records)

    def start(self, session_id, subject, provider, on_complete=None):
        record = FlowRecord(elicitation_id=secrets.token_urlsafe(18),
                            nonce=secrets.token_urlsafe(18), session_id=session_id,
                            subject=subject, provider=provider,
                            expires_at=self.clock() + self.ttl, on_complete=on_complete)
        with self._lock:
            self._drop_expired()
            self._records[record.elicitation_id] = record
            self._expiry.append((record.expires_at, record.elicitation_id))
        return record

    def _drop_expired(self):
        now = self.clock()
        while self._expiry and self._expiry[0][0] < now:
            del self._records[self._expiry.popleft()[1]]

    def get(self, elicitation_id):
        with self._lock:
            return self._records.get(elicitation_id)

    def usable(self, elicitation_id):
        """The record behind a consent page, or FlowError saying why there is none."""
        with self._lock:
            record = self._records.get(elicitation_id)
        if record is None:
            raise FlowError("enlace desconocido")
        if record.status == "retired":
            raise FlowError("este enlace se anuló: rechazaste o cancelaste en tu cliente")
        if record.status != "pending":
            raise FlowError("este enlace ya se usó")
        if self.clock() > record.expires_at:
            raise FlowError("este enlace caducó")
        return record

    def retire(self, elicitation_id):
        """The user declined or cancelled: this link must never complete anything later."""
        with self._lock:
            record = self._records.get(elicitation_id)
            if record is not None and record.status == "pending":
                record.status, record.on_complete = "retired", None

    def complete(self, elicitation_id, nonce, provider, allowed=True):
        """Consume the record once. On consent the credential is stored here, never handed out;
        then the session that started the flow is told (`on_complete`, from any thread)."""
        with self._lock:
            record = self.usable(elicitation_id)
            if not secrets.compare_digest(record.nonce.encode(), (nonce or "").encode()):
                raise FlowError("el estado no coincide (¿enlace manipulado?)")
            if record.provider != provider:
                raise FlowError("el proveedor no coincide")
            record.status = "completed" if allowed else "denied"
            if allowed:
                self._vault[(record.subject, provider)] = secrets.token_urlsafe(32)
            told, record.on_complete = record.on_complete, None  # the flow let go of its session
        if told is not None:
            told(record.elicitation_id)
        return record

    def pending_for(self, session_id):
        """Does the session `session_id` have a flow still pending (not expired)?"""
        now = self.clock()
        with self._lock:
            return any(r.session_id == session_id and r.status == "pending" and
                       r.expires_at >= now for r in self._records.values())

    def is_configured(self, subject, provider):
        with self._lock:
            return (subject, provider) in self._vault
