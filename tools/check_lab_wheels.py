"""Check that every pin of tools/requirements-lab.txt has a wheel for each platform a learner
may have, so tools/lab.py never compiles anything (it installs with --only-binary=:all:).

    .venv/bin/python tools/check_lab_wheels.py [--python 3.12 ...] [--platform win_amd64 ...]

For each (platform, Python) it keeps the lines whose markers hold there (evaluated with
`packaging` for that platform, not for this machine) and asks pip to resolve them exactly,
binary only, for that platform (`pip install --dry-run --no-deps --only-binary=:all:
--platform ... --python-version ...`): pip reads the package index (PyPI) and fails on any pin
without a matching wheel. Needs the network (PyPI); not part of `make test`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from packaging.markers import Marker

REQUIREMENTS = Path(__file__).resolve().parent / "requirements-lab.txt"
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
OLDEST_MICRO = {"3.11": "3.11.5"}  # soupsieve 4.1.3 needs 3.11.5 (tools/lab.py checks it)
# name: (pip --platform values, marker environment). Not Intel Macs (macOS x86_64): several
# pins (argon2-cffi-bindings 26.2.0, cryptography 50.0.2) publish no wheel for them any more;
# tools/lab.py says so and points to the browser edition.
PLATFORMS = {
    "linux-x86_64": (["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                      "linux_x86_64"],
                     {"sys_platform": "linux", "os_name": "posix", "platform_system": "Linux",
                      "platform_machine": "x86_64"}),
    "linux-aarch64": (["manylinux_2_28_aarch64", "manylinux_2_17_aarch64",
                       "manylinux2014_aarch64"],
                      {"sys_platform": "linux", "os_name": "posix", "platform_system": "Linux",
                       "platform_machine": "aarch64"}),
    "macos-arm64": (["macosx_11_0_arm64"],
                    {"sys_platform": "darwin", "os_name": "posix", "platform_system": "Darwin",
                     "platform_machine": "arm64"}),
    "windows-amd64": (["win_amd64"],
                      {"sys_platform": "win32", "os_name": "nt", "platform_system": "Windows",
                       "platform_machine": "AMD64"}),
}


def lines_for(environment: dict) -> list[str]:
    kept = []
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, _, marker = line.partition(";")
        if not marker.strip() or Marker(marker).evaluate(environment):
            kept.append(spec.strip())
    return kept


def check(platform: str, python: str) -> tuple[bool, str]:
    tags, markers = PLATFORMS[platform]
    full = OLDEST_MICRO.get(python, f"{python}.0")
    environment = {**markers, "python_version": python, "python_full_version": full,
                   "implementation_name": "cpython",
                   "platform_python_implementation": "CPython"}
    with tempfile.TemporaryDirectory() as tmp:
        pins = Path(tmp) / "pins.txt"
        pins.write_text("\n".join(lines_for(environment)) + "\n")
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "-q",
               "--ignore-installed", "--only-binary=:all:", "--implementation", "cp",
               "--python-version", full, "--target", str(Path(tmp) / "t"),
               "--disable-pip-version-check", "-r", str(pins)]
        for tag in tags:
            cmd += ["--platform", tag]
        run = subprocess.run(cmd, capture_output=True, text=True)
    output = "\n".join(line for line in (run.stdout + run.stderr).splitlines()
                       if "is ignored: it is neither" not in line)
    return run.returncode == 0, output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", choices=PYTHONS)
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS))
    args = parser.parse_args()
    failed = 0
    for platform in args.platform or PLATFORMS:
        for python in args.python or PYTHONS:
            start = time.monotonic()
            ok, output = check(platform, python)
            print(f"{platform:14} CPython {python}: "
                  f"{'ok' if ok else 'NO WHEEL'} ({time.monotonic() - start:.0f} s)", flush=True)
            if not ok:
                failed += 1
                print("   " + output.strip().replace("\n", "\n   ")[-2000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
