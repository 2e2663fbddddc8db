"""Exercise 3A, hidden tests: the same rules as the statement, on cases the public tables do
not show. Their texts carry none of their inputs (grader/checks/grading.py: `hidden=True`
drops what was received and expected; feedback says only that a case of the table fails).
Each table still mixes a case that must use URL mode, a case where only the version says no,
and a case where only the protocol or the capability says no.
"""

from grader.checks.ej3 import CAPABILITY, MANUAL, URL, Case, table
from grader.checks.grading import graded


@graded("ejercicio3a", 1, "versiones de dos componentes y números de varias cifras", hidden=True,
        severe=CAPABILITY)
def test_short_and_long_version_numbers(lab, grade):
    table(lab, grade, [
        Case("1.24", "2025-11-25", "form+url", URL),
        Case("1.23", "2025-11-25", "form+url", MANUAL),
        Case("10.0.0", "2026-07-28", "form+url", URL),
        Case("1.22.9", "2025-11-25", "form+url", MANUAL),
        Case("1.30.2", "2025-11-25", "{}", MANUAL),
        Case("2.3.0.1", "2025-11-25", "form+url", MANUAL),
        Case("2.3.0xyz", "2025-11-25", "form+url", MANUAL),
    ], hidden=True)


@graded("ejercicio3a", 1, "versiones preliminares de otras versiones", hidden=True,
        severe=CAPABILITY)
def test_other_prereleases(lab, grade):
    table(lab, grade, [
        Case("2.0.0rc2", "2026-07-28", "form+url", MANUAL),
        Case("2.0.0", "2026-07-28", "url", URL),
        Case("1.23.2rc1", "2025-11-25", "form+url", URL),
        Case("1.23.1b2", "2025-11-25", "form+url", MANUAL),
        Case("2.1.0a1", "2026-07-28", "form+url", URL),
        Case("2.1.0a1", "2026-07-28", "form", MANUAL),
        Case("2.3.0b", "2025-11-25", "form+url", MANUAL),
        Case("2.3.0.dev1", "2025-11-25", "form+url", MANUAL),
        Case("2.3.0-beta", "2025-11-25", "form+url", MANUAL),
    ], hidden=True)


@graded("ejercicio3a", 1, "otras revisiones del protocolo y otras formas de declarar la "
        "capacidad", hidden=True, severe=CAPABILITY)
def test_other_revisions_and_declarations(lab, grade):
    table(lab, grade, [
        Case("2.3.0", "2025-03-26", "form+url", MANUAL),
        Case("2.3.0", "2024-11-05", "form+url", MANUAL),
        Case("2.3.0", "2025-11-25", "url", URL),
        Case("1.23.0", "2025-11-25", "url", MANUAL),
        Case("2.3.0", "2026-07-28", "{}", MANUAL),
        Case("2.3.0", "2025-11-25", "url:true", MANUAL),
        Case("2.3.0", "2026-07-28", "url:null", MANUAL),
    ], hidden=True)
