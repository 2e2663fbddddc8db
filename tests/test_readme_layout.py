"""The README is the learner's, short; instructors and maintainers get their own guides.

- README.md (Spanish, learners): fits two screens; near the top, the two commands that set
  everything up on a fresh machine (`python3 code/main.py`, `make test`) beside `tools/lab.py`;
  the course map; how to hand in. It links PROFESORADO.md and MAINTAINERS.md.
- PROFESORADO.md (Spanish, instructors: grading, Gradescope, editions, class set-up, the timing
  rule): instructor-only, never in the student edition (editions/common.py); its contents are
  checked in tests/instructor/test_instructors_guide.py.
- MAINTAINERS.md (English: `make test`, the layout, `code/`, benchmarks, the client recipes): its
  layout table names every top-level entry, so a newcomer can read the top level against it.
"""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
TEACHERS = REPO / "PROFESORADO.md"
MAINTAINERS = REPO / "MAINTAINERS.md"
SCREENS = 100  # two screens of a learner's terminal or browser
INSTRUCTORS_SECTION = "## Para el profesorado"  # the one README section the student edition drops
MAINTAINERS_WORDS = ("make bench", "make stress", "make mutants", "cachegrind", "issue ",
                     "Gradescope:", "profesorado)", "reference/", "checks/hidden",
                     "--batch", "autograder")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from editions.common import INSTRUCTOR_ONLY, matches  # noqa: E402


def sections(text):
    """{heading: body} of a guide's second-level sections ("" for what comes before)."""
    parts = re.split(r"(?m)^(## .+)$", text)
    return {"": parts[0], **dict(zip(parts[1::2], parts[2::2], strict=True))}


def top_level_entries():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    return {name.split("/", 1)[0] for name in files if (REPO / name).exists()}


def layout_table():
    section = sections(MAINTAINERS.read_text(encoding="utf-8"))["## What is here"]
    named = set()
    for row in re.findall(r"^\| (.+?) \|", section, re.M):
        named.update(name.rstrip("/") for name in re.findall(r"`([^`]+)`", row))
    return named


# -- the README, for learners -----------------------------------------------------------------
def test_the_readme_fits_two_screens():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= SCREENS, len(lines)


def test_the_two_set_up_commands_and_the_lab_are_the_readmes_first_block():
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first and text.index(first[0]) < len(text) // 4, "near the top"
    commands = [line.split("#")[0].strip() for line in first[1].splitlines() if line.strip()]
    assert commands == ["python3 code/main.py", "python3 tools/lab.py", "make test"]


def test_the_readme_links_the_instructors_and_the_maintainers_guides():
    text = README.read_text(encoding="utf-8")
    found = sections(text)
    assert "`MAINTAINERS.md`" in found["## Para quien mantiene el curso"]
    assert MAINTAINERS.is_file()
    if TEACHERS.is_file():  # the instructors' source
        assert "`PROFESORADO.md`" in found[INSTRUCTORS_SECTION]
    else:  # the student edition: no instructors' guide, so no section and no link to it
        assert INSTRUCTORS_SECTION not in found and "PROFESORADO.md" not in text


def test_the_readme_holds_no_instructor_or_maintainer_material():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert [word for word in MAINTAINERS_WORDS if word in text] == []


def test_the_readme_says_how_to_hand_in_every_file_the_notebooks_write():
    hand_in = sections(README.read_text(encoding="utf-8"))["## Cómo entregar"]
    assert "lessons/soluciones" in hand_in and ".zip" in hand_in and ".ipynb" in hand_in
    written = set()
    for notebook in sorted((REPO / "lessons").glob("[0-9][0-9]_*.ipynb")):
        written.update(re.findall(r"%%writefile soluciones/([\w.]+)",
                                  notebook.read_text(encoding="utf-8")))
    assert "ejercicio5.md" in written
    assert {name for name in written if f"`{name}`" not in hand_in} == set()


def test_what_learners_and_maintainers_read_names_no_file_only_instructors_have():
    shared = "".join(body for heading, body in sections(README.read_text("utf-8")).items()
                     if heading != INSTRUCTORS_SECTION) + MAINTAINERS.read_text("utf-8")
    named = set(re.findall(r"`([\w./-]+/[\w./-]+)`", shared))
    assert {name for name in named if matches(name, INSTRUCTOR_ONLY)} == set()
    assert matches("PROFESORADO.md", INSTRUCTOR_ONLY), "the instructors' guide stays theirs"


# -- the maintainers' guide ------------------------------------------------------------------
def test_the_layout_table_names_every_top_level_entry():
    assert top_level_entries() - layout_table() == set()


def test_the_layout_table_names_nothing_that_is_not_there():
    """(In the student edition, the instructor-only entries it names, PROFESORADO.md, are not.)"""
    assert {name for name in layout_table() if not (REPO / name).exists()
            and not matches(name, INSTRUCTOR_ONLY)} == set()


def test_the_folders_whose_material_left_the_guides_are_linked_from_the_layout_table():
    rows = {row.split(" | ")[0]: row for row in re.findall(
        r"^\| (.+) \|$", sections(MAINTAINERS.read_text("utf-8"))["## What is here"], re.M)}
    for folder in ("grader", "editions", "benchmarks"):
        assert f"`{folder}/README.md`" in rows[f"`{folder}/`"], folder
        assert (REPO / folder / "README.md").is_file(), folder


def test_the_maintainers_guide_says_how_long_make_test_takes():
    assert "minutes" in sections(MAINTAINERS.read_text(encoding="utf-8"))["## `make test`"]
