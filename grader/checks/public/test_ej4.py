"""Exercise 4, public tests: after roots/list_changed, open handles are re-checked at once and
exactly (grader/checks/ej4.py). Protocol 2025-11-25.

The main scenario, played once per submission: roots Trabajo and Personal, a handle on a note in
each and in a subfolder of each, then Personal is removed. Its test needs exactly the handles
under Personal dead on the first call and those under Trabajo still reading their notes (neither
"revoke every handle", the server's default without a reaction, nor "revoke none" is that);
every other exercise-4 test requires it.

A handle left alive outside the new roots is the serious mistake (`severe=True`, the
statement's «Lo imprescindible»): whatever else passes, the exercise keeps at most half. Every
kind of it the statement names has a test here (the hidden tests only vary the folders): a
sibling that shares a prefix, a folder moved away with its handle open, a root folder moved away
and another put in its name, a note deleted with its handle open (`current_path()` is None),
every root removed, a root reached through a link or with `..`.
Each scenario test ends with the legitimate action on its server (`ej4.still_reads`).
"""

from grader.checks import ej4
from grader.checks.ej4 import SEVERE
from grader.checks.grading import graded


@graded("ejercicio4", 3, ej4.MAIN, severe=SEVERE)
def test_handles_under_a_removed_root_die_at_once_and_the_others_keep_working(lab, grade):
    facts = ej4.main_scenario(lab)
    ej4.verdict(grade, facts.handles, ej4.MAIN_CHANGE)
    grade.require(facts.exact, ej4.summary(facts.handles, ej4.MAIN_CHANGE))


@graded("ejercicio4", 1, "revocar no toca ningún archivo")
def test_revocation_changes_nothing_on_disk(lab, grade):
    facts = ej4.require_main(lab, grade)
    grade.check(not facts.changes, "las notas siguen igual en disco" if not facts.changes else
                f"al cambiar las roots cambió el disco ({facts.changes}); revocar un handle no "
                "toca ningún archivo")


@graded("ejercicio4", 1, "compara rutas por componentes: Notas no contiene a Notas-privadas",
        severe=SEVERE, must_not=True)
def test_a_sibling_sharing_a_prefix_is_another_root(lab, grade):
    ej4.require_main(lab, grade)
    notes = [("Notas", "a.md", "n-a"), ("Notas-privadas", "b.md", "n-b")]
    for removed, kept in (("Notas-privadas", "Notas"), ("Notas", "Notas-privadas")):
        survivor = "n-a" if kept == "Notas" else "n-b"
        played = ej4.play(lab, notes, ["Notas", "Notas-privadas"], [[kept]], {survivor})
        change = f"con las roots Notas y Notas-privadas, al quitar {removed}"
        exact = all(f.alive == f.should_live for f in played.handles)
        kept_outside = any(f.alive and not f.should_live for f in played.handles)
        grade.check(exact, f"{change}: muere el handle de {removed}/ y sigue vivo el de {kept}/"
                    if exact else ej4.summary(played.handles, change) + " (compara rutas por "
                    "componentes, no como texto: Notas no contiene a Notas-privadas)",
                    severe=kept_outside)
        ej4.still_reads(grade, played)


def judged(lab, grade, notes, before, steps, survivors, change, hint, layout=None):
    """One scenario after the main one: each handle's verdict, `hint` when one went wrong, then
    the legitimate action that ends the test."""
    ej4.require_main(lab, grade)
    played = ej4.play(lab, notes, before, steps, survivors, layout=layout)
    ej4.verdict(grade, played.handles, change)
    if ej4.raised(played.handles):
        grade.note(ej4.raised_note(played.handles))
    elif any(f.alive != f.should_live for f in played.handles):
        grade.note(f"· pista: {hint}")
    ej4.still_reads(grade, played)


@graded("ejercicio4", 2, "decide con dónde está el archivo ahora: una carpeta movida con el "
        "handle abierto, y un enlace en su lugar, no engañan", severe=SEVERE, must_not=True)
def test_a_folder_moved_away_with_its_handle_open_is_judged_where_it_is_now(lab, grade):
    def swap(tree):  # Personal/cartas goes to Papelera/, and a link to it takes its name
        tree.move("Personal/cartas", "Papelera/cartas")
        tree.link("Personal/cartas", "Papelera/cartas", anywhere=True)
        return {"n-carta": "Papelera/cartas"}

    judged(lab, grade, [("Trabajo", "t.md", "n-trabajo"), ("Personal", "p.md", "n-personal"),
                        ("Personal/fotos", "f.md", "n-foto"),
                        ("Personal/cartas", "c.md", "n-carta"), ("Club", "k.md", "n-club")],
           ["Trabajo", "Personal", "Club"], [["Trabajo", "Personal"]],
           {"n-trabajo", "n-personal", "n-foto"}, "tras quitar la root Club",
           "handle.path es el texto de cuando se abrió, y por el enlace aún parece estar "
           "dentro; handle.current_path() dice dónde está el archivo de verdad ahora",
           layout=swap)


