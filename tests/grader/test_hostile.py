"""Hostile submissions get zero, a clear report, and harm nothing: not the host, not the grader.

Everything here runs the grader of a throw-away copy of the repository under a throw-away venv
(tests/grader/throwaway.py), as instructors run it: `python -m grader --batch DIR --jobs 2`,
with its own TMPDIR. The hostile catalogue (tests/grader/hostile.py) is graded in one batch
together with the reference, so that a submission able to read another learner's files would
find one, and so that the reference is seen to keep full marks next to them. Outside the copy
lie sentinels (a file, a folder, a FIFO), a key in the session keyring, canary lines in the
hidden tests and the reference, and a TCP and UDP listener on 127.0.0.1: afterwards they are
untouched, no FIFO was opened, no canary reached a report, the listener received no byte, the
copy's grading files are unchanged, the working tree is unchanged, nothing is left running, and
no temp folder, cgroup or file of a sandbox's uid is left behind.

Every test runs twice: in the root mode (namespaces) and in the plain mode, the way a Docker
container runs the Gradescope bundle: as root, without CAP_SYS_ADMIN, with namespaces refused
(tests/grader/nonamespaces.py launches the grader so), and a TMPDIR that is world-writable
like /tmp.

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
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from hostile import AGAINST_PLAIN, AGAINST_THE_GRADER, HOSTILE, Host, third_round, write_all
from throwaway import copy_repository, make_venv

from grader.boundary import remove_tree
from grader.exercises import optional
from grader.paths import REPO_DIR
from grading_points import FULL, TOTAL

pytestmark = pytest.mark.timeout(1800)  # plain mode grades the class one submission at a time
TOKEN = "hostil-" + secrets.token_hex(6)
KEY_TOKEN = "llave-del-profesor-" + secrets.token_hex(6)
REASONS = {  # what the report must say (in the problems or in some test's output)
    "sale_con_os_exit_0": "terminó",
    "sale_con_sys_exit_0": "no se cargó: SystemExit",
    "bucle_infinito_al_importar": "no arrancó",
    "bomba_fork": "no arrancó",
    # filling 1 GiB can take the probe's whole 10 s on a loaded machine (seen once in a fresh
    # clone whose every group ran 40% slower): then the reason is the server's own log line
    "bomba_de_memoria": ("no se cargó: MemoryError", "not loaded: MemoryError"),
    "salida_sin_fin": "no arrancó",
    "zip_con_rutas_peligrosas": "ruta peligrosa",
    "bomba_zip": "demasiado grande",
    "zip_con_demasiadas_entradas": "500 entradas",
    "notebook_roto": "no es un notebook válido",
    "no_utf8": "no está en UTF-8",
    "bucle_infinito_en_una_herramienta": "no respondió",
    # the data area is the grader's and a test's folder has a random name: nothing to plant
    # before it; in its own folder, what it planted is found when the grader looks
    "precrea_las_carpetas_como_enlaces": ("carpeta de datos de tu servidor",
                                          "no envió ningún formulario"),
    # their tool does nothing: when the grader laid out a folder before the planter struck (its
    # links then find the names taken), the zero's reason is that no form came
    "enlaza_carpetas_al_host": ("carpeta de datos de tu servidor", "no envió ningún formulario"),
    "enlaza_notas_al_host": ("carpeta de datos de tu servidor", "no envió ningún formulario"),
    "fifo_en_las_notas": "carpeta de datos de tu servidor",
    "cambia_carpetas_por_enlaces": "carpeta de datos de tu servidor",
    "enlaces_a_proc_self": "carpeta de datos de tu servidor",
    "cadena_de_carpetas_profunda": "carpeta de datos de tu servidor",
    # nothing it can write at start (HOME, TMPDIR, the data area); its own test's folder,
    # when its tool runs: that test only, and the grader writes nothing more there
    "llena_el_disco": ("está lleno", "no envió ningún formulario", "demasiadas entradas"),
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
    # the third catalogue (what plain mode used to let through)
    "demonio_reutiliza_el_uid": "no ofrece la herramienta notes_archive",
    "exfiltra_por_la_red": "no envió ningún formulario",
    "cruce_a_escucha": "no ofrece la herramienta notes_archive",
    "cruce_b_pregunta": "recibido de otro alumno: []",
    "lee_lo_ajeno": "leído de otros: []",
    "enlaza_los_informes": "no ofrece la herramienta notes_archive",
    "inunda_la_limpieza": "no ofrece la herramienta notes_archive",
}
# Plain mode has no private tmpfs: a full disk is not what stops these there (the server loads
# the solution after writing 512 MiB, or, on a slow disk, not within the start-up timeout)
PLAIN_REASONS = {
    "llena_el_disco": ("no define ningún Extension()", "no arrancó",
                       "no envió ningún formulario"),
    # 1,100 folders on a real disk take longer than on a tmpfs: the grader may be done first
    "cadena_de_carpetas_profunda": ("carpeta de datos de tu servidor",
                                    "no envió ningún formulario"),
}
HOSTILE_NAMES = sorted(set(HOSTILE) | set(AGAINST_THE_GRADER) | set(AGAINST_PLAIN)
                       | set(REASONS))
MODES = ("root", "plain")
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nonamespaces.py")
CANARIES = {"grader/checks/hidden/test_ej2_hidden.py": "canario-oculto-" + TOKEN,
            "grader/reference/soluciones/ejercicio2.py": "canario-referencia-" + TOKEN}
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")
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
    from grader.hosts.tempspace import PATTERN, cgroup_parents, start_time
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
    from grader.hosts.tempspace import cgroup_parents
    return {os.path.join(parent, name) for parent in cgroup_parents().values()
            for name in os.listdir(parent)}


class Listener:
    """A TCP and a UDP socket on 127.0.0.1 (and ::1 when there is one), same port: every
    connection and byte they get is counted. Stopped by the test that started it."""

    def __init__(self):
        self.received, self.connections = b"", 0
        self.sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM)]
        self.sockets[0].bind(("127.0.0.1", 0))
        self.port = self.sockets[0].getsockname()[1]
        for family, host, kind in ((socket.AF_INET, "127.0.0.1", socket.SOCK_DGRAM),
                                   (socket.AF_INET6, "::1", socket.SOCK_STREAM),
                                   (socket.AF_INET6, "::1", socket.SOCK_DGRAM)):
            try:
                sock = socket.socket(family, kind)
                sock.bind((host, self.port))
                self.sockets.append(sock)
            except OSError:
                sock.close()
        for sock in self.sockets:
            if sock.type == socket.SOCK_STREAM:
                sock.listen()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        open_ = []
        while not self.stop.is_set():
            ready, _, _ = select.select(self.sockets + open_, [], [], 0.1)
            for sock in ready:
                if sock in self.sockets and sock.type == socket.SOCK_STREAM:
                    client, _ = sock.accept()
                    self.connections += 1
                    open_.append(client)
                    continue
                data = sock.recv(65536)
                self.received += data
                if sock in open_ and not data:
                    open_.remove(sock)
                    sock.close()

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)
        for sock in self.sockets:
            sock.close()


@pytest.fixture(scope="module", params=MODES)
def world(request, tmp_path_factory):
    """The copy (canaries in its hidden tests and reference), its venv, the host sentinels,
    the instructor's key, a network listener, a TMPDIR, the mode the grader runs in."""
    mode = request.param
    base = tmp_path_factory.mktemp("hostil-" + mode)  # 0700: nobody but root gets in
    copy = copy_repository(os.environ.get("GRADER_UNDER_TEST", REPO_DIR), str(base / "copia"))
    for path, canary in CANARIES.items():
        with open(os.path.join(copy, path), "a") as handle:
            handle.write(f"\n# {canary}\n")
    python = make_venv(str(base / "venv"))
    host_dir = base / "host" / "carpeta"
    host_dir.mkdir(parents=True)
    (host_dir / f"archivo-{TOKEN}").write_text("secreto del host\n")
    host_file = base / "host" / "archivo.txt"
    host_file.write_text(f"contenido intacto {TOKEN}\n")
    host_fifo = base / "host" / "fifo"
    os.mkfifo(host_fifo)
    if mode == "plain":  # like /tmp: world-writable, sticky (the learner's uid must get through)
        tmpdir = tempfile.mkdtemp(prefix="hostil-tmp-", dir="/tmp")
        os.chmod(tmpdir, 0o1777)
    else:
        tmpdir = str(base / "tmp")
        os.mkdir(tmpdir)
    key = None
    if ADD_KEY is not None:
        key = libc.syscall(ADD_KEY, b"user", KEY_TOKEN.encode(), KEY_TOKEN.encode(),
                           len(KEY_TOKEN), ctypes.c_int(-3))  # the session keyring
    listener = Listener()
    uid_start = (1 << 24) + secrets.randbelow(256) * (1 << 16)  # this run's uids, no others'
    world = {"base": base, "copy": copy, "python": python, "tmpdir": tmpdir, "mode": mode,
             "host": Host(copy, TOKEN, str(host_dir), str(host_file), str(host_fifo),
                          port=listener.port, batch=str(base / "clase"),
                          out=str(base / "notas"), root_marker=str(base / f"ROOT-{TOKEN}")),
             "key": key if key and key > 0 else None, "listener": listener,
             "uids": (uid_start, 1 << 16)}
    yield world
    listener.close()
    if world["key"]:
        libc.syscall(KEYCTL, 3, ctypes.c_int(world["key"]))  # KEYCTL_REVOKE
    remove_tree(str(base))  # carpeta_profunda is deeper than shutil.rmtree can recurse
    remove_tree(tmpdir)


