"""Write grader/reference/solucion.ipynb from grader/reference/soluciones/*.py.

The notebook is the reference in the form learners hand in: one `%%writefile
soluciones/ejercicioN.py` cell per exercise (3A and 3B apart; 3B's file ends with its optional
2026-07-28 part, notebook 6), and one `%%writefile soluciones/reto.py` for the optional
challenge of notebook 6. Run `python grader/reference/make_notebook.py`
after editing a reference file; tests/grader checks that both forms agree.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOLUTIONS = ("ejercicio2", "ejercicio3a", "ejercicio3b", "ejercicio4", "reto")


def notebook():
    cells = [{"cell_type": "markdown", "metadata": {}, "id": "intro",
              "source": ["# Solución de referencia: ejercicios 2, 3A, 3B (con su parte "
                         "opcional) y 4, y el reto\n"]}]
    for name in SOLUTIONS:
        with open(os.path.join(HERE, "soluciones", f"{name}.py"), encoding="utf-8") as f:
            body = f.read()
        source = f"%%writefile soluciones/{name}.py\n" + body
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                      "id": name, "outputs": [],
                      "source": source.splitlines(keepends=True)})
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3",
                                                        "language": "python",
                                                        "name": "python3"},
                                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def main():
    with open(os.path.join(HERE, "solucion.ipynb"), "w", encoding="utf-8") as handle:
        json.dump(notebook(), handle, ensure_ascii=False, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
