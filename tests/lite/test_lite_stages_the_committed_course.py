"""`make lite` builds the site from a clean copy of the course, never from the working files a
learner has been using (editions/lite/build.py's `stage_course`): in a git checkout, the last
commit; every notebook without outputs. So what JupyterLab autosaved (outputs, a solution typed
into a notebook, a scratch cell or notebook) and soluciones/ never reach the site. Staging
only: no download, no browser."""

from __future__ import annotations

import json
import shutil

import pytest
from litesite import load_build_module

from learner_clone import commit_all, git, notebook, write

build = load_build_module()


@pytest.fixture
def course(tmp_path):
    """A learner's clone: the course as committed, then a session in JupyterLab."""
    folder = tmp_path / "curso"
    write(folder / "code" / "roots.py", "X = 1\n")
    write(folder / "lessons" / "mcp_ui" / "__init__.py", "Y = 1\n")
    write(folder / "lessons" / ".gitignore", "soluciones/\n")
    write(folder / "lessons" / "01_roots.ipynb", notebook("print('hola')"))
    commit_all(folder)
    write(folder / "lessons" / "01_roots.ipynb",  # autosaved: outputs and a scratch cell
          notebook("print('hola')", "%%writefile soluciones/ejercicio4.py\nmi_solucion = 1",
                   outputs=True))
    write(folder / "lessons" / "borrador.ipynb", notebook("import asyncio"))
    write(folder / "lessons" / "soluciones" / "ejercicio4.py", "mi_solucion = 1\n")
    write(folder / "code" / "roots.py", "X = 2  # a learner's experiment\n")
    return folder


def staged_files(content):
    return sorted(p.relative_to(content).as_posix() for p in content.rglob("*") if p.is_file())


def test_a_learners_working_files_never_reach_the_site(course, tmp_path, capsys):
    content = build.stage_course(course, tmp_path / "content")
    assert staged_files(content) == ["code/roots.py", "lessons/01_roots.ipynb",
                                     "lessons/mcp_ui/__init__.py"]  # no hidden file either
    cells = json.loads((content / "lessons" / "01_roots.ipynb").read_text())["cells"]
    assert ["".join(c["source"]) for c in cells] == ["print('hola')"]
    assert (content / "code" / "roots.py").read_text() == "X = 1\n"
    said = capsys.readouterr().out
    assert "los cambios sin commit no entran en el sitio" in said
    assert "lessons/01_roots.ipynb" in said and "lessons/borrador.ipynb" in said


def test_outputs_committed_by_mistake_are_stripped_from_the_site(course, tmp_path):
    write(course / "lessons" / "01_roots.ipynb", notebook("print('hola')", outputs=True))
    git(course, "commit", "-q", "-am", "con salidas")
    content = build.stage_course(course, tmp_path / "content")
    cells = json.loads((content / "lessons" / "01_roots.ipynb").read_text())["cells"]
    assert [(c["outputs"], c["execution_count"]) for c in cells] == [([], None)]


def test_a_folder_that_is_no_git_checkout_is_staged_as_it_is_without_outputs(course, tmp_path,
                                                                                  capsys):
    shutil.rmtree(course / ".git")
    content = build.stage_course(course, tmp_path / "content")
    assert "lessons/borrador.ipynb" in staged_files(content)
    assert "lessons/soluciones/ejercicio4.py" not in staged_files(content)
    cells = json.loads((content / "lessons" / "01_roots.ipynb").read_text())["cells"]
    assert all(c["outputs"] == [] for c in cells)
    assert "no es un repositorio git" in capsys.readouterr().out
