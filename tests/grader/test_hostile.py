"""Hostile submissions get zero, a clear report, and harm nothing: not the host, not the grader.

Everything here runs the grader of a throw-away copy of the repository under a throw-away venv
(tests/grader/throwaway.py), as instructors run it: `python -m grader --batch DIR --jobs 2`,
with its own TMPDIR. The hostile catalogue (tests/grader/hostile.py) is graded in one batch
together with the reference, so that a submission able to read another learner's files would
find one, and so that the reference is seen to keep full marks next to them. Outside the copy
lie sentinels (a file, a folder, a FIFO) and a key in the session keyring: afterwards they are
untouched, no FIFO was opened, the copy's grading files are unchanged, the working tree is
unchanged, nothing is left running, and no temp folder or cgroup is left behind.

`GRADER_UNDER_TEST=/some/checkout` grades with that checkout's code/ and grader/ instead (to
see these tests fail on a grader without the boundary; only ever from a throw-away clone).
"""

import csv
import ctypes
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
from hostile import AGAINST_THE_GRADER, HOSTILE, Host, third_round, write_all
from throwaway import copy_repository, make_venv

from grader.boundary import remove_tree
from grader.paths import REPO_DIR

TOKEN = "hostil-" + secrets.token_hex(6)
KEY_TOKEN = "llave-del-profesor-" + secrets.token_hex(6)
REASONS = {  # what the report must say (in the problems or in some test's output)
    "sale_con_os_exit_0": "terminó",
    "sale_con_sys_exit_0": "no se cargó: SystemExit",
    "bucle_infinito_al_importar": "no arrancó",
    "bomba_fork": "no arrancó",
    "bomba_de_memoria": "no se cargó: MemoryError",
    "salida_sin_fin": "no arrancó",
    "zip_con_rutas_peligrosas": "ruta peligrosa",
    "bomba_zip": "demasiado grande",
    "zip_con_demasiadas_entradas": "500 entradas",
    "notebook_roto": "no es un notebook válido",
    "no_utf8": "no está en UTF-8",
    "bucle_infinito_en_una_herramienta": "no respondió",
    "precrea_las_carpetas_como_enlaces": "ya existía antes de que el corrector",
    # their tool does nothing: when the grader laid out a folder before the planter struck (its
    # links then find the names taken), the zero's reason is that no form came
    "enlaza_carpetas_al_host": ("carpeta de datos de tu servidor", "no envió ningún formulario"),
    "enlaza_notas_al_host": ("carpeta de datos de tu servidor", "no envió ningún formulario"),
    "fifo_en_las_notas": "carpeta de datos de tu servidor",
    "cambia_carpetas_por_enlaces": "carpeta de datos de tu servidor",
    "enlaces_a_proc_self": "carpeta de datos de tu servidor",
    "cadena_de_carpetas_profunda": "carpeta de datos de tu servidor",
    "llena_el_disco": "está lleno",
    "sustitutos_y_escapes_ansi": "según tu servidor",
    "meta_con_tipos_raros": "no ofrece la herramienta notes_archive",
    "meta_presume_de_todo": "no ofrece la herramienta notes_archive",
    "marcos_enormes": "demasiados datos",
    "rafaga_de_peticiones": "no arrancó",
    "llavero": "según tu servidor",
    "entrega_fifo": "no es un archivo normal ni una carpeta",
    "carpeta_con_fifo": "no es un archivo normal",
    "soluciones_es_un_enlace": "enlace simbólico",
    "carpeta_profunda": "no encontré ninguna solución",
    "notebook_profundo": "no es un notebook válido",
    "zip_cifrado": "dañado, cifrado o incompleto",
    "zip_crc_malo": "dañado, cifrado o incompleto",
    "zip_truncado": "dañado, cifrado o incompleto",
    "zip_con_nombre_formula": "no está en UTF-8",
}
HOSTILE_NAMES = sorted(set(HOSTILE) | set(AGAINST_THE_GRADER) | set(REASONS))
INVISIBLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
MAX_GRADER_RSS_MIB = 192   # any grader process, grading the whole catalogue (512 before)
MAX_GRADER_THREADS = 64    # any grader process (a burst of blocked requests made 1,600 before)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL, ADD_KEY = {"x86_64": (250, 248), "aarch64": (219, 217)}.get(os.uname().machine,
                                                                  (None, None))


