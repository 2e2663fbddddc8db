"""Ejercicio 4 (solución de referencia): revoca los handles que quedan fuera de las roots."""
from extension import Extension

extension = Extension()


@extension.on_roots_changed
def recheck_handles(change):
    for handle in change.handles:
        # dónde está su archivo ahora (se lo pregunta al sistema por el descriptor), no el
        # texto de cuando se abrió; comparado por componentes (RootSet.contains)
        where = handle.current_path()
        if where is None or not change.new_roots.contains(where):
            change.revoke(handle, "su nota quedó fuera de las roots")
