"""The catalogue of hostile submissions: each one tries to cheat or to do harm.

Every fixture is a solution file (or an archive) written at test time, with the real paths of
this checkout and a per-run token filled in, so that an escape would be visible: a fixture
that manages to read the reference solution runs it (and would score), one that manages to
write outside its sandbox leaves a marker file with the token, one that leaves a process
behind leaves the token in that process's command line.
"""

import os
import zipfile

REFERENCE_STEAL = '''
import glob
import os

from extension import Extension

extension = Extension()
stolen = []
for pattern in ({repo!r} + "/grader/reference/soluciones/*.py", "/tmp/grader-sub-*/solution/*.py",
                "/tmp/*/solution/*.py", "/root/*", {repo!r} + "/grader/checks/test_ej2.py"):
    for path in glob.glob(pattern):
        try:
            with open(path, encoding="utf-8") as handle:
                stolen.append((path, handle.read()))
        except OSError:
            pass
mine = os.path.realpath(__file__)
for path, text in stolen:  # if anything could be read, run it: a leak would then score
    if path.endswith(".py") and "Extension()" in text and os.path.realpath(path) != mine:
        namespace = {{}}
        exec(compile(text, path, "exec"), namespace)
        for value in namespace.values():
            if isinstance(value, Extension):
                extension.tools += value.tools
                extension.url_guard = value.url_guard or extension.url_guard
                extension.roots_reaction = value.roots_reaction or extension.roots_reaction
'''

HOSTILE = {
    "sale_con_os_exit_0": "import os\nos._exit(0)\n",
    "sale_con_sys_exit_0": "import sys\nsys.exit(0)\n",
    "imprime_resultados_falsos": '''
import json
import os
import sys

fake = {{"jsonrpc": "2.0", "result": {{"content": [{{"type": "text", "text": "ok"}}],
        "structuredContent": {{"status": "configured"}}, "isError": False}}}}
print("42 passed in 0.01s")
print(json.dumps({{"score": 42, "max_score": 42, "tests": []}}))
for fd in range(3, 20):  # write fake answers straight into every pipe we can find
    for msg_id in range(1, 60):
        try:
            os.write(fd, (json.dumps({{**fake, "id": msg_id}}) + "\\n").encode())
        except OSError:
            break
sys.stdout.write("=== 42 passed ===\\n")
''',
    "parchea_el_servidor_y_pytest": '''
import builtins
import sys

import session
from extension import Extension

extension = Extension()
try:
    import pytest
    pytest.main = lambda *a, **k: 0
except ImportError:
    pass
for name in ("_pytest", "pytest"):
    sys.modules[name] = None


def fake_call(self, params, ctx):
    return {{"content": [{{"type": "text", "text": "ok"}}], "isError": False,
            "structuredContent": {{"status": "configured", "handle": "h-1", "notes": []}}}}


session.Session._call = fake_call
builtins.print = lambda *a, **k: None


@extension.url_mode_guard
def yes(sdk_version, protocol_version, client_capabilities):
    return True


@extension.on_roots_changed
def nothing(change):
    pass
''',
    "lee_los_tests_y_la_referencia": REFERENCE_STEAL,
    "escribe_fuera_de_su_carpeta": '''
import os

for path in ({repo!r} + "/PWNED-{token}", "/tmp/PWNED-{token}", "/root/PWNED-{token}",
             "../PWNED-{token}", "../../PWNED-{token}", "/PWNED-{token}",
             "/sandbox/solution/PWNED-{token}", "/usr/PWNED-{token}"):
    try:
        with open(path, "w") as handle:
            handle.write("{token}")
    except OSError:
        pass
''',
    "bucle_infinito_al_importar": "while True:\n    pass\n",
    "bucle_infinito_en_una_herramienta": '''
from extension import Extension

extension = Extension()


@extension.tool("notes_archive", description="x", annotations={{"destructiveHint": True}},
                input_schema={{"type": "object", "required": ["title"],
                              "properties": {{"title": {{"type": "string"}}}}}})
def notes_archive(ctx, title):
    while True:
        pass
''',
    "bomba_fork": '''
import os

while True:
    try:
        os.fork()
    except OSError:
        pass
''',
    "bomba_de_memoria": '''
blocks = []
while True:
    blocks.append(bytearray(64 << 20))
''',
    "salida_sin_fin": '''
import os
import sys

chunk = "x" * 65536
while True:
    sys.stdout.write(chunk)
    for fd in (1, 2, 3, 4):
        try:
            os.write(fd, chunk.encode())
        except OSError:
            pass
''',
    "deja_un_proceso_vivo": '''
import os

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/sleep", ["/usr/bin/sleep", "3600", "{token}"])
    os._exit(0)
''',
}


def write_all(folder, repo, token):
    """Write every hostile submission into `folder`; returns {name: path}."""
    made = {}
    for name, template in HOSTILE.items():
        path = os.path.join(folder, name)
        os.makedirs(path)
        with open(os.path.join(path, "ejercicio2.py"), "w", encoding="utf-8") as handle:
            handle.write(template.format(repo=repo, token=token))
        made[name] = path
    made.update(archives(folder))
    return made


def archives(folder):
    made = {}
    path = os.path.join(folder, "zip_con_rutas_peligrosas.zip")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("../../escapa.py", "print('fuera')\n")
        archive.writestr("/absoluta/ejercicio2.py", "print('fuera')\n")
        link = zipfile.ZipInfo("soluciones/ejercicio3.py")
        link.external_attr = (0o120777 << 16)
        archive.writestr(link, "/etc/passwd")
    made["zip_con_rutas_peligrosas"] = path
    path = os.path.join(folder, "bomba_zip.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("soluciones/ejercicio2.py", b"#" * (64 << 20))
    made["bomba_zip"] = path
    path = os.path.join(folder, "zip_con_demasiadas_entradas.zip")
    with zipfile.ZipFile(path, "w") as archive:
        for n in range(500):
            archive.writestr(f"f{n}.py", "")
    made["zip_con_demasiadas_entradas"] = path
    path = os.path.join(folder, "notebook_roto.ipynb")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"cells": [{"cell_type": "code", "source": "%%writefile soluciones/')
    made["notebook_roto"] = path
    path = os.path.join(folder, "no_utf8")
    os.makedirs(path)
    with open(os.path.join(path, "ejercicio2.py"), "wb") as handle:
        handle.write("# -*- coding: latin-1 -*-\nx = 'año'\n".encode("latin-1"))
    made["no_utf8"] = path
    return made
