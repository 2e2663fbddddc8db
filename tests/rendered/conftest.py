"""The rendered edition, built once for tests/rendered as `make rendered` builds it: from the
student edition (editions/release/build.py makes it in a temporary folder; in the student edition it
is the repository itself), with .venv's Python (nbclient, nbconvert, ipykernel)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from rendered_helpers import REPO, require

EDITIONS = REPO / "editions"


@dataclass
class Rendered:
    out: Path
    course: Path
    log: str


@pytest.fixture(scope="session")
def rendered(tmp_path_factory) -> Rendered:
    if shutil.which("npm") is None:
        require("npm is missing: the widget renderer comes from the npm registry")
    work = tmp_path_factory.mktemp("rendered")
    course = REPO
    if (EDITIONS / "release" / "build.py").exists():
        proc = subprocess.run([sys.executable, str(EDITIONS / "release" / "build.py"), "--out",
                               str(work / "release")], capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        course = work / "release" / "student"
    out = work / "site"
    proc = subprocess.run([sys.executable, str(EDITIONS / "rendered" / "build.py"), "--from",
                           str(course), "--out", str(out)], capture_output=True, text=True,
                          cwd=REPO)
    if proc.returncode != 0:
        pytest.fail(f"editions/rendered/build.py exited {proc.returncode}:\n"
                    f"{(proc.stdout + proc.stderr)[-6000:]}", pytrace=False)
    return Rendered(out, course, proc.stdout + proc.stderr)
