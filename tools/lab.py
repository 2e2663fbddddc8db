"""Open the lessons in JupyterLab on any laptop, with one command and without root.

    python3 tools/lab.py          (macOS, Linux)
    py tools\\lab.py               (Windows)

From a fresh clone it: checks the Python (3.11.5 or newer) and the machine (not an Intel
Mac: some pinned packages publish no wheel for it), creates a virtual environment in
`.venv-lab/` next to this folder, installs tools/requirements-lab.txt into it (pinned versions,
wheels only: nothing is compiled; again only when that file changes), and starts JupyterLab on
`lessons/`, which opens in your browser. Stop it with Ctrl-C. Nothing is installed outside
`.venv-lab/` and nothing needs administrator rights.

Options: --no-browser (print the address instead of opening it), --port N, --install-only,
--venv DIR (another place for the environment).

In the notebooks, `ui.revisar` checks your exercises with the grader's public tests: inside the
grader's sandbox on Linux, and in the portable mode elsewhere (it says so, and which protections
are off). Standard library only, so it runs before anything is installed.

Everything it says is Spanish (the learner reads it), `--help` included: DESCRIPTION, the
options' help and argparse's own words (code/cli/spanish_cli.py, loaded by path).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REQUIREMENTS = REPO / "tools" / "requirements-lab.txt"
LESSONS = REPO / "lessons"
DEFAULT_VENV = REPO / ".venv-lab"
STAMP = ".lab-installed"
MINIMUM = (3, 11, 5)  # soupsieve 4.1.3 (JupyterLab's HTML sanitiser) needs 3.11.5
DESCRIPTION = ("Abre los cuadernos de la lección en JupyterLab, en cualquier portátil, con un "
               "solo comando y sin permisos de administrador. La primera vez crea el entorno "
               ".venv-lab/ e instala lo necesario (unos minutos); después abre JupyterLab al "
               "momento. Para salir, Ctrl-C.")
WHEELS_ONLY = ["--only-binary=:all:"]  # pip's options: nothing is compiled on the laptop


class LabError(Exception):
    """Something the learner can fix; the message says how (in Spanish)."""


def say(text: str) -> None:
    print(f"[lab] {text}", flush=True)


def check_python(version=sys.version_info) -> None:
    if tuple(version[:3]) < MINIMUM:
        raise LabError(f"hace falta Python {'.'.join(map(str, MINIMUM))} o posterior y este "
                       f"es {'.'.join(map(str, version[:3]))}; instala uno más nuevo desde "
                       "python.org y vuelve a ejecutar este comando con él")


def check_platform(system: str = platform.system(), machine: str = platform.machine()) -> None:
    if system == "Darwin" and machine == "x86_64":
        raise LabError("en un Mac con procesador Intel no hay paquetes precompilados para todas "
                       "las versiones fijadas (p. ej. cryptography 50); usa la edición del "
                       "navegador (JupyterLite) o la edición para leer")


def venv_python(folder: Path, windows: bool = os.name == "nt") -> Path:
    return folder / ("Scripts/python.exe" if windows else "bin/python")


def requirements_digest(path: Path = REQUIREMENTS) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def up_to_date(folder: Path) -> bool:
    stamp = folder / STAMP
    return (venv_python(folder).exists() and stamp.exists()
            and stamp.read_text().strip() == requirements_digest())


def create_venv(folder: Path) -> None:
    say(f"creando el entorno virtual {folder}")
    try:
        venv.EnvBuilder(with_pip=True, clear=folder.exists()).create(folder)
    except (subprocess.CalledProcessError, OSError) as exc:
        raise LabError(f"no pude crear el entorno virtual ({exc}). En Debian o Ubuntu falta "
                       "el paquete python3-venv; en otros sistemas, instala Python desde "
                       "python.org") from None


def install(folder: Path) -> None:
    """pip, with a short progress (tools/pip_install.py, the same as `make venv`'s); its whole
    log stays in the environment's pip-install.log, named if it fails."""
    python = venv_python(folder)
    if not python.exists():
        create_venv(folder)
    say("instalando JupyterLab y lo que usan los cuadernos")
    pip = sibling("pip_install")
    if pip.install(python, REQUIREMENTS, WHEELS_ONLY, folder / pip.LOG_NAME, pip.SPANISH) != 0:
        raise LabError(f"pip no pudo instalar tools/requirements-lab.txt (¿hay conexión a "
                       f"internet?); lo que dijo está en {folder / pip.LOG_NAME}. Vuelve a "
                       "ejecutar el comando para reintentarlo")
    (folder / STAMP).write_text(requirements_digest() + "\n")


def sibling(name: str, folder: Path | None = None):
    """A module of tools/ next to this one (or of `folder`, e.g. code/), standard library only
    as this one."""
    path = (folder or Path(__file__).parent) / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_root() -> bool:
    geteuid = getattr(os, "geteuid", None)  # not on Windows
    return geteuid is not None and geteuid() == 0


def lab_command(python: Path, port: int | None, browser: bool) -> list[str]:
    cmd = [str(python), "-m", "jupyterlab", f"--ServerApp.root_dir={LESSONS}",
           "--ServerApp.ip=127.0.0.1"]
    if port:
        cmd.append(f"--ServerApp.port={port}")
    if not browser:
        cmd.append("--no-browser")
    if as_root():
        cmd.append("--allow-root")
    return cmd


def main(argv: list[str] | None = None) -> int:
    spanish = sibling("spanish_cli", REPO / "code" / "cli")
    parser = spanish.SpanishParser(description=DESCRIPTION)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, metavar="CARPETA",
                        help="dónde crear el entorno virtual (por defecto .venv-lab/)")
    parser.add_argument("--port", type=int, metavar="PUERTO", help="puerto de JupyterLab")
    parser.add_argument("--no-browser", action="store_true",
                        help="no abrir el navegador: muestra la dirección")
    parser.add_argument("--install-only", action="store_true",
                        help="solo preparar el entorno, sin abrir JupyterLab")
    args = parser.parse_args(argv)
    folder = args.venv.resolve()
    try:
        check_python()
        check_platform()
        if not LESSONS.is_dir():
            raise LabError(f"no encuentro los cuadernos en {LESSONS}")
        if up_to_date(folder):
            say(f"entorno al día: {folder}")
        else:
            install(folder)
        if args.install_only:
            return 0
        say(f"abriendo JupyterLab en {LESSONS} (Ctrl-C para salir)")
        try:
            return subprocess.call(lab_command(venv_python(folder), args.port,
                                               not args.no_browser), cwd=LESSONS)
        except KeyboardInterrupt:
            return 0
    except LabError as exc:
        print(f"[lab] ERROR: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
