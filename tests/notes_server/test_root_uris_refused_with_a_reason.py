"""What roots.py refuses, and how: anything that is not a usable local absolute path or roots
answer raises RootError (never another exception) with a reason that names the problem. And
what a RootSet tells: which root holds a path, every root when a path is outside them all,
each root's name and where the set came from."""

import os

import pytest

from roots import RootError, RootSet, path_to_uri, uri_to_path
from sdk_driver import Answers, Roots, sdk_client
from shared.protocol import REVISIONS


@pytest.mark.parametrize("value", [None, 42, ["file:///tmp/x.md"], b"file:///tmp/x.md", ""],
                         ids=["none", "int", "list", "bytes", "empty"])
def test_a_uri_that_is_not_text_is_refused_as_a_root_error(value):
    with pytest.raises(RootError, match="se esperaba una URI file:// o una ruta absoluta"):
        uri_to_path(value)


def test_a_refused_scheme_is_named_in_the_reason():
    with pytest.raises(RootError, match="esquema 'http' no permitido"):
        uri_to_path("http://example.com:8080/Notas/x.md")


def test_text_with_a_scheme_separator_is_no_path_even_after_a_slash():
    with pytest.raises(RootError, match="esquema"):
        uri_to_path("/tmp/a://b.md")


def test_a_percent_escape_that_is_not_utf8_is_refused_with_a_reason():
    with pytest.raises(RootError, match="escape %xx que no es UTF-8"):
        uri_to_path("file:///tmp/nota%ff.md")


def test_a_file_uri_without_an_absolute_path_is_refused_as_not_absolute():
    with pytest.raises(RootError, match="absoluta"):
        uri_to_path("file:notas/x.md")


@pytest.mark.parametrize("result", [[], "roots", None, 42])
def test_a_roots_answer_that_is_not_an_object_is_refused_with_a_reason(result):
    with pytest.raises(RootError, match="no trae una lista 'roots'"):
        RootSet.from_list_result(result)


@pytest.mark.parametrize("entry", [{"name": "sin uri"}, {"uri": 42}, "file:///tmp"],
                         ids=["no-uri", "uri-not-text", "not-an-object"])
def test_a_root_without_a_text_uri_is_refused_with_a_reason(entry):
    with pytest.raises(RootError, match="cada root necesita un campo 'uri' de texto"):
        RootSet.from_list_result({"roots": [entry]})


def test_a_root_keeps_its_clients_name_or_else_its_folders(tmp_path):
    folder = os.path.realpath(tmp_path)
    roots = RootSet.from_list_result({"roots": [
        {"uri": f"file://{folder}", "name": "Mis notas"},
        {"uri": f"file://{folder}"},
        {"uri": f"file://{folder}", "name": None},
    ]})
    assert [r.name for r in roots.roots] == ["Mis notas", tmp_path.name, tmp_path.name]


def two_roots(tmp_path):
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    return RootSet.from_paths(folders), [os.path.realpath(f) for f in folders]


def test_root_of_names_the_root_that_holds_a_path_and_none_outside(tmp_path):
    roots, (a, b) = two_roots(tmp_path)
    assert roots.root_of(os.path.join(b, "sub", "x.md")).path == b
    assert roots.root_of(a).path == a
    assert roots.root_of(os.path.join(os.path.realpath(tmp_path), "c", "x.md")) is None


def test_a_path_outside_the_roots_is_refused_naming_every_root(tmp_path):
    roots, _ = two_roots(tmp_path)
    outside = path_to_uri(os.path.join(os.path.realpath(tmp_path), "c.md"))
    with pytest.raises(RootError) as refused:
        roots.resolve(outside)
    uris = [path_to_uri(os.path.abspath(tmp_path / name)) for name in ("a", "b")]
    assert str(refused.value).endswith(f"permitidas: {uris[0]}, {uris[1]}")


def test_a_root_set_says_where_it_came_from(tmp_path):
    folder = os.path.realpath(tmp_path)
    from_client = RootSet.from_list_result({"roots": [{"uri": f"file://{folder}"}]})
    from_config = RootSet.from_paths([folder])
    assert (from_client.source, from_config.source, RootSet().source) == \
        ("client", "config", "client")
    assert from_client.intersect(from_config).source == "client+config"


def test_no_roots_are_described_as_none():
    assert RootSet(source="none").describe() == "(ninguna)"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=REVISIONS)
async def test_a_uri_whose_escapes_are_not_utf8_writes_nothing(tree, trace, mode):
    before = tree.snapshot()
    async with sdk_client(trace=trace, mode=mode, roots=Roots(tree.notes),
                          answers=Answers()) as client:
        written = await client.call_tool("notes_write", {
            "uri": f"file://{tree.notes}/%FF%FE.md", "title": "Rara", "body": "x"})
        listed = await client.call_tool("notes_list", {})
    assert written.is_error
    assert tree.snapshot() == before
    assert "Rara" not in {n["title"] for n in listed.structured_content["notes"]}
