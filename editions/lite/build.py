"""Build the course's JupyterLite site: static files that run the notebooks in the browser.

    .venv-lite/bin/python editions/lite/build.py [--from COURSE | --content DIR] [--out DIR]
                                                 [--force] [--sourcemaps] [--no-bytecode]

Run it through `make lite` (which makes .venv-lite from editions/lite/requirements-lite.txt). Every
input is pinned and checked; downloads come only from the package registries, through
their own clients, and are cached under build/lite-cache/ so a rebuild is fast:

- Pyodide from npm: `npm ci` with package.json and the committed package-lock.json (here)
  (npm checks the sha512 integrity recorded there). The npm package has the runtime only.
- The pure-Python wheels the kernel needs, from PyPI at the versions Pyodide's lock file
  names (pyodide-wheels.txt, sha256 pinned, checked by `pip download --require-hashes`).
  PyPI's files differ byte for byte from Pyodide's own builds, so the lock file is rewritten
  with the pinned sha256 values and pruned to exactly what the site ships.
- The wheels `piplite.install` serves from the site's own index: comm (the kernel needs it),
  ipywidgets and jupyterlab_widgets (piplite-wheels.txt, sha256 pinned), the official MCP
  SDK for notebook 05 (sdk-wheels.txt, pure Python, and sdk-wasm-wheels.txt, PyPI's
  WebAssembly pydantic-core; sha256 pinned), the stand-ins `course-lite-shims` made here
  from shims/ (cryptography, rpds), and the course wheel `course-lite` made here from the
  content folder (see course_lite.py).

What the site holds is staged from a course folder (--from, default this repository; `make
lite` gives the student edition, build/release/student, which `make release` builds first):
code/ and its folders, lessons/ (notebooks and UI module) and the public grader (grader/ without its
reference solutions and hidden tests, which the student edition does not have anyway: the
in-browser `ui.revisar` runs the public checks in the page). It is staged from a clean copy
of the course, never from the working files a learner has been using (`stage_course`): the
last commit when the folder is a git checkout (what JupyterLab autosaved, a solution typed
into a notebook, a scratch notebook stay out, and the build names what it left out), and
every notebook stored without outputs (tools/strip_outputs.py's rule), so the site opens with
nothing answered. Learner files (soluciones/) and caches are left out; the build fails if
anything instructor-only got in (editions/common.py: `stage_content` and the one leak check,
shared with the other editions). --content DIR instead copies a ready content folder as it is
(the tests add a probe notebook that way). The built site never falls back to PyPI or a CDN:
every URL it loads is relative to the site.

The standard library's zip and the kernel's wheels get each module's bytecode, made by
Pyodide itself under Node (bytecode.py, add_bytecode()), so a page load does not compile
them again; --no-bytecode leaves it out (the baseline of benchmarks/lite_bench.py).

The build is skipped when the output is up to date (same inputs, see fingerprint()); it is
written to a temporary folder and moved into place only when it succeeded.

`make lite` may be run by a learner: its progress lines and the errors a learner can act on
(no npm, no node, a command that failed, no course folder) are Spanish, with decimal commas;
the options' help and the pin checks a maintainer meets stay in English.

    .venv-lite/bin/python editions/lite/build.py --update-pins    # after changing the npm pin
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

LITE = Path(__file__).resolve().parent
sys.path.insert(0, str(LITE.parent.parent))  # editions/common.py
from editions.common import (  # noqa: E402
    REPO,
    BuildError,
    check_content,
    logger,
    stage_content,
)

log = logger("lite")
CACHE = REPO / "build" / "lite-cache"
DEFAULT_OUT = REPO / "build" / "lite"

PYODIDE_PINS = LITE / "pyodide-wheels.txt"
PIPLITE_PINS = LITE / "piplite-wheels.txt"
SDK_PINS = LITE / "sdk-wheels.txt"            # the official MCP SDK (notebook 05), pure Python
SDK_WASM_PINS = LITE / "sdk-wasm-wheels.txt"  # ...and its one compiled piece, pydantic-core
SHIMS = LITE / "shims"                        # stand-ins packed as wheels (shims/<package>/)
SHIM_DIST = "course-lite-shims"  # shims/cryptography and shims/rpds: see their __init__.py
BYTECODE = LITE / "bytecode.py"          # adds each module's .pyc to what the kernel loads...
BYTECODE_RUNNER = LITE / "bytecode.mjs"  # ...run inside Pyodide under Node
# What the kernel loads from Pyodide's lock file: micropip first, then (through piplite)
# ipython and jedi, which Pyodide's lock provides (micropip vendors its packaging).
KERNEL_ROOTS = ("micropip", "ipython", "jedi")
# Files of the npm package the site needs (the rest is TypeScript types, a node console and
# source maps).
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json")
# The only labextensions the site may contain: the kernel, the widget manager and the
# syntax-highlighting theme that jupyter-server's nbconvert brings along.
EXTENSIONS = {"@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager",
              "jupyterlab_pygments"}
COURSE_DIST = "course-lite"
COURSE_MODULE = "course_lite"
WHEEL_TAGS = ["--only-binary=:all:", "--python-version", "3.14", "--implementation", "py",
              "--platform", "any"]
# PyPI's WebAssembly wheels for this Pyodide: its lock file's abi_version (2026_0), PEP 783 tags.
WASM_TAGS = ["--only-binary=:all:", "--python-version", "3.14", "--implementation", "cp",
             "--abi", "cp314", "--platform", "pyemscripten_2026_0_wasm32"]


def decimal(value: float) -> str:
    """A measure in a progress line, as Spanish writes it: one decimal, with a comma."""
    return f"{value:.1f}".replace(".", ",")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(cmd: list[str], quiet: bool = False, **kwargs) -> None:
    """Run a command; its output is shown (only on failure if ``quiet``) without pip's
    "Location ... is ignored" noise (local mirrors of this machine's pip configuration)."""
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    except OSError as exc:
        raise BuildError(f"no se pudo ejecutar {cmd[0]}: {exc}") from exc
    output = "".join(line for line in (result.stdout + result.stderr).splitlines(True)
                     if "is ignored: it is neither a file nor a directory" not in line)
    if result.returncode != 0:
        raise BuildError(f"la orden falló ({result.returncode}): {' '.join(map(str, cmd))}"
                         f"\n{output[-6000:]}")
    if output.strip() and not quiet:
        print(output, end="" if output.endswith("\n") else "\n", flush=True)


# ---------------------------------------------------------------- pins and fingerprints


def read_pins(path: Path) -> dict[str, tuple[str, str, set[str]]]:
    """{normalized name: (name, version, {sha256, ...})} from a `name==ver --hash=...` file."""
    pins = {}
    text = path.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *options = line.split()
        name, sep, version = spec.partition("==")
        hashes = {o.removeprefix("--hash=sha256:") for o in options
                  if o.startswith("--hash=sha256:")}
        if not sep or not hashes:
            raise BuildError(f"{path.name}: every line must be name==version --hash=sha256:...")
        pins[norm(name)] = (name, version, hashes)
    return pins


def content_files(folder: Path) -> list[Path]:
    """Every file of a content folder that goes into the site, in a stable order."""
    skipped = {"__pycache__", ".ipynb_checkpoints", "soluciones", ".git"}
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and not skipped & set(p.relative_to(folder).parts)
                  and p.suffix != ".pyc" and p.name != ".DS_Store")


