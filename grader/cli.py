"""`python -m grader`: the command line. See grader/README.md for the full description.

    python -m grader PATH... [--format text|json|csv|gradescope] [--out DIR] [--jobs N]
                     [--only ejercicio2,ejercicio3a,ejercicio3b,...] [--batch DIR]
                     [--tests public|all] [--host auto|sandbox|portable|inprocess]
                     [--hidden-visibility visible|after_due_date|after_published|hidden]
                     [--budget SECONDS] [--require-isolation] [--allow-unsafe-plain]

Exit codes: 0 every submission got full marks in every graded exercise that is not optional
(whatever the optional ones scored); 1 at least one did not; 2 usage error;
3 the grader itself failed somewhere (a sandbox could not start, a grader bug, a grading file
that does not import, a report the results folder would not take): the affected submissions got
0 and the reason; 4 --require-isolation was given and the full sandbox is not available here, or
the sandbox cannot run here at all, or plain mode cannot keep this run safe
(grader/hosts/plainmode.py): nothing was graded.

Submission names come from file names a learner chose: each submission is named after a safe
version of its name (grader.escape.file_name), unique in the run even on a file system that
ignores case, apart from the grader's own output files (`notas.csv`, `informes`) and at most 80
characters long with its `-2`, `-3`... suffix, so no report overwrites another; everything
printed goes through grader.report. The results folder is opened before grading and written
without following links (grader/outfiles.py). SIGTERM or Ctrl-C stop every sandbox and worker
and remove this run's temp folders.
"""

import os
import re
import signal
import sys
import threading

from cli.spanish_cli import SpanishParser  # code/: argparse's own words in Spanish
from grader import hosts, pool, report
from grader.escape import file_name, one_line
from grader.hosts import plainmode
from grader.runner import EXERCISES, SUBMISSION_BUDGET, SUITES, suite_files

EXIT_FULL, EXIT_PARTIAL, EXIT_USAGE, EXIT_INTERNAL, EXIT_ISOLATION = 0, 1, 2, 3, 4
GRADEBOOK, REPORTS = "notas.csv", "informes"   # the grader's own names in a results folder
NAME_LIMIT = 80                                 # characters of a submission's file name
NAME_BYTES = 200                                # ... and its UTF-8 bytes (a file name: 255)


def parse(argv):
    parser = SpanishParser(prog="python -m grader",
                           description="Corrige los ejercicios 2, 3A, 3B y 4 (y sus partes "
                                       "opcionales) de la lección Roots y Elicitación.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="una entrega por ruta: .ipynb, .py, carpeta o .zip")
    parser.add_argument("--batch", metavar="DIR",
                        help="corrige cada entrada de DIR como la entrega de un alumno")
    parser.add_argument("--format", default="text",
                        choices=("text", "json", "csv", "gradescope"),
                        help="formato del informe: text (por defecto), json, csv (las notas) "
                             "o gradescope")
    parser.add_argument("--out", metavar="DIR", help="escribe aquí informes y notas")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="entregas en paralelo (por defecto: 1, o los núcleos con --batch)")
    parser.add_argument("--only", default="", metavar="EJERCICIOS",
                        help="solo estos ejercicios, p. ej. ejercicio2,ejercicio3a o reto")
    parser.add_argument("--budget", type=float, default=SUBMISSION_BUDGET, metavar="SEGUNDOS",
                        help="segundos como máximo por entrega")
    parser.add_argument("--tests", default="all", choices=SUITES,
                        help="public: solo las pruebas públicas (la autoevaluación); all: "
                             "públicas y ocultas, si están (por defecto)")
    parser.add_argument("--host", default=None, choices=hosts.NAMES,
                        help="dónde corren los servidores: sandbox (la corrección oficial, "
                             "Linux), portable (autoevaluación en cualquier sistema), "
                             "inprocess (autoevaluación sin procesos) o auto; sin --host, el "
                             "sandbox donde puede ejecutarse y, si no, portable")
    parser.add_argument("--hidden-visibility", default=report.HIDDEN_VISIBILITY,
                        choices=report.VISIBILITIES,
                        help="--format gradescope: cuándo ve el alumno las pruebas ocultas")
    parser.add_argument("--require-isolation", action="store_true",
                        help="no corregir si el aislamiento completo no está disponible")
    parser.add_argument("--allow-unsafe-plain", action="store_true",
                        help="corregir aunque el modo plain (sin espacios de nombres) no pueda "
                             "garantizar que el código de un alumno no lea las pruebas "
                             "ocultas, la referencia u otras entregas")
    args = parser.parse_args(argv)
    if not args.paths and not args.batch:
        parser.error("indica al menos una entrega (PATH) o --batch DIR")
    try:
        args.only = [normalise(x) for x in args.only.split(",") if x.strip()]
    except ValueError as exc:
        parser.error(str(exc))
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs debe ser 1 o más")
    return args


