#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (the zip is unpacked
# in /autograder/source). It installs the grader's own Python packages in a private venv; the
# learner's server only ever runs on the system's /usr/bin/python3 (3.10 or newer, standard
# library only). AUTOGRADER_ROOT replaces /autograder (tests/instructor/test_release.py).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c "import venv, ensurepip" 2>/dev/null
then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv
fi
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q --disable-pip-version-check \
  -r "$ROOT/source/requirements-autograder.txt"
# The hidden tests and the grader stay readable by root only: the learner's code runs as
# another user (a private uid, in every sandbox mode, even when the container refuses
# namespaces) and must not read them, nor write the results.
chmod -R go-rwx "$ROOT/source"
