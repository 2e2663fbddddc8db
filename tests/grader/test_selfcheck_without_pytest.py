"""A learner's self-check with the sandbox (only the public tests asked for, what `ui.revisar`
runs) runs its checks without pytest, as the in-process host does (grader/checks/direct.py);
official grading keeps pytest. Both give the same verdicts, scores and feedback.
"""

import os

import pytest
from mutants import MUTANTS

from grader import runner
from grader.checks import direct
from grader.hosts import kinds
from grader.hosts.sandbox import detect_mode

BUG = next(m for m in MUTANTS if m.name == "compara_versiones_como_texto")  # loses a 3A test


@pytest.fixture(scope="module", autouse=True)
def sandbox_here():
    if not kinds.sandbox_possible():
        pytest.skip("the sandbox runs on Linux only")
    if detect_mode() != "root" and os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: needs the full sandbox; mode here: {detect_mode()}")


@pytest.fixture
def runs(monkeypatch):
    """Which runner ran the checks of each grading: "pytest" or "direct", in order."""
    used = []
    for owner, name, label in ((runner, "run_with_pytest", "pytest"), (direct, "run", "direct")):
        original = getattr(owner, name)

        def spy(*args, _original=original, _label=label, **kwargs):
            used.append(_label)
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, spy)
    return used


def grade(folder, tests):
    return runner.grade(folder, "soluciones", ["ejercicio3a"], tests=tests, host="sandbox")


def test_a_sandbox_self_check_runs_without_pytest_and_official_grading_with_it(runs, tmp_path):
    folder = BUG.write(str(tmp_path / "soluciones"))
    grade(folder, "public")
    grade(folder, "all")
    assert runs == ["direct", "pytest"]


def test_a_sandbox_self_check_gives_the_same_verdicts_without_pytest_as_with_it(
        runs, tmp_path, monkeypatch):
    folder = BUG.write(str(tmp_path / "soluciones"))
    without = grade(folder, "public")
    monkeypatch.setattr(kinds.SandboxKind, "self_check_without_pytest", False)
    with_pytest = grade(folder, "public")
    assert runs == ["direct", "pytest"]
    assert without["score"] < without["max_score"]  # the bug loses a test: feedback to compare

    def verdicts(result):
        return [(t["id"], t["name"], t["score"], t["max_score"], t["status"], t["output"])
                for t in result["tests"]]

    assert verdicts(without) == verdicts(with_pytest)
    for key in ("score", "max_score", "suite", "protections", "notice", "problems",
                "internal_errors", "public_output"):
        assert without[key] == with_pytest[key], key