def grader(world, *args, cwd=None, env=None, **popen):
    """Start the copy's grader (or the one in `cwd`) under the throw-away venv (never the
    working tree's); in plain mode, as a container that refuses namespaces would."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": world["tmpdir"],
           "PYTHONDONTWRITEBYTECODE": "1",
           "GRADER_UID_RANGE": "{}:{}".format(*world["uids"]), **(env or {})}
    launcher = [sys.executable, LAUNCHER] if world["mode"] == "plain" else []
    return subprocess.Popen([*launcher, world["python"], "-m", "grader", *args],
                            cwd=cwd or world["copy"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **popen)


def run_grader(world, *args, timeout=600, **kwargs):
    """(exit code, stdout, stderr) of one grader run."""
    proc = grader(world, *args, **kwargs)
    stdout, stderr = proc.communicate(timeout=timeout)
    return proc.returncode, stdout.decode(), stderr.decode()


NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")  # what grader.report writes for a score


def exercise_tests(result):
    """A result's tests of the graded exercises (the reference also brings the optional ones,
    the reto and 3B's 2026-07-28 part, graded apart and only when a submission brings their
    file)."""
    return [t for t in result["tests"] if not optional(t["exercise"])]


def sandbox_uid_processes(world):
    """Live processes running as one of this run's sandbox uids."""
    from grader.hosts.uids import uids_of
    start, count = world["uids"]
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status", "rb") as handle:
                if any(start <= uid < start + count for uid in uids_of(handle.read())):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def shared_leftovers(world):
    """What a sandbox left in the machine's shared temp folders: entries named after the token
    or owned by one of this run's sandbox uids (two levels deep)."""
    start, count = world["uids"]
    found = []
    for top in (*SHARED_TEMP, world["tmpdir"]):
        for folder in [top] + [os.path.join(top, n) for n in os.listdir(top)
                               if os.path.isdir(os.path.join(top, n))
                               and not os.path.islink(os.path.join(top, n))]:
            try:
                entries = os.listdir(folder)
            except OSError:
                continue
            for name in entries:
                path = os.path.join(folder, name)
                try:
                    owner = os.lstat(path).st_uid
                except OSError:
                    continue
                if TOKEN in name or start <= owner < start + count:
                    found.append(path)
    return found


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
    assert len(exercise_tests(result)) == len(exercise_tests(graded["results"]["referencia"]))