def tree_digest(folder):
    """{relative path: sha256} of every file below `folder` (no caches)."""
    found = {}
    for parent, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(parent, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, folder)] = hashlib.sha256(handle.read()).hexdigest()
    return found


def find_named(top, name, max_depth=24):
    """Paths below `top` called `name` (iterative, depth-capped: a fixture is 1,100 deep)."""
    found, pending = [], [(top, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == name:
                found.append(entry.path)
            if depth < max_depth and entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, depth + 1))
    return found


def described(path):
    info = os.lstat(path)
    return (info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns, info.st_size)


class FifoWatch:
    """Tells whether anyone opened a FIFO for reading (its writer's open() returns then)."""

    def __init__(self, path):
        self.path, self.opened, self.done = path, False, False
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _wait(self):
        try:
            fd = os.open(self.path, os.O_WRONLY)
        except OSError:
            return
        if not self.done:
            self.opened = True
        os.close(fd)

    def finish(self):
        self.done = True
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer go
        self.thread.join(timeout=5)
        os.close(fd)
        return self.opened


def our_processes(marker):
    """Processes whose command line contains `marker` (bytes)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker in handle.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def cgroup_leftovers(before):
    """Grader cgroups that appeared since `before` and whose owner process is dead."""
    from grader.tempspace import PATTERN, cgroup_parents, start_time
    left = []
    for parent in cgroup_parents().values():
        for name in os.listdir(parent):
            match = PATTERN.match(name)
            path = os.path.join(parent, name)
            if match and path not in before \
                    and start_time(int(match.group(1))) != int(match.group(2)):
                left.append(path)
    return left


def cgroup_names():
    from grader.tempspace import cgroup_parents
    return {os.path.join(parent, name) for parent in cgroup_parents().values()
            for name in os.listdir(parent)}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The copy, its venv, the host sentinels, the instructor's key, a private TMPDIR."""
    base = tmp_path_factory.mktemp("hostil")
    copy = copy_repository(os.environ.get("GRADER_UNDER_TEST", REPO_DIR), str(base / "copia"))
    python = make_venv(str(base / "venv"))
    host_dir = base / "host" / "carpeta"
    host_dir.mkdir(parents=True)
    (host_dir / f"archivo-{TOKEN}").write_text("secreto del host\n")
    host_file = base / "host" / "archivo.txt"
    host_file.write_text(f"contenido intacto {TOKEN}\n")
    host_fifo = base / "host" / "fifo"
    os.mkfifo(host_fifo)
    tmpdir = base / "tmp"
    tmpdir.mkdir()
    key = None
    if ADD_KEY is not None:
        key = libc.syscall(ADD_KEY, b"user", KEY_TOKEN.encode(), KEY_TOKEN.encode(),
                           len(KEY_TOKEN), ctypes.c_int(-3))  # the session keyring
    world = {"base": base, "copy": copy, "python": python, "tmpdir": str(tmpdir),
             "host": Host(copy, TOKEN, str(host_dir), str(host_file), str(host_fifo)),
             "key": key if key and key > 0 else None}
    yield world
    if world["key"]:
        libc.syscall(KEYCTL, 3, ctypes.c_int(world["key"]))  # KEYCTL_REVOKE
    remove_tree(str(base))  # carpeta_profunda is deeper than shutil.rmtree can recurse


def grader(world, *args, timeout=900, extra_env=None, **popen):
    """Start the copy's grader under the throw-away venv (never the working tree's)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": world["tmpdir"],
           "PYTHONDONTWRITEBYTECODE": "1", **(extra_env or {})}
    return subprocess.Popen([world["python"], "-m", "grader", *args], cwd=world["copy"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def finish(proc, timeout):
    """(stdout, stderr, rusage of the process and everything it waited for)."""
    chunks = {"out": b"", "err": b""}

    def drain(key, stream):
        chunks[key] = stream.read()

    readers = [threading.Thread(target=drain, args=(k, s), daemon=True)
               for k, s in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))
    if any(reader.is_alive() for reader in readers):
        proc.kill()  # a grader that hangs fails the tests, it does not hang them
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return chunks["out"], chunks["err"], usage


def sample(marker, stop, peak):
    """Peak threads of any grader process, and each one's peak resident memory (VmHWM)."""
    while not stop.is_set():
        for pid in our_processes(marker):
            try:
                peak["threads"] = max(peak["threads"], len(os.listdir(f"/proc/{pid}/task")))
                with open(f"/proc/{pid}/status") as handle:
                    for line in handle:
                        if line.startswith("VmHWM:"):
                            peak["rss"][pid] = int(line.split()[1]) // 1024
            except (OSError, ValueError, IndexError):
                pass
        time.sleep(0.02)


