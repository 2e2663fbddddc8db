"""Reading submissions: notebooks, files, folders and zips, as data, with clear reports."""

import json
import os
import zipfile

import pytest

from grader.submission import prepare


def notebook(path, *cells):
    nb = {"cells": [{"cell_type": kind, "metadata": {}, "source": source}
                    for kind, source in cells], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return str(path)


def test_notebook_cells_marked_with_writefile_become_solution_files(tmp_path):
    path = notebook(tmp_path / "a.ipynb",
                    ("code", "%%writefile soluciones/ejercicio2.py\nA = 2\n"),
                    ("code", ["%%writefile ejercicio3.py\n", "A = 3\n"]),
                    ("code", "%%writefile otra/carpeta/ejercicio4.py\nA = 4\n"),
                    ("code", "print('no soy una solución')\n"),
                    ("markdown", "%%writefile soluciones/ejercicio2.py\nB = 0\n"))
    prepared = prepare(path)
    assert prepared.files == {"ejercicio2.py": "A = 2\n", "ejercicio3.py": "A = 3\n",
                              "ejercicio4.py": "A = 4\n"}


def test_the_last_cell_for_an_exercise_wins_and_the_report_says_so(tmp_path):
    path = notebook(tmp_path / "a.ipynb",
                    ("code", "%%writefile soluciones/ejercicio2.py\nprimera = 1\n"),
                    ("code", "%%writefile soluciones/ejercicio2.py\nsegunda = 2\n"))
    prepared = prepare(path)
    assert prepared.files == {"ejercicio2.py": "segunda = 2\n"}
    assert any("más de una vez" in p for p in prepared.problems)


def test_a_folder_gives_its_files_and_its_soluciones_folder(tmp_path):
    (tmp_path / "soluciones").mkdir()
    (tmp_path / "soluciones" / "ejercicio3.py").write_text("B = 3\n")
    (tmp_path / "ejercicio2.py").write_text("B = 2\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "main.py").write_text("no = 1\n")
    prepared = prepare(str(tmp_path))
    assert prepared.files == {"ejercicio2.py": "B = 2\n", "ejercicio3.py": "B = 3\n"}


def test_a_zip_is_read_like_the_folder_inside_it(tmp_path):
    path = tmp_path / "entrega.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("alumno/soluciones/ejercicio4.py", "C = 4\n")
    assert prepare(str(path)).files == {"ejercicio4.py": "C = 4\n"}


@pytest.mark.parametrize("entry", ["../../fuera.py", "/abs/ejercicio2.py"])
def test_a_zip_entry_leaving_the_archive_is_refused(tmp_path, entry):
    path = tmp_path / "entrega.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(entry, "x = 1\n")
    prepared = prepare(str(path))
    assert prepared.files == {}
    assert any("ruta peligrosa" in p for p in prepared.problems)
    assert not (tmp_path.parent / "fuera.py").exists()


def test_a_zip_bomb_is_not_unpacked(tmp_path):
    path = tmp_path / "bomba.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ejercicio2.py", b"#" * (64 << 20))
    assert os.path.getsize(path) < 1 << 20
    prepared = prepare(str(path))
    assert prepared.files == {} and any("demasiado grande" in p for p in prepared.problems)


def test_links_are_never_followed(tmp_path):
    (tmp_path / "sol").mkdir()
    os.symlink("/etc/passwd", tmp_path / "sol" / "ejercicio2.py")
    prepared = prepare(str(tmp_path / "sol"))
    assert prepared.files == {} and any("enlace simbólico" in p for p in prepared.problems)


def test_a_broken_notebook_gets_a_clear_report(tmp_path):
    path = tmp_path / "roto.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    prepared = prepare(str(path))
    assert prepared.files == {}
    assert any("no es un notebook válido" in p for p in prepared.problems)


def test_a_file_that_is_not_utf8_gets_a_clear_report(tmp_path):
    path = tmp_path / "ejercicio2.py"
    path.write_bytes("x = 'año'\n".encode("latin-1"))
    prepared = prepare(str(path))
    assert prepared.files == {} and any("UTF-8" in p for p in prepared.problems)


def test_the_reference_notebook_matches_the_reference_files():
    from grader.paths import REFERENCE_DIR
    prepared = prepare(os.path.join(REFERENCE_DIR, "solucion.ipynb"))
    for name, text in prepared.files.items():
        with open(os.path.join(REFERENCE_DIR, "soluciones", name), encoding="utf-8") as handle:
            assert handle.read() == text, f"run grader/reference/make_notebook.py ({name})"
    assert sorted(prepared.files) == ["ejercicio2.py", "ejercicio3.py", "ejercicio4.py"]