@pytest.mark.parametrize("name", sorted(REASONS))
def test_hostile_submission_gets_a_clear_reason(graded, world, name):
    reasons = PLAIN_REASONS.get(name, REASONS[name]) if world["mode"] == "plain" \
        else REASONS[name]
    reasons = reasons if isinstance(reasons, tuple) else (reasons,)
    assert any(reason in everything(graded["results"][name]) for reason in reasons), \
        everything(graded["results"][name])


def test_reference_graded_next_to_them_still_gets_full_marks(graded):
    result = graded["results"]["referencia"]
    assert result["score"] == result["max_score"] == TOTAL, everything(result)


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
    assert our_processes(world["copy"].encode()) == []  # a zygote, or a fork of one
    assert sandbox_uid_processes(world) == []


def test_the_network_listener_received_no_byte(graded, world):
    listener = world["listener"]
    assert (listener.connections, listener.received) == (0, b"")


def test_no_report_shows_the_hidden_tests_the_reference_or_another_learners_secret(graded):
    reports = graded["stdout"] + "".join(path.read_text(errors="replace")
                                         for path in graded["out"].rglob("*") if path.is_file())
    for canary in (*CANARIES.values(), f"secreto-de-A-{TOKEN}"):
        assert canary not in reports
    assert "recibido de otro alumno: []" in everything(graded["results"]["cruce_b_pregunta"])
    assert "leído de otros: []" in everything(graded["results"]["lee_lo_ajeno"])