@pytest.fixture(scope="module")
def graded(world):
    batch = world["base"] / "clase"
    batch.mkdir()
    made = write_all(str(batch), world["copy"], TOKEN, world["host"])
    shutil.copytree(os.path.join(world["copy"], "grader", "reference", "soluciones"),
                    batch / "referencia")
    assert set(made) >= set(HOSTILE_NAMES)
    host = world["host"]
    sentinels = {path: described(path) for path in (host.file, host.folder, host.fifo)}
    listing = sorted(os.listdir(host.folder))
    with open(host.file, "rb") as handle:
        content = handle.read()
    copy_grader = tree_digest(os.path.join(world["copy"], "grader"))
    real_tree = {part: tree_digest(os.path.join(REPO_DIR, part))
                 for part in ("grader", "tests/grader")}
    cgroups = cgroup_names()
    fifo = FifoWatch(host.fifo)
    out = world["base"] / "notas"
    stop, peak = threading.Event(), {"threads": 0, "rss": {}}
    sampler = threading.Thread(target=sample, args=(world["python"].encode(), stop, peak),
                               daemon=True)
    sampler.start()
    started = time.monotonic()
    proc = grader(world, "--batch", str(batch), "--jobs", "2", "--format", "json",
                  "--out", str(out))
    stdout, stderr, usage = finish(proc, timeout=float(os.environ.get("HOSTILE_TIMEOUT", 900)))
    seconds = time.monotonic() - started
    stop.set()
    sampler.join()
    results = {}
    for line in stdout.decode().splitlines():
        result = json.loads(line)
        results[result["submission"]] = result
    yield {"results": results, "returncode": proc.returncode, "stderr": stderr.decode(),
           "seconds": seconds, "out": out, "peak_threads": peak["threads"],
           "peak_rss_mib": max(peak["rss"].values(), default=0), "usage": usage,
           "fifo_opened": fifo.finish(), "sentinels": sentinels, "listing": listing,
           "content": content, "copy_grader": copy_grader, "real_tree": real_tree,
           "cgroups": cgroups, "stdout": stdout.decode()}


def everything(result):
    return "\n".join([result["output"], *result["problems"],
                      *[t["output"] for t in result["tests"]]])


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_submission_scores_zero_on_every_test(graded, name):
    result = graded["results"][name]
    assert result["score"] == 0 and all(t["score"] == 0 for t in result["tests"]), \
        {t["id"]: t["output"] for t in result["tests"] if t["score"]}
    assert len(result["tests"]) == len(graded["results"]["referencia"]["tests"])


@pytest.mark.parametrize("name", sorted(REASONS))
def test_hostile_submission_gets_a_clear_reason(graded, name):
    reasons = REASONS[name] if isinstance(REASONS[name], tuple) else (REASONS[name],)
    assert any(reason in everything(graded["results"][name]) for reason in reasons), \
        everything(graded["results"][name])


def test_reference_graded_next_to_them_still_gets_full_marks(graded):
    result = graded["results"]["referencia"]
    assert result["score"] == result["max_score"] == 53, everything(result)


def test_a_class_of_hostile_submissions_is_graded_with_exit_1_never_3(graded):
    assert graded["returncode"] == 1, graded["stderr"][-3000:]
    assert "internal error" not in graded["stderr"], graded["stderr"][-3000:]
    assert set(graded["results"]) == set(HOSTILE_NAMES) | {"referencia"}


def test_host_file_folder_and_fifo_are_untouched(graded, world):
    host = world["host"]
    assert {path: described(path) for path in graded["sentinels"]} == graded["sentinels"]
    assert sorted(os.listdir(host.folder)) == graded["listing"]
    with open(host.file, "rb") as handle:
        assert handle.read() == graded["content"]


def test_no_fifo_planted_by_a_submission_was_opened(graded):
    assert graded["fifo_opened"] is False


