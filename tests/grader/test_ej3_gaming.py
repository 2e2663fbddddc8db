"""Exercise 3B cannot be gamed by behaving once or by spotting the grader's settings (issue 33),
graded in one batch beside the reference, which keeps full marks.

- `una_vez`: no owner check, no one-time state, no expiry, and once any of its servers has
  completed a flow (a marker in every shared place it can write: $HOME, the temp folder), it
  refuses everything. Every test of what must not happen ends with the user's own flow on the
  same server, so refusing is worth nothing there: it keeps at most half of 3B.
- `mira_los_ajustes`: no expiry, and in the expiry test (spotted by `--url-ttl` on its
  command line) it refuses everything. Every 3B server starts with the same arguments, so it
  refuses everywhere and scores 0.
- `nunca_canjea` (tests/grader/null_solutions.py, here too): every page and check, but the
  code is never exchanged and the copy only said: Nube de Copias, the grader's, has no copy,
  so it scores 0.
"""

import glob
import os
import secrets
import tempfile

import pytest
from mutants import REFERENCE
from null_solutions import never_exchanged

from grader import pool
from grading_points import FULL

pytestmark = pytest.mark.timeout(1200)
TOKEN = "ej3-una-vez-" + secrets.token_hex(6)
USABLE = "    return flow.user == user and time.monotonic() < flow.expires\n"
POP = '    flow_id = STATES.pop(page.query.get("state", ""), None)\n'
DONE = '    flow.status = "done"\n'
LEGITIMATE = "esta prueba solo cuenta si lo legítimo sigue funcionando"


def reference_flow():
    with open(os.path.join(REFERENCE, "ejercicio3b.py"), encoding="utf-8") as handle:
        return handle.read()


def changed(source, *pairs):
    for find, replace in pairs:
        assert source.count(find) == 1, find
        source = source.replace(find, replace)
    return source


def behaves_once():
    marks = repr([os.path.join(os.path.expanduser("~"), TOKEN),
                  os.path.join(tempfile.gettempdir(), TOKEN)])
    return "import os\n" + changed(
        reference_flow(),
        (USABLE, f"    if any(os.path.exists(m) for m in {marks}):  # refuse after a success\n"
                 "        return False\n"
                 "    return True  # no owner, no expiry\n"),
        (POP, '    flow_id = STATES.get(page.query.get("state", ""))  # never spent\n'),
        (DONE, f"    for mark in {marks}:\n"
               "        try:\n"
               "            open(mark, 'w').close()\n"
               "        except OSError:\n"
               "            pass\n"))


def spots_the_settings():
    return "import sys\n" + changed(
        reference_flow(),
        (USABLE, '    if "--url-ttl" in sys.argv:  # the expiry test: refuse everything there\n'
                 "        return False\n"
                 "    return flow.user == user  # no expiry anywhere else\n"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("trampas")
    jobs = {"reference": REFERENCE}
    for name, source in (("una_vez", behaves_once()), ("mira_los_ajustes", spots_the_settings()),
                         ("nunca_canjea", never_exchanged())):
        folder = base / name
        folder.mkdir()
        (folder / "ejercicio3b.py").write_text(source, encoding="utf-8")
        jobs[name] = str(folder)
    work = [{"path": path, "name": name, "budget": 240.0,
             "only": ["ejercicio3b"] if name != "reference" else []}
            for name, path in jobs.items()]
    try:
        yield {r["submission"]: r for r in pool.grade_all(work, workers=2)}
    finally:
        for mark in glob.glob(os.path.join(os.path.expanduser("~"), TOKEN)) + \
                glob.glob(os.path.join(tempfile.gettempdir(), TOKEN)):
            os.remove(mark)


def test_the_reference_keeps_full_marks_beside_them(graded):
    result = graded["reference"]
    assert result["score"] == result["max_score"], \
        {t["id"]: t["output"] for t in result["tests"] if t["score"] != t["max_score"]}


def test_behaving_once_keeps_at_most_half_of_3b(graded):
    result = graded["una_vez"]
    assert result["max_score"] == FULL["ejercicio3b"]
    assert result["score"] <= FULL["ejercicio3b"] / 2, result["score"]


def test_a_refusal_followed_by_no_legitimate_flow_scores_nothing(graded):
    refused = [t for t in graded["una_vez"]["tests"] if LEGITIMATE in t["output"]]
    assert all(t["score"] == 0 for t in refused)
    assert refused or any(t.get("status") == "failed" and "lo_imprescindible" in t["id"]
                          for t in graded["una_vez"]["tests"])  # no shared memory: severe


def test_spotting_the_expiry_test_by_its_arguments_scores_nothing(graded):
    assert graded["mira_los_ajustes"]["score"] == 0


def test_a_flow_that_never_exchanges_the_code_scores_nothing(graded):
    result = graded["nunca_canjea"]
    assert result["score"] == 0
    assert any("Nube de Copias no registró ninguna copia" in t["output"] for t in result["tests"])