@graded("ejercicio4", 1, "la carpeta de una root se mueve con handles abiertos y otra ocupa su "
        "nombre", severe=SEVERE, must_not=True)
def test_a_root_folder_moved_away_and_replaced_is_judged_where_it_is_now(lab, grade):
    def replace(tree):  # Personal goes to Personal-2024, and a new Personal takes its name
        tree.move("Personal", "Personal-2024")
        tree.add("Personal", "nueva.md", "n-nueva", "Nota nueva")
        return {"n-personal": "Personal-2024"}

    judged(lab, grade, [("Trabajo", "t.md", "n-trabajo"), ("Personal", "p.md", "n-personal"),
                        ("Club", "k.md", "n-club")],
           ["Trabajo", "Personal", "Club"], [["Trabajo", "Personal"]], {"n-trabajo"},
           "tras quitar la root Club", "la carpeta Personal de ahora es otra; volver a resolver "
           "el texto de cuando se abrió (os.path.realpath(handle.path)) encuentra la nueva. "
           "handle.current_path() pregunta por el archivo que el handle tiene abierto",
           layout=replace)


@graded("ejercicio4", 1, "una nota borrada con su handle abierto (handle.current_path() no "
        "da ninguna ruta) pierde su handle, y los demás siguen", severe=SEVERE, must_not=True)
def test_a_note_deleted_with_its_handle_open_loses_its_handle(lab, grade):
    def delete(tree):  # Personal/vieja.md is deleted: its handle holds a file with no name
        tree.delete("Personal/vieja.md")
        return {"n-vieja": None}

    judged(lab, grade, [("Trabajo", "t.md", "n-trabajo"), ("Personal", "p.md", "n-personal"),
                        ("Personal", "vieja.md", "n-vieja"), ("Club", "k.md", "n-club")],
           ["Trabajo", "Personal", "Club"], [["Trabajo", "Personal"]],
           {"n-trabajo", "n-personal"}, "tras quitar la root Club",
           "handle.current_path() no da ninguna ruta cuando ya no se sabe dónde está el "
           "archivo (aquí, se borró): un handle sigue vivo solo si su archivo está ahora "
           "dentro de una root",
           layout=delete)


@graded("ejercicio4", 1, "si se quitan todas las roots, ningún handle sobrevive (tampoco al "
        "volver a compartirlas)", severe=SEVERE, must_not=True)
def test_every_root_removed(lab, grade):
    ej4.require_main(lab, grade)
    played = ej4.play(lab, [("Estudio", "e.md", "n-estudio"), ("Casa/viajes", "v.md", "n-viaje")],
                      ["Estudio", "Casa"], [[], ["Estudio", "Casa"]], set())
    ej4.verdict(grade, played.handles, "tras dejar de compartir todas las roots (y volver a "
                "compartirlas)")
    ej4.still_reads(grade, played, reshare=["Estudio", "Casa"])


@graded("ejercicio4", 1, "una root que llega por un enlace, o con .. en su URI, se juzga por la "
        "carpeta real", severe=SEVERE, must_not=True)
def test_a_root_through_a_link_or_with_dot_dot_is_its_real_folder(lab, grade):
    # Atajo is a link to Archivo; Camino is a link to Monte/Prado, so Camino/../Casa is the
    # folder Monte/Casa (the kernel follows Camino first), not the Casa at the top
    judged(lab, grade, [("Archivo", "r.md", "n-archivo"), ("Club", "k.md", "n-club"),
                        ("Casa", "c.md", "n-casa"), ("Monte/Casa", "m.md", "n-monte"),
                        ("Monte/Prado", "x.md", "n-prado")],
           ["Atajo->Archivo", "Club", "Casa", "Monte/Casa", "Camino->Monte/Prado"],
           [["Atajo->Archivo", "Camino/../Casa"]], {"n-archivo", "n-monte"},
           "con las roots nuevas Atajo (un enlace a Archivo) y Camino/../Casa (Camino es un "
           "enlace a Monte/Prado: es Monte/Casa)", "una root es la carpeta a la que llega su "
           "URI, siguiendo enlaces y .. como lo hace el sistema; change.new_roots.contains "
           "compara con esa carpeta real, no con el texto de la URI")
