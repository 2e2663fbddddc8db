"""Roots: which folders the user allowed, whether a path is inside one, and those folders held.

A root arrives as a `file://` URI. Whether a path is inside is decided on *resolved real
paths*, compared component by component, so that none of the classic traps gets through:
percent-encoded `..`, symlinks that leave the root, a sibling that only shares a prefix
(`Notes` vs `Notes-evil`), other schemes, `file://host/...`, relative paths, NUL bytes and
text that is no valid path (lone surrogates, escapes that are not UTF-8). A path longer or
deeper than any real one is refused before anything resolves it (`bounded`: the work of
resolving grows with length times depth). A roots answer that is malformed in any way raises
RootError with a reason in Spanish, and nothing else.

Checking a path is not enough: a path is text, and between the check and the action anyone
who can write to the disk may rename a shared folder and put a link to another folder in its
place (during a form that stays open for minutes, say). That check-then-act gap is closed by
holding each root open: when the roots are accepted, `open()` opens every root folder as a
directory descriptor (dirfd.Folder), and every note operation starts from that descriptor
and goes down one name at a time without following links (place.py). Before each use,
`folder(root)` checks that the root's path still names the held folder (same device and
inode, no link at any level); a root that was moved or replaced is refused with its reason,
never followed. A root folder that does not exist yet is opened later by a walk from `/`
that never follows a link, so a link put meanwhile in place of a folder above it is refused.
A session also remembers, for each root URI, the real path it resolved to and the folder it
named the first time it was accepted (its pins), so the same URI answered again later
(2026-07-28 asks the roots on every request, and again on the retry after a form) cannot
quietly name another folder.
The descriptors are closed when the session replaces the RootSet, and at the end of each
2026-07-28 request.

A `RootSet` never changes its roots; when the client's roots change, the server builds a new
one and swaps it in between two tool runs, so no run sees half of each.

Deliberate simplifications: POSIX paths first (where Python has no `dir_fd`, see dirfd.py's
fallback); a root folder that does not exist yet is opened on first use; a session forgets
the oldest pins beyond MAX_PINS.
"""

from __future__ import annotations

import errno
import os
from collections import namedtuple
from urllib.parse import quote, unquote, urlsplit

from notes.dirfd import Folder

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the demo's start-up)
if TYPE_CHECKING:  # names only an editor or a type checker reads (annotations)
    from collections.abc import Iterable
    from typing import Any

MAX_PINS = 256  # root URIs a session remembers the folder of
MAX_ROOTS = 100  # roots in one answer: far above what a person shares
MAX_PATH_BYTES = 4096  # PATH_MAX on Linux: the system opens no longer path anyway
MAX_PATH_NAMES = 128   # names in one path (a root and the folders below it), far above use
MAX_URI_CHARS = 3 * MAX_PATH_BYTES + 64  # the longest path, every byte as %XX, and the scheme
REPLACED = ("la carpeta compartida {uri} ya no es la que aceptaste (la movieron, o en su lugar "
            "hay otra carpeta o un enlace): no la sigo. Si el cambio es tuyo, abre una sesión "
            "nueva y compártela otra vez")
MISSING = "la carpeta compartida {uri} no existe o no es una carpeta"
CLOSED = "estas roots ya no están en vigor (las reemplazaron otras)"


class RootError(ValueError):
    """A URI, path or roots answer that is malformed or outside the roots; its text says why."""


class MissingRoot(RootError):
    """A shared folder that is not there (yet): it holds no notes."""


def _is_text(value):
    """Text without lone surrogates (they are no characters, and no file name has them)."""
    return isinstance(value, str) and not any("\ud800" <= c <= "\udfff" for c in value)


