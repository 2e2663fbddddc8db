"""Solution files out of what a learner handed in: the part that needs no operating system.

A submission (a notebook, a .py file, a folder, or a .zip of any of these) becomes a `Prepared`:
the solution files (name -> text), where each came from, and what went wrong, in Spanish. From
a notebook only the cells that start with `%%writefile <anything>/ejercicioN.py` (or
`%%writefile ejercicioN.py`, N in 2, 3a, 3b, 4; or reto.py, the optional challenge: the files
of grader/exercises.py) are taken; the
notebook is never executed. When the
same file comes twice, the last one wins (files before notebooks, in name order; cells in
notebook order), and the report says so.

Everything here reads through a small folder interface (`entries()`, `size(name)`,
`read(name, limit)`, `folder(name)`, `close()`), so the same rules apply to any source:
- grader/intake/submission.py reads a submission on disk through descriptors (the official grader:
  the submission is as hostile as the learner's server);
- `PlainFolder` reads by path (the self-checks: your own files, on your own machine; it runs on
  macOS, Windows and in the browser, where there are no descriptor tricks);
- `MemoryFolder` is a .zip unpacked in memory, with caps.

Totals hold for every source, as for archives: at most `MAX_FILES` .py and .ipynb files and
`MAX_TOTAL` bytes in all, counted by their apparent size before anything is read (a folder of
sparse files is refused, not read); a notebook with more than `MAX_NOTEBOOK_TOKENS` JSON values
is not parsed (parsed JSON is up to 30 times its text: grader/sizes.py); a solution file whose
name cannot be a file name here (over 255 bytes, a separator, a NUL) is left out with a reason.

Deliberate simplifications: only `%%writefile` cells are read (no `-a` append semantics beyond
taking the cell as the whole file); folders are read two levels deep at most; an archive with
any unreadable entry is refused as a whole.
"""

import io
import json
import os
import re
import stat
import zipfile

from grader.errors import Refused
from grader.escape import has_surrogates, one_line
from grader.exercises import FILES
from grader.sizes import tokens

MAX_FILE = 1 << 20          # one .py or one notebook cell
MAX_NOTEBOOK = 8 << 20
MAX_ARCHIVE = 64 << 20      # the .zip file itself
MAX_ZIP_ENTRIES = 200
MAX_ZIP_TOTAL = 16 << 20
MAX_FOLDER_ENTRIES = 1000
MAX_TOTAL = 16 << 20        # every .py and .ipynb read from one submission, by apparent size
MAX_FILES = 200             # .py and .ipynb files read from one submission
MAX_NOTEBOOK_TOKENS = 250_000  # values, keys and containers in one notebook (parsed in memory)
MAX_NAME_BYTES = 255        # a solution file's name, as the file system stores it
SOLUTION_NAMES = FILES     # the files a submission may bring (grader/exercises.py)
WRITEFILE = re.compile(r"%%writefile\s+(?:-a\s+)?[\"']?(?:[^\s\"']*/)?("
                       + "|".join(map(re.escape, SOLUTION_NAMES)) + r")[\"']?\s*$")
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints", "__MACOSX"}


class Unreadable(Exception):
    """Part of the submission cannot be read; the message is Spanish."""


class Prepared:
    """The solution files (name -> text), where each came from, and what went wrong."""

    def __init__(self, name):
        self.name = name
        self.files = {}
        self.origin = {}
        self.problems = []
        self.total = 0     # bytes of the files read (or about to be), by apparent size
        self.count = 0     # files read (or about to be)

    def problem(self, text):
        self.problems.append(one_line(text, limit=400))

    def charge(self, size, files=1):
        """Count a file about to be read; past the totals nothing of the submission is used."""
        self.total += size
        self.count += files
        if self.total > MAX_TOTAL or self.count > MAX_FILES:
            self.files.clear()
            self.origin.clear()
            raise Unreadable(f"la entrega tiene demasiado: más de {MAX_FILES} archivos .py o "
                             f".ipynb o más de {MAX_TOTAL >> 20} MiB en total (contando su tamaño "
                             "aparente); no se corrige: entrega solo tus soluciones")

    def add(self, name, text, origin):
        if not usable_name(name):
            self.problem(f"{one_line(origin, 80)}: su nombre no puede ser el de un archivo de "
                         f"solución (más de {MAX_NAME_BYTES} bytes, una barra o un carácter "
                         "nulo); se ignora")
            return
        if name in self.files and self.origin[name] != origin:
            self.problem(f"{name} aparece más de una vez; se usa la de {origin} "
                         f"(no la de {self.origin[name]})")
        self.files[name] = text
        self.origin[name] = origin


