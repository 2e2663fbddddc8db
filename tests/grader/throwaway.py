"""A throw-away copy of the repository and a throw-away venv, for hostile fixtures.

Hostile submissions attack the grader that runs them; until a boundary holds, such an attack
writes as root. So they never run against the working tree or its venv: `copy_repository()`
copies only what grading needs (code/ and grader/), `make_venv()` makes a venv with
`--without-pip` and copies into it only pytest and the distributions it depends on (found
from their metadata, nothing downloaded). The grader under test is then started as
`<venv>/bin/python -m grader ...` with the copy as its working folder.
"""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from packaging.requirements import Requirement

PARTS = ("code", "grader")


def copy_repository(source, target):
    os.makedirs(target)
    for part in PARTS:
        shutil.copytree(os.path.join(source, part), os.path.join(target, part),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True)
    return target


def distributions(root="pytest"):
    """The installed distributions `root` needs (itself included), by their metadata."""
    found, pending = {}, [root]
    while pending:
        name = re.sub(r"[-_.]+", "-", pending.pop()).lower()
        if name in found:
            continue
        dist = importlib.metadata.distribution(name)
        found[name] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return list(found.values())


def make_venv(target):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", target], check=True,
                   capture_output=True)
    python = os.path.join(target, "bin", "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"], check=True,
                             capture_output=True, text=True).stdout.strip()
    here = os.path.realpath(sysconfig.get_paths()["purelib"])
    for dist in distributions():
        for file in dist.files or []:
            source = os.path.realpath(str(dist.locate_file(file)))
            if not source.startswith(here + os.sep) or "__pycache__" in source:
                continue  # scripts outside site-packages, caches
            destination = os.path.join(purelib, os.path.relpath(source, here))
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copy2(source, destination)
    return python