def test_root_never_runs_anything_a_learner_wrote(graded, world):
    assert not os.path.lexists(world["host"].root_marker)


def test_nothing_of_a_sandbox_is_left_in_the_shared_temp_folders(graded, world):
    assert shared_leftovers(world) == []


def test_every_report_names_the_isolation_mode_in_force(graded, world):
    assert {r["protections"]["mode"] for r in graded["results"].values()} == {world["mode"]}
    text = (graded["out"] / "informes" / "referencia.txt").read_text()
    assert f"Aislamiento ({world['mode']}): " in text
    if world["mode"] == "plain":
        protections = graded["results"]["referencia"]["protections"]
        assert protections["sockets_denied"] and protections["fresh_uid"]
        assert protections["every_process_of_the_uid_killed"]
        assert protections["one_submission_at_a_time"]
        assert "las entregas se corrigen de una en una" in graded["stderr"]


def test_no_temp_folder_or_cgroup_is_left(graded, world):
    assert os.listdir(world["tmpdir"]) == []
    assert cgroup_leftovers(graded["cgroups"]) == []


def test_reports_show_learner_text_as_inert_data(graded):
    for path in (graded["out"] / "informes").glob("*.txt"):
        text = path.read_text(encoding="utf-8")
        assert not INVISIBLE.search(text), (path.name, INVISIBLE.search(text))
    rows = list(csv.reader(io.StringIO((graded["out"] / "notas.csv").read_text())))
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or NUMBER.fullmatch(cell)
               for row in rows for cell in row)  # a severity penalty is a negative number
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


# -- the third catalogue: leftovers, uid reuse and exposure in each mode ----------------------
def write_one(folder, name, template, host):
    os.makedirs(folder)
    with open(os.path.join(folder, "ejercicio2.py"), "w", encoding="utf-8") as handle:
        handle.write(host.fill(template))
    return folder


def test_a_killed_grader_leaves_no_learner_daemon_once_the_next_run_starts(world, tmp_path):
    daemon = write_one(str(tmp_path / "demonio"), "demonio", AGAINST_PLAIN["inunda_la_limpieza"],
                       world["host"])
    proc = grader(world, daemon, "--budget", "120")
    deadline = time.monotonic() + 60
    while not our_processes(TOKEN.encode()):
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the daemon never started: " + proc.communicate()[0].decode())
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    time.sleep(1.0)  # parent-death signals ripple down
    again = grader(world, str(world["base"] / "no-existe"), "--format", "json")
    again.communicate(timeout=120)
    assert our_processes(TOKEN.encode()) == [] and sandbox_uid_processes(world) == []
    assert os.listdir(world["tmpdir"]) == [] and shared_leftovers(world) == []


def test_a_daemon_flooding_files_and_forks_does_not_hold_the_run_past_its_budget(world,
                                                                                 tmp_path):
    flood = write_one(str(tmp_path / "inunda"), "inunda", AGAINST_PLAIN["inunda_la_limpieza"],
                      world["host"])
    started = time.monotonic()
    code, stdout, stderr = run_grader(world, flood, "--budget", "5", "--format", "json",
                                      timeout=120)
    seconds = time.monotonic() - started
    assert code == 1, stderr[-2000:]
    assert json.loads(stdout)["score"] == 0
    assert seconds < 5 + 10, seconds  # the budget and the documented margin (grader/README.md)
    assert our_processes(TOKEN.encode()) == [] and sandbox_uid_processes(world) == []
    assert os.listdir(world["tmpdir"]) == [] and shared_leftovers(world) == []