def fingerprint(content: Path, sourcemaps: bool, bytecode: bool = True) -> str:
    """A digest of everything the site is made from: a rebuild is skipped when it matches."""
    digest = hashlib.sha256(f"sourcemaps={sourcemaps}\nbytecode={bytecode}\n".encode())
    inputs = [LITE / name for name in ("build.py", "course_lite.py", "bytecode.py",
                                       "bytecode.mjs", "requirements-lite.txt",
                                       "package-lock.json", "pyodide-wheels.txt",
                                       "piplite-wheels.txt", "sdk-wheels.txt",
                                       "sdk-wasm-wheels.txt", "jupyter-lite.json",
                                       "overrides.json")]
    inputs += sorted(p for p in SHIMS.rglob("*.py"))
    for path in inputs:
        digest.update(f"{path.relative_to(LITE)}\n".encode() + path.read_bytes())
    for path in content_files(content):
        digest.update(f"content/{path.relative_to(content).as_posix()}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def stamp_path(out: Path) -> Path:
    return out.parent / f".{out.name}.fingerprint"


# ---------------------------------------------------------------- content


def copy_content(source: Path, dest: Path) -> Path:
    """A copy of a content folder holding only content_files() (no learner files, caches)."""
    for path in content_files(source):
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return dest


def git(course: Path, *args: str) -> str | None:
    """A git command's output in `course`, or None when it is no git checkout's top."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=course,
                             capture_output=True, text=True, check=True).stdout.strip()
        if Path(top).resolve() != course.resolve():
            return None
        return subprocess.run(["git", *args], cwd=course, capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def committed_course(course: Path, dest: Path) -> Path:
    """The course as its last commit has it, in `dest`: never the working files. A folder
    that is no git checkout is taken as it is (and said so)."""
    if git(course, "rev-parse", "--verify", "-q", "HEAD") is None:
        log(f"{course} no es un repositorio git con algún commit: el sitio lleva sus archivos "
            "tal cual (sin las salidas de los cuadernos)")
        return course
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=course,
                             capture_output=True, check=True).stdout
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)  # noqa: S202 (our own repository's last commit)
    changed = git(course, "status", "--porcelain", "--untracked-files=all", "--", "code",
                  "lessons", "grader") or ""
    left_out = sorted({line[3:].split(" -> ")[-1] for line in changed.splitlines()})
    if left_out:
        shown = ", ".join(left_out[:8]) + (f" y {len(left_out) - 8} más"
                                           if len(left_out) > 8 else "")
        log(f"se construye desde el último commit: los cambios sin commit no entran en el "
            f"sitio ({shown})")
    return dest


def strip_notebooks(content: Path) -> list[str]:
    """Store every notebook of the content without outputs (tools/strip_outputs.py's rule);
    the ones that had some, by name."""
    sys.path.insert(0, str(REPO / "tools"))
    import nbformat
    from strip_outputs import strip

    stripped = []
    for path in sorted(content.rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if strip(nb):
            nbformat.write(nb, path)
            stripped.append(path.relative_to(content).as_posix())
    return stripped


def stage_course(course: Path, dest: Path) -> Path:
    """The site's content from a course folder: its last commit (committed_course), staged
    (editions/common.py's stage_content) with every notebook stripped of outputs."""
    with tempfile.TemporaryDirectory(prefix="lite-course-") as tmp:
        content = stage_content(dest, committed_course(course, Path(tmp) / "course"))
    stripped = strip_notebooks(content)
    if stripped:
        log(f"sin las salidas de {', '.join(stripped)}")
    return content


# ---------------------------------------------------------------- pyodide from npm


def npm_pyodide(cache: Path = CACHE) -> Path:
    """`npm ci` into CACHE/npm (only when the lock file changed); the package dir."""
    folder = cache / "npm"
    lock = (LITE / "package-lock.json").read_bytes()
    stamp = folder / "node_modules" / ".lite-stamp"
    package = folder / "node_modules" / "pyodide"
    if not (stamp.exists() and stamp.read_text() == hashlib.sha256(lock).hexdigest()):
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("no encuentro npm: instala Node.js y npm (Debian: apt-get install "
                             "npm)")
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(LITE / name, folder / name)
        log("npm ci (Pyodide, desde el registro de npm)")
        run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder)
        stamp.write_text(hashlib.sha256(lock).hexdigest())
    wanted = json.loads((LITE / "package.json").read_text())["dependencies"]["pyodide"]
    got = json.loads((package / "package.json").read_text())["version"]
    if got != wanted:
        raise BuildError(f"npm installed pyodide {got}, package.json pins {wanted}")
    return package


def lock_closure(lock: dict, roots=KERNEL_ROOTS) -> list[str]:
    """Keys of Pyodide's lock file needed by ``roots`` (with their dependencies)."""
    packages = lock["packages"]
    by_norm = {norm(key): key for key in packages}
    found: list[str] = []

    def walk(name: str) -> None:
        key = by_norm.get(norm(name))
        if key is None:
            raise BuildError(f"{name} is not in Pyodide's lock file")
        if key not in found:
            found.append(key)
            for dependency in packages[key]["depends"]:
                walk(dependency)

    for root in roots:
        walk(root)
    return found


# ---------------------------------------------------------------- wheels from PyPI


def wheel_file(folder: Path, name: str, version: str) -> list[Path]:
    """Wheels in ``folder`` named ``name`` at ``version`` (file names per PEP 427)."""
    return [w for w in sorted(folder.glob("*.whl"))
            if [norm(w.name.split("-")[0]), w.name.split("-")[1]] == [norm(name), version]]


def cached_wheel(folder: Path, name: str, version: str, hashes: set[str]) -> Path | None:
    """The wheel in ``folder`` matching the pin (name, version, one of the sha256 values)."""
    return next((w for w in wheel_file(folder, name, version) if sha256(w) in hashes), None)


def download_wheels(pins_file: Path, folder: Path, tags=WHEEL_TAGS) -> dict[str, Path]:
    """The pinned wheels, from the cache or `pip download --require-hashes`; {norm: path}."""
    pins = read_pins(pins_file)
    folder.mkdir(parents=True, exist_ok=True)
    wheels = {key: cached_wheel(folder, *pin) for key, pin in pins.items()}
    if None in wheels.values():
        missing = sorted(k for k, w in wheels.items() if w is None)
        log(f"descargando con pip: {', '.join(missing)}")
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
             "--disable-pip-version-check", *tags, "-d", str(folder), "-r", str(pins_file)])
        wheels = {key: cached_wheel(folder, *pin) for key, pin in pins.items()}
        missing = sorted(k for k, w in wheels.items() if w is None)
        if missing:
            raise BuildError(f"pip download did not give the pinned wheels: {missing}")
    return wheels


