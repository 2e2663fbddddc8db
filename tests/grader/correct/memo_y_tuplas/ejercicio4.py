"""Ejercicio 4, otro estilo: la lista de carpetas nuevas, comparada por componentes."""
from extension import Extension
from roots import is_within

extension = Extension()


@extension.on_roots_changed
def recheck(change):
    folders = [root.path for root in change.new_roots.roots]
    for handle in change.handles:
        real = handle.current_path()  # donde está el archivo ahora, según su descriptor
        if real is None or not any(is_within(real, folder) for folder in folders):
            change.revoke(handle, "quedó fuera de las roots")
