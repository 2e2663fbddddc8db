"""The points of each graded exercise, public and hidden: the one place the tests read them.

grader/README.md's Points table, the notebooks' «Qué se califica» and README.md say the same;
a change of points changes this file and those texts (the tests that assert totals import
these numbers instead of repeating them).
"""

FULL = {"ejercicio2": 41, "ejercicio3": 38, "ejercicio4": 13}
PUBLIC = {"ejercicio2": 37, "ejercicio3": 29, "ejercicio4": 10}
TOTAL = sum(FULL.values())
PUBLIC_TOTAL = sum(PUBLIC.values())
CHALLENGE = "reto"  # the optional challenge: graded apart, never part of TOTAL
CHALLENGE_FULL, CHALLENGE_PUBLIC = 39, 29
