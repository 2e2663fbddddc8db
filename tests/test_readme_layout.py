"""The README's layout table («Qué hay aquí») names every top-level entry of the repository,
so a newcomer can read the top level against it."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def top_level_entries():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    return {name.split("/", 1)[0] for name in files if (REPO / name).exists()}


def layout_table():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Qué hay aquí", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in re.findall(r"^\| (.+?) \|", section, re.M):
        named.update(name.rstrip("/") for name in re.findall(r"`([^`]+)`", row))
    return named


def test_the_layout_table_names_every_top_level_entry():
    assert top_level_entries() - layout_table() == set()


def test_the_layout_table_names_nothing_that_is_not_there():
    assert {name for name in layout_table() if not (REPO / name).exists()} == set()
