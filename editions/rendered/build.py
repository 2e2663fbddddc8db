"""Build the rendered edition: the lesson as static HTML pages, readable with nothing installed.

    .venv/bin/python editions/rendered/build.py [--from COURSE] [--out build/rendered]
                                                                        (make rendered)

1. The course folder (`make rendered` gives the student edition, build/release/student, which
   `make release` builds first) is staged into a temporary folder: code/ (folders too),
   lessons/ (without soluciones/) and the public grader, as the Lite site is
   (editions/common.py's stage_content).
2. Every notebook of lessons/ runs there unattended, top to bottom, with nbclient and
   LESSON_USER=scripted (the scripted user answers the forms and consents), with widget state
   stored in the notebook. A cell that raises fails the build.
3. Each executed notebook becomes an HTML page with nbconvert's lab template (templates/curso:
   no MathJax, mermaid as a classic script, a bar back to the course map). The widget renderer
   (@jupyter-widgets/html-manager), require.js and mermaid come from pinned npm packages
   (assets.json: `npm pack`, sha512 checked), copied into static/, so the pages make no
   request to another host: the stored widget state draws the forms and dialogs as they were.
4. The demo transcript (`python3 code/main.py`, both revisions) becomes demo-*.html.
5. index.html is the course map, taken from the README's section whose title starts with
   "Mapa del curso" (or, without one, "Los cuadernos"), with links to the pages.
6. The executed notebooks are kept in notebooks/ (to download). The output goes through the one
   leak check of every edition (editions/common.py): no reference solution and no hidden test
   may be in it.

Open out/index.html directly (file://) or through any static server. Stdlib plus nbclient,
nbconvert and ipykernel (all in requirements.txt); npm for the assets.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import fnmatch
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # editions/common.py
from editions.common import REPO, BuildError, check_no_leak, logger, stage_content  # noqa: E402

log = logger("rendered")
CACHE = REPO / "build" / "rendered-cache"
DEFAULT_OUT = REPO / "build" / "rendered"
ASSETS = HERE / "assets.json"
TEMPLATES = HERE / "templates"
DEMOS = (("2025-11-25", []), ("2026-07-28", ["--protocol", "2026-07-28"]))
MAP_TITLES = ("Mapa del curso", "Los cuadernos")
CELL_TIMEOUT = 600


# ---------------------------------------------------------------- assets (npm)


def integrity_of(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def npm_tarball(package: dict, cache: Path) -> Path:
    """The package's tarball, from the cache or `npm pack`, its sha512 checked."""
    cache.mkdir(parents=True, exist_ok=True)
    name = package["name"].lstrip("@").replace("/", "-") + f"-{package['version']}.tgz"
    tarball = cache / name
    if not (tarball.exists() and integrity_of(tarball) == package["integrity"]):
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm not found: the widget renderer comes from the npm registry "
                             "(Debian: apt-get install npm)")
        log(f"npm pack {package['name']}@{package['version']}")
        run = subprocess.run([npm, "pack", f"{package['name']}@{package['version']}",
                              "--silent"], cwd=cache, capture_output=True, text=True)
        if run.returncode != 0 or not tarball.exists():
            raise BuildError(f"npm pack {package['name']} failed:\n{run.stderr[-2000:]}")
    got = integrity_of(tarball)
    if got != package["integrity"]:
        raise BuildError(f"{tarball.name}: sha512 {got} is not the pinned "
                         f"{package['integrity']}")
    return tarball


def copy_assets(static: Path, cache: Path) -> dict[str, str]:
    """static/<dest>/... from each pinned package; {package name: version}."""
    shipped = {}
    for package in json.loads(ASSETS.read_text())["packages"]:
        tarball = npm_tarball(package, cache)
        dest = static / package["dest"]
        with tarfile.open(tarball) as archive:
            members = [m for m in archive.getmembers() if m.isfile()]
            for pattern in package["files"]:
                chosen = [m for m in members if fnmatch.fnmatch(m.name, pattern)]
                if not chosen:
                    raise BuildError(f"{package['name']}: nothing matches {pattern}")
                for member in chosen:
                    relative = member.name.removeprefix("package/")
                    relative = relative.removeprefix("dist/")
                    target = dest / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.extractfile(member).read())
        shipped[package["name"]] = package["version"]
    return shipped


# ---------------------------------------------------------------- running the notebooks


