"""Exercise 3A, public tests: the learner's URL-mode guard (ejercicio3a.py, alone in the
server), observed through the server's own `notes_setup`.

One point per table: the server runs with a simulated SDK version, the client speaks a
protocol revision and declares some elicitation capability, and `notes_setup` must use URL
mode or give the manual fallback as the statement's rules say. Every table mixes cases that
must use URL mode with cases where only the version, or only the protocol or the capability,
says no: a guard that always answers the same, or looks at only one of the three, scores
nothing. A table with a client that did not declare elicitation.url checks too that the guard
never says yes to it (severe: «lo imprescindible»).
"""

from grader.checks.ej3 import CAPABILITY, MANUAL, URL, Case, table
from grader.checks.grading import graded

GOOD = "SDK ≥ 1.23.1, protocolo 2025-11-25 y elicitation.url declarado"
GOOD_2026 = "SDK ≥ 2.0.0, protocolo 2026-07-28 y elicitation.url declarado"
NO_URL = "el cliente no declaró elicitation.url (un {} o solo form es solo formulario)"


@graded("ejercicio3a", 1, "usa el modo URL a partir del SDK 1.23.1, no antes",
        severe=CAPABILITY)
def test_url_mode_from_sdk_1_23_1(lab, grade):
    table(lab, grade, [
        Case("1.23.0", "2025-11-25", "form+url", MANUAL,
             "1.23.0 es anterior a 1.23.1 (la primera versión que negocia 2025-11-25)"),
        Case("1.23.1", "2025-11-25", "form+url", URL, GOOD),
        Case("2.3.0", "2025-11-25", "{}", MANUAL, NO_URL),
    ])


@graded("ejercicio3a", 1, "compara las versiones como números, no como texto",
        severe=CAPABILITY)
def test_versions_compare_as_numbers(lab, grade):
    table(lab, grade, [
        Case("1.9.0", "2025-11-25", "form+url", MANUAL,
             "1.9.0 es anterior a 1.23.1 (9 < 23: las versiones se comparan como números)"),
        Case("1.100.0", "2025-11-25", "form+url", URL,
             "1.100.0 es posterior a 1.23.1 (100 > 23: las versiones se comparan como números)"),
        Case("1.23.1", "2025-11-25", "form", MANUAL, NO_URL),
    ])


@graded("ejercicio3a", 1, "sin versión, con una ilegible o con una versión preliminar "
        "anterior: alternativa manual")
def test_missing_unreadable_or_prerelease_versions_mean_no(lab, grade):
    table(lab, grade, [
        Case("", "2025-11-25", "form+url", MANUAL,
             "sin versión del SDK no se sabe si lo admite: la respuesta es no"),
        Case("desconocida", "2025-11-25", "form+url", MANUAL,
             "una versión ilegible significa no"),
        Case("1.23.1rc1", "2025-11-25", "form+url", MANUAL,
             "1.23.1rc1 es una versión preliminar, anterior a la 1.23.1 final"),
        Case("2.3.0", "2025-11-25", "form+url", URL, GOOD),
        Case("2.3.0", "2025-06-18", "form+url", MANUAL,
             "2025-06-18 no tiene modo URL"),
    ])


@graded("ejercicio3a", 1, "tiene en cuenta la revisión del protocolo (2025-06-18 no; "
        "2026-07-28 solo con SDK 2.x)")
def test_the_protocol_revision_counts(lab, grade):
    table(lab, grade, [
        Case("2.3.0", "2025-06-18", "form+url", MANUAL, "2025-06-18 no tiene modo URL"),
        Case("2.3.0", "2026-07-28", "form+url", URL, GOOD_2026),
        Case("1.30.0", "2026-07-28", "form+url", MANUAL,
             "2026-07-28 necesita un SDK ≥ 2.0.0 (la primera que la habla) y 1.30.0 es 1.x"),
        Case("1.30.0", "2025-11-25", "form+url", URL, GOOD),
        Case("2.0.0b1", "2026-07-28", "form+url", MANUAL,
             "2.0.0b1 es una versión preliminar, anterior a la 2.0.0 que exige 2026-07-28"),
    ])


@graded("ejercicio3a", 1, "solo usa el modo URL si el cliente declaró elicitation.url",
        severe=CAPABILITY)
def test_client_must_declare_url_elicitation(lab, grade):
    table(lab, grade, [
        Case("2.3.0", "2025-11-25", "form+url", URL, GOOD),
        Case("2.3.0", "2025-11-25", "{}", MANUAL, NO_URL),
        Case("2.3.0", "2026-07-28", "url", URL, GOOD_2026),
        Case("2.3.0", "2026-07-28", "form", MANUAL, NO_URL),
        Case("2.3.0", "2026-07-28", "ninguna", MANUAL, "el cliente no declaró elicitation"),
        Case("1.23.0", "2025-11-25", "form+url", MANUAL,
             "1.23.0 es anterior a 1.23.1 (la primera versión que negocia 2025-11-25)"),
    ])
