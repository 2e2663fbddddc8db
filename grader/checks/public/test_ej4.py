"""Exercise 4, public tests: after roots/list_changed, open handles are re-checked at once and
exactly (grader/checks/ej4.py). Protocol 2025-11-25.

The main scenario, played once per submission: roots Trabajo and Personal, a handle on a note in
each and in a subfolder of each, then Personal is removed. Its test needs exactly the handles
under Personal dead on the first call and those under Trabajo still reading their notes (neither
"revoke every handle", the server's default without a reaction, nor "revoke none" is that);
every other exercise-4 test requires it.

A handle left alive outside the new roots is the serious mistake (`severe=True`, the
statement's «Lo imprescindible»): whatever else passes, the exercise keeps at most half.
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


@graded("ejercicio4", 1, "compara rutas por componentes: Notes no contiene a Notes-evil",
        severe=SEVERE)
def test_a_sibling_sharing_a_prefix_is_another_root(lab, grade):
    ej4.require_main(lab, grade)
    notes = [("Notes", "a.md", "n-a"), ("Notes-evil", "b.md", "n-b")]
    for removed, kept in (("Notes-evil", "Notes"), ("Notes", "Notes-evil")):
        survivor = "n-a" if kept == "Notes" else "n-b"
        facts, _ = ej4.play(lab, notes, ["Notes", "Notes-evil"], [[kept]], {survivor})
        change = f"con las roots Notes y Notes-evil, al quitar {removed}"
        exact = all(f.alive == f.should_live for f in facts)
        kept_outside = any(f.alive and not f.should_live for f in facts)
        grade.check(exact, f"{change}: muere el handle de {removed}/ y sigue vivo el de {kept}/"
                    if exact else ej4.summary(facts, change) + " (compara rutas por "
                    "componentes, no como texto: Notes no contiene a Notes-evil)",
                    severe=kept_outside)


@graded("ejercicio4", 2, "decide con dónde está el archivo ahora: una carpeta movida con el "
        "handle abierto, y un enlace en su lugar, no engañan", severe=SEVERE)
def test_a_folder_moved_away_with_its_handle_open_is_judged_where_it_is_now(lab, grade):
    ej4.require_main(lab, grade)
    notes = [("Trabajo", "t.md", "n-trabajo"), ("Personal", "p.md", "n-personal"),
             ("Personal/fotos", "f.md", "n-foto"), ("Personal/cartas", "c.md", "n-carta"),
             ("Club", "k.md", "n-club")]

    def swap(tree):  # Personal/cartas goes to Papelera/, and a link to it takes its name
        tree.move("Personal/cartas", "Papelera/cartas")
        tree.link("Personal/cartas", "Papelera/cartas", anywhere=True)
        return {"n-carta": "Papelera/cartas"}

    facts, _ = ej4.play(lab, notes, ["Trabajo", "Personal", "Club"], [["Trabajo", "Personal"]],
                        {"n-trabajo", "n-personal", "n-foto"}, layout=swap)
    ej4.verdict(grade, facts, "tras quitar la root Club")
    if any(f.alive and not f.should_live for f in facts if f.now):
        grade.note("· pista: handle.path es el texto de cuando se abrió, y por el enlace aún "
                   "parece estar dentro; handle.current_path() dice dónde está el archivo "
                   "de verdad ahora")
