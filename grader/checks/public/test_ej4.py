"""Exercise 4, public tests: after roots/list_changed, open handles are re-checked at once and
exactly (grader/checks/ej4.py). Protocol 2025-11-25.

The main scenario, played once per submission: roots Trabajo and Personal, a handle on a note in
each and in a subfolder of each, then Personal is removed. Its test needs exactly the handles
under Personal dead on the first call and those under Trabajo still reading their notes (neither
"revoke every handle", the server's default without a reaction, nor "revoke none" is that);
every other exercise-4 test requires it.
"""

from grader.checks import ej4
from grader.checks.grading import graded


@graded("ejercicio4", 3, ej4.MAIN)
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


@graded("ejercicio4", 1, "compara rutas por componentes: Notes no contiene a Notes-evil")
def test_a_sibling_sharing_a_prefix_is_another_root(lab, grade):
    ej4.require_main(lab, grade)
    notes = [("Notes", "a.md", "n-a"), ("Notes-evil", "b.md", "n-b")]
    for removed, kept in (("Notes-evil", "Notes"), ("Notes", "Notes-evil")):
        survivor = "n-a" if kept == "Notes" else "n-b"
        facts, _ = ej4.play(lab, notes, ["Notes", "Notes-evil"], [[kept]], {survivor})
        change = f"con las roots Notes y Notes-evil, al quitar {removed}"
        grade.check(all(f.alive == f.should_live for f in facts),
                    f"{change}: muere el handle de {removed}/ y sigue vivo el de {kept}/"
                    if all(f.alive == f.should_live for f in facts) else
                    ej4.summary(facts, change) + " (compara rutas por componentes, no como "
                    "texto: Notes no contiene a Notes-evil)")
