"""editions/lite/bytecode.py on CPython: the bytecode the build adds to the site's wheels and
standard-library zip (in the build it runs inside Pyodide; the functions are the same)."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

from litesite import REPO

TAG = sys.implementation.cache_tag


def load_bytecode():
    spec = importlib.util.spec_from_file_location("lite_bytecode",
                                                  REPO / "editions" / "lite" / "bytecode.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bytecode = load_bytecode()


def make_zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


def make_wheel(path: Path, files: dict[str, str]) -> Path:
    """A wheel of ``files`` plus its dist-info, RECORD listing every file and itself last."""
    files = {**files, "demo-1.0.dist-info/METADATA": "Name: demo\nVersion: 1.0\n"}
    record = [bytecode.record_line(name, text.encode()) for name, text in files.items()]
    record.append("demo-1.0.dist-info/RECORD,,")
    return make_zip(path, {**files, "demo-1.0.dist-info/RECORD": "\n".join(record) + "\n"})


def import_x(folder_or_zip: Path, module: str) -> str:
    """What ``module.X`` is when imported from ``folder_or_zip`` by a fresh interpreter."""
    code = f"import sys; sys.path.insert(0, {str(folder_or_zip)!r}); import {module}; " \
           f"print({module}.X)"
    return subprocess.run([sys.executable, "-I", "-S", "-B", "-c", code], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_a_wheel_gets_each_modules_pyc_under_pycache_listed_in_record_with_its_hash(tmp_path):
    source = make_wheel(tmp_path / "in.whl", {"demo/__init__.py": "", "demo/mod.py": "X = 1\n"})
    assert bytecode.add_to_wheel(str(source), str(tmp_path / "out.whl"), "/site") == 2
    with zipfile.ZipFile(tmp_path / "out.whl") as z:
        names = set(z.namelist())
        record = dict(line.split(",", 1) for line in
                      z.read("demo-1.0.dist-info/RECORD").decode().splitlines())
        for pyc in (f"demo/__pycache__/__init__.{TAG}.pyc", f"demo/__pycache__/mod.{TAG}.pyc"):
            assert pyc in names
            data = z.read(pyc)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert record[pyc] == f"sha256={digest.decode()},{len(data)}"
        assert {"demo/__init__.py", "demo/mod.py"} <= names  # the sources stay
        assert record["demo-1.0.dist-info/RECORD"] == ","


def test_the_stdlib_zip_gets_name_pyc_beside_name_py(tmp_path):
    source = make_zip(tmp_path / "in.zip", {"alpha.py": "X = 1\n", "pkg/__init__.py": "",
                                            "pkg/beta.py": "X = 2\n", "data.txt": "x"})
    assert bytecode.add_to_stdlib_zip(str(source), str(tmp_path / "out.zip"), "/lib/x.zip") == 3
    with zipfile.ZipFile(tmp_path / "out.zip") as z:
        assert sorted(z.namelist()) == ["alpha.py", "alpha.pyc", "data.txt", "pkg/__init__.py",
                                        "pkg/__init__.pyc", "pkg/beta.py", "pkg/beta.pyc"]


def test_a_file_that_does_not_compile_keeps_its_source_alone(tmp_path):
    source = make_zip(tmp_path / "in.zip", {"old.py": "print 'python 2'\n", "ok.py": "X = 1\n"})
    assert bytecode.add_to_stdlib_zip(str(source), str(tmp_path / "out.zip"), "/lib/x.zip") == 1
    with zipfile.ZipFile(tmp_path / "out.zip") as z:
        assert sorted(z.namelist()) == ["ok.py", "ok.pyc", "old.py"]
        assert z.read("old.py") == b"print 'python 2'\n"


def test_the_pyc_is_unchecked_hash_based_and_imports_without_reading_its_source(tmp_path):
    source = b"X = 'from the bytecode'\n"
    pyc = bytecode.pyc(source, "/lib/x.zip/mod.py")
    assert pyc[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(pyc[4:8], "little") == 0b01  # PEP 552: hash-based, unchecked
    assert pyc[8:16] == importlib.util.source_hash(source)
    # Python takes it even beside a source that no longer matches: it never checks.
    stale = "X = 'from the source'\n"
    with zipfile.ZipFile(tmp_path / "lib.zip", "w") as z:
        z.writestr("mod.py", stale)
        z.writestr("mod.pyc", pyc)
    assert import_x(tmp_path / "lib.zip", "mod") == "from the bytecode"
    package = tmp_path / "site" / "__pycache__"
    package.mkdir(parents=True)
    (package.parent / "mod.py").write_text(stale)
    (package / f"mod.{TAG}.pyc").write_bytes(pyc)
    assert import_x(tmp_path / "site", "mod") == "from the bytecode"
