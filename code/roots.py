"""Roots: which folders the user allowed, and whether a path is inside one of them.

A root arrives as a `file://` URI. Every decision is made on *resolved real paths*, compared
component by component, so that none of the classic traps gets through: percent-encoded `..`,
symlinks that leave the root, a sibling that only shares a prefix (`Notes` vs `Notes-evil`),
other schemes, `file://host/...`, relative paths and NUL bytes.

A `RootSet` never changes; when the client's roots change, the server builds a new one and
swaps it in with a single assignment, so no call can see half of each.

Deliberate simplifications: POSIX paths only, and a check-then-act gap (a symlink swapped in
between the check and the operation) is narrowed by re-checking under the server's boundary
lock, not closed with `openat`-style directory descriptors.
"""

import os
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit


class RootError(ValueError):
    """A URI or path that is malformed or outside the roots."""


def uri_to_path(uri):
    """Decode a `file://` URI (or an absolute path) into an absolute, unresolved path."""
    if not isinstance(uri, str) or not uri:
        raise RootError("se esperaba una URI file:// o una ruta absoluta")
    if uri.lower().startswith("file:"):
        parts = urlsplit(uri)
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
    return path


def real_path(uri):
    """The resolved real path a URI names (symlinks followed, `..` removed)."""
    return os.path.realpath(uri_to_path(uri))


def path_to_uri(path):
    return "file://" + quote(path)


def is_within(path, folder):
    """True when `path` is `folder` itself or below it, comparing whole components."""
    return os.path.commonpath([path, folder]) == folder


@dataclass(frozen=True)
class Root:
    uri: str
    name: str
    path: str  # resolved real path of the folder


class RootSet:
    """An immutable set of roots; `source` says where it came from (client, config)."""

    def __init__(self, roots=(), source="client"):
        self.roots = tuple(roots)
        self.source = source

    @classmethod
    def from_list_result(cls, result, source="client"):
        """Build from a `roots/list` result; malformed entries raise RootError."""
        entries = result.get("roots") if isinstance(result, dict) else None
        if not isinstance(entries, list):
            raise RootError("la respuesta a roots/list no trae una lista 'roots'")
        roots = []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
                raise RootError("cada root necesita un campo 'uri' de texto")
            uri = entry["uri"]
            if not uri.lower().startswith("file:"):
                raise RootError(f"las roots deben ser URIs file:// (llegó {uri!r})")
            name = entry.get("name") if isinstance(entry.get("name"), str) else ""
            path = real_path(uri)
            roots.append(Root(uri, name or os.path.basename(path), path))
        return cls(roots, source)

    @classmethod
    def from_paths(cls, paths, source="config"):
        return cls.from_list_result({"roots": [{"uri": path_to_uri(os.path.abspath(p))}
                                               for p in paths]}, source)

    def contains(self, path):
        """Is this resolved path inside one of the roots?"""
        return any(is_within(path, root.path) for root in self.roots)

    def root_of(self, path):
        return next((root for root in self.roots if is_within(path, root.path)), None)

    def resolve(self, uri):
        """The real path of `uri` when it lies inside a root; otherwise RootError."""
        path = real_path(uri)
        if not self.contains(path):
            raise RootError(f"{uri} está fuera de las roots permitidas: {self.describe()}")
        return path

    def intersect(self, other):
        """Keep only what both sets allow (used when the server also has a configured limit)."""
        kept = [r for r in self.roots if other.contains(r.path)]
        kept += [r for r in other.roots
                 if self.contains(r.path) and all(k.path != r.path for k in kept)]
        return RootSet(kept, f"{self.source}+{other.source}")

    def describe(self):
        return ", ".join(r.uri for r in self.roots) or "(ninguna)"

    def __len__(self):
        return len(self.roots)

    def __repr__(self):
        return f"RootSet({[r.path for r in self.roots]!r}, source={self.source!r})"