def uri_to_path(uri):
    """Decode a `file://` URI (or an absolute path) into an absolute, unresolved path."""
    if not isinstance(uri, str) or not uri:
        raise RootError("se esperaba una URI file:// o una ruta absoluta")
    if len(uri) > MAX_URI_CHARS:
        raise RootError(f"la URI es demasiado larga (más de {MAX_URI_CHARS} caracteres)")
    if not _is_text(uri):
        raise RootError("la URI contiene caracteres que no son texto válido")
    if uri.lower().startswith("file:"):
        try:
            parts = urlsplit(uri)
        except ValueError:
            raise RootError("la URI file:// está mal formada") from None
        if parts.netloc not in ("", "localhost"):
            raise RootError(f"URI con host remoto ({parts.netloc!r}): "
                            "solo se aceptan archivos locales")
        if parts.query or parts.fragment:
            raise RootError("una URI de archivo no lleva ? ni #")
        try:
            path = unquote(parts.path, errors="strict")
        except UnicodeDecodeError:
            raise RootError("la URI tiene un escape %xx que no es UTF-8") from None
    elif "://" in uri or uri[:1] != "/":
        scheme = uri.split(":", 1)[0] if ":" in uri else ""
        reason = f"esquema {scheme!r} no permitido" if "://" in uri else "ruta relativa"
        raise RootError(f"{reason}: usa una URI file:// o una ruta absoluta")
    else:
        path = uri
    if "\x00" in path:
        raise RootError("la ruta contiene un byte NUL")
    if not path.startswith("/"):
        raise RootError("la ruta debe ser absoluta")
    return bounded(path)


def bounded(path):
    """`path` itself, or RootError when it is longer or deeper than any path the server
    handles (MAX_PATH_BYTES, MAX_PATH_NAMES).

    Every path that comes from outside passes here before anything resolves or walks it: the
    cost of resolving a path grows with its length times its depth, so an unbounded one (a
    3.8 MB URI of 1.9 million names fits in one frame) would hold the server for minutes."""
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise RootError(f"la ruta es demasiado larga (más de {MAX_PATH_BYTES} bytes)")
    if path.count("/") > MAX_PATH_NAMES:
        raise RootError(f"la ruta es demasiado profunda (más de {MAX_PATH_NAMES} carpetas)")
    return path


def real_path(uri):
    """The resolved real path a URI names (symlinks followed, `..` removed)."""
    path = uri_to_path(uri)
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        raise RootError("no pude resolver la ruta de la URI") from None


def path_to_uri(path):
    """The `file://` URI of an absolute path."""
    return "file://" + quote(path)


def is_within(path, folder):
    """True when `path` is `folder` itself or below it, comparing whole components."""
    return os.path.commonpath([path, folder]) == folder


class Root(namedtuple("Root", "uri name path")):
    """One shared folder: the client's `uri` and `name`, and its real `path` (resolved) when
    accepted."""

    __slots__ = ()


def _pin_key(root):
    return os.path.normpath(uri_to_path(root.uri))


