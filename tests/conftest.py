"""Shared by every suite: the instructor_only audit (tests/reference_audit.py), in the
instructors' source only (where grader/reference/ exists)."""

import reference_audit


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{reference_audit.MARK}(why): the module needs what only the instructors' "
                   "source has (the reference, hidden tests, the grader's own tests); the "
                   "student edition leaves the file out")
    if (reference_audit.REPO / "grader" / "reference").is_dir():
        config.pluginmanager.register(reference_audit.ReferenceAudit(), "reference_audit")
