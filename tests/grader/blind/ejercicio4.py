"""Ejercicio 4, escrito a ciegas desde el enunciado (otro estilo)."""
from extension import Extension

extension = Extension()


@extension.on_roots_changed
def revisar(change):
    for handle in change.handles:
        ruta = handle.current_path()  # dónde está el archivo ahora
        if ruta is None:
            change.revoke(handle, "ya no se sabe dónde está su nota")
        elif not change.new_roots.contains(ruta):
            change.revoke(handle, "su nota quedó fuera de las roots")