def test_the_graders_own_files_are_unchanged(graded, world):
    assert tree_digest(os.path.join(world["copy"], "grader")) == graded["copy_grader"]


def test_the_working_tree_is_untouched(graded):
    assert {part: tree_digest(os.path.join(REPO_DIR, part))
            for part in ("grader", "tests/grader")} == graded["real_tree"]
    assert not [p for p in os.listdir(REPO_DIR) if TOKEN in p]


def test_nothing_was_written_outside_the_sandboxes(graded, world):
    markers = [os.path.join(world["copy"], f"PWNED-{TOKEN}"), f"/tmp/PWNED-{TOKEN}",
               f"/root/PWNED-{TOKEN}", f"/PWNED-{TOKEN}", f"/usr/PWNED-{TOKEN}"]
    assert [path for path in markers if os.path.exists(path)] == []
    assert not find_named(str(world["base"]), f"PWNED-{TOKEN}")


def test_no_report_shows_a_host_name_or_a_kernel_key(graded, world):
    reports = graded["stdout"] + "".join(path.read_text(errors="replace")
                                         for path in graded["out"].rglob("*") if path.is_file())
    assert f"archivo-{TOKEN}" not in reports  # the host folder's listing
    assert f"contenido intacto {TOKEN}" not in reports  # the host file's content
    assert KEY_TOKEN not in reports  # the instructor's session key


def test_no_process_outlives_the_run(graded, world):
    assert our_processes(TOKEN.encode()) == []
    assert our_processes(world["tmpdir"].encode()) == []
    assert our_processes(world["python"].encode()) == []


def test_no_temp_folder_or_cgroup_is_left(graded, world):
    assert os.listdir(world["tmpdir"]) == []
    assert cgroup_leftovers(graded["cgroups"]) == []


def test_reports_show_learner_text_as_inert_data(graded):
    for path in (graded["out"] / "informes").glob("*.txt"):
        text = path.read_text(encoding="utf-8")
        assert not INVISIBLE.search(text), (path.name, INVISIBLE.search(text))
    rows = list(csv.reader(io.StringIO((graded["out"] / "notas.csv").read_text())))
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
               for row in rows for cell in row)
    evil = graded["results"]["sustitutos_y_escapes_ansi"]
    assert "\ufffd" in everything(evil) and "\\x1b[2J" in everything(evil)
    assert "\x1b" not in graded["stdout"]


def test_the_grader_stays_small_under_huge_frames_and_request_bursts(graded):
    assert graded["peak_threads"] <= MAX_GRADER_THREADS
    assert 0 < graded["peak_rss_mib"] <= MAX_GRADER_RSS_MIB, graded["peak_rss_mib"]


# -- budgets and leftovers -------------------------------------------------------------------
SLOW = '''
import time

from extension import Extension

extension = Extension()


@extension.tool("notes_archive", description="x", annotations={"destructiveHint": True},
                input_schema={"type": "object", "required": ["title"],
                              "properties": {"title": {"type": "string"}}})
def notes_archive(ctx, title):
    time.sleep(9.5)  # just under the per-call limit, every time
    return {"content": [{"type": "text", "text": "tarde"}], "isError": False}
'''


@pytest.fixture(scope="module")
def slow(world):
    folder = world["base"] / "lento"
    folder.mkdir()
    (folder / "ejercicio2.py").write_text(SLOW)
    return folder


def test_a_slow_server_is_stopped_when_the_budget_runs_out(world, slow):
    started = time.monotonic()
    proc = grader(world, str(slow), "--budget", "5", "--format", "json")
    stdout, stderr = proc.communicate(timeout=120)
    seconds = time.monotonic() - started
    result = json.loads(stdout)
    assert proc.returncode == 1, stderr.decode()[-2000:]
    assert result["score"] == 0
    assert seconds < 5 + 10, seconds
    assert "se agotó el tiempo total" in everything(result)
    assert os.listdir(world["tmpdir"]) == []


