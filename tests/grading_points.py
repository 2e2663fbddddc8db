"""The points of each graded exercise, public and hidden: the one place the tests read them.

grader/README.md's Points table, the notebooks' «Qué se califica» and README.md say the same;
a change of points changes this file and those texts (the tests that assert totals import
these numbers instead of repeating them).
"""

FULL = {"ejercicio2": 41, "ejercicio3a": 8, "ejercicio3b": 24, "ejercicio4": 13}
PUBLIC = {"ejercicio2": 37, "ejercicio3a": 5, "ejercicio3b": 19, "ejercicio4": 10}
TOTAL = sum(FULL.values())
PUBLIC_TOTAL = sum(PUBLIC.values())
CHALLENGE = "reto"  # the optional challenge: graded apart, never part of TOTAL
CHALLENGE_FULL, CHALLENGE_PUBLIC = 39, 29
# every optional exercise (graded apart, never part of TOTAL): exercise 3B's 2026-07-28 part too
OPTIONAL_FULL = {"ejercicio3b_2026": 8, CHALLENGE: CHALLENGE_FULL}
OPTIONAL_PUBLIC = {"ejercicio3b_2026": 7, CHALLENGE: CHALLENGE_PUBLIC}