def test_a_uid_comes_back_only_when_nothing_of_its_last_learner_lives(world, tmp_path):
    """Eight uids for the whole class (GRADER_UID_RANGE=U:8: a sandbox and the tests that run
    at once), as if the range had run out: the first learner leaves a daemon that waits for the
    next sandbox of its uid to steal and replace its solution and to plant a link where root
    once wrote its warm-up file."""
    batch = tmp_path / "clase"
    write_one(str(batch / "a_demonio"), "a_demonio", AGAINST_PLAIN["demonio_reutiliza_el_uid"],
              world["host"])
    shutil.copytree(os.path.join(world["copy"], "grader", "reference", "soluciones"),
                    batch / "referencia")
    uid = world["uids"][0] + (1 << 15)
    code, stdout, stderr = run_grader(world, "--batch", str(batch), "--jobs", "1", "--format",
                                      "json", "--out", str(tmp_path / "notas"),
                                      env={"GRADER_UID_RANGE": f"{uid}:8"})
    results = {r["submission"]: r for r in map(json.loads, stdout.splitlines())}
    assert code == 1, stderr[-3000:]
    assert results["referencia"]["score"] == TOTAL, everything(results["referencia"])
    assert results["a_demonio"]["score"] == 0
    assert not os.path.lexists(world["host"].root_marker)  # root never ran its code
    assert not [n for n in os.listdir("/tmp") if n.startswith(f"robado-{TOKEN}")]
    assert our_processes(TOKEN.encode()) == [] and sandbox_uid_processes(world) == []


def world_writable_place():
    place = tempfile.mkdtemp(prefix="hostil-abierto-", dir="/tmp")
    os.chmod(place, 0o1777)  # like /tmp: anyone may make a folder here
    return place


def test_plain_mode_refuses_a_report_folder_other_users_could_prepare(world, tmp_path):
    place = world_writable_place()
    try:
        batch = os.path.join(place, "clase")
        os.mkdir(batch, 0o700)
        out = batch + "-resultados"  # the default: next to the class, where anyone may write
        host = Host(world["copy"], TOKEN, world["host"].folder, world["host"].file,
                    world["host"].fifo, out=out)
        write_one(os.path.join(batch, "enlaza_los_informes"), "x",
                  AGAINST_PLAIN["enlaza_los_informes"], host)
        shutil.copytree(os.path.join(world["copy"], "grader", "reference", "soluciones"),
                        os.path.join(batch, "referencia"))
        with open(world["host"].file, "rb") as handle:
            before = handle.read()
        code, stdout, stderr = run_grader(world, "--batch", batch, "--format", "json")
        with open(world["host"].file, "rb") as handle:
            assert handle.read() == before
        if world["mode"] == "plain":  # a learner could plant links there: nothing is graded
            assert code == 4 and stdout == "", stderr[-2000:]
            assert "carpeta de informes" in stderr and place in stderr
            assert not os.path.lexists(out)
        else:  # its own filesystem: the learner never sees this folder
            assert code == 1, stderr[-2000:]
            results = {r["submission"]: r for r in map(json.loads, stdout.splitlines())}
            assert results["referencia"]["score"] == TOTAL
            assert not os.path.islink(os.path.join(out, "notas.csv"))
    finally:
        remove_tree(place)


def test_plain_mode_refuses_hidden_tests_and_a_reference_other_users_can_read(world):
    place = world_writable_place()
    try:
        os.chmod(place, 0o755)
        copy = copy_repository(world["copy"], os.path.join(place, "copia"))
        reference = os.path.join(copy, "grader", "reference", "soluciones")
        code, stdout, stderr = run_grader(world, reference, "--only", "ejercicio4",
                                          "--format", "json", cwd=copy)
        if world["mode"] == "plain":
            assert code == 4 and stdout == "", stderr[-2000:]
            assert os.path.join(copy, "grader", "checks", "hidden") in stderr
            assert "--allow-unsafe-plain" in stderr
            code, stdout, stderr = run_grader(world, reference, "--only", "ejercicio4",
                                              "--format", "json", "--allow-unsafe-plain",
                                              cwd=copy)
            assert "--allow-unsafe-plain" in stderr
        assert code == 0, stderr[-2000:]
        assert json.loads(stdout)["protections"]["mode"] == world["mode"]
    finally:
        remove_tree(place)


