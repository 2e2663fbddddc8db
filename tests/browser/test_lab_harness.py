"""Smoke test proving the browser harness end to end (real JupyterLab, kernel, widgets)."""

import sys

import nbformat
import pytest

from lab import open_notebook, run_all, screenshot
from waits import PATIENCE, TEST_TIMEOUT, ms

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright pip package is not installed: run `make venv`"
).expect
expect.set_options(timeout=ms(PATIENCE))

WIDGET_CELL = """\
import ipywidgets as w
choice = w.Dropdown(options=["alpha", "beta", "gamma"], value="alpha", description="Pick")
agree = w.Checkbox(value=False, description="I agree")
submit = w.Button(description="Submit")
status = w.Label(value="waiting")
def on_submit(_):
    status.value = f"picked={choice.value} agree={agree.value}"
submit.on_click(on_submit)
w.VBox([choice, agree, submit, status])
"""


def write_fixture_notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell('import sys\nprint("KERNEL_PYTHON=" + sys.executable)'),
        nbformat.v4.new_code_cell(WIDGET_CELL),
    ]
    nbformat.write(nb, path)


@pytest.mark.timeout(TEST_TIMEOUT)
def test_harness_drives_widgets_in_real_jupyterlab(jupyter_lab, page, tmp_path):
    write_fixture_notebook(tmp_path / "harness_probe.ipynb")
    lab = jupyter_lab(tmp_path)

    open_notebook(page, lab, "harness_probe.ipynb")
    windowing = "window.jupyterapp.shell.currentWidget.content.notebookConfig.windowingMode"
    assert page.evaluate(f"() => {windowing}") == "none"  # the harness's settings apply
    run_all(page)
    # The kernel runs on this very interpreter (the project venv): jupyter_client swaps the
    # kernelspec's bare "python" for the server's sys.executable.
    expect(page.get_by_text(f"KERNEL_PYTHON={sys.executable}", exact=True)).to_be_visible()

    page.locator(".widget-dropdown select").select_option("beta")
    page.locator(".widget-checkbox input[type=checkbox]").check()
    page.locator("button.jupyter-button", has_text="Submit").click()
    expect(page.locator(".widget-label", has_text="picked=")).to_have_text(
        "picked=beta agree=True"
    )
    assert screenshot(page, "lab-harness-smoke").stat().st_size > 0
