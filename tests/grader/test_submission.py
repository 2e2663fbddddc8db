"""Reading submissions: notebooks, files, folders and zips, as data, with clear reports."""

import json
import os
import tracemalloc
import zipfile

import pytest

from grader.intake.submission import prepare


def notebook(path, *cells):
    nb = {"cells": [{"cell_type": kind, "metadata": {}, "source": source}
                    for kind, source in cells], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return str(path)


def test_notebook_cells_marked_with_writefile_become_solution_files(tmp_path):
    path = notebook(tmp_path / "a.ipynb",
                    ("code", "%%writefile soluciones/ejercicio2.py\nA = 2\n"),
                    ("code", ["%%writefile ejercicio3a.py\n", "A = 3\n"]),
                    ("code", "%%writefile otra/carpeta/ejercicio4.py\nA = 4\n"),
                    ("code", "print('no soy una solución')\n"),
                    ("markdown", "%%writefile soluciones/ejercicio2.py\nB = 0\n"))
    prepared = prepare(path)
    assert prepared.files == {"ejercicio2.py": "A = 2\n", "ejercicio3a.py": "A = 3\n",
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
    (tmp_path / "soluciones" / "ejercicio3b.py").write_text("B = 3\n")
    (tmp_path / "ejercicio2.py").write_text("B = 2\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "main.py").write_text("no = 1\n")
    prepared = prepare(str(tmp_path))
    assert prepared.files == {"ejercicio2.py": "B = 2\n", "ejercicio3b.py": "B = 3\n"}


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
    assert sorted(prepared.files) == ["ejercicio2.py", "ejercicio3a.py", "ejercicio3b.py",
                                      "ejercicio4.py", "reto.py"]


def test_a_fifo_submission_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "entrega")
    prepared = prepare(str(tmp_path / "entrega"))  # an open() would block here for ever
    assert prepared.files == {} and any("FIFO" in p for p in prepared.problems)


def test_special_files_and_links_inside_a_folder_are_never_opened(tmp_path):
    (tmp_path / "sol").mkdir()
    os.mkfifo(tmp_path / "sol" / "ejercicio2.py")
    os.symlink("/dev/zero", tmp_path / "sol" / "ejercicio3a.py")
    (tmp_path / "referencia").mkdir()
    (tmp_path / "referencia" / "ejercicio4.py").write_text("robada = 1\n")
    os.symlink(tmp_path / "referencia", tmp_path / "sol" / "soluciones")
    prepared = prepare(str(tmp_path / "sol"))
    assert prepared.files == {}
    text = " ".join(prepared.problems)
    assert "ejercicio2.py no es un archivo normal" in text
    assert "ejercicio3a.py es un enlace simbólico" in text
    assert "soluciones es un enlace simbólico" in text


def zipped(path, entries, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return bytearray(path.read_bytes())


@pytest.mark.parametrize("damage", ["encrypted", "bad-crc", "truncated", "not-a-zip"])
def test_a_damaged_archive_is_refused_with_a_reason(tmp_path, damage):
    path = tmp_path / "entrega.zip"
    data = zipped(path, {"soluciones/ejercicio2.py": "x = 1\n" * 500},
                  zipfile.ZIP_STORED if damage == "bad-crc" else zipfile.ZIP_DEFLATED)
    if damage == "encrypted":
        for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            data[data.index(signature) + offset] |= 0x01
    elif damage == "bad-crc":
        data[30 + len("soluciones/ejercicio2.py") + 5] ^= 0xFF  # stored bytes: CRC mismatch
    elif damage == "truncated":
        data = data[:len(data) // 2]
    else:
        data = bytearray(b"no soy un zip")
    path.write_bytes(bytes(data))
    prepared = prepare(str(path))
    assert prepared.files == {}
    assert any("dañado, cifrado o incompleto" in p for p in prepared.problems), prepared.problems


def test_a_notebook_nested_too_deep_gets_a_clear_report(tmp_path):
    path = tmp_path / "profundo.ipynb"
    path.write_text('{"cells": ' + "[" * 100000 + "]" * 100000 + "}")
    prepared = prepare(str(path))
    assert prepared.files == {} and any("no es un notebook válido" in p
                                        for p in prepared.problems)


def test_names_and_texts_from_a_submission_reach_the_problems_escaped(tmp_path):
    path = tmp_path / "entrega.zip"
    zipped(path, {"=HYPERLINK(1)\x1b[2J\n/ejercicio2.py": "x = 'año'\n".encode("latin-1")})
    problem = prepare(str(path)).problems[0]
    assert "\x1b" not in problem and "\n" not in problem
    assert problem.startswith("=HYPERLINK(1)\\x1b[2J\\n/ejercicio2.py: no está en UTF-8")


# -- names, totals and links ------------------------------------------------------------------
def test_an_entry_name_over_255_bytes_is_left_out_with_a_reason_and_the_rest_is_read(tmp_path):
    path = tmp_path / "entrega.zip"
    zipped(path, {"soluciones/ejercicio2.py": "A = 2\n", "soluciones/" + "ñ" * 200 + ".py": "B\n"})
    prepared = prepare(str(path))
    assert prepared.files == {"ejercicio2.py": "A = 2\n"}
    assert any("no puede ser el de un archivo de solución" in p for p in prepared.problems)


def test_a_folder_of_sparse_files_is_refused_by_apparent_size_without_reading_them(tmp_path):
    folder = tmp_path / "entrega"
    folder.mkdir()
    for number in range(1000):
        with open(folder / f"m{number:04}.py", "wb") as handle:
            handle.truncate(1 << 20)  # 1 MiB that takes no disk
    tracemalloc.start()
    prepared = prepare(str(folder))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert prepared.files == {}
    assert any("demasiado" in p and "16 MiB" in p for p in prepared.problems), prepared.problems
    assert peak < 24 << 20  # at most the first 16 MiB were read, never the 1,000 MiB


def test_more_than_200_solution_files_are_refused(tmp_path):
    folder = tmp_path / "entrega"
    folder.mkdir()
    for number in range(201):
        (folder / f"m{number:03}.py").write_text("x = 1\n")
    prepared = prepare(str(folder))
    assert prepared.files == {} and any("200 archivos" in p for p in prepared.problems)


def test_a_notebook_with_too_many_values_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "denso.ipynb"
    path.write_text('{"cells": [' + "[]," * 1_000_000 + "[]]}")  # 3 MiB, 60 MiB once parsed
    tracemalloc.start()
    prepared = prepare(str(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert prepared.files == {} and any("demasiados elementos" in p for p in prepared.problems)
    assert peak < 16 << 20


def test_a_hard_link_to_a_root_only_file_is_not_read_nor_echoed(tmp_path):
    secret = tmp_path / "solo-root.py"
    secret.write_text("raise RuntimeError('secreto-del-host')\n")
    os.chmod(secret, 0o600)
    (tmp_path / "entrega").mkdir()
    os.link(secret, tmp_path / "entrega" / "ejercicio2.py")
    prepared = prepare(str(tmp_path / "entrega"))
    assert prepared.files == {}
    assert any("más de un enlace duro" in p for p in prepared.problems), prepared.problems
    assert "secreto-del-host" not in " ".join(prepared.problems)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid needs root")
def test_a_file_owned_by_someone_else_than_the_submission_is_not_read(tmp_path):
    (tmp_path / "entrega").mkdir()
    (tmp_path / "entrega" / "ejercicio2.py").write_text("A = 2\n")
    (tmp_path / "entrega" / "ejercicio3a.py").write_text("A = 3\n")
    os.chown(tmp_path / "entrega" / "ejercicio3a.py", 4242, 4242)
    prepared = prepare(str(tmp_path / "entrega"))
    assert prepared.files == {"ejercicio2.py": "A = 2\n"}
    assert any("no es de quien debería" in p for p in prepared.problems)