def offline_pyodide(package: Path, static: Path, wheels_cache: Path) -> list[str]:
    """static/pyodide: the npm runtime plus the kernel's wheels, with a rewritten lock."""
    static.mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copy2(package / name, static / name)
    lock = json.loads((package / "pyodide-lock.json").read_text())
    closure = lock_closure(lock)
    pins = read_pins(PYODIDE_PINS)
    wanted = {norm(lock["packages"][k]["name"]): lock["packages"][k]["version"] for k in closure}
    pinned = {key: version for key, (_, version, _) in pins.items()}
    if wanted != pinned:
        raise BuildError(
            f"{PYODIDE_PINS.name} does not match Pyodide's lock file; run "
            f"`.venv-lite/bin/python editions/lite/build.py --update-pins`\n  lock: {wanted}\n"
            f"  pins: {pinned}")
    wheels = download_wheels(PYODIDE_PINS, wheels_cache)
    for key in closure:
        entry = lock["packages"][key]
        wheel = wheels[norm(entry["name"])]
        shutil.copy2(wheel, static / wheel.name)
        entry["file_name"] = wheel.name
        entry["sha256"] = sha256(wheel)
    lock["packages"] = {key: lock["packages"][key] for key in sorted(closure)}
    (static / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True))
    return sorted(closure)