def normalise(name):
    """An exercise's id from what --only says: its id, or short forms ("3a", "ej3a")."""
    short = re.sub(r"^(?:ejercicio|ej)", "", name.strip().lower())
    for exercise in EXERCISES:
        if short in (exercise, exercise.removeprefix("ejercicio")):
            return exercise
    raise ValueError(f"--only: ejercicio desconocido {name!r} (usa {', '.join(EXERCISES)})")


def jobs_from(args):
    """The jobs of the paths and of --batch (grader/batch.py: a flat class folder, a hub's
    homes or nbgrader's submitted/); what reading a home said goes to stderr."""
    entries = [(path, None) for path in args.paths]
    if args.batch:
        if not os.path.isdir(args.batch):
            raise SystemExit(f"--batch {args.batch}: no es una carpeta")
        if os.open not in os.supports_dir_fd:  # Windows: no descriptors relative to a folder
            sys.stderr.write("[grader] --batch: aquí cada entrada de la carpeta es una entrega "
                             "(las carpetas de un hub o de nbgrader se leen en Linux o macOS)\n")
            entries += [(os.path.join(args.batch, entry), entry)
                        for entry in sorted(os.listdir(args.batch)) if not entry.startswith(".")]
        else:
            from grader import batch  # descriptors only (grader/batch.py): POSIX

            global BATCH
            BATCH = batch.discover(args.batch)
            entries += BATCH.entries
            for name, text in BATCH.notes:
                sys.stderr.write(f"[grader] {one_line(name, 80)}: {one_line(text, 300)}\n")
    jobs, seen = [], {GRADEBOOK.casefold(), REPORTS.casefold()}
    for path, name in entries:
        name = name or os.path.basename(os.path.normpath(path)) or path
        unique = unique_name(re.sub(r"\.(zip|ipynb|py)$", "", name), seen)
        jobs.append({"path": path, "name": unique, "only": args.only, "budget": args.budget,
                     "tests": args.tests, "host": args.host})
    return jobs


def unique_name(name, seen):
    """A safe file name for `name` that is not in `seen` (compared ignoring case), at most
    NAME_LIMIT characters, suffix included; added to `seen`."""
    base = file_name(name, NAME_LIMIT)
    while len(base.encode("utf-8")) > NAME_BYTES:
        base = base[:-1]
    unique, number = base, 1
    while unique.casefold() in seen:
        number += 1
        suffix = f"-{number}"
        unique = base[:NAME_LIMIT - len(suffix)].rstrip("._") + suffix
    seen.add(unique.casefold())
    return unique


def progress_bar(stream):
    def show(done, total, result):
        width = 30
        filled = int(width * done / total)
        mark = "✔" if full_marks(result) else "·"
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                     f"{mark} {one_line(result.get('submission', ''), 29):30}")
        if done == total:
            stream.write("\n")
        stream.flush()
    return show


def stop(signum, frame):
    """SIGTERM / SIGINT: end every worker and host, remove our temp space, exit."""
    pool.kill_workers()
    KIND.stop()
    if BATCH is not None:
        BATCH.close()
    os._exit(128 + signum)


BATCH = None  # the --batch folder's grader/batch.Batch (its staging folder is removed at exit)


KIND = hosts.kind("sandbox")  # the run's host kind (grader/hosts/kinds.py), chosen in main()


def main(argv=None):
    for stream in (sys.stdout, sys.stderr):  # whatever the locale, writing never fails
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = parse(sys.argv[1:] if argv is None else argv)
    global KIND
    KIND = hosts.kind(args.host)  # no --host: the sandbox where it can run, else portable
    args.host = KIND.name
    refusal = KIND.unavailable()
    if refusal:
        sys.stderr.write(refusal + "\n")
        return EXIT_ISOLATION
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
    KIND.clean_leftovers()  # what killed runs left, before this one adds its own
    mode = KIND.mode()
    if args.require_isolation and mode != "root":
        sys.stderr.write(f"--require-isolation: el aislamiento completo no está disponible "
                         f"aquí (modo {mode}); no se corrigió nada.\n")
        return EXIT_ISOLATION
    try:
        jobs = jobs_from(args)
        return grade(args, jobs, mode)
    finally:
        if BATCH is not None:
            BATCH.close()


