"""Turn what a learner handed in into a folder of solution files, without running any of it.

Accepted: a notebook (.ipynb), a .py file, a folder (its own .py and .ipynb files, and those
in `soluciones/`), or a .zip of any of these. From a notebook only the cells that start with
`%%writefile <anything>/ejercicioN.py` (or `%%writefile ejercicioN.py`, N in 2, 3, 4) are
taken; the notebook is never executed. When the same file comes twice, the last one wins
(files before notebooks, in name order; cells in notebook order), and the report says so.

Everything is read as data, with caps (file size, zip entries and total size, no links, no
paths leaving the archive), and every problem becomes a Spanish sentence for the report.

Deliberate simplifications: only `%%writefile` cells are read (no `-a` append semantics
beyond taking the cell as the whole file); folders are read two levels deep at most.
"""

import json
import os
import re
import stat
import tempfile
import zipfile

MAX_FILE = 1 << 20          # one .py or one notebook cell
MAX_NOTEBOOK = 8 << 20
MAX_ZIP_ENTRIES = 200
MAX_ZIP_TOTAL = 16 << 20
WRITEFILE = re.compile(r"%%writefile\s+(?:-a\s+)?[\"']?(?:[^\s\"']*/)?(ejercicio[234]\.py)"
                       r"[\"']?\s*$")
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints", "__MACOSX"}


class Prepared:
    """The solution files (name -> text), where each came from, and what went wrong."""

    def __init__(self, name):
        self.name = name
        self.files = {}
        self.origin = {}
        self.problems = []

    def add(self, name, text, origin):
        if name in self.files and self.origin[name] != origin:
            self.problems.append(f"{name} aparece más de una vez; se usa la de {origin} "
                                 f"(no la de {self.origin[name]})")
        self.files[name] = text
        self.origin[name] = origin

    def write(self, folder):
        os.makedirs(folder, exist_ok=True)
        for name, text in self.files.items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(os.path.join(folder, name), 0o644)
        os.chmod(folder, 0o755)
        return folder


def prepare(path, name=None):
    """Read a submission at `path`; never raises for anything inside it."""
    prepared = Prepared(name or os.path.basename(os.path.normpath(path)) or path)
    try:
        if os.path.islink(path):
            prepared.problems.append("la entrega es un enlace simbólico; no se sigue")
        elif os.path.isdir(path):
            read_folder(prepared, path, path)
        elif not os.path.isfile(path):
            prepared.problems.append("no existe o no es un archivo ni una carpeta")
        elif path.endswith(".zip"):
            read_zip(prepared, path)
        else:
            read_file(prepared, path, os.path.basename(path))
    except (OSError, ValueError) as exc:
        prepared.problems.append(f"no se pudo leer la entrega ({type(exc).__name__})")
    if not prepared.files:
        prepared.problems.append("no encontré ninguna solución: se esperan ejercicio2.py, "
                                 "ejercicio3.py o ejercicio4.py, o un notebook con celdas "
                                 "%%writefile soluciones/ejercicioN.py")
    return prepared


def read_folder(prepared, folder, top, depth=0):
    entries = sorted(os.listdir(folder))
    files = [e for e in entries if os.path.isfile(os.path.join(folder, e))]
    ordered = [e for e in files if e.endswith(".py")] + [e for e in files
                                                         if e.endswith(".ipynb")]
    for entry in ordered:
        full = os.path.join(folder, entry)
        label = os.path.relpath(full, top)
        if os.path.islink(full):
            prepared.problems.append(f"{label} es un enlace simbólico; se ignora")
            continue
        read_file(prepared, full, label)
    for entry in entries:
        full = os.path.join(folder, entry)
        if entry.startswith(".") or entry in SKIP_DIRS or not os.path.isdir(full):
            continue
        if os.path.islink(full):
            prepared.problems.append(f"{os.path.relpath(full, top)}/ es un enlace simbólico; "
                                     "se ignora")
        elif (entry == "soluciones" and depth <= 1) or (depth == 0 and len(entries) == 1):
            read_folder(prepared, full, top, depth + 1)


def read_file(prepared, path, label):
    size = os.lstat(path).st_size
    if label.endswith(".ipynb"):
        if size > MAX_NOTEBOOK:
            prepared.problems.append(f"{label}: el notebook pesa demasiado "
                                     f"({size // 1024} KiB); se ignora")
            return
        with open(path, "rb") as handle:
            read_notebook(prepared, handle.read(), label)
    elif label.endswith(".py"):
        if size > MAX_FILE:
            prepared.problems.append(f"{label}: demasiado grande ({size // 1024} KiB); "
                                     "se ignora")
            return
        with open(path, "rb") as handle:
            text = decode(prepared, handle.read(), label)
        if text is not None:
            prepared.add(os.path.basename(label), text, label)
    else:
        prepared.problems.append(f"{label}: no es ni .py ni .ipynb ni .zip; se ignora")


def decode(prepared, data, label):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prepared.problems.append(f"{label}: no está en UTF-8 (byte {exc.start}); se ignora")
        return None


def read_notebook(prepared, data, label):
    text = decode(prepared, data, label)
    if text is None:
        return
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
        if not isinstance(cells, list):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        prepared.problems.append(f"{label}: no es un notebook válido (JSON roto o sin "
                                 "'cells'); ábrelo y guárdalo de nuevo en Jupyter")
        return
    found = 0
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            continue
        first, _, rest = source.lstrip("\n").partition("\n")
        match = WRITEFILE.match(first.strip())
        if not match:
            continue
        if len(rest.encode()) > MAX_FILE:
            prepared.problems.append(f"{label}, celda {number}: demasiado grande; se ignora")
            continue
        found += 1
        prepared.add(match.group(1), rest, f"{label} (celda {number})")
    if not found:
        prepared.problems.append(f"{label}: ninguna celda empieza por "
                                 "%%writefile soluciones/ejercicioN.py")


def read_zip(prepared, path):
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        prepared.problems.append("el .zip está dañado o no es un zip")
        return
    with archive, tempfile.TemporaryDirectory(prefix="grader-zip-") as folder:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            prepared.problems.append(f"el .zip tiene {len(infos)} entradas (máximo "
                                     f"{MAX_ZIP_ENTRIES}); no se abre")
            return
        total = 0
        for info in infos:
            parts = info.filename.replace("\\", "/").split("/")
            mode = info.external_attr >> 16
            if info.filename.startswith("/") or ".." in parts or ":" in parts[0]:
                prepared.problems.append(f"el .zip contiene una ruta peligrosa "
                                         f"({info.filename!r}); se ignora esa entrada")
                continue
            if stat.S_ISLNK(mode):
                prepared.problems.append(f"el .zip contiene un enlace simbólico "
                                         f"({info.filename!r}); se ignora")
                continue
            if info.is_dir() or parts[-1].startswith("."):
                continue
            target = os.path.join(folder, *[p for p in parts if p])
            data = b""
            with archive.open(info) as source:
                while chunk := source.read(65536):
                    data += chunk
                    total += len(chunk)
                    if len(data) > MAX_NOTEBOOK or total > MAX_ZIP_TOTAL:
                        prepared.problems.append("el .zip descomprimido es demasiado grande "
                                                 "(¿una bomba zip?); no se abre")
                        return
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data)
        read_folder(prepared, folder, folder)