class RootSet:
    """An immutable set of roots; `source` says where it came from (client, config).

    What a learner's code may ask: `roots` (the Root tuple), `contains(path)`,
    `root_of(path)`, `resolve(uri)`, `describe()` and `len()`. `open`, `folder` and `close`
    are the server's: they hold the folders open (see the module docstring).
    """

    def __init__(self, roots: Iterable[Root] = (), source: str = "client") -> None:
        self.roots = tuple(roots)
        self.source = source
        self._held = {}      # root path -> dirfd.Folder
        self._refused = {}   # root path -> why it is refused
        self._pins = None    # the session's {unresolved root path: [device, inode]}
        self._closed = False

    @classmethod
    def from_list_result(cls, result: dict[str, Any], source: str = "client") -> RootSet:
        """Build from a `roots/list` result; anything malformed raises RootError, only that."""
        entries = result.get("roots") if isinstance(result, dict) else None
        if not isinstance(entries, list):
            raise RootError("la respuesta a roots/list no trae una lista 'roots'")
        if len(entries) > MAX_ROOTS:
            raise RootError(f"la respuesta a roots/list trae más de {MAX_ROOTS} roots")
        roots = []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
                raise RootError("cada root necesita un campo 'uri' de texto")
            uri, name = entry["uri"], entry.get("name")
            if not uri.lower().startswith("file:"):
                raise RootError(f"las roots deben ser URIs file:// (llegó {uri!r})")
            if name is not None and not _is_text(name):
                raise RootError("el nombre de una root, si lo hay, debe ser texto")
            path = real_path(uri)
            roots.append(Root(uri, name or os.path.basename(path), path))
        return cls(roots, source)

    @classmethod
    def from_paths(cls, paths: Iterable[str], source: str = "config") -> RootSet:
        """Build from folder paths (the server's --root)."""
        return cls.from_list_result({"roots": [{"uri": path_to_uri(os.path.abspath(p))}
                                               for p in paths]}, source)

    def contains(self, path: str) -> bool:
        """Is this resolved path inside one of the roots (by whole components)?"""
        return any(is_within(path, root.path) for root in self.roots)

    def root_of(self, path: str) -> Root | None:
        """The first root whose folder holds this resolved path, or None."""
        return next((root for root in self.roots if is_within(path, root.path)), None)

    def resolve(self, uri: str) -> str:
        """The real path of `uri` when it lies inside a root; otherwise RootError."""
        path = real_path(uri)
        if not self.contains(path):
            raise RootError(f"{uri} está fuera de las roots permitidas: {self.describe()}")
        return path

    def intersect(self, other: RootSet) -> RootSet:
        """Keep only what both sets allow (used when the server also has a configured limit)."""
        kept = [r for r in self.roots if other.contains(r.path)]
        kept += [r for r in other.roots
                 if self.contains(r.path) and all(k.path != r.path for k in kept)]
        return RootSet(kept, f"{self.source}+{other.source}")

    def describe(self) -> str:
        """The roots' URIs, for messages."""
        return ", ".join(r.uri for r in self.roots) or "(ninguna)"

    # -- the folders, held open (the server's side) --------------------------------------------
    def pin_keys(self) -> list[str]:
        """The keys of this set's roots in a session's pins (what a 2026-07-28 state carries
        of them, so that its retry checks the same folders wherever it is served)."""
        return [_pin_key(root) for root in self.roots]

    def open(self, pins: dict[str, list[Any]] | None = None) -> RootSet:
        """Accept these roots: open every root folder now. Returns the RootSet itself.

        `pins` is the session's memory ({unresolved path: [real path, device, inode]}),
        updated here: a URI that resolved to another real path, or named another folder, when
        it was first accepted is refused.
        """
        self._pins = pins
        for root in self.roots:
            try:
                self._pin(root)
                self._open_one(root)
            except RootError:
                pass  # missing now: tried again on first use; refused: remembered
        return self

    def folder(self, root: Root) -> Folder:
        """The held folder of `root`, checked: RootError if it was moved or replaced."""
        if self._closed:
            raise RootError(CLOSED)
        if root.path in self._refused:
            raise RootError(self._refused[root.path])
        held = self._open_one(root)
        if not held.same_as(root.path):
            raise RootError(REPLACED.format(uri=root.uri))
        return held

    def refusals(self) -> list[str]:
        """Why some roots are refused (moved or replaced since first accepted)."""
        return list(self._refused.values())

    def close(self) -> None:
        """Close every held folder
; this RootSet refuses to act from now on."""
        self._closed = True
        held, self._held = self._held, {}
        for folder in held.values():
            folder.close()

    def _open_one(self, root):
        """The folder of `root`, held: opened (and pinned) the first time it is there.

        It is opened by a walk from `/` that never follows a link (dirfd.Folder.open), so a
        root that did not exist yet when it was accepted cannot be redirected later by a link
        put in place of a folder above it: that link is refused, for good."""
        if root.path in self._held:
            return self._held[root.path]
        try:
            folder = Folder.open(root.path)
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                raise RootError(f"no pude abrir la carpeta {root.uri}: el servidor tiene "
                                "demasiados archivos abiertos") from None
            if exc.errno == errno.ELOOP:  # a link where the accepted path had a folder
                self._refused[root.path] = REPLACED.format(uri=root.uri)
                raise RootError(self._refused[root.path]) from None
            raise MissingRoot(MISSING.format(uri=root.uri)) from None
        try:
            self._pin(root, folder.identity)
        except RootError:
            folder.close()
            raise
        self._held[root.path] = folder
        return folder

    def _pin(self, root, identity=None):
        """Check `root` against what its URI named when the session first accepted it (the
        real path it resolved to and, once opened, the folder) and remember it, the newest
        last. RootError (refused for good) when it names something else now.

        The real path matters for a root that did not exist when first accepted: at
        2026-07-28 every request resolves the URI again, and a link put since in place of a
        folder above it would resolve it elsewhere."""
        if self._pins is None:  # no session to remember for
            return
        key = _pin_key(root)
        path, *pinned = self._pins.get(key) or (root.path, None, None)
        if path != root.path or (identity is not None and pinned[0] is not None
                                 and tuple(pinned) != identity):
            self._refused[root.path] = REPLACED.format(uri=root.uri)
            raise RootError(self._refused[root.path])
        self._pins.pop(key, None)
        self._pins[key] = [path, *(identity or pinned)]
        while len(self._pins) > MAX_PINS:
            del self._pins[next(iter(self._pins))]

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    def __len__(self):
        return len(self.roots)

    def __repr__(self):
        return f"RootSet({[r.path for r in self.roots]!r}, source={self.source!r})"