# ---------------------------------------------------------------- the course wheel


def write_wheel(folder: Path, dist: str, module: str, version: str,
                files: dict[str, bytes], summary: str) -> Path:
    """A pure-Python wheel `dist` holding `files` ({path in the wheel: bytes})."""
    dist_info = f"{module}-{version}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
        f"Summary: {summary} (made by editions/lite/build.py)\n").encode()
    files[f"{dist_info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: editions/lite/build.py\n"
                                   b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    record = []
    for name, data in files.items():
        b64 = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={b64},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel


def course_wheel(content: Path, folder: Path, digest: str) -> Path:
    """A pure-Python wheel: course_lite (the helper, with the pins `ui.diagnostico()` and
    `ui.install_sdk()` read) plus the content's non-notebook files."""
    files = {f"{COURSE_MODULE}/__init__.py": (LITE / "course_lite.py").read_bytes()}
    for pins in (PIPLITE_PINS, SDK_PINS, SDK_WASM_PINS):
        files[f"{COURSE_MODULE}/{pins.name}"] = pins.read_bytes()
    for path in content_files(content):
        if path.suffix != ".ipynb":
            rel = path.relative_to(content).as_posix()
            files[f"{COURSE_MODULE}/files/{rel}"] = path.read_bytes()
    return write_wheel(folder, COURSE_DIST, COURSE_MODULE, f"1.0+{digest[:12]}", files,
                       "The course's modules for JupyterLite")


def shim_wheel(folder: Path) -> Path:
    """`course-lite-shims`: the stand-ins in shims/ (cryptography, rpds; see their docs)."""
    files = {path.relative_to(SHIMS).as_posix(): path.read_bytes()
             for path in sorted(SHIMS.rglob("*.py"))}
    return write_wheel(folder, SHIM_DIST, SHIM_DIST.replace("-", "_"), "0+course.lite", files,
                       "Stand-ins for what the MCP SDK needs from cryptography and rpds-py, "
                       "for Pyodide")


# ---------------------------------------------------------------- preloading


# Loaded with Pyodide itself when a kernel starts (jupyter-lite.json: loadPyodideOptions.packages),
# in one go from the lock file, instead of one `piplite.install` after another: the kernel's own
# wheels (from the kernel extension's folder) and what every notebook's first cell installs
# (from the site's index), which that cell then finds installed. {lock name: (folder in the
# site, wheel name prefix, depends, imports)}.
KERNEL_PYPI = "extensions/@jupyterlite/pyodide-kernel-extension/static/pypi"
PRELOADED = {
    "piplite": (KERNEL_PYPI, "piplite-", [], ["piplite"]),
    "pyodide-kernel": (KERNEL_PYPI, "pyodide_kernel-", ["comm", "ipython"], ["pyodide_kernel"]),
    "ipykernel": (KERNEL_PYPI, "ipykernel-", ["pyodide-kernel"], ["ipykernel"]),
    "widgetsnbextension": (KERNEL_PYPI, "widgetsnbextension-4.", [], ["widgetsnbextension"]),
    "comm": ("pypi", "comm-", [], ["comm"]),
    "jupyterlab-widgets": ("pypi", "jupyterlab_widgets-", [], ["jupyterlab_widgets"]),
    "ipywidgets": ("pypi", "ipywidgets-", ["comm", "ipython", "traitlets", "widgetsnbextension",
                                           "jupyterlab-widgets"], ["ipywidgets"]),
    COURSE_DIST: ("pypi", f"{COURSE_MODULE}-", [], [COURSE_MODULE]),
}


def preload_kernel_packages(site: Path) -> None:
    """Add PRELOADED to the site's Pyodide lock file (each wheel copied next to it, with its
    sha256) and check jupyter-lite.json preloads exactly the kernel's packages and these."""
    lock_file = site / "static" / "pyodide" / "pyodide-lock.json"
    lock = json.loads(lock_file.read_text())
    for name, (folder, prefix, depends, imports) in PRELOADED.items():
        found = sorted((site / folder).glob(f"{prefix}*.whl"))
        if len(found) != 1:
            raise BuildError(f"preloading {name}: expected one {prefix}*.whl in {folder}, "
                             f"found {[w.name for w in found]}")
        wheel = found[0]
        shutil.copy2(wheel, lock_file.parent / wheel.name)
        lock["packages"][name] = {
            "name": name, "version": wheel.name.split("-")[1], "file_name": wheel.name,
            "install_dir": "site", "sha256": sha256(wheel), "package_type": "package",
            "imports": imports, "depends": depends, "unvendored_tests": False,
            "shared_library": False}
    lock_file.write_text(json.dumps(lock, indent=1, sort_keys=True))
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    settings = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    wanted = {*KERNEL_ROOTS, *PRELOADED}
    preloaded = set(settings.get("loadPyodideOptions", {}).get("packages", []))
    if preloaded != wanted:
        raise BuildError(f"jupyter-lite.json preloads {sorted(preloaded)}, the build "
                         f"provides {sorted(wanted)}")


# ---------------------------------------------------------------- bytecode


def add_bytecode(site: Path, npm_package: Path, cache: Path) -> None:
    """Add their modules' bytecode to the standard library's zip and every wheel the kernel
    loads (bytecode.py, run in Pyodide under Node by bytecode.mjs: Pyodide's own bytecode),
    and give the lock file their new sha256. Without it each page load compiles again every
    module it imports. Results are cached by the input's sha256 (in CACHE/bytecode), so a
    rebuild compiles only what changed, usually the course wheel alone."""
    static = site / "static" / "pyodide"
    files = [static / "python_stdlib.zip", *sorted(static.glob("*.whl"))]
    tool = hashlib.sha256(BYTECODE.read_bytes() + BYTECODE_RUNNER.read_bytes()
                          + (npm_package / "package.json").read_bytes()).hexdigest()[:16]
    folder = cache / "bytecode"
    folder.mkdir(parents=True, exist_ok=True)
    compiled = {path: folder / f"{sha256(path)}-{tool}{path.suffix}" for path in files}
    missing = {path: out for path, out in compiled.items() if not out.exists()}
    if missing:
        node = shutil.which("node")
        if node is None:
            raise BuildError("no encuentro node: la construcción compila el Python del sitio en "
                             "Pyodide con Node (Debian: apt-get install nodejs)")
        with tempfile.TemporaryDirectory(prefix="bytecode-", dir=folder) as tmp:
            targets = {path: Path(tmp) / path.name for path in missing}
            job = {"stdlib": [[str(p), str(t)] for p, t in targets.items() if p.suffix == ".zip"],
                   "wheels": [[str(p), str(t)] for p, t in targets.items() if p.suffix == ".whl"]}
            (Path(tmp) / "job.json").write_text(json.dumps(job))
            log(f"compilando el bytecode de {len(missing)} archivos en Pyodide (node)")
            run([node, str(BYTECODE_RUNNER), str(npm_package), str(Path(tmp) / "job.json")],
                quiet=True)
            for path, target in targets.items():
                target.replace(missing[path])
    for path, out in compiled.items():
        shutil.copyfile(out, path)
    lock_file = static / "pyodide-lock.json"
    lock = json.loads(lock_file.read_text())
    for entry in lock["packages"].values():
        entry["sha256"] = sha256(static / entry["file_name"])
    lock_file.write_text(json.dumps(lock, indent=1, sort_keys=True))


# ---------------------------------------------------------------- the build


def check_site(site: Path) -> None:
    """Fail loudly if the built site could load anything from outside itself."""
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    settings = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    if settings.get("pyodideUrl") != "./static/pyodide/pyodide.mjs":
        raise BuildError(f"pyodideUrl is {settings.get('pyodideUrl')!r}, not the local copy")
    if settings.get("disablePyPIFallback") is not True:
        raise BuildError("disablePyPIFallback is not set: piplite could reach PyPI")
    urls = settings.get("pipliteUrls", [])
    if not urls or not all(u.startswith("./") for u in urls):
        raise BuildError(f"pipliteUrls must all be local: {urls}")
    extensions = {e["name"] for e in config.get("federated_extensions", [])}
    if extensions != EXTENSIONS:
        raise BuildError(f"unexpected labextensions: {sorted(extensions ^ EXTENSIONS)}")
    index = json.loads((site / "pypi" / "all.json").read_text())
    for project in ("comm", "ipywidgets", "jupyterlab-widgets", COURSE_DIST, "mcp",
                    "pydantic-core", SHIM_DIST):
        if project not in index:
            raise BuildError(f"{project} is missing from the site's package index")


def build(content: Path, out: Path, sourcemaps: bool, digest: str, cache: Path = CACHE,
          bytecode: bool = True) -> None:
    npm_package = npm_pyodide(cache)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lite-work-", dir=out.parent) as tmp:
        work = Path(tmp) / "lite-dir"
        work.mkdir()
        for name in ("jupyter-lite.json", "overrides.json"):
            shutil.copy2(LITE / name, work / name)
        shipped = offline_pyodide(npm_package, work / "static" / "pyodide",
                                  cache / "wheels")
        log(f"Pyodide {json.loads((npm_package / 'package.json').read_text())['version']} "
            f"con {len(shipped)} wheels: {', '.join(shipped)}")
        pypi = work / "pypi"
        pypi.mkdir()
        for pins, tags in ((PIPLITE_PINS, WHEEL_TAGS), (SDK_PINS, WHEEL_TAGS),
                           (SDK_WASM_PINS, WASM_TAGS)):
            for wheel in download_wheels(pins, cache / "wheels", tags).values():
                shutil.copy2(wheel, pypi / wheel.name)
        shim_wheel(pypi)
        course = course_wheel(content, pypi, digest)
        log(f"índice de piplite: {', '.join(sorted(p.name for p in pypi.glob('*.whl')))}")
        site = Path(tmp) / "site"
        cmd = [str(Path(sys.executable).with_name("jupyter")), "lite", "build",
               "--lite-dir", str(work), "--contents", str(content), "--output-dir", str(site),
               "--apps", "lab", "--no-unused-shared-packages"]
        if not sourcemaps:
            cmd.append("--no-sourcemaps")
        log(f"jupyter lite build --contents {content}")
        run(cmd, quiet=True, cwd=work)
        preload_kernel_packages(site)
        if bytecode:
            add_bytecode(site, npm_package, cache)
        check_site(site)
        if course.name not in {p.name for p in (site / "pypi").glob("*.whl")}:
            raise BuildError("the course wheel did not reach the site")
        stamp_path(out).unlink(missing_ok=True)
        if out.exists():
            shutil.rmtree(out)
        site.rename(out)
    stamp_path(out).write_text(digest + "\n")


def site_size(site: Path) -> tuple[int, int, int]:
    """(bytes, bytes without *.map, files)."""
    files = [p for p in site.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    maps = sum(p.stat().st_size for p in files if p.name.endswith(".map"))
    return total, total - maps, len(files)


# ---------------------------------------------------------------- pins update


def update_pins() -> None:
    """Rewrite the wheel pin files: the kernel's closure from Pyodide's lock file (as pinned
    in package-lock.json) and the piplite wheels at their current versions."""
    lock = json.loads((npm_pyodide() / "pyodide-lock.json").read_text())
    specs = [f"{lock['packages'][k]['name']}=={lock['packages'][k]['version']}"
             for k in lock_closure(lock)]
    piplite = [f"{name}=={version}" for name, version, _ in read_pins(PIPLITE_PINS).values()]
    for target, wanted in ((PYODIDE_PINS, specs), (PIPLITE_PINS, piplite)):
        with tempfile.TemporaryDirectory() as tmp:
            run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *WHEEL_TAGS,
                 "-d", tmp, *wanted])
            header = [line for line in target.read_text().splitlines() if line.startswith("#")]
            lines = []
            for spec in sorted(wanted, key=str.lower):
                name, _, version = spec.partition("==")
                (wheel,) = wheel_file(Path(tmp), name, version)
                lines.append(f"{spec} --hash=sha256:{sha256(wheel)}")
            target.write_text("\n".join(header + lines) + "\n")
            log(f"wrote {target.name}: {len(lines)} pins")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="course", type=Path, default=REPO,
                        help="course folder to stage the site from (default: this repository; "
                             "make lite: build/release/student)")
    parser.add_argument("--content", type=Path,
                        help="a ready content folder, copied as it is (instead of --from)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="site folder")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help="download cache (default: build/lite-cache)")
    parser.add_argument("--sourcemaps", action="store_true",
                        help="keep the JavaScript source maps (about 45 MB more)")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="ship sources only, compiled at each page load (the baseline "
                             "benchmarks/lite_bench.py measures the bytecode against)")
    parser.add_argument("--update-pins", action="store_true", help=update_pins.__doc__)
    args = parser.parse_args(argv)
    try:
        if args.update_pins:
            update_pins()
            return 0
        out = args.out.resolve()
        with tempfile.TemporaryDirectory(prefix="lite-content-") as tmp:
            if args.content is None:
                if not (args.course / "code").is_dir():
                    raise BuildError(f"no es la carpeta del curso (no tiene code/): "
                                     f"{args.course}")
                content = stage_course(args.course.resolve(), Path(tmp) / "content")
            elif not args.content.is_dir():
                raise BuildError(f"no existe la carpeta de contenido: {args.content}")
            else:
                content = copy_content(args.content.resolve(), Path(tmp) / "content")
                check_content(content)
            digest = fingerprint(content, args.sourcemaps, args.bytecode)
            stamp = stamp_path(out)
            if (not args.force and (out / "index.html").exists() and stamp.exists()
                    and stamp.read_text().strip() == digest):
                log(f"{out} está al día")
                return 0
            start = time.monotonic()
            build(content, out, args.sourcemaps, digest, args.cache.resolve(), args.bytecode)
        total, without_maps, count = site_size(out)
        log(f"construido {out} en {decimal(time.monotonic() - start)} s: {count} archivos, "
            f"{decimal(total / 1e6)} MB ({decimal(without_maps / 1e6)} MB sin los source "
            "maps)")
        log(f"para servirlo: python3 -m http.server --bind 127.0.0.1 --directory {out} 8000")
        return 0
    except BuildError as exc:
        print(f"[lite] LA CONSTRUCCIÓN FALLÓ: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
