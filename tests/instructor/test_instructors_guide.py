"""PROFESORADO.md, the instructors' guide (Spanish; instructor-only, like this folder): how to
give the lesson as a class part and a lab, how the times are computed (its rates are the clock's:
tests/notebooks/test_lesson_clock.py), where the notebooks run, grading (its table of points:
tests/grader/test_points.py) and the editions, Gradescope included."""

import re

from conftest import REPO

GUIDE = REPO / "PROFESORADO.md"


def sections(text):
    parts = re.split(r"(?m)^(## .+)$", text)
    return {"": parts[0], **dict(zip(parts[1::2], parts[2::2], strict=True))}


def test_the_instructors_guide_covers_class_timing_set_up_grading_and_editions():
    found = sections(GUIDE.read_text(encoding="utf-8"))
    for heading in ("## Cómo dar la lección: la clase y el laboratorio",
                    "## Cómo se calculan los tiempos", "## Dónde corren los cuadernos",
                    "## Ejercicios y corrección", "## Las ediciones"):
        assert heading in found, heading
    assert "Gradescope" in found["## Las ediciones"]
    assert "soluciones/ejercicio5.md" in found["## Ejercicios y corrección"]
    assert "README.md" in found[""] and "MAINTAINERS.md" in found[""]


def test_the_instructors_guide_never_reaches_a_learner():
    import sys

    sys.path.insert(0, str(REPO))
    from editions.common import INSTRUCTOR_ONLY, matches

    assert matches(GUIDE.name, INSTRUCTOR_ONLY)
