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


# -- the README is the learner's ----------------------------------------------------------------
README = REPO / "README.md"
INSTRUCTORS = ("## Ejercicios y corrección", "## Para el profesorado")  # not in the student's
MAINTAINERS_WORDS = ("make bench", "make stress", "make mutants", "cachegrind", "issue ",
                     "Gradescope:", "profesorado)")


def sections(text):
    """{heading: body} of the README's second-level sections ("" for what comes before)."""
    parts = re.split(r"(?m)^(## .+)$", text)
    return {"": parts[0], **dict(zip(parts[1::2], parts[2::2], strict=True))}


def learner_part():
    """What a learner reads through: the README up to its layout table («Qué hay aquí»)."""
    return README.read_text(encoding="utf-8").split("## Qué hay aquí")[0]


def test_the_folders_whose_material_left_the_readme_are_linked_from_the_layout_table():
    rows = {row.split(" | ")[0]: row for row in re.findall(
        r"^\| (.+) \|$", sections(README.read_text("utf-8"))["## Qué hay aquí"], re.M)}
    for folder in ("grader", "editions", "benchmarks"):
        assert f"`{folder}/README.md`" in rows[f"`{folder}/`"], folder
        assert (REPO / folder / "README.md").is_file(), folder


def test_the_learners_part_of_the_readme_holds_no_maintainer_material():
    text = " ".join(learner_part().split())
    assert [word for word in MAINTAINERS_WORDS if word in text] == []


def test_what_learners_read_names_no_file_only_instructors_have():
    import sys

    sys.path.insert(0, str(REPO))
    from editions.common import INSTRUCTOR_ONLY, matches

    shared = "".join(body for heading, body in sections(README.read_text("utf-8")).items()
                     if not heading.startswith(INSTRUCTORS))
    named = set(re.findall(r"`([\w./-]+/[\w./-]+)`", shared))
    assert {name for name in named if matches(name, INSTRUCTOR_ONLY)} == set()


def test_the_readme_says_how_to_hand_in_and_how_long_make_test_takes():
    found = sections(README.read_text(encoding="utf-8"))
    hand_in = found["## Cómo entregar"]
    assert "lessons/soluciones" in hand_in and ".zip" in hand_in and ".ipynb" in hand_in
    assert "minutos" in found["## Las pruebas del curso: `make test`"]