def grade(args, jobs, mode):
    out = args.out or (args.batch.rstrip("/") + "-resultados" if args.batch else None)
    workers = args.jobs or (min(os.cpu_count() or 1, 4) if args.batch else 1)
    # -- plain mode and the portable fallback grade only what they keep safe (hosts/plainmode.py);
    # no --host, or --host auto, that came to the portable host is that fallback (a learner's
    # code would run with your own rights), whoever asked for it
    admission = plainmode.admit(mode, jobs, out, suite_files(args.tests)[0],
                                args.allow_unsafe_plain, fallback=KIND.fallback)
    if admission.refusal:
        sys.stderr.write(admission.refusal + "\n")
        return EXIT_ISOLATION
    if KIND.fallback:
        sys.stderr.write("Aquí no corre el entorno aislado del corrector: se corrige en modo "
                         "local (sin aislamiento; el informe lo dice).\n")
    if admission.warning:
        sys.stderr.write(admission.warning + "\n")
    if admission.workers and workers > admission.workers:
        sys.stderr.write(f"Modo {mode}: las entregas se corrigen de una en una (nunca corre a "
                         "la vez el código de dos alumnos).\n")
        workers = admission.workers
    # -- end of plain mode
    from grader.outfiles import OutputError, OutputFolder
    try:  # opened now, before grading: a link there is refused (grader/outfiles.py)
        folder = OutputFolder.open(out) if out is not None else None
    except OutputError as exc:
        sys.stderr.write(f"--out: {exc}\n")
        return EXIT_USAGE
    show = progress_bar(sys.stderr) if args.batch or len(jobs) > 3 else None
    results = pool.grade_all(jobs, workers, show, alone=bool(admission.workers))
    KIND.clean_leftovers()  # again: a killed grader's processes may have been dying at start
    try:
        written = emit(args, results, folder, [job["name"] for job in jobs])
    finally:
        if folder is not None:
            folder.close()
    for result in results:
        for warning in result.get("warnings") or []:
            sys.stderr.write(f"[grader] {one_line(result['submission'])}: warning (the "
                             f"submission's data tripped a test):\n{warning}\n")
        for error in result.get("internal_errors") or []:
            sys.stderr.write(f"[grader] {one_line(result['submission'])}: internal error:\n"
                             f"{error}\n")
    if any(result.get("internal_errors") for result in results) or not written:
        return EXIT_INTERNAL
    return EXIT_FULL if all(full_marks(r) for r in results) else EXIT_PARTIAL


def full_marks(result):
    """Every graded exercise that is not optional got full marks (`score` is theirs), whatever
    the optional ones (the reto, 3B's optional part) scored apart; when only optional ones were
    graded (asked for by name), `score` is theirs (grader/runner.py, `assemble`)."""
    return result["score"] == result["max_score"]


def emit(args, results, out, names):
    """Print the results; with a results folder `out`, write the gradebook and one report per
    submission there, each named after its unique name in `names` (in the results' order).
    False when a report could not be written (said on stderr; the others are written)."""
    def gradescope(result):
        return report.gradescope(result, args.hidden_visibility)

    renderers = {"text": report.text, "json": report.json_line, "gradescope": gradescope}
    if args.format == "csv":
        sys.stdout.write(report.gradebook(results))
    elif args.format == "gradescope" and out is None and len(results) > 1:
        sys.stderr.write("--format gradescope con varias entregas: usa --out DIR "
                         "(un results.json por entrega)\n")
    else:
        for result in results:
            sys.stdout.write(renderers[args.format](result))
    sys.stdout.flush()
    if out is None:
        return True
    from grader.outfiles import OutputError
    written = [True]

    def attempt(what, action, *args):
        try:
            return action(*args)
        except (OSError, OutputError) as exc:  # the results folder's fault, never a learner's
            sys.stderr.write(f"no se pudo escribir {what} en la carpeta de resultados: "
                             f"{one_line(exc, 300)}\n")
            written[0] = False
            return None

    attempt(GRADEBOOK, out.write, GRADEBOOK, report.gradebook(results))
    reports = attempt(REPORTS, out.folder, REPORTS)
    for name, result in zip(names, results, strict=True):
        if reports is not None:
            attempt(f"{REPORTS}/{name}.txt", reports.write, f"{name}.txt", report.text(result))
            attempt(f"{REPORTS}/{name}.json", reports.write, f"{name}.json",
                    report.json_line(result))
        if args.format == "gradescope":
            own = attempt(name, out.folder, name)
            if own is not None:
                attempt(f"{name}/results.json", own.write, "results.json", gradescope(result))
                own.close()
    if reports is not None:
        reports.close()
    return written[0]
