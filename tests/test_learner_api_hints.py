"""The type-hint check of the learner's API (tools/check_hints.py, run by `make lint` and by
the lint of `make test`): it passes on the course's code, and it fails, naming what is
missing, on a function or a method without its hints or with a hint that names nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import check_hints  # noqa: E402  (tools/check_hints.py)


def check(folder: Path, module: str, source: str, *names: str) -> tuple[int, list[str]]:
    """check_hints.main on `names` of a module `module` made of `source` in `folder`: (exit
    status, the lines it names as missing)."""
    (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    lines, _ = check_hints.problems({module: names}, folder)
    return check_hints.main({module: names}, folder), lines


def test_the_learner_api_of_the_course_has_every_hint():
    run = subprocess.run([sys.executable, str(REPO / "tools" / "check_hints.py")],
                         capture_output=True, text=True)
    assert (run.returncode, run.stdout.startswith("check_hints: ")) == (0, True), run.stdout


def test_a_parameter_without_a_hint_fails_the_check(tmp_path):
    status, lines = check(tmp_path, "hints_parameter", """
        def ayuda(nota, veces: int) -> str:
            return nota * veces
        """, "ayuda")
    assert (status, lines) == (1, ["hints_parameter.ayuda: parameter nota has no annotation"])


def test_a_method_without_a_return_hint_fails_the_check(tmp_path):
    status, lines = check(tmp_path, "hints_return", """
        class Pagina:
            def __init__(self, ruta: str) -> None:
                self.ruta = ruta

            @property
            def titulo(self):
                return self.ruta
        """, "Pagina")
    assert (status, lines) == (1, ["hints_return.Pagina.titulo: the return has no annotation"])


def test_a_hint_that_names_nothing_fails_the_check(tmp_path):
    status, lines = check(tmp_path, "hints_unknown", """
        from __future__ import annotations

        TYPE_CHECKING = False
        if TYPE_CHECKING:
            from collections.abc import Callable

        def avisar(quien: Callable[[str], None], cuando: Reloj) -> None:
            quien(cuando)
        """, "avisar")
    assert status == 1 and len(lines) == 1
    assert lines[0].startswith("hints_unknown.avisar: an annotation names nothing that exists")
    assert "Reloj" in lines[0]


def test_a_name_the_list_gives_that_the_module_lost_fails_the_check(tmp_path):
    status, lines = check(tmp_path, "hints_gone", "def otra() -> None:\n    pass\n", "ayuda")
    assert (status, lines) == (1, ["hints_gone.ayuda: not in hints_gone.py any more"])


def test_hints_imported_for_editors_only_pass_the_check(tmp_path):
    status, lines = check(tmp_path, "hints_complete", """
        from __future__ import annotations

        TYPE_CHECKING = False
        if TYPE_CHECKING:
            from collections.abc import Callable

        class Sello:
            def __init__(self, clave: bytes) -> None:
                self.clave = clave

            def abrir(self, token: str, *resto: str, **opciones: int) -> Callable[[], bytes]:
                return lambda: self.clave
        """, "Sello")
    assert (status, lines) == (0, [])
