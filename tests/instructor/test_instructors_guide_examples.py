"""The instructors' guide (PROFESORADO.md, not in the student edition) follows the rules of
tests/notebooks/test_wire_examples.py: every JSON-RPC example in it names its revision and is
valid MCP at that revision."""

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = "PROFESORADO.md"
# the module below imports its neighbour notebook_helpers, which pytest puts on sys.path only
# when it collects tests/notebooks too (make test runs each group on its own)
if str(REPO / "tests" / "notebooks") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "notebooks"))
_spec = importlib.util.spec_from_file_location(
    "wire_examples", REPO / "tests" / "notebooks" / "test_wire_examples.py")
wire = sys.modules["wire_examples"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wire)


def test_the_instructors_guide_has_only_json_rpc_examples_that_name_a_valid_revision():
    text = (REPO / GUIDE).read_text(encoding="utf-8")
    assert wire.unmarked_examples([(GUIDE, text)]) == []
    for example in wire.marked(wire.blocks_in(text, GUIDE)):
        assert wire.check(example) >= 1, example.label
