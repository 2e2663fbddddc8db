"""`make test`'s runner (tools/run_tests.py) on the grader's hostile suite, the one file that
groups share out in parts (`-k` on its sandbox mode): each of its tests runs exactly once.
Here because the suite is the instructors' own (tests/grader/); the runner's other guarantees
are tested in tests/test_make_test_groups.py, which ships."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import run_tests  # noqa: E402


def collected(path, *options):
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *options, path], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    return {line for line in run.stdout.splitlines() if "::" in line}


def test_the_parts_of_a_shared_file_run_each_of_its_tests_once():
    groups, _ = run_tests.plan()
    shared = {}
    for group in groups:
        if group.part:
            for path in group.paths:
                shared.setdefault(path, []).append(group.part)
    for path, parts in shared.items():
        whole = collected(path)
        pieces = [collected(path, "-k", part) for part in parts]
        assert whole and all(pieces), (path, parts)
        assert sum(len(piece) for piece in pieces) == len(whole), (path, parts)
        assert set().union(*pieces) == whole, (path, parts)