# -- the grader's own faults are exit 3 -------------------------------------------------------
@pytest.mark.parametrize("content", ["raise ImportError('roto')\n", '"""Nada."""\n'],
                         ids=["does-not-import", "collects-nothing"])
def test_a_grading_file_that_fails_to_import_or_collects_nothing_is_exit_3(world, content,
                                                                          tmp_path):
    copy = copy_repository(world["copy"], str(tmp_path / "copia"))
    with open(os.path.join(copy, "grader", "checks", "public", "test_ej4.py"), "w") as handle:
        handle.write(content)
    code, stdout, stderr = run_grader(world, os.path.join(copy, "grader", "reference",
                                                          "soluciones"),
                                      "--only", "ejercicio2", cwd=copy, timeout=300)
    assert code == 3, stdout[-2000:]
    assert "test_ej4.py" in stderr


def test_a_hidden_folder_that_collects_nothing_is_exit_3(world, tmp_path):
    copy = copy_repository(world["copy"], str(tmp_path / "copia"))
    hidden = os.path.join(copy, "grader", "checks", "hidden")
    for name in os.listdir(hidden):
        if name.startswith("test_"):
            os.unlink(os.path.join(hidden, name))
    reference = os.path.join(copy, "grader", "reference", "soluciones")
    code, stdout, stderr = run_grader(world, reference, "--only", "ejercicio4", cwd=copy,
                                      timeout=300)
    assert code == 3, stdout[-2000:]
    assert "no grading file in it" in stderr
    code, _, stderr = run_grader(world, reference, "--only", "ejercicio4", "--tests", "public",
                                 cwd=copy, timeout=300)
    assert code == 0, stderr[-2000:]  # the public suite alone is fine


