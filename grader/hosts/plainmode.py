"""Plain mode grades only what it can keep safe; everything else is refused before grading.

Plain mode is the sandbox without namespaces (a Docker container such as Gradescope's, a CI
runner without user namespaces); the portable host is what `python -m grader` falls back to on
a system that cannot run the sandbox at all. Neither has a private filesystem, so what a
learner's code could read or write depends on the machine. `admit()` decides, before anything
is graded, whether this run can keep its promises (grader/README.md, *Isolation*):

- plain mode with root (each sandbox has a private uid): a probe run as a fresh uid tries to
  read the hidden tests, the reference solution, the files named in GRADER_PRIVATE_FILES
  (`os.pathsep`-separated: Gradescope's submission_metadata.json, with the learner's earlier
  totals and hidden results, which run_autograder makes root's only) and, with several
  submissions, every other submission, and to create something in or next to the report folder
  (`--out`, or the batch's `-resultados`). If it can, a learner's code could too: the run is
  refused, saying what is exposed and how to close it. Submissions are graded one at a time
  (no two learners' code ever runs at once), so that nothing shared (/tmp, /dev/shm) can carry
  anything between them.
- plain mode without root, and the portable fallback (no --host, or --host auto, on a system
  that cannot run the sandbox, or with GRADER_HOST=portable): the learner's code would run with
  the grader's own rights. One submission with the public tests only (a self-check) is graded;
  several submissions, or the hidden tests, are refused.

`--allow-unsafe-plain` grades anyway (the report still names the mode). An explicitly chosen
self-check host (`--host portable`, `--host inprocess`) is the user's choice and is not judged
here; its report says what is off.

Deliberate simplifications: the probe checks the files that exist when the run starts (a tree
whose permissions change during the run is not re-checked); it reads at most `PER_SUBMISSION`
files of each submission and `GRADER_FILES` of the grader's secrets.
"""

import json
import os
import stat
import subprocess
from dataclasses import dataclass

from grader.hosts import uids
from grader.paths import CHECKS_DIR, REFERENCE_DIR

SYSTEM_PYTHON = "/usr/bin/python3"
HIDDEN_DIR = os.path.join(CHECKS_DIR, "hidden")
PER_SUBMISSION = 50
GRADER_FILES = 500
DEPTH = 4
SHOWN = 3
PROBE = r"""
import json, os, sys
todo, found = json.load(sys.stdin), []
for path in todo["read"]:
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        found.append(path)
    except OSError:
        pass
for path in todo["list"]:
    try:
        os.listdir(path)
        found.append(path)
    except OSError:
        pass
for path in todo["create"]:
    if os.access(path, os.W_OK | os.X_OK):
        found.append(path)
sys.stdout.write(json.dumps(found))
"""
ADVICE = ("Quita a los demás usuarios el acceso (por ejemplo `chmod -R go-rwx CARPETA`, o "
          "`chmod 700` en la carpeta que lo contiene), corrige donde haya espacios de nombres "
          "(modo root), o usa --allow-unsafe-plain si confías en estas entregas. No se corrigió "
          "nada.")


@dataclass(frozen=True)
class Admission:
    refusal: str = ""       # Spanish, for stderr: why nothing is graded (exit 4)
    workers: int = 0        # at most this many submissions at once (0: no limit here)
    warning: str = ""       # Spanish, for stderr: graded, but said once


