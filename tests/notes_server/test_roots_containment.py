"""Roots containment: the named traps, then generated paths against an independent resolver,
then the end-to-end property: no URI ever makes the server change a file outside the roots."""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client import Client
from roots import RootError, RootSet, path_to_uri, uri_to_path
from server import Config, NotesServer
from session import start_in_process


@pytest.fixture
def house(tmp_path):
    """Notas/ (the root) with sub/, a symlink leaving it and one staying inside; siblings
    Notas-evil/ and Notas-privadas/ that share its prefix."""
    base = Path(os.path.realpath(tmp_path))
    for folder in ("Notas/sub", "Notas-evil", "Notas-privadas"):
        (base / folder).mkdir(parents=True)
    (base / "Notas-privadas" / "diario.md").write_text("title: Diario\n\nsecreto")
    (base / "Notas" / "salida").symlink_to(base / "Notas-privadas")
    (base / "Notas" / "atajo").symlink_to(base / "Notas" / "sub")
    (base / "Notas" / "enlace.md").symlink_to(base / "Notas-privadas" / "diario.md")
    return base


def roots_of(house):
    return RootSet.from_paths([house / "Notas"])


@pytest.mark.parametrize("relative", ["x.md", "sub/x.md", "atajo/x.md", "sub/../x.md", "."])
def test_paths_inside_the_root_are_allowed(house, relative):
    uri = path_to_uri(str(house / "Notas" / relative))
    assert roots_of(house).contains(roots_of(house).resolve(uri))


@pytest.mark.parametrize("trap", [
    "Notas-evil/x.md",                       # a sibling that shares the prefix
    "Notas/../Notas-privadas/x.md",          # plain ..
    "Notas/%2e%2e/Notas-privadas/x.md",      # percent-encoded ..
    "Notas/%2E%2E/Notas-privadas/x.md",
    "Notas/salida/diario.md",                # a symlink that leaves the root
    "Notas/enlace.md",                       # a file symlink pointing outside
    "Notas/sub/../../Notas-evil/x.md",
])
def test_named_traps_are_outside(house, trap):
    uri = "file://" + str(house) + "/" + trap
    with pytest.raises(RootError):
        roots_of(house).resolve(uri)


@pytest.mark.parametrize("uri, reason", [
    ("http://example.com/Notas/x.md", "esquema"),
    ("file://otra-maquina/Notas/x.md", "host remoto"),
    ("Notas/x.md", "relativa"),
    ("./x.md", "relativa"),
    ("file:///tmp/a%00b.md", "NUL"),
    ("/tmp/a\x00b.md", "NUL"),
    ("", "URI"),
    ("file:///tmp/x.md?token=1", r"\?"),
])
def test_malformed_uris_are_refused_with_a_reason(uri, reason):
    with pytest.raises(RootError, match=reason):
        uri_to_path(uri)


def test_file_localhost_is_a_local_file(house):
    uri = "file://localhost" + str(house / "Notas" / "x.md")
    assert roots_of(house).resolve(uri) == str(house / "Notas" / "x.md")


def test_a_plain_absolute_path_is_accepted(house):
    assert roots_of(house).resolve(str(house / "Notas" / "x.md")).endswith("/Notas/x.md")


def test_roots_list_with_a_non_file_uri_is_refused():
    with pytest.raises(RootError, match="file://"):
        RootSet.from_list_result({"roots": [{"uri": "https://example.com/notas"}]})


def test_an_empty_root_set_contains_nothing(house):
    assert not RootSet().contains(str(house / "Notas" / "x.md"))


def test_intersection_keeps_only_what_both_allow(house):
    client = RootSet.from_paths([house / "Notas", house / "Notas-evil"])
    config = RootSet.from_paths([house / "Notas" / "sub", house / "Notas-evil"])
    both = client.intersect(config)
    assert sorted(r.path for r in both.roots) == sorted(
        [str(house / "Notas-evil"), str(house / "Notas" / "sub")])


# -- generated paths -------------------------------------------------------------------------
COMPONENTS = ["sub", "..", ".", "salida", "atajo", "Notas", "Notas-evil", "Notas-privadas",
              "x.md", "%2e%2e", "%2E%2e", "..%2f..", "%2f", "a%00b", "enlace.md", "~", ""]


def resolve_by_hand(path):
    """An independent resolver: walk components, follow symlinks with readlink."""
    parts = path.split("/")
    done = []
    for _ in range(200):
        if not parts:
            return "/" + "/".join(done)
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            done = done[:-1]
            continue
        candidate = "/" + "/".join([*done, part])
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            done = [] if target.startswith("/") else done
            parts = target.split("/") + parts
        else:
            done.append(part)
    raise AssertionError("symlink loop")


def expected_inside(uri, root):
    path = uri_to_path_by_hand(uri)
    if path is None:
        return None
    resolved = resolve_by_hand(path)
    return resolved == root or resolved.startswith(root + "/")


def uri_to_path_by_hand(uri):
    if uri.startswith("file://"):
        rest = uri[len("file://"):]
        rest = rest[len("localhost"):] if rest.startswith("localhost/") else rest
        out, i = "", 0
        while i < len(rest):  # percent-decoding written out, byte by byte
            if rest[i] == "%" and len(rest) > i + 2:
                out += chr(int(rest[i + 1:i + 3], 16))
                i += 3
            else:
                out += rest[i]
                i += 1
        path = out
    else:
        path = uri
    return None if "\x00" in path else path


uris = st.tuples(st.sampled_from(["file://", "file://localhost", ""]),
                 st.lists(st.sampled_from(COMPONENTS), max_size=7))


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uris)
def test_containment_agrees_with_an_independent_resolver(house, generated):
    prefix, parts = generated
    uri = prefix + str(house / "Notas") + "/" + "/".join(parts)
    root = str(house / "Notas")
    expected = expected_inside(uri, root)
    try:
        inside = roots_of(house).contains(roots_of(house).resolve(uri))
    except RootError:
        inside = False if expected is not None else None
    assert inside == expected, uri


def snapshot_outside(base, root):
    return {str(p): (p.read_bytes() if p.is_file() else None)
            for p in base.rglob("*") if not str(p).startswith(root + "/") and str(p) != root}


@settings(max_examples=200, deadline=None)
@given(uris, st.sampled_from(["notes_write", "notes_delete_by_path"]))
def test_no_generated_uri_changes_anything_outside_the_roots(generated, action):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(os.path.realpath(tmp))
        for folder in ("Notas/sub", "Notas-evil", "Notas-privadas"):
            (base / folder).mkdir(parents=True)
        (base / "Notas" / "salida").symlink_to(base / "Notas-privadas")
        (base / "Notas-privadas" / "x.md").write_text("title: Fuera\n\nno tocar")
        root = str(base / "Notas")
        before = snapshot_outside(base, root)
        prefix, parts = generated
        uri = prefix + root + "/" + "/".join(parts)
        server = NotesServer(Config())
        with Client(*start_in_process(server), roots=[root]).connect() as client:
            client.call_tool("notes_write", {"uri": uri, "title": "Generada", "body": "x"})
            if action == "notes_delete_by_path":
                client.call_tool("notes_delete", {"title": "Fuera"})
        server.close()
        assert snapshot_outside(base, root) == before, uri