def execute(notebook: Path) -> tuple[Path, float]:
    """Run ``notebook`` in place, unattended, storing the widget state; seconds taken."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    start = time.monotonic()
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook.parent)}},
                            store_widget_state=True, record_timing=False)
    try:
        client.execute()
    except CellExecutionError as exc:
        raise BuildError(f"{notebook.name}: a cell raised in the unattended run:\n"
                         f"{str(exc)[-3000:]}") from None
    unrun = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and c.source.strip() and c.execution_count is None]
    if unrun:
        raise BuildError(f"{notebook.name}: cells {unrun} did not run")
    nbformat.write(nb, notebook)
    return notebook, time.monotonic() - start


def run_notebooks(lessons: Path, jobs: int) -> list[Path]:
    notebooks = sorted(lessons.glob("*.ipynb"))
    if not notebooks:
        raise BuildError(f"no notebooks in {lessons}")
    os.environ["LESSON_USER"] = "scripted"  # the kernels inherit it
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, seconds in pool.map(execute, notebooks):
            log(f"ran {path.name} in {seconds:.1f}s")
    return notebooks


def demo_transcripts(staged: Path) -> dict[str, str]:
    """{revision: what `python3 code/main.py [--protocol ...]` prints}."""
    out = {}
    for revision, extra in DEMOS:
        run = subprocess.run([sys.executable, str(staged / "code" / "main.py"), *extra],
                             cwd=staged, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        if run.returncode != 0 or not run.stdout.strip():
            raise BuildError(f"the demo ({revision}) failed:\n{run.stderr[-2000:]}")
        out[revision] = run.stdout
    return out


# ---------------------------------------------------------------- pages


def title_of(notebook: dict, fallback: str) -> str:
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            match = re.search(r"^#\s+(.+)$", source, re.M)
            if match:
                return match[1].replace("`", "").strip()
    return fallback


def html_page(notebook: Path, static: str) -> str:
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="curso", extra_template_basedirs=[str(TEMPLATES)])
    exporter.require_js_url = f"{static}/requirejs/require.js"
    exporter.widget_renderer_url = f"{static}/html-manager/embed-amd.js"
    nb = nbformat.read(notebook, as_version=4)
    nb.metadata["title"] = title_of(nb, notebook.stem)
    body, _ = exporter.from_notebook_node(nb, resources={
        "curso_notebook_href": f"notebooks/{notebook.name}", "curso_static": static})
    return body


PAGE = """<!DOCTYPE html>
<html lang="es"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{title}</title>
<style>
 body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
         padding: 0 1rem; line-height: 1.5; color: #222; }}
 table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 4px 8px; }}
 pre {{ background: #f6f8fa; padding: 1rem; overflow-x: auto; font-size: 13px; }}
 code {{ background: #f6f8fa; padding: 0 3px; }}
</style></head>
<body>
{body}
</body></html>
"""


def readme_map(course: Path) -> tuple[str, str]:
    """(title, markdown) of the README's course map section."""
    readme = (course / "README.md").read_text(encoding="utf-8")
    sections = re.split(r"(?m)^(## .+)$", readme)
    for wanted in MAP_TITLES:
        for i in range(1, len(sections) - 1, 2):
            if sections[i][3:].strip().startswith(wanted):
                return sections[i][3:].strip(), sections[i + 1]
    raise BuildError(f"README.md has no section titled {' or '.join(MAP_TITLES)}")


def link_pages(markdown_html: str, pages: dict[str, str]) -> str:
    """Links to lessons/NN_x.ipynb point at the rendered pages, and a notebook named in bold
    or as code (**01_roots**, `01_roots.ipynb`) becomes a link to its page."""
    for notebook, page in pages.items():
        stem = re.escape(Path(notebook).stem)
        markdown_html = re.sub(rf'href="(?:\.\./|\./)?(?:lessons/)?{re.escape(notebook)}"',
                               f'href="{page}"', markdown_html)
        markdown_html = re.sub(rf"(?<!>)<(strong|code)>((?:lessons/)?{stem}(?:\.ipynb)?)</\1>",
                               rf'<a href="{page}"><\1>\2</\1></a>', markdown_html)
        # the map's table names them "01 · Roots" (bold for the core path)
        number = re.escape(Path(notebook).stem.split("_", 1)[0])
        markdown_html = re.sub(rf"<td>(<strong>)?({number} · [^<]+)(</strong>)?</td>",
                               rf'<td><a href="{page}">\1\2\3</a></td>', markdown_html)
    return markdown_html


def index_page(course: Path, titles: dict[str, str], demos: dict[str, str]) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    heading, markdown = readme_map(course)
    pages = {name: Path(name).with_suffix(".html").name for name in titles}
    course_map = link_pages(markdown2html_mistune(markdown), pages)
    rows = "".join(f'<li><a href="{html.escape(page)}">{html.escape(titles[name])}</a> '
                   f'<small>(<a href="notebooks/{html.escape(name)}" download>cuaderno</a>)'
                   f'</small></li>' for name, page in pages.items())
    demo_links = " · ".join(f'<a href="demo-{rev}.html">revisión {rev}</a>' for rev in demos)
    body = (f"<h1>Roots y Elicitación: la lección para leer</h1>"
            "<p>Esta es la edición para leer sin instalar nada: cada cuaderno con las salidas "
            "de una ejecución sin atender (un usuario simulado responde los formularios; "
            "aquí se ven tal como quedaron, pero no responden). Para hacer la lección, abre "
            "los cuadernos en JupyterLab (<code>python3 tools/lab.py</code>) o en JupyterLite."
            "</p>"
            f"<h2>{html.escape(heading)}</h2>{course_map}"
            f"<h2>Cada cuaderno, con sus salidas</h2><ol>{rows}</ol>"
            f"<h2>La demo, mensaje a mensaje</h2>"
            f"<p>Lo que imprime <code>python3 code/main.py</code>: "
            f"{demo_links}.</p>")
    return PAGE.format(title="Roots y Elicitación: mapa del curso", body=body)


def demo_page(revision: str, transcript: str) -> str:
    command = "python3 code/main.py" + (" --protocol 2026-07-28"
                                        if revision == "2026-07-28" else "")
    body = (f'<p><a href="index.html">← Mapa del curso</a></p>'
            f"<h1>La demo, revisión {revision}</h1><p><code>{command}</code></p>"
            f"<pre>{html.escape(transcript)}</pre>")
    return PAGE.format(title=f"Demo {revision}", body=body)


# ---------------------------------------------------------------- the build


def leak_check(out: Path) -> None:
    """The one leak check of every edition (in the student edition, only its paths)."""
    leaks = check_no_leak(out)
    if leaks:
        raise BuildError("the rendered edition carries instructor-only material:\n  "
                         + "\n  ".join(leaks))


def build(course: Path, out: Path, jobs: int, cache: Path = CACHE) -> dict:
    start = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rendered-") as tmp:
        staged = stage_content(Path(tmp) / "curso", course)
        site = Path(tmp) / "site"
        shipped = copy_assets(site / "static", cache / "npm")
        notebooks = run_notebooks(staged / "lessons", jobs)
        demos = demo_transcripts(staged)
        (site / "notebooks").mkdir(parents=True)
        titles = {}
        for notebook in notebooks:
            titles[notebook.name] = title_of(json.loads(notebook.read_text()), notebook.stem)
            shutil.copy2(notebook, site / "notebooks" / notebook.name)
            page = html_page(notebook, "./static")
            (site / notebook.with_suffix(".html").name).write_text(page, encoding="utf-8")
        for revision, transcript in demos.items():
            (site / f"demo-{revision}.html").write_text(demo_page(revision, transcript),
                                                        encoding="utf-8")
            (site / f"demo-{revision}.txt").write_text(transcript, encoding="utf-8")
        (site / "index.html").write_text(index_page(course, titles, demos), encoding="utf-8")
        leak_check(site)
        if out.exists():
            shutil.rmtree(out)
        shutil.move(str(site), str(out))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {"seconds": time.monotonic() - start, "bytes": size, "notebooks": len(titles),
            "assets": shipped}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="course", type=Path, default=REPO,
                        help="course folder (default: this repository; make rendered: "
                             "build/release/student)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run at once")
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    try:
        if not (args.course / "lessons").is_dir():
            raise BuildError(f"not a course folder (no lessons/): {args.course}")
        result = build(args.course.resolve(), args.out.resolve(), max(1, args.jobs),
                       args.cache.resolve())
    except BuildError as exc:
        print(f"[rendered] BUILD FAILED: {exc}", file=sys.stderr)
        return 1
    log(f"built {args.out} in {result['seconds']:.1f}s: {result['notebooks']} notebooks, "
        f"{result['bytes'] / 1e6:.1f} MB; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
