"""Ejercicio 4 (solución de referencia): revoca los handles que quedan fuera de las roots."""
import os

from extension import Extension

extension = Extension()


@extension.on_roots_changed
def recheck_handles(change):
    for handle in change.handles:
        # rutas reales comparadas por componentes (RootSet.contains), no como texto
        if not change.new_roots.contains(os.path.realpath(handle.path)):
            change.revoke(handle, "su nota quedó fuera de las roots")
