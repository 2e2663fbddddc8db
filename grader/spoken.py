"""Numbers as a learner reads them, in Spanish: with a decimal comma (9,5 de 19 puntos).

`spoken(value)` is for every text a learner sees: the header of the text report, each test's
line and feedback, the Gradescope texts. The machine formats keep numbers as numbers: JSON
numbers, and CSV cells with a decimal point (what spreadsheets and scripts read).

Deliberate simplifications: as many digits as Python's `g` format shows (at most six
significant); no thousands separator (no score reaches a thousand).
"""


def spoken(value) -> str:
    """`value` as a Spanish text shows it ("9,5", "19", "−" signs as Python writes them);
    "?" for what is not a finite number. Never raises."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return "?"
    if number != number or abs(number) == float("inf"):
        return "?"
    return f"{number:g}".replace(".", ",")
