"""pip with a short account of what it is doing: `make venv`'s install step, and tools/lab.py's.

    .venv/bin/python tools/pip_install.py requirements.txt [more pip arguments]

pip runs as `python -m pip install -r FILE`; instead of pip's full log (hundreds of lines, plus
one "Location ... is ignored" warning per local mirror on some machines) or nothing at all
(`-q`, silent for about two minutes), this prints one line per phase: how many pinned
packages there are, a progress line while pip collects them (every tenth package, or in place
on a terminal), the install phase, and the time it took. pip's full log goes to a file next to
the environment (`pip-install.log` in it); when pip fails, the end of that log is printed,
with the file's name, and the exit code is pip's.

`install(python, requirements, extra, log, words)` is the same for another environment and
other words: tools/lab.py says it in Spanish (`SPANISH`) for `.venv-lab/`.

Deliberate simplifications: progress counts pip's "Collecting" lines (or "Processing", for a
local file) against the pinned lines of the file (its `-r` includes are not followed), so the
count is a guide, not a contract. Standard library only (tools/lab.py runs before anything is
installed).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

NOISE = "is ignored: it is neither a file nor a directory"
EVERY = 10  # without a terminal, one progress line per this many packages
LOG_NAME = "pip-install.log"
TAIL = 40  # lines of pip's log shown when it fails

ENGLISH = {
    "start": "venv: installing {total} pinned packages from {file} (about two minutes the "
             "first time)",
    "collecting": "  collecting {n}/{total}: {name}",
    "installing": "  installing the collected packages",
    "ready": "venv: ready in {seconds:.0f} s",
    "failed": "venv: pip failed (exit {code}) after {seconds:.0f} s; its whole log is in "
              "{log}",
}
SPANISH = {
    "start": "[lab] instalando {total} paquetes fijados de {file} (la primera vez tarda unos "
             "minutos)",
    "collecting": "[lab]   preparando {n}/{total}: {name}",
    "installing": "[lab]   instalando los paquetes preparados",
    "ready": "[lab] paquetes instalados en {seconds:.0f} s",
    "failed": "[lab] pip falló (código {code}) tras {seconds:.0f} s; su registro completo "
              "está en {log}",
}


def pinned(requirements: Path) -> int:
    lines = [line.split("#", 1)[0].strip() for line in requirements.read_text().splitlines()]
    return sum(1 for line in lines if line and not line.startswith("-"))


def install(python, requirements: Path, extra=(), log: Path | None = None,
            words=ENGLISH) -> int:
    """`python -m pip install -r requirements *extra`, said in `words`; pip's whole log in
    `log` (default: pip-install.log beside `python`'s environment). Returns pip's exit code."""
    requirements = Path(requirements)
    log = Path(log) if log else Path(python).absolute().parent.parent / LOG_NAME
    total = pinned(requirements)
    tty = sys.stdout.isatty()
    print(words["start"].format(total=total, file=requirements), flush=True)
    start = time.monotonic()
    lines: list[str] = []
    collected = 0
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as whole:
        proc = subprocess.Popen([str(python), "-m", "pip", "install", "--progress-bar", "off",
                                 "--disable-pip-version-check", "-r", str(requirements),
                                 *extra],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                encoding="utf-8", errors="replace")
        for line in proc.stdout:
            if NOISE in line:
                continue
            whole.write(line)
            lines.append(line)
            if line.startswith(("Collecting ", "Processing ")):  # an index, or a local file
                collected += 1
                name = Path(line.split()[1]).name.split("-")[0]
                said = words["collecting"].format(n=collected, total=total, name=name)
                if tty:
                    print(f"\r{said:<70}", end="", flush=True)
                elif collected % EVERY == 0 or collected == total:
                    print(said, flush=True)
            elif line.startswith("Installing collected packages"):
                print(("\n" if tty else "") + words["installing"], flush=True)
        code = proc.wait()
    seconds = time.monotonic() - start
    if tty and collected:
        print()
    if code != 0:
        print("".join(lines[-TAIL:]), end="", file=sys.stderr)
        print(words["failed"].format(code=code, seconds=seconds, log=log), file=sys.stderr)
        return code
    print(words["ready"].format(seconds=seconds), flush=True)
    return 0


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return install(sys.executable, Path(argv[0]), argv[1:], Path(sys.prefix) / LOG_NAME)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
