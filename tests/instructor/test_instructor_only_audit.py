"""The instructor_only mark is held by what a test reads (tests/reference_audit.py).

Each test builds a small instructors' source in a temporary folder (the audit plugin, the
editions' list of what is instructor-only, a `grader.paths.REFERENCE_DIR` constant and a
reference solution), writes one shipped test file into it and runs pytest there in a child
process, as `make test` would run it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
READS = {
    "a constant": "open(SOLUTION).read()",
    "a helper": "helpers.read_solution()",
    "a symlink": "link = tmp_path / 'x.py'\n"
                 "    link.symlink_to(SOLUTION)\n"
                 "    link.read_text()",
    "a process it starts": "subprocess.run([sys.executable, '-c', 'pass', '--solution=' + "
                           "SOLUTION], check=True)",
    "a relative path": "os.chdir(os.path.dirname(REFERENCE_DIR))\n"
                       "    open('reference/soluciones/ejercicio4.py').read()",
}


@pytest.fixture
def source(tmp_path):
    """A small instructors' source: the audit, what is instructor-only, a reference."""
    root = tmp_path / "curso"
    for name in ("tests/conftest.py", "tests/reference_audit.py", "editions/__init__.py",
                 "editions/common.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    files = {
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = tests .\n"
                      "addopts = -p no:cacheprovider\n",
        "grader/__init__.py": "",
        "grader/paths.py": "import os\n"
                           "REFERENCE_DIR = os.path.join(os.path.dirname(__file__), 'reference')\n",
        "grader/reference/soluciones/ejercicio4.py": "x = 1\n",
        "tests/helpers.py": "import os\nfrom grader.paths import REFERENCE_DIR\n"
                            "def read_solution():\n"
                            "    with open(os.path.join(REFERENCE_DIR, 'soluciones',"
                            " 'ejercicio4.py')) as f:\n"
                            "        return f.read()\n",
        "tests/grader/catalogue.py": "SECRET = 1\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def run(root, name, body):
    """Write tests/notebooks/<name> and run it; {test name: outcome}, and pytest's output."""
    header = ("import os, subprocess, sys\nimport pytest\nimport helpers\n"
              "from grader.paths import REFERENCE_DIR\n"
              "SOLUTION = os.path.join(REFERENCE_DIR, 'soluciones', 'ejercicio4.py')\n\n")
    path = root / "tests" / "notebooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + textwrap.dedent(body))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:randomly",
                           str(path.relative_to(root))], cwd=root, capture_output=True,
                          text=True, timeout=120)
    outcomes = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and "::" in rest:
            outcomes[rest.split("::")[1].split(" ")[0]] = word
    return outcomes, proc.stdout + proc.stderr


def bodies_reading(reads):
    return "".join(f"def test_reads_through_{i}(tmp_path):\n    {read}\n\n"
                   for i, read in enumerate(reads))


def test_an_unmarked_test_that_reads_the_reference_fails_whatever_spells_the_path(source):
    body = bodies_reading(READS.values()) + "def test_reads_nothing():\n    assert True\n"
    outcomes, output = run(source, "test_unmarked.py", body)
    expected = {f"test_reads_through_{i}": "FAILED" for i in range(len(READS))}
    assert outcomes == {**expected, "test_reads_nothing": "PASSED"}, output
    assert "open: grader/reference/soluciones/ejercicio4.py" in output
    assert "subprocess.Popen: grader/reference/soluciones/ejercicio4.py" in output
    assert 'pytestmark = pytest.mark.instructor_only("what it needs")' in output


def test_a_marked_module_reads_the_reference_and_passes(source):
    body = 'pytestmark = pytest.mark.instructor_only("reads the reference")\n\n' + \
        bodies_reading(READS.values())
    outcomes, output = run(source, "test_marked.py", body)
    assert outcomes == {f"test_reads_through_{i}": "PASSED" for i in range(len(READS))}, output


def test_a_mark_on_one_test_is_refused_because_the_edition_leaves_out_whole_files(source):
    body = ("@pytest.mark.instructor_only('reads the reference')\n"
            "def test_marked_alone():\n    open(SOLUTION).read()\n")
    outcomes, output = run(source, "test_one_marked.py", body)
    assert outcomes == {"test_marked_alone": "ERROR"}, output
    assert "the instructor_only mark goes on the module" in output


def test_importing_an_instructor_only_helper_fails_the_collection(source):
    body = ("sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'grader'))\n"
            "import catalogue\n\ndef test_uses_it():\n    assert catalogue.SECRET\n")
    _, output = run(source, "test_imports.py", body)
    assert "importing tests/notebooks/test_imports.py reads what the student edition leaves " \
           "out" in output
    assert "tests/grader/catalogue.py" in output


def test_the_editions_leak_check_may_read_the_reference(source):
    body = ("from editions import common\n\ndef test_builds_a_site(tmp_path):\n"
            "    lines, windows, names = common.secrets()\n")
    outcomes, output = run(source, "test_leak_check.py", body)
    assert outcomes == {"test_builds_a_site": "PASSED"}, output


def test_without_a_reference_the_audit_is_off(source):
    shutil.rmtree(source / "grader" / "reference")
    body = ("def test_tries_it():\n    with pytest.raises(FileNotFoundError):\n"
            "        open(SOLUTION)\n")
    outcomes, output = run(source, "test_student.py", body)
    assert outcomes == {"test_tries_it": "PASSED"}, output
