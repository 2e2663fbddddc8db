"""The rendered edition is learner-facing: the one leak check of every edition
(editions/common.py) passes on it (the build runs it too), and would catch a reference solution
(grader/reference) in a page."""

from __future__ import annotations

import html
import importlib.util
import json
import shutil

import pytest
from rendered_helpers import REPO

pytestmark = pytest.mark.instructor_only("plants a reference solution in a rendered page")
COMMON = REPO / "editions" / "common.py"


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rendered_edition_carries_no_reference_and_no_hidden_test(rendered):
    assert load("editions_common", COMMON).check_no_leak(str(rendered.out)) == []


def test_a_planted_reference_solution_fails_the_build_check(rendered, tmp_path):
    builder = load("rendered_build", REPO / "editions" / "rendered" / "build.py")
    copy = shutil.copytree(rendered.out, tmp_path / "copy",
                           ignore=shutil.ignore_patterns("static"))
    reference = (REPO / "grader" / "reference" / "soluciones" / "ejercicio2.py").read_text()
    page = copy / "02_formularios.html"
    page.write_text(page.read_text() + "<pre>" + html.escape(reference) + "</pre>")
    notebook = copy / "notebooks" / "02_formularios.ipynb"
    notebook.write_text(notebook.read_text().replace(
        '"cells": [', '"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
        '"execution_count": null, "source": ' + json.dumps(reference) + '}, ', 1))
    with pytest.raises(builder.BuildError, match="instructor-only"):
        builder.leak_check(copy)