def usable_name(name):
    """True when `name` can be written as one file of the solution folder on any host."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        return False
    try:
        return len(os.fsencode(name)) <= MAX_NAME_BYTES
    except UnicodeError:
        return False


# -- folders in memory and on a path ---------------------------------------------------------
class MemoryFolder:
    """A folder of an archive, already unpacked in memory: {name: bytes | MemoryFolder}."""

    def __init__(self):
        self.children = {}

    def entries(self):
        return sorted((name, "dir" if isinstance(child, MemoryFolder) else "file")
                      for name, child in self.children.items())

    def size(self, name):
        return len(self.children[name])

    def read(self, name, limit):
        return self.children[name][:limit + 1]

    def folder(self, name):
        return self.children[name]

    def close(self):
        pass


class PlainFolder:
    """A folder read by path (the self-checks): links are reported and skipped, never followed;
    only regular files are read."""

    def __init__(self, path):
        self.path = path

    def entries(self):
        found = []
        with os.scandir(self.path) as scan:
            for entry in scan:
                if len(found) >= MAX_FOLDER_ENTRIES:
                    raise Unreadable(f"la carpeta tiene más de {MAX_FOLDER_ENTRIES} entradas; "
                                     "no se lee")
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                kind = "link" if entry.is_symlink() else "dir" if stat.S_ISDIR(mode) \
                    else "file" if stat.S_ISREG(mode) else "other"
                found.append((entry.name, kind))
        return sorted(found)

    def size(self, name):
        return os.lstat(os.path.join(self.path, name)).st_size

    def read(self, name, limit):
        path = os.path.join(self.path, name)
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise Refused(f"{name} no es un archivo normal")
        with open(path, "rb") as handle:
            return handle.read(limit + 1)

    def folder(self, name):
        return PlainFolder(os.path.join(self.path, name))

    def close(self):
        pass


def prepare_plain(path, name=None):
    """Read a submission by path (the self-checks); never raises for anything inside it."""
    prepared = Prepared(name or os.path.basename(os.path.normpath(path)) or path)
    try:
        if os.path.islink(path):
            prepared.problem("la entrega es un enlace simbólico; no se sigue")
        elif os.path.isdir(path):
            read_folder(prepared, PlainFolder(path), "")
        elif not os.path.isfile(path):
            prepared.problem("no existe o no es un archivo ni una carpeta")
        else:
            parent, base = os.path.split(os.path.abspath(path))
            if base.endswith(".zip"):
                read_zip(prepared, PlainFolder(parent), base)
            else:
                read_file(prepared, PlainFolder(parent), base, base, top=True)
    except Unreadable as exc:
        prepared.problem(str(exc))
    except (OSError, ValueError, RecursionError, MemoryError, Refused) as exc:
        prepared.problem(f"no se pudo leer la entrega ({type(exc).__name__})")
    nothing_found(prepared)
    return prepared


def nothing_found(prepared):
    if not prepared.files:
        prepared.problem("no encontré ninguna solución: se esperan ejercicio2.py, "
                         "ejercicio3a.py, ejercicio3b.py, ejercicio4.py o reto.py, o un "
                         "notebook con celdas "
                         "%%writefile soluciones/ejercicioN.py")


def write_plain(prepared, folder):
    """Write the solution files into `folder` (new) by path: the self-checks."""
    os.mkdir(folder)
    for name, text in prepared.files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8",
                  errors="surrogatepass") as handle:
            handle.write(text)
    return folder


# -- reading --------------------------------------------------------------------------------------
def read_folder(prepared, folder, prefix, depth=0):
    entries = folder.entries()
    files = [name for name, kind in entries if kind == "file"]
    ordered = [e for e in files if e.endswith(".py")] + [e for e in files
                                                         if e.endswith(".ipynb")]
    for name, kind in entries:
        label = prefix + name
        if kind == "link" and not name.startswith("."):
            prepared.problem(f"{label} es un enlace simbólico; se ignora")
        elif kind == "other" and name.endswith((".py", ".ipynb")):
            prepared.problem(f"{label} no es un archivo normal (FIFO, socket o dispositivo); "
                             "se ignora")
    for name in ordered:
        read_file(prepared, folder, name, prefix + name)
    for name, kind in entries:
        if kind != "dir" or name.startswith(".") or name in SKIP_DIRS:
            continue
        if (name == "soluciones" and depth <= 1) or (depth == 0 and len(entries) == 1):
            child = folder.folder(name)
            try:
                read_folder(prepared, child, f"{prefix}{name}/", depth + 1)
            finally:
                child.close()


def read_file(prepared, folder, name, label, top=False):
    if label.endswith(".ipynb"):
        limit, what = MAX_NOTEBOOK, "el notebook pesa demasiado"
    elif label.endswith(".py"):
        limit, what = MAX_FILE, "demasiado grande"
    else:
        if top:
            prepared.problem(f"{label}: no es ni .py ni .ipynb ni .zip; se ignora")
        return
    size = folder.size(name)
    if size > limit:
        prepared.problem(f"{label}: {what} ({size // 1024} KiB); se ignora")
        return
    prepared.charge(size)
    try:
        data = folder.read(name, limit)
    except Refused as exc:
        prepared.problem(f"{exc}; se ignora")
        return
    if len(data) > limit:  # it grew since we looked
        prepared.problem(f"{label}: {what}; se ignora")
        return
    if len(data) > size:  # it grew, within the limit: what was read is what counts
        prepared.charge(len(data) - size, files=0)
    if label.endswith(".ipynb"):
        read_notebook(prepared, data, label)
        return
    text = decode(prepared, data, label)
    if text is not None:
        prepared.add(name, text, label)


def decode(prepared, data, label):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prepared.problem(f"{label}: no está en UTF-8 (byte {exc.start}); se ignora")
        return None


def read_notebook(prepared, data, label):
    text = decode(prepared, data, label)
    if text is None:
        return
    if tokens(data) > MAX_NOTEBOOK_TOKENS:
        prepared.problem(f"{label}: tiene demasiados elementos para leerlo (más de "
                         f"{MAX_NOTEBOOK_TOKENS} valores JSON); guárdalo sin las salidas de las "
                         "celdas y vuelve a entregarlo")
        return
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
        if not isinstance(cells, list):
            raise TypeError
    except (ValueError, KeyError, TypeError, RecursionError):
        prepared.problem(f"{label}: no es un notebook válido (JSON roto, anidado sin fin o "
                         "sin 'cells'); ábrelo y guárdalo de nuevo en Jupyter")
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
        if len(rest.encode("utf-8", "surrogatepass")) > MAX_FILE:
            prepared.problem(f"{label}, celda {number}: demasiado grande; se ignora")
            continue
        if has_surrogates(rest):
            prepared.problem(f"{label}, celda {number}: contiene caracteres que no son UTF-8 "
                             "válido; se ignora")
            continue
        found += 1
        prepared.add(match.group(1), rest, f"{label} (celda {number})")
    if not found:
        prepared.problem(f"{label}: ninguna celda empieza por "
                         "%%writefile soluciones/ejercicioN.py")


def read_zip(prepared, folder, name):
    size = folder.size(name)
    if size > MAX_ARCHIVE:
        prepared.problem(f"el .zip pesa demasiado ({size >> 20} MiB); no se abre")
        return
    try:
        tree = unpack(folder.read(name, MAX_ARCHIVE), prepared)
    except Unreadable as exc:
        prepared.problem(str(exc))
        return
    except Exception as exc:  # any archive error at all (CRC, encryption, truncation, codec)
        prepared.problem(f"el .zip está dañado, cifrado o incompleto ({type(exc).__name__}: "
                         f"{exc}); no se abre: vuelve a comprimir tu entrega")
        return
    if tree is not None:
        read_folder(prepared, tree, "")


def unpack(data, prepared):
    """The archive as a MemoryFolder, or None when it is refused (the reason is reported)."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = archive.infolist()
    if len(infos) > MAX_ZIP_ENTRIES:
        prepared.problem(f"el .zip tiene {len(infos)} entradas (máximo {MAX_ZIP_ENTRIES}); no "
                         "se abre")
        return None
    top, total = MemoryFolder(), 0
    for info in infos:
        parts = info.filename.replace("\\", "/").split("/")
        mode = info.external_attr >> 16
        if info.filename.startswith("/") or ".." in parts or ":" in parts[0] \
                or "\0" in info.filename:
            prepared.problem(f"el .zip contiene una ruta peligrosa ({info.filename!r}); se "
                             "ignora esa entrada")
            continue
        if stat.S_ISLNK(mode):
            prepared.problem(f"el .zip contiene un enlace simbólico ({info.filename!r}); se "
                             "ignora")
            continue
        parts = [p for p in parts if p not in ("", ".")]
        if info.is_dir() or not parts or parts[-1].startswith("."):
            continue
        content = bytearray()
        with archive.open(info) as source:
            while chunk := source.read(65536):
                content += chunk
                total += len(chunk)
                if len(content) > MAX_NOTEBOOK or total > MAX_ZIP_TOTAL:
                    prepared.problem("el .zip descomprimido es demasiado grande (¿una bomba "
                                     "zip?); no se abre")
                    return None
        place = top
        for part in parts[:-1]:
            child = place.children.setdefault(part, MemoryFolder())
            if not isinstance(child, MemoryFolder):
                raise Unreadable(f"el .zip contiene {part!r} como archivo y como carpeta; no "
                                 "se abre")
            place = child
        if isinstance(place.children.get(parts[-1]), MemoryFolder):
            raise Unreadable(f"el .zip contiene {parts[-1]!r} como archivo y como carpeta; no "
                             "se abre")
        place.children[parts[-1]] = bytes(content)
    return top
