"""`ui.revisar` on a laptop: the portable self-check host, forced here on Linux as macOS and
Windows get it (`--host auto` there; GRADER_HOST=portable here), and the host revisar falls back
to when the sandbox cannot start. The in-browser host (JupyterLite) is checked on CPython too:
its runner calls the grader in this interpreter."""

from __future__ import annotations

import json
import subprocess

import pytest
from laptop_helpers import EXERCISES, import_mcp_ui, write_starters

from grading_points import PUBLIC

ui = import_mcp_ui()
OFF_ON_A_LAPTOP = {ui.review.PROTECTIONS[key] for key in (
    "unprivileged_uid", "private_filesystem", "network_namespace", "rlimits")}


@pytest.fixture(scope="module")
def starters(tmp_path_factory):
    return write_starters(tmp_path_factory.mktemp("alumno") / "soluciones")


@pytest.fixture
def portable(monkeypatch):
    monkeypatch.setenv("GRADER_HOST", "portable")
    monkeypatch.setattr(ui.review, "runner", ui.review.grader_process)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_forced_portable_revisar_scores_the_starter_zero(exercise, starters, portable):
    review = ui.revisar(exercise, folder=starters)
    assert review.problem is None, review.problem
    assert review.mode == "portable"
    assert review.max_score > 0 and review.score == 0, review.summary()
    graded = [t for t in review.tests if t["max_score"]]  # not the zero-point «lo imprescindible»
    assert graded and all(t["status"] != "passed" for t in graded)


def test_portable_revisar_says_it_is_a_self_check_and_which_protections_are_off(starters,
                                                                                portable):
    review = ui.revisar("ejercicio4", folder=starters)
    assert review.self_check
    assert "Autoevaluación en modo local (sin aislamiento)" in review.notice
    assert "la nota la pone el corrector oficial" in review.notice
    assert OFF_ON_A_LAPTOP <= set(review.off)
    shown = review.to_html()
    assert "Lo que el corrector oficial hace y aquí no" in shown and "le corta la red" in shown
    assert "Autoevaluación en modo local (sin aislamiento)" in review.to_text()


@pytest.fixture
def no_helper(monkeypatch):
    """The grader's command line reaches subprocess.run (faked below): no helper started ahead
    (lessons/mcp_ui/warm.py; tests/grader/test_selfcheck_loop.py checks it)."""
    ui.review.warm.discard()
    monkeypatch.setattr(ui.review.warm, "prepare", lambda: None)


def test_revisar_falls_back_to_portable_when_the_sandbox_cannot_start(starters, monkeypatch,
                                                                       no_helper):
    """Exit 3 from `--host auto` (the sandbox did not start): revisar grades again on the
    portable host and says why."""
    real_run = subprocess.run
    hosts = []

    def run(argv, **kwargs):
        host = argv[argv.index("--host") + 1]
        hosts.append(host)
        if host == "auto":
            broken = {"score": 0, "max_score": 5, "tests": [], "notice": "",
                      "protections": {"mode": "root"},
                      "output": "Problema: no se pudo crear el entorno de corrección"}
            return subprocess.CompletedProcess(argv, 3, json.dumps(broken) + "\n", "boom\n")
        return real_run(argv, **kwargs)

    monkeypatch.delenv("GRADER_HOST", raising=False)
    monkeypatch.setattr(ui.review, "runner", ui.review.grader_process)
    monkeypatch.setattr(ui.review.subprocess, "run", run)
    review = ui.revisar("ejercicio4", folder=starters)
    assert hosts == ["auto", "portable"]
    assert review.mode == "portable" and review.score == 0
    assert review.max_score == PUBLIC["ejercicio4"]
    assert any("no pudo arrancar" in note for note in review.notes)
    assert "no pudo arrancar" in review.to_html()


def test_revisar_keeps_the_sandbox_verdict_when_the_sandbox_ran(starters, monkeypatch,
                                                                no_helper):
    calls = []
    monkeypatch.setattr(ui.review.subprocess, "run", lambda argv, **kw: calls.append(argv) or
                        subprocess.CompletedProcess(argv, 1, json.dumps(
                            {"score": 1, "max_score": 5, "tests": [], "notice": "",
                             "protections": {"mode": "root", "network_namespace": True}})
                            + "\n", ""))
    monkeypatch.setattr(ui.review, "runner", ui.review.grader_process)
    review = ui.revisar("ejercicio4", folder=starters)
    assert len(calls) == 1 and calls[0][calls[0].index("--host") + 1] == "auto"
    assert calls[0][calls[0].index("--tests") + 1] == "public"
    assert review.mode == "root" and not review.self_check and review.off == []


def test_in_browser_runner_grades_in_this_interpreter_and_labels_it(starters):
    """What JupyterLite runs (grader.selfcheck, in-process host), here on CPython."""
    stdout, _ = ui.review.in_this_interpreter("ejercicio4", starters, 60)
    review = ui.Review.from_output("ejercicio4", stdout)
    assert review.mode == "inprocess" and review.score == 0
    assert review.max_score == PUBLIC["ejercicio4"]
    assert "Autoevaluación en el navegador" in review.notice
    assert "en esta misma página del navegador" in review.where()
    assert "corta una llamada que tarda demasiado" in review.off
