"""tools/lab.py, the one command from a fresh clone to JupyterLab on the lessons.

The launcher is run for real (a subprocess, as a learner runs it) on a virtual environment
whose packages are already on its path (a .pth to this repository's .venv), so pip's install
step runs and finds nothing to download; then JupyterLab must serve lessons/ on 127.0.0.1.
Installing from the network is checked by tools/check_lab_wheels.py (every pin has a wheel for
Linux, macOS and Windows), not here.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from laptop_helpers import REPO

LAB = REPO / "tools" / "lab.py"
PIP_INSTALL = REPO / "tools" / "pip_install.py"
spec = importlib.util.spec_from_file_location("lab_launcher", LAB)
lab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab)


@pytest.mark.parametrize("tool", [LAB, PIP_INSTALL], ids=lambda p: p.name)
def test_the_launcher_uses_only_the_standard_library(tool):
    # tools/pip_install.py too: the launcher loads it (its short progress, like make venv's)
    tree = ast.parse(tool.read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert imported - {"__future__"} <= set(sys.stdlib_module_names), imported


def test_the_launchers_help_is_spanish(capsys):
    with pytest.raises(SystemExit) as done:
        lab.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("uso: ")
    assert "Abre los cuadernos de la lección en JupyterLab" in out
    assert "muestra esta ayuda y termina" in out and "opciones:" in out
    assert not [w for w in ("usage:", "options:", "show this help", "Open the lessons")
                if w in out]


def test_the_launcher_says_a_bad_option_in_spanish(capsys):
    with pytest.raises(SystemExit) as done:
        lab.main(["--port", "ochenta"])
    assert done.value.code == 2
    assert "error: --port: valor no válido: 'ochenta'" in capsys.readouterr().err


def test_the_launcher_refuses_a_python_older_than_the_pins_need():
    with pytest.raises(lab.LabError, match="3.11.5 o posterior"):
        lab.check_python((3, 10, 12))
    with pytest.raises(lab.LabError):
        lab.check_python((3, 11, 4))
    lab.check_python((3, 11, 5))
    lab.check_python((3, 14, 0))


def test_the_environment_python_is_where_each_system_puts_it(tmp_path):
    assert lab.venv_python(tmp_path, windows=True) == tmp_path / "Scripts" / "python.exe"
    assert lab.venv_python(tmp_path, windows=False) == tmp_path / "bin" / "python"


def test_pip_installs_wheels_only_from_the_pinned_file(tmp_path, monkeypatch):
    asked = []
    pip = lab.sibling("pip_install")
    monkeypatch.setattr(lab, "sibling", lambda name: pip)
    monkeypatch.setattr(pip, "install", lambda *args: asked.append(args) or 0)
    lab.venv_python(tmp_path).parent.mkdir(parents=True)
    lab.venv_python(tmp_path).write_text("")
    lab.install(tmp_path)
    (python, requirements, options, _, _), = asked
    assert requirements == lab.REQUIREMENTS and "--only-binary=:all:" in options
    pins = [line for line in lab.REQUIREMENTS.read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert pins and all(re.match(r"^[A-Za-z0-9_.-]+==[^ ;]+( ; .+)?$", p) for p in pins), pins


def test_the_lab_pins_are_the_versions_the_tests_use():
    """Every pin shared with requirements.txt has the same version there."""
    def pins(path):
        found = {}
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].split(";", 1)[0].strip()
            if "==" in line:
                name, version = line.split("==")
                found[re.sub(r"[-_.]+", "-", name).lower()] = version
        return found
    lab_pins, project = pins(lab.REQUIREMENTS), pins(REPO / "requirements.txt")
    shared = set(lab_pins) & set(project)
    assert {"jupyterlab", "ipykernel", "ipywidgets", "pytest", "mcp"} <= shared
    assert {n: lab_pins[n] for n in shared} == {n: project[n] for n in shared}
    assert set(lab_pins) - shared == {"appnope", "colorama", "pywin32", "pywinpty"}


def test_an_up_to_date_environment_is_reused_and_a_changed_file_reinstalls(tmp_path):
    folder = tmp_path / "v"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("")
    (folder / "Scripts").mkdir()
    (folder / "Scripts" / "python.exe").write_text("")
    assert not lab.up_to_date(folder)
    (folder / lab.STAMP).write_text(lab.requirements_digest() + "\n")
    assert lab.up_to_date(folder)
    (folder / lab.STAMP).write_text("0" * 64 + "\n")
    assert not lab.up_to_date(folder)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def seeded_venv(tmp_path):
    """A fresh venv made by the launcher's own code, with .venv's packages on its path."""
    folder = tmp_path / "venv-lab"
    lab.venv.EnvBuilder(with_pip=False).create(folder)
    site = Path(subprocess.run([str(lab.venv_python(folder)), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    site.mkdir(parents=True, exist_ok=True)
    (site / "dev-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return folder


@pytest.mark.timeout(240)
def test_one_command_installs_and_opens_jupyterlab_on_the_lessons(seeded_venv):
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(LAB), "--venv", str(seeded_venv),
                             "--no-browser", "--port", str(port)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    seen = []
    try:
        deadline = time.monotonic() + 180
        token = None
        while time.monotonic() < deadline and token is None:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            match = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=(\w+)", line)
            token = match and match[1]
        assert token, "".join(seen)[-3000:]
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/contents/",
                                         headers={"Authorization": f"token {token}"})
        for _ in range(300):  # the address is printed as the server starts listening
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    listing = json.load(response)
                break
            except ConnectionRefusedError:
                time.sleep(0.1)
            except urllib.error.URLError as exc:
                if not isinstance(exc.reason, ConnectionRefusedError):
                    raise
                time.sleep(0.1)
        names = {item["name"] for item in listing["content"]}
        assert {"01_roots.ipynb", "02_formularios.ipynb", "mcp_ui"} <= names
        with urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/api/kernelspecs",
                headers={"Authorization": f"token {token}"}), timeout=30) as response:
            assert "python3" in json.load(response)["kernelspecs"]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
    text = "".join(seen)
    assert "instalando JupyterLab" in text
    assert (seeded_venv / lab.STAMP).read_text().strip() == lab.requirements_digest()
    # pip's account is a few lines, its whole log a file (it was about 330 lines on screen)
    before_lab = text.split("[lab] abriendo JupyterLab")[0].splitlines()
    assert len(before_lab) <= 12 and all(line.startswith("[lab]") for line in before_lab)
    assert "Requirement already satisfied" in (seeded_venv / "pip-install.log").read_text()


def test_a_failed_install_names_the_file_with_pips_whole_log(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "v"
    lab.venv.EnvBuilder(with_pip=False).create(folder)
    site = Path(subprocess.run([str(lab.venv_python(folder)), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "dev-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    broken = tmp_path / "requirements-lab.txt"
    broken.write_text("./no-existe-0.1-py3-none-any.whl\n")  # fails at once, offline
    monkeypatch.setattr(lab, "REQUIREMENTS", broken)
    with pytest.raises(lab.LabError) as failed:
        lab.install(folder)
    log = folder / "pip-install.log"
    assert str(log) in str(failed.value)
    assert "no-existe-0.1-py3-none-any.whl" in log.read_text()
    assert not (folder / lab.STAMP).exists()
    assert f"su registro completo está en {log}" in capsys.readouterr().err


def test_the_launcher_says_plainly_that_intel_macs_have_no_wheels():
    with pytest.raises(lab.LabError, match="Mac con procesador Intel"):
        lab.check_platform("Darwin", "x86_64")
    for system, machine in (("Darwin", "arm64"), ("Windows", "AMD64"), ("Linux", "x86_64"),
                            ("Linux", "aarch64")):
        lab.check_platform(system, machine)