# -- the third round: what the grader processes, counts and writes itself -----------------------
THIRD_SCORES = {"referencia": TOTAL, "mensaje_de_200k": FULL["ejercicio2"],
                "zip_nombre_largo": FULL["ejercicio2"],
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
HARD_MARGIN = 15  # grader.pool.HARD_MARGIN


def sampled(world, *args, env=None, timeout=900):
    """Run the copy's grader: (returncode, stdout, stderr, seconds, peak RSS MiB of any grader
    process, peak threads)."""
    stop, peak = threading.Event(), {"threads": 0, "rss": {}}
    sampler = threading.Thread(target=sample, args=(world["python"].encode(), stop, peak),
                               daemon=True)
    sampler.start()
    started = time.monotonic()
    proc = grader(world, *args, env=env)
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
def third(world, third_class):
    """One batch in the world's mode (root; or plain, as a container runs it, where the grader
    takes the learners one at a time), `--format gradescope --out` into a results folder where
    links to the host sentinels were planted."""
    host = world["host"]
    graded = {"mode": world["mode"], "results": {}, **host_state(host)}
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
    graded["processes"] = sandbox_uid_processes(world)
    graded["leftovers"] = shared_leftovers(world)
    return graded


@pytest.mark.parametrize("name", sorted(THIRD_SCORES))
def test_third_round_submissions_get_their_verdict_next_to_the_reference(third, name):
    result = third["results"][name]
    assert result["score"] == THIRD_SCORES[name], everything(result)
    assert len(exercise_tests(result)) == len(exercise_tests(third["results"]["referencia"]))
    if name in THIRD_REASONS:
        assert THIRD_REASONS[name] in everything(result), everything(result)


def test_a_1mib_form_message_is_checked_in_the_graders_process_and_graded(third):
    result = third["results"]["mensaje_de_1mib"]
    ej2 = [t for t in result["tests"] if t["exercise"] == "ejercicio2"]
    # the tests run in a shuffled order (grader/runner.py, shuffled_order): those that come before
    # the submission's frames reach their cap (32 MiB, about 30 forms of 1 MiB) pass as usual
    essentials = [t for t in ej2 if t["id"].startswith("ej2/lo_imprescindible")]
    graded = [t for t in ej2 if t not in essentials]
    assert any(t["status"] == "passed" for t in graded), graded
    # past the cap, only that is said (a hidden test says only that the server failed, by
    # construction); where that broke the legitimate action of a test of what must not
    # happen, the severe cap says so (refusing, for whatever reason, is worth no more than the
    # bug that test looks for)
    assert any("demasiados datos" in t["output"] for t in graded)
    capped = "negarse a todo no vale más que el error grave"
    assert all(t["status"] == "passed" or "demasiados datos" in t["output"]
               or (t["hidden"] and t["status"] == "error")
               or (t in essentials and (capped in t["output"] or t["hidden"])) for t in ej2), \
        [(t["id"], t["output"][:300]) for t in ej2 if t["status"] != "passed"]
    # everything before the cap works: it keeps points, not all of them, and at most half of
    # the exercise when a severe test was cut (the essentials entry carries the penalty)
    total = sum(t["max_score"] for t in ej2)
    assert 0 < result["score"] < total
    if any(t["score"] < 0 for t in essentials):
        assert result["score"] <= total / 2 + 0.01


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


def test_every_learner_keeps_a_report_of_its_own_whatever_its_name(third):
    """Names are the results folder's business (the grader's parent process, whatever the
    sandbox mode): a learner named like the gradebook, like the reports' folder, two named alike
    in their first 80 characters, and links planted where the reports go."""
    out = third["out"]
    rows = list(csv.DictReader(io.StringIO((out / "notas.csv").read_text())))
    names = [row["submission"] for row in rows]
    assert len(names) == len(set(names)) == len(THIRD_SCORES) + 1 + len(COLLIDING)
    assert not os.path.islink(out / "informes") and not os.path.islink(out / "notas.csv")
    for name in names:
        assert f"Entrega: {name}\n" in (out / "informes" / f"{name}.txt").read_text()
        assert "score" in json.loads((out / name / "results.json").read_text())


def test_nothing_of_the_third_round_is_left_running_or_in_the_shared_temp_folders(third):
    assert third["processes"] == [] and third["leftovers"] == []


def test_a_1mib_form_message_ends_within_its_budget(world, third_class, third):
    returncode, stdout, stderr, seconds, _, _ = sampled(
        world, third_class["made"]["mensaje_de_1mib"], "--budget", "20", "--format", "json")
    assert returncode == 1, stderr[-2000:]
    assert seconds < 20 + HARD_MARGIN + 10, seconds  # + two reaps of at most 5 s (plain mode)
    assert len(exercise_tests(json.loads(stdout))) == \
        len(exercise_tests(third["results"]["referencia"]))


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
    budget plus its margin: that submission is the grader's fault (exit 3), and the next one,
    graded after it by a fresh worker, gets its full marks. The budget leaves the reference's
    ejercicio4 room on a loaded machine (5 s did not: two hidden tests ran out of time)."""
    budget = 20
    site = tmp_path / "sitio"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STUCK)
    batch = tmp_path / "clase"
    (batch / "0_se_cuelga").mkdir(parents=True)  # sorted first: the reference comes after it
    shutil.copytree(os.path.join(world["copy"], "grader", "reference", "soluciones"),
                    batch / "referencia")
    returncode, stdout, stderr, seconds, _, _ = sampled(
        world, "--batch", str(batch), "--jobs", "1", "--budget", str(budget),
        "--only", "ejercicio4", "--format", "json", "--out", str(tmp_path / "notas"),
        env={"PYTHONPATH": f"{site}:{world['copy']}"})
    results = [json.loads(line) for line in stdout.splitlines()]
    assert [r["submission"] for r in results] == ["0_se_cuelga", "referencia"], stderr[-2000:]
    stuck, reference = results
    assert returncode == 3, stderr[-2000:]
    assert f"pasó de {budget + HARD_MARGIN:.0f} s" in everything(stuck)
    assert reference["score"] == reference["max_score"] == FULL["ejercicio4"], everything(reference)
    # each submission is bounded by its hard deadline (plus a reap of at most 5 s)
    assert seconds < 2 * (budget + HARD_MARGIN + 5), seconds
