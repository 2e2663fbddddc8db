"""Add bytecode to the Python files a JupyterLite site ships, made by the Python that runs them.

Pyodide's npm package ships the standard library as sources (python_stdlib.zip) and PyPI's
wheels hold sources only, so every page load compiled again each module it imported: most of
the kernel's start-up, and a good part of the course's first cell, was `compile()` in
WebAssembly. This module puts each module's bytecode next to its source:

- in a wheel, `DIR/__pycache__/NAME.TAG.pyc` (PEP 3147, where Python's path importer looks),
  listed in the wheel's RECORD;
- in the standard library's zip, `NAME.pyc` beside `NAME.py` (zipimport takes it first).

Every .pyc is an unchecked hash-based pyc (PEP 552): Python uses it without comparing it with
its source (the time stamps of files that Pyodide unpacks from a wheel mean nothing). The sources
stay, so tracebacks and `inspect` still show the code.

`editions/lite/build.py` runs `main()` inside Pyodide under Node (editions/lite/bytecode.mjs),
so the bytecode is Pyodide's own: its magic number, its cache tag, its file paths. On CPython
the same functions make CPython's bytecode (the tests use that). Standard library only.

Deliberate simplifications: a file that does not compile (old syntax in a file nothing
imports) keeps its source alone, as `compileall` would leave it; optimization level 0 only.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import marshal
import sys
import sysconfig
import zipfile

UNCHECKED_HASH = 0b01  # PEP 552 flags: hash-based, source not checked


def pyc(source: bytes, filename: str) -> bytes | None:
    """The unchecked hash-based .pyc of ``source`` (its code says ``filename``), or None when
    it does not compile."""
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return (importlib.util.MAGIC_NUMBER + UNCHECKED_HASH.to_bytes(4, "little")
            + importlib.util.source_hash(source) + marshal.dumps(code))


def cached_name(name: str) -> str:
    """Where the path importer looks for the bytecode of ``name`` (a/b.py -> a/__pycache__/
    b.TAG.pyc), whatever sys.pycache_prefix says."""
    folder, _, file = name.rpartition("/")
    cached = f"__pycache__/{file[:-3]}.{sys.implementation.cache_tag}.pyc"
    return f"{folder}/{cached}" if folder else cached


def copy_entry(zout: zipfile.ZipFile, info: zipfile.ZipInfo, data: bytes) -> None:
    zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)


def new_entry(zout: zipfile.ZipFile, name: str, data: bytes, like: zipfile.ZipInfo) -> None:
    info = zipfile.ZipInfo(name, date_time=like.date_time)
    info.external_attr = 0o644 << 16
    zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)


def record_line(name: str, data: bytes) -> str:
    """A wheel RECORD line (PEP 376): path, urlsafe-base64 sha256, size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def add_to_wheel(source: str, target: str, site_packages: str) -> int:
    """Write ``target``: the wheel ``source`` plus a .pyc for each of its modules (as installed
    in ``site_packages``), listed in its RECORD. Returns how many were added."""
    with zipfile.ZipFile(source) as zin:
        entries = [(info, zin.read(info)) for info in zin.infolist()]
    record = [info for info, _ in entries if info.filename.endswith(".dist-info/RECORD")]
    if len(record) != 1:
        raise ValueError(f"{source}: expected one .dist-info/RECORD")
    added = []
    for info, data in entries:
        name = info.filename
        if name.endswith(".py") and ".data/" not in name.split(".dist-info/")[0]:
            code = pyc(data, f"{site_packages}/{name}")
            if code is not None:
                added.append((cached_name(name), code, info))
    with zipfile.ZipFile(target, "w") as zout:
        for info, data in entries:
            if info is record[0]:
                lines = data.decode().rstrip("\n").split("\n")
                lines[-1:-1] = [record_line(name, code) for name, code, _ in added]
                data = ("\n".join(lines) + "\n").encode()
            copy_entry(zout, info, data)
        for name, code, like in added:
            new_entry(zout, name, code, like)
    return len(added)


def add_to_stdlib_zip(source: str, target: str, zip_path: str) -> int:
    """Write ``target``: the zip ``source`` plus NAME.pyc beside each NAME.py, compiled as
    the zip is seen on sys.path at ``zip_path``. Returns how many were added."""
    count = 0
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            copy_entry(zout, info, data)
            if info.filename.endswith(".py"):
                code = pyc(data, f"{zip_path}/{info.filename}")
                if code is not None:
                    new_entry(zout, info.filename + "c", code, info)
                    count += 1
    return count


def main(job_file: str, root: str = "") -> None:
    """Run a job written by build.py: {"wheels": [[source, target], ...], "stdlib": [[source,
    target]]}, host paths seen under ``root`` (bytecode.mjs mounts the host's / there)."""
    with open(root + job_file) as f:
        job = json.load(f)
    site_packages = sysconfig.get_paths()["purelib"]
    zip_path = next(p for p in sys.path if p.endswith(".zip"))
    for source, target in job.get("stdlib", []):
        count = add_to_stdlib_zip(root + source, root + target, zip_path)
        print(f"{source.rsplit('/', 1)[-1]}: {count} modules compiled", flush=True)
    for source, target in job.get("wheels", []):
        count = add_to_wheel(root + source, root + target, site_packages)
        print(f"{source.rsplit('/', 1)[-1]}: {count} modules compiled", flush=True)
