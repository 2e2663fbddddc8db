"""The built JupyterLite site: its configuration points only at its own files, a rebuild with
unchanged inputs is skipped, and the course imports in a browser without a service worker
(probe notebook tests/lite/probe/). The lessons themselves: test_lite_lessons.py."""

from __future__ import annotations

import hashlib
import json

from litesite import (
    PROBE_PATH,
    build_site,
    cell_at,
    left_the_machine,
    open_notebook,
    run_cell,
    unexpected_failures,
    wait_output,
    wait_ran,
)


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_stayed_on_the_machine(lite) -> None:
    assert lite.seen["local"], "no request reached the site at all"
    assert lite.seen["blocked"] == []
    assert left_the_machine(lite.proxy_attempts) == []
    assert unexpected_failures(lite.seen) == []


def test_a_failed_favicon_or_contents_probe_is_expected_but_a_failed_site_file_is_not():
    base = "http://127.0.0.1:8000"
    seen = {"failed": [f"{base}/lab/favicon.ico 404",
                       f"{base}/lab/favicon.ico failed: net::ERR_FAILED",
                       f"{base}/api/contents/soluciones/all.json 404",
                       f"{base}/build/bundle.js failed: net::ERR_FAILED",
                       f"{base}/static/pyodide/pyodide.mjs 404",
                       f"{base}/lab/?next=/favicon.ico failed: net::ERR_FAILED"]}
    assert unexpected_failures(seen) == seen["failed"][3:]


def test_site_config_points_only_at_its_own_files(lite_site):
    site = lite_site.build.out
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert kernel["disablePyPIFallback"] is True
    assert all(url.startswith("./") for url in kernel["pipliteUrls"])
    index = json.loads((site / "pypi" / "all.json").read_text())
    assert {"comm", "ipywidgets", "jupyterlab-widgets", "course-lite"} <= set(index)
    for project in index.values():
        for release in project["releases"].values():
            for dist in release:
                assert "://" not in dist["url"]
                assert sha256(site / "pypi" / dist["url"].split("?")[0].lstrip("./")) == \
                    dist["digests"]["sha256"]


def test_pyodide_lock_lists_exactly_the_shipped_wheels_with_their_sha256(lite_site):
    static = lite_site.build.out / "static" / "pyodide"
    lock = json.loads((static / "pyodide-lock.json").read_text())
    shipped = {p.name for p in static.glob("*.whl")}
    assert {entry["file_name"] for entry in lock["packages"].values()} == shipped
    for entry in lock["packages"].values():
        assert sha256(static / entry["file_name"]) == entry["sha256"], entry["name"]
    assert {"micropip", "ipython", "jedi"} <= set(lock["packages"])


def test_unchanged_inputs_reuse_the_build(lite_site):
    site = lite_site.build.out
    before = (site.stat().st_ino, (site / "index.html").stat().st_mtime_ns)
    again = build_site(lite_site.content, site)
    assert again.reused, again.log
    # a rebuild would have moved a new folder into place: the site is the same one, untouched
    assert (site.stat().st_ino, (site / "index.html").stat().st_mtime_ns) == before


def test_course_imports_without_a_service_worker(lite_page):
    """Browsers that give JupyterLite no service worker (a private window; plain http from
    an address other than localhost) have no /drive: course_lite copies the course to memory
    and the notebook works there."""
    page = lite_page.page
    page.context.add_init_script("delete Navigator.prototype.serviceWorker")
    open_notebook(page, lite_page.url, PROBE_PATH)
    assert page.evaluate("'serviceWorker' in navigator") is False
    run_cell(page, cell_at(page, 1))
    wait_ran(page, cell_at(page, 1))
    run_cell(page, "PROBE:imports")
    shown = wait_output(page, "PROBE:imports", "PROBE-IMPORT")
    # the notebook's folder is the copy in memory; the modules come from the packed wheel
    packed = "/lib/python3.14/site-packages/course_lite/files"
    assert (f"PROBE-IMPORT /a/b | /home/pyodide/curso/lessons | {packed}/code/roots.py | "
            f"{packed}/lessons/mcp_ui") in shown
    assert_stayed_on_the_machine(lite_page)