def test_a_killed_grader_leaves_nothing_once_the_next_run_starts(world, slow):
    cgroups = cgroup_names()
    proc = grader(world, str(slow), "--budget", "120")
    deadline = time.monotonic() + 60
    while not [n for n in os.listdir(world["tmpdir"]) if "-job-" in n]:
        assert time.monotonic() < deadline, "the sandbox never started"
        time.sleep(0.05)
    time.sleep(1.0)  # the learner's server is running now
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    time.sleep(1.0)  # parent-death signals ripple down
    assert our_processes(world["tmpdir"].encode()) == []
    assert os.listdir(world["tmpdir"])  # a killed run could not clean up after itself...
    again = grader(world, str(world["base"] / "no-existe"), "--format", "json")
    again.communicate(timeout=120)
    assert os.listdir(world["tmpdir"]) == []  # ...the next run does, at its start
    assert cgroup_leftovers(cgroups) == []


# -- the grader's own faults are exit 3 -------------------------------------------------------
@pytest.mark.parametrize("content", ["raise ImportError('roto')\n", '"""Nada."""\n'],
                         ids=["does-not-import", "collects-nothing"])
def test_a_grading_file_that_fails_to_import_or_collects_nothing_is_exit_3(world, content,
                                                                          tmp_path):
    copy = copy_repository(world["copy"], str(tmp_path / "copia"))
    with open(os.path.join(copy, "grader", "checks", "public", "test_ej4.py"), "w") as handle:
        handle.write(content)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": world["tmpdir"]}
    run = subprocess.run([world["python"], "-m", "grader",
                          os.path.join(copy, "grader", "reference", "soluciones"),
                          "--only", "ejercicio2"], cwd=copy, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 3, run.stdout[-2000:]
    assert "test_ej4.py" in run.stderr


def test_a_hidden_folder_that_collects_nothing_is_exit_3(world, tmp_path):
    copy = copy_repository(world["copy"], str(tmp_path / "copia"))
    hidden = os.path.join(copy, "grader", "checks", "hidden")
    for name in os.listdir(hidden):
        if name.startswith("test_"):
            os.unlink(os.path.join(hidden, name))
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": world["tmpdir"]}
    reference = os.path.join(copy, "grader", "reference", "soluciones")
    run = subprocess.run([world["python"], "-m", "grader", reference, "--only", "ejercicio4"],
                         cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 3, run.stdout[-2000:]
    assert "no grading file in it" in run.stderr
    public = subprocess.run([world["python"], "-m", "grader", reference, "--only", "ejercicio4",
                             "--tests", "public"], cwd=copy, env=env, capture_output=True,
                            text=True, timeout=300)
    assert public.returncode == 0, public.stderr[-2000:]  # the public suite alone is fine


# -- the third round: what the grader processes, counts and writes itself -----------------------
THIRD_SCORES = {"referencia": 53, "mensaje_de_200k": 28, "zip_nombre_largo": 28,
                "notificaciones_densas": 0, "carpeta_dispersa": 0, "enlace_duro_a_root": 0,
                "enlaces_duros_en_las_notas": 0}
THIRD_REASONS = {
    "notificaciones_densas": "demasiados datos",
    "carpeta_dispersa": "16 MiB en total",
    "zip_nombre_largo": "no puede ser el de un archivo de solución",
    "enlace_duro_a_root": "más de un enlace duro",
    "enlaces_duros_en_las_notas": "más de un enlace duro",
}
COLLIDING = ("notas.csv", "informes", "x" * 90 + "-a", "x" * 90 + "-b")  # empty submissions
MODES = ("root", "plain")  # the default mode here (as root), and the one a container forces
HARD_MARGIN = 15  # grader.pool.HARD_MARGIN


def sampled(world, *args, extra_env=None, timeout=900):
    """Run the copy's grader: (returncode, stdout, stderr, seconds, peak RSS MiB of any grader
    process, peak threads)."""
    stop, peak = threading.Event(), {"threads": 0, "rss": {}}
    sampler = threading.Thread(target=sample, args=(world["python"].encode(), stop, peak),
                               daemon=True)
    sampler.start()
    started = time.monotonic()
    proc = grader(world, *args, extra_env=extra_env)
    stdout, stderr, _ = finish(proc, timeout)
    seconds = time.monotonic() - started
    stop.set()
    sampler.join()
    return (proc.returncode, stdout.decode(), stderr.decode(), seconds,
            max(peak["rss"].values(), default=0), peak["threads"])


@pytest.fixture(scope="module")
def third_class(world):
    """The third catalogue, the reference and learners whose names collide with the grader's
    own files or with each other, in one batch folder; a root-only file they link to."""
    base = world["base"]
    secret = base / "host" / "solo-root.py"
    secret.write_text(f"raise RuntimeError('{TOKEN}-enlace-duro')\n")
    os.chmod(secret, 0o600)
    batch = base / "tercera"
    batch.mkdir()
    made = third_round(str(batch), world["copy"], world["host"], str(secret))
    shutil.copytree(os.path.join(world["copy"], "grader", "reference", "soluciones"),
                    batch / "referencia")
    made["referencia"] = str(batch / "referencia")
    assert set(made) == set(THIRD_SCORES) | {"mensaje_de_1mib"}
    for name in COLLIDING:
        (batch / name).mkdir()
    return {"batch": batch, "made": made}


def host_state(host):
    """The host sentinels as they are now (to compare afterwards)."""
    with open(host.file, "rb") as handle:
        content = handle.read()
    return {"sentinels": {path: described(path) for path in (host.file, host.folder, host.fifo)},
            "content": content, "listing": sorted(os.listdir(host.folder))}


@pytest.fixture(scope="module")
def third_batch(world, third_class):
    """The default mode (root here): one batch, `--format gradescope --out` into a results
    folder where links to the host sentinels were planted."""
    host = world["host"]
    graded = {"mode": "root", "results": {}, **host_state(host)}
    out = world["base"] / "tercera-notas"
    out.mkdir()
    os.symlink(host.folder, out / "informes")
    os.symlink(host.file, out / "notas.csv")
    graded["runs"] = [sampled(world, "--batch", str(third_class["batch"]), "--jobs", "2",
                              "--format", "gradescope", "--out", str(out))]
    graded["out"] = out
    for path in (out / "informes").glob("*.json"):
        result = json.loads(path.read_text())
        graded["results"][result["submission"]] = result
    return graded


@pytest.fixture(scope="module")
def plain_env():
    """GRADER_SANDBOX=plain, with a TMPDIR other users can traverse (as /tmp in a container):
    the plain mode's private uid runs the server code and the solution from there."""
    folder = tempfile.mkdtemp(prefix="hostil-plano-", dir="/tmp")
    os.chmod(folder, 0o711)
    yield {"GRADER_SANDBOX": "plain", "TMPDIR": folder}
    remove_tree(folder)


@pytest.fixture(scope="module")
def third_plain(world, third_class, plain_env):
    """The plain mode a container forces: each submission graded on its own, `--format json`."""
    graded = {"mode": "plain", "results": {}, "runs": [], **host_state(world["host"])}
    for name, path in sorted(third_class["made"].items()):
        run = sampled(world, path, "--format", "json", extra_env=plain_env)
        graded["runs"].append(run)
        if run[1].strip():
            graded["results"][name] = json.loads(run[1])
    graded["left"] = os.listdir(plain_env["TMPDIR"])
    return graded


@pytest.fixture(params=MODES)
def third(request):
    return request.getfixturevalue("third_batch" if request.param == "root" else "third_plain")


@pytest.mark.parametrize("name", sorted(THIRD_SCORES))
def test_third_round_submissions_get_their_verdict_next_to_the_reference(third, name):
    result = third["results"][name]
    assert result["score"] == THIRD_SCORES[name], everything(result)
    assert len(result["tests"]) == len(third["results"]["referencia"]["tests"])
    if name in THIRD_REASONS:
        assert THIRD_REASONS[name] in everything(result), everything(result)


def test_a_1mib_form_message_is_checked_in_the_graders_process_and_graded(third):
    result = third["results"]["mensaje_de_1mib"]
    ej2 = [t for t in result["tests"] if t["exercise"] == "ejercicio2"]
    form = [t for t in ej2 if "test_asks_to_confirm_even_with_one_match" in t["id"]]
    assert len(form) == 2 and all(t["status"] == "passed" for t in form), form
    # a server that sends 1 MiB per question reaches the cap of its frames: only that is said
    assert all(t["status"] == "passed" or "demasiados datos" in t["output"] for t in ej2)
    assert result["score"] > 20


def test_third_round_runs_end_with_exit_0_or_1_never_3(third):
    for returncode, _, stderr, _, _, _ in third["runs"]:
        assert returncode in (0, 1), stderr[-3000:]
        assert "internal error" not in stderr and "Traceback" not in stderr, stderr[-3000:]


def test_the_grader_stays_under_192_mib_and_64_threads_in_the_third_round(third):
    assert 0 < max(run[4] for run in third["runs"]) <= MAX_GRADER_RSS_MIB, \
        [(run[4], run[3]) for run in third["runs"]]
    assert max(run[5] for run in third["runs"]) <= MAX_GRADER_THREADS


def test_a_hard_link_to_a_root_only_file_is_never_read_nor_echoed(third):
    shown = "".join(run[1] for run in third["runs"]) + json.dumps(third["results"])
    if "out" in third:
        shown += "".join(path.read_text(errors="replace")
                         for path in third["out"].rglob("*") if path.is_file())
    assert f"{TOKEN}-enlace-duro" not in shown


def test_host_sentinels_are_untouched_after_the_third_round(third, world):
    now = host_state(world["host"])
    assert {key: now[key] for key in ("sentinels", "content", "listing")} == \
        {key: third[key] for key in ("sentinels", "content", "listing")}


def test_every_learner_keeps_a_report_of_its_own_whatever_its_name(third_batch):
    """Names are the results folder's business (the grader's parent process, whatever the
    sandbox mode): a learner named like the gradebook, like the reports' folder, two named alike
    in their first 80 characters, and links planted where the reports go."""
    out = third_batch["out"]
    rows = list(csv.DictReader(io.StringIO((out / "notas.csv").read_text())))
    names = [row["submission"] for row in rows]
    assert len(names) == len(set(names)) == len(THIRD_SCORES) + 1 + len(COLLIDING)
    assert not os.path.islink(out / "informes") and not os.path.islink(out / "notas.csv")
    for name in names:
        assert f"Entrega: {name}\n" in (out / "informes" / f"{name}.txt").read_text()
        assert "score" in json.loads((out / name / "results.json").read_text())


def test_no_temp_folder_is_left_by_the_third_round_in_plain_mode(third_plain):
    assert third_plain["left"] == []


@pytest.mark.parametrize("mode", MODES)
def test_a_1mib_form_message_ends_within_its_budget(world, third_class, plain_env, mode):
    returncode, stdout, stderr, seconds, _, _ = sampled(
        world, third_class["made"]["mensaje_de_1mib"], "--budget", "20", "--format", "json",
        extra_env=plain_env if mode == "plain" else None)
    assert returncode == 1, stderr[-2000:]
    assert seconds < 20 + HARD_MARGIN, seconds
    assert len(json.loads(stdout)["tests"]) == 40


STUCK = '''
import re

import grader.runner as runner

_grade = runner.grade


def grade(path, *args, **kwargs):  # a grader bug that holds the interpreter lock for ever
    if path.endswith("se_cuelga"):
        re.match(r"(a|aa)*c", "a" * 64)
    return _grade(path, *args, **kwargs)


runner.grade = grade
'''


def test_a_worker_stuck_holding_the_interpreter_lock_is_ended_at_its_hard_deadline(world,
                                                                                   tmp_path):
    """The budget watchdog is a thread of the worker; when something held the interpreter lock
    (a grader bug: the checks are linear), the pool, another process, ends the worker at the
    budget plus its margin: that submission is the grader's fault (exit 3), the next is graded."""
    site = tmp_path / "sitio"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STUCK)
    batch = tmp_path / "clase"
    (batch / "se_cuelga").mkdir(parents=True)
    shutil.copytree(os.path.join(world["copy"], "grader", "reference", "soluciones"),
                    batch / "referencia")
    returncode, stdout, stderr, seconds, _, _ = sampled(
        world, "--batch", str(batch), "--jobs", "1", "--budget", "5", "--only", "ejercicio4",
        "--format", "json", "--out", str(tmp_path / "notas"),
        extra_env={"PYTHONPATH": f"{site}:{world['copy']}"})
    results = {json.loads(line)["submission"]: json.loads(line) for line in stdout.splitlines()}
    assert returncode == 3 and "pasó de 20 s" in everything(results["se_cuelga"]), stderr[-2000:]
    assert results["referencia"]["score"] == results["referencia"]["max_score"] == 9
    assert seconds < 5 + HARD_MARGIN + 30  # the reference, after the stuck one, takes seconds
