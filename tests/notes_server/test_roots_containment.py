"""Roots containment: the named traps, then generated paths against an independent resolver,
then the end-to-end property: no URI ever makes the server change a file outside the roots.

The generated paths lean on purpose toward what breaks containment: siblings that share the
root's prefix, `..` (plain and percent-encoded) and symlinks that leave the root. Both
properties run without Hypothesis' example database, so every run must find a bug by its own
generation, not by replaying a saved failure.
"""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from client.sync_client import Client
from roots import RootError, RootSet, path_to_uri, uri_to_path
from server_support import serve_argv, spawn
from shared.protocol import REVISIONS


def build_house(base):
    """Notas/ (the root) with sub/ and a note inside; siblings Notas-evil/ and Notas-privadas/
    that share its prefix, each with a note; inside Notas/, symlinks that leave it (salida/ to
    Notas-privadas/, the relative prefijo/ to Notas-evil/, enlace.md to a note outside) and one
    that stays inside (atajo/ to sub/)."""
    for folder in ("Notas/sub", "Notas-evil", "Notas-privadas"):
        (base / folder).mkdir(parents=True)
    (base / "Notas" / "sub" / "dentro.md").write_text("title: Dentro\n\nse puede borrar")
    (base / "Notas-privadas" / "diario.md").write_text("title: Diario\n\nsecreto")
    (base / "Notas-evil" / "evil.md").write_text("title: Evil\n\nno tocar")
    (base / "Notas" / "salida").symlink_to(base / "Notas-privadas")
    (base / "Notas" / "prefijo").symlink_to(Path("..") / "Notas-evil")
    (base / "Notas" / "atajo").symlink_to(base / "Notas" / "sub")
    (base / "Notas" / "enlace.md").symlink_to(base / "Notas-privadas" / "diario.md")
    return base


@pytest.fixture
def house(tmp_path):
    return build_house(Path(os.path.realpath(tmp_path)))


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
SIBLINGS = ["Notas-evil", "Notas-privadas", "Notas%2Devil", "Notas.bak", "Nota", "Notas-"]
TRAVERSAL = ["..", "%2e%2e", "%2E%2e", ".%2e", "..%2f..", "%2f", ".", ""]
LINKS = ["salida", "prefijo", "atajo", "enlace.md"]
PLAIN = ["Notas", "sub", "x.md", "dentro.md", "a%00b", "~", "Notas%2Fsub"]

# The first component decides which folder the path starts in: the root, a sibling sharing its
# prefix, or one of the root's symlinks. Each family is drawn as often as the others.
FIRST = st.one_of(st.just("Notas"), st.sampled_from(SIBLINGS),
                  st.sampled_from([f"Notas/{link}" for link in LINKS]))
COMPONENT = st.one_of(st.sampled_from(TRAVERSAL), st.sampled_from(SIBLINGS),
                      st.sampled_from(LINKS), st.sampled_from(PLAIN))
uris = st.tuples(st.sampled_from(["file://", "file://localhost", ""]), FIRST,
                 st.lists(COMPONENT, max_size=5))


def make_uri(base, generated):
    scheme, first, parts = generated
    return scheme + "/".join([str(base), first, *parts])


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


def inside_by_hand(resolved, root):
    return resolved == root or resolved.startswith(root + "/")


def expected_inside(uri, root):
    path = uri_to_path_by_hand(uri)
    if path is None:
        return None
    return inside_by_hand(resolve_by_hand(path), root)


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


@settings(max_examples=400, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uris)
def test_containment_agrees_with_an_independent_resolver(house, generated):
    uri = make_uri(house, generated)
    root = str(house / "Notas")
    expected = expected_inside(uri, root)
    try:
        inside = roots_of(house).contains(roots_of(house).resolve(uri))
    except RootError:
        inside = False if expected is not None else None
    assert inside == expected, uri


# -- end to end: the real server, both revisions ---------------------------------------------
class PicksTheFirstOption:
    """A user who accepts every form, choosing the first offered note and confirming."""

    def elicit(self, params):
        offered = params["requestedSchema"]["properties"]["note_id"]["oneOf"]
        return {"action": "accept", "content": {"note_id": offered[0]["const"], "confirm": True}}

    def open_url(self, url):
        raise AssertionError("no URL mode here")


@pytest.fixture(scope="module")
def clients():
    """One `serve` per revision for the whole property: each example brings its own folder
    and tells the client to share it."""
    opened = {}
    for protocol in REVISIONS:
        send, lines, close, _ = spawn(serve_argv())
        opened[protocol] = Client(send, lines, close, roots=[], user=PicksTheFirstOption(),
                                  protocol=protocol).connect()
    yield opened
    for client in opened.values():
        client.close()


# Each example builds a fresh folder and the server fsyncs every write: on tmpfs when there is
# one, that costs nothing.
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def snapshot(base):
    return {str(p): (p.read_bytes() if p.is_file() else None) for p in base.rglob("*")}


def outside(files, root):
    return {path: data for path, data in files.items()
            if not inside_by_hand(path, root)}


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uris, st.sampled_from(["nota.md", "x.md", "enlace.md", "diario.md"]),
       st.sampled_from(REVISIONS))
def test_no_generated_uri_changes_anything_outside_the_roots(clients, generated, name, protocol):
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as tmp:
        top = Path(os.path.realpath(tmp))
        base = build_house(top / "casa")
        root = str(base / "Notas")
        uri = make_uri(base, generated) + "/" + name
        target = uri_to_path_by_hand(uri)
        assume(target is None or inside_by_hand(resolve_by_hand(target), str(top)))
        before = outside(snapshot(top), root)
        client = clients[protocol]
        client.set_roots([root])
        client.call_tool("notes_write", {"uri": uri, "title": "Generada", "body": "x"})
        listed = client.call_tool("notes_list")["structuredContent"]["notes"]
        assert {n["title"] for n in listed} >= {"Dentro"}, listed
        for title in sorted({n["title"] for n in listed}):  # only notes it can list
            client.call_tool("notes_delete", {"title": title})
        assert outside(snapshot(top), root) == before, uri
