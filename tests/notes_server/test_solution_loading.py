"""How a solution file is run (extension.run_file): as the module `solution`, the way
`runpy.run_path` runs it, and with bytecode a grader's sandbox compiled beforehand only when
it was compiled from the very same source. Also the command line's one parser, which such a
sandbox builds before its servers fork."""

import hashlib
import marshal
import sys

import extension

SOURCE = b"""
import sys
from dataclasses import dataclass
from extension import Extension

extension = Extension()

@dataclass
class Nota:           # dataclasses look the module up in sys.modules while it runs
    titulo: str

SEEN = (sys.modules["solution"].__name__, sys.argv[0], __name__, __file__)
ORIGIN = "source"
"""


def write(tmp_path, source=SOURCE):
    path = tmp_path / "solucion.py"
    path.write_bytes(source)
    return str(path)


def test_a_solution_runs_as_the_module_solution_and_leaves_no_trace(tmp_path):
    path = write(tmp_path)
    before_argv, before_module = list(sys.argv), sys.modules.get("solution")
    namespace = extension.run_file(path)
    assert namespace["SEEN"] == ("solution", path, "solution", path)
    assert namespace["Nota"]("x").titulo == "x"
    assert sys.argv == before_argv and sys.modules.get("solution") is before_module


def test_a_file_that_fails_is_reported_and_the_others_still_load(tmp_path):
    (tmp_path / "a_roto.py").write_text("def f(:\n")
    (tmp_path / "b_bien.py").write_bytes(SOURCE)
    loaded = extension.load(str(tmp_path))
    assert loaded.files == ["b_bien.py"]
    assert loaded.errors["a_roto.py"].startswith("SyntaxError en la línea 1")
    assert "solution" not in sys.modules


def test_bytecode_compiled_beforehand_is_used_for_the_same_source(tmp_path, monkeypatch):
    path = write(tmp_path)
    other = compile(SOURCE.replace(b'ORIGIN = "source"', b'ORIGIN = "compiled"'), path, "exec",
                    dont_inherit=True)
    monkeypatch.setitem(extension.COMPILED, path,
                        (hashlib.sha256(SOURCE).digest(), marshal.dumps(other)))
    assert extension.run_file(path)["ORIGIN"] == "compiled"


def test_a_file_whose_source_changed_since_it_was_compiled_is_compiled_afresh(tmp_path,
                                                                                monkeypatch):
    path = write(tmp_path)
    stale = compile(b'ORIGIN = "stale"\n', path, "exec", dont_inherit=True)
    monkeypatch.setitem(extension.COMPILED, path,
                        (hashlib.sha256(b'ORIGIN = "stale"\n').digest(), marshal.dumps(stale)))
    assert extension.run_file(path)["ORIGIN"] == "source"


def test_a_solution_is_compiled_without_the_loaders_future_imports(tmp_path):
    # extension.py itself uses `from __future__ import annotations`; a solution must not
    path = write(tmp_path, b"def f(x: int): pass\nANNOTATION = f.__annotations__['x']\n")
    assert extension.run_file(path)["ANNOTATION"] is int


def test_the_command_line_is_parsed_by_one_parser_that_reads_the_sdk_default_each_time(
        monkeypatch):
    # a grader's sandbox builds the parser once, before its servers fork from it
    import main
    monkeypatch.delenv("NOTES_SDK_VERSION", raising=False)
    assert main.parse_args(["serve"]).sdk_version == main.SIMULATED_SDK_VERSION
    monkeypatch.setenv("NOTES_SDK_VERSION", "1.9.0")
    assert main.parse_args(["serve"]).sdk_version == "1.9.0"
    assert main.parse_args(["serve", "--sdk-version", "2.0.0"]).sdk_version == "2.0.0"
    assert main.parse_args(["serve", "--root", "a"]).root == ["a"]
    assert main.parse_args(["serve"]).root == []  # one parse's options never reach the next
    assert main.cached_parser() is main.cached_parser()
