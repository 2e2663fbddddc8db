"""`make venv`'s install step: pip, with a short account of what it is doing.

    .venv/bin/python tools/pip_install.py requirements.txt [more pip arguments]

pip runs as `python -m pip install -r FILE`; instead of pip's full log (hundreds of lines, plus
one "Location ... is ignored" warning per local mirror on some machines) or nothing at all
(`-q`, silent for about two minutes), this prints one line per phase: how many pinned
packages there are, a progress line while pip collects them (every tenth package, or in place
on a terminal), the install phase, and the time it took. When pip fails, the end of its log
is printed and the exit code is pip's.

Deliberate simplifications: progress counts pip's "Collecting" lines (or "Processing", for a
local file) against the pinned lines of the file (its `-r` includes are not followed), so the
count is a guide, not a contract.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

NOISE = "is ignored: it is neither a file nor a directory"
EVERY = 10  # without a terminal, one progress line per this many packages


def pinned(requirements: Path) -> int:
    lines = [line.split("#", 1)[0].strip() for line in requirements.read_text().splitlines()]
    return sum(1 for line in lines if line and not line.startswith("-"))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    requirements, extra = Path(argv[0]), argv[1:]
    total = pinned(requirements)
    tty = sys.stdout.isatty()
    print(f"venv: installing {total} pinned packages from {requirements} "
          "(about two minutes the first time)", flush=True)
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "pip", "install", "--progress-bar", "off",
                             "--disable-pip-version-check", "-r", str(requirements), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: list[str] = []
    collected = 0
    for line in proc.stdout:
        if NOISE in line:
            continue
        log.append(line)
        if line.startswith(("Collecting ", "Processing ")):  # from an index, or a local file
            collected += 1
            name = Path(line.split()[1]).name.split("-")[0]
            if tty:
                print(f"\r  collecting {collected}/{total}: {name:<40}", end="", flush=True)
            elif collected % EVERY == 0 or collected == total:
                print(f"  collecting {collected}/{total} ({name})", flush=True)
        elif line.startswith("Installing collected packages"):
            print(("\n" if tty else "") + "  installing the collected packages", flush=True)
    code = proc.wait()
    seconds = time.monotonic() - start
    if code != 0:
        if tty:
            print()
        print("".join(log[-40:]), end="", file=sys.stderr)
        print(f"venv: pip failed (exit {code}) after {seconds:.0f} s", file=sys.stderr)
        return code
    if tty and collected:
        print()
    print(f"venv: ready in {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