def admit(mode, jobs, out, suite, allow_unsafe=False, fallback=False, root=None):
    """May this run grade `jobs` in `mode` ("root", "userns", "plain", or a self-check host's
    name)? `suite` is the suite that will run; `fallback` is True when the portable host was
    picked because the sandbox cannot run here (not chosen by the user); `root`: whether the
    grader runs as root (each sandbox then has a private uid)."""
    if root is None:  # no geteuid on Windows, where the portable self-check runs
        root = getattr(os, "geteuid", lambda: -1)() == 0
    if mode == "plain" and root:
        refusal = "" if allow_unsafe else exposed(jobs, out)
        return Admission(refusal, workers=1,
                         warning=UNSAFE if allow_unsafe else "")
    if mode == "plain" or (mode == "portable" and fallback):
        where = ("en modo plain sin root (sin espacios de nombres ni otro usuario)"
                 if mode == "plain" else "en modo local (sin aislamiento: aquí no corre el "
                 "entorno aislado del corrector)")
        if allow_unsafe or (len(jobs) == 1 and suite == "public"):
            return Admission(workers=1, warning=UNSAFE if allow_unsafe else "")
        return Admission(
            f"No se puede corregir {where}: el código de cada entrega correría con tus propios "
            "permisos y podría leer las pruebas ocultas, la solución de referencia y las demás "
            "entregas, o escribir en tus archivos. Aquí solo se hace una autoevaluación: una "
            "entrega con las pruebas públicas (--tests public). Para corregir, usa root (sudo) "
            "en Linux o una máquina con espacios de nombres; --allow-unsafe-plain corrige "
            "igualmente si confías en estas entregas. No se corrigió nada.", workers=1)
    return Admission()


UNSAFE = ("--allow-unsafe-plain: se corrige en modo plain sin comprobar que el código de los "
          "alumnos no pueda leer las pruebas ocultas, la referencia u otras entregas.")


def private_files():
    """Files of the grader's setting that no learner may read (GRADER_PRIVATE_FILES)."""
    return [path for path in os.environ.get("GRADER_PRIVATE_FILES", "").split(os.pathsep)
            if path]


def exposed(jobs, out):
    """"" if a fresh uid can reach nothing it must not; else the Spanish refusal."""
    read = files_below(HIDDEN_DIR, GRADER_FILES) + files_below(REFERENCE_DIR, GRADER_FILES) \
        + private_files()
    listed = [path for path in (HIDDEN_DIR, REFERENCE_DIR) if os.path.isdir(path)]
    if len(jobs) > 1:
        for job in jobs:
            read += [job["path"]] + files_below(job["path"], PER_SUBMISSION)
        listed += sorted({os.path.dirname(os.path.abspath(job["path"])) for job in jobs})
    create = report_folders(out) if out else []
    found = probe({"read": read, "list": listed, "create": create})
    if found is None:
        return ("Modo plain: no se pudo comprobar qué puede leer el código de un alumno (la "
                "prueba como otro usuario falló). " + ADVICE)
    if not found:
        return ""
    shown = ", ".join(found[:SHOWN]) + (f" y {len(found) - SHOWN} más" if len(found) > SHOWN
                                        else "")
    return ("Modo plain (sin espacios de nombres): el código de cada alumno corre como otro "
            f"usuario, pero ese usuario puede leer o escribir aquí: {shown}. Así podría "
            "leer las pruebas ocultas, la solución de referencia, los datos de sus entregas "
            "anteriores u otras entregas, o preparar enlaces en la carpeta de informes. "
            + ADVICE)


def files_below(path, cap):
    """Up to `cap` paths of regular files at or below `path` (no link followed, depth-capped)."""
    found, pending = [], [(path, 0)]
    while pending and len(found) < cap:
        folder, depth = pending.pop()
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append(folder)
            continue
        if not stat.S_ISDIR(info.st_mode) or depth > DEPTH:
            continue
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        pending += [(os.path.join(folder, name), depth + 1) for name in reversed(names)]
    return found[:cap]


def report_folders(out):
    """Where a learner would plant links for the reports: `out` and the folders the grader
    writes in it if they exist, else the nearest existing folder above `out`."""
    out = os.path.abspath(out)
    if os.path.isdir(out):
        return [out] + [os.path.join(out, name) for name in sorted(os.listdir(out))
                        if os.path.isdir(os.path.join(out, name))][:PER_SUBMISSION]
    parent = os.path.dirname(out)
    while parent != os.path.dirname(parent) and not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    return [parent]


def probe(todo):
    """What a fresh uid can do of `todo` ({"read", "list", "create"}: paths); None if the
    probe could not run."""
    try:
        uid = uids.allocate()
        run = subprocess.run([SYSTEM_PYTHON, "-I", "-S", "-c", PROBE], input=json.dumps(todo),
                             capture_output=True, text=True, timeout=60, user=uid, group=uid,
                             extra_groups=[], cwd="/", env={})
        return json.loads(run.stdout) if run.returncode == 0 else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
