"""The catalogue of wrong solutions: a correct solution with exactly one bug each.

Each mutant names the file it changes, the exact text it replaces (which must occur once), the
grading tests it must lose (every other test of its exercise must still give full marks: an
exercise's «lo imprescindible» entry, `ej2/lo_imprescindible`, is lost when the bug is severe
and the exercise had more than half of its points), and a phrase that the feedback of at least
one lost test must contain: the feedback names the bug. `severe` bugs (acting without or
against the user's decision, access outside the roots) must leave their exercise with at most
half of its points.

Two bases: the reference (grader/reference/soluciones), and `blind/`, solutions of exercises 2,
3 and 4 and of the reto written from the statements alone, the way a learner would (not from
the checks), in another style; the blind mutants are the bugs such a learner makes, each written
into that learner's code (exercise 3's and the reto's come from blind one-bug files written by
another hand from the statements). `blind/reto_sobre.py` is a second blind reto in yet another
style, graded with the correct styles.

One blind reto bug is not here because the grader cannot see it (grader/README.md, the reto's
documented limit): a tag that is a plain sha256 (no key) over a ciphertext whose keystream does
come from the key. A token made elsewhere decrypts to garbage and is refused; the forgery that
works (edit a real token and recompute the hash) needs the token's layout, which only the
learner's source says.

The first reference ones are the bugs a blind test of the notebooks found; the rest are the ones
learners meet most often.
"""

import os
from dataclasses import dataclass

import grader  # noqa: F401  (puts code/ on sys.path, for protocol)
from shared.protocol import REVISIONS

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "grader", "reference",
                         "soluciones")
BLIND = os.path.join(HERE, "blind")  # exercises 2, 3, 4 and the reto as learners wrote them


def both(test):
    return {f"{test}[{revision}]" for revision in REVISIONS}


@dataclass
class Mutant:
    name: str
    file: str
    find: str
    replace: str
    loses: set
    says: str = ""  # a phrase the feedback of one of the lost tests contains
    severe: bool = False  # the exercise keeps at most half of its points
    base: str = REFERENCE  # the solution it starts from (REFERENCE, or BLIND for 2 and 4)
    never_says: str = ""  # a phrase no feedback may contain (a cause that is not this bug's)
    part: str = ""  # the exercise it is graded on, when not its file's (an optional part)
    also: tuple = ()  # (file, find, replace) of the same bug in another file of the submission
    may_lose: frozenset = frozenset()  # tests that catch it or not, as the schedule falls

    @property
    def exercise(self):
        return self.part or self.file[:-3]

    def write(self, folder):
        source = os.path.join(self.base, self.file)
        with open(source if os.path.exists(source) else os.path.join(REFERENCE, self.file),
                  encoding="utf-8") as handle:
            text = handle.read()
        assert text.count(self.find) == 1, f"{self.name}: the text to replace moved"
        texts = {self.file: text.replace(self.find, self.replace)}
        for file, find, replace in self.also:
            source = os.path.join(self.base, file)
            with open(source if os.path.exists(source) else os.path.join(REFERENCE, file),
                      encoding="utf-8") as handle:
                other = handle.read()
            assert other.count(find) == 1, f"{self.name}: the text to replace in {file} moved"
            texts[file] = other.replace(find, replace)
        return write_solutions(folder, texts, self.base)


def write_solutions(folder, texts, base=REFERENCE):
    """A submission in `folder`: the solutions of `base` (the reference where it has none),
    with `texts` ({file name: its text}) in place of theirs."""
    os.makedirs(folder)
    for name in sorted(os.listdir(REFERENCE)):
        if name not in texts:
            source = os.path.join(base, name)
            with open(source if os.path.exists(source) else os.path.join(REFERENCE, name),
                      encoding="utf-8") as handle:
                texts = {**texts, name: handle.read()}
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(texts[name])
    return folder


def write_blind(folder, instead=None):
    """The blind solutions (exercises 2, 3, 4 and the reto): a correct solution in another
    style, graded with the correct styles. `instead`: {file: blind file used in its place}."""
    os.makedirs(folder)
    for name in sorted(os.listdir(REFERENCE)):
        source = os.path.join(BLIND, (instead or {}).get(name, name))
        source = source if os.path.exists(source) else os.path.join(REFERENCE, name)
        with open(source, encoding="utf-8") as handle, \
                open(os.path.join(folder, name), "w", encoding="utf-8") as out:
            out.write(handle.read())
    return folder


ARCHIVE_CALL = ("    target = ctx.archive(current)  "
                "# lo comprueba otra vez y lo mueve en un solo paso\n")
CONFIRM_CHECK = '    if answer.action != "accept" or answer.content.get("confirm") is not True:\n'
ASK = "    answer = ctx.elicit_form(\n"


def _block_of(base, file, first, last):
    with open(os.path.join(base, file), encoding="utf-8") as handle:
        text = handle.read()
    start = text.index(first)
    return text[start:text.index(last, start) + len(last)]


def _block(file, first, last):
    return _block_of(REFERENCE, file, first, last)


ASK_BLOCK = _block("ejercicio2.py", ASK, 'required=["note_id", "confirm"])\n')
REACTION = """        where = handle.current_path()
        if where is None or not change.new_roots.contains(where):
            change.revoke(handle, "su nota quedó fuera de las roots")
"""
MATCHES = ('    matches = [store.Note(*n) for n in ctx.memo("matches", '
           'lambda: ctx.find_notes(title))]\n')
BODY = _block("ejercicio2.py", MATCHES, '{"archived": note.summary()})\n')
MODULE = _block("ejercicio2.py", "extension = Extension()\n", MATCHES)
EX2_PUBLIC = ("test_archives_only_the_chosen_note",
              "test_the_form_offers_exactly_the_matching_notes",
              "test_asks_to_confirm_even_with_one_match",
              "test_announces_a_destructive_tool_that_takes_a_title",
              "test_archives_single_match_after_confirmation",
              "test_titles_match_ignoring_case_and_surrounding_spaces",
              "test_decline_archives_nothing", "test_cancel_archives_nothing",
              "test_unconfirmed_accept_archives_nothing",
              "test_answer_that_does_not_fit_archives_nothing",
              "test_titles_outside_the_roots_are_refused_without_asking",
              "test_asks_only_once_per_call", "test_archiving_moves_the_file_and_never_overwrites",
              "test_says_it_archived_only_when_it_did", "test_creates_nothing_before_a_yes",
              "test_rechecks_the_chosen_note_after_the_answer")
EX2 = {test for name in EX2_PUBLIC for test in both(f"ej2/{name}")} | \
    {"ej2/test_a_2025_06_18_client_gets_a_form_it_understands[2025-06-18]",
     "ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"} | \
    both("ej2_hidden/test_note_in_a_subfolder_goes_to_its_roots_archive")
EX4 = {"ej4/test_handles_under_a_removed_root_die_at_once_and_the_others_keep_working",
       "ej4/test_revocation_changes_nothing_on_disk",
       "ej4/test_a_sibling_sharing_a_prefix_is_another_root",
       "ej4/test_a_folder_moved_away_with_its_handle_open_is_judged_where_it_is_now",
       "ej4/test_a_root_folder_moved_away_and_replaced_is_judged_where_it_is_now",
       "ej4/test_a_note_deleted_with_its_handle_open_loses_its_handle",
       "ej4/test_every_root_removed",
       "ej4/test_a_root_through_a_link_or_with_dot_dot_is_its_real_folder",
       "ej4_hidden/test_several_roots_remain", "ej4_hidden/test_root_narrowed_to_a_subfolder",
       "ej4_hidden/test_other_roots_moved_replaced_or_reached_through_links"}
# an exercise's «lo imprescindible» entries: lost when a severe bug took it past half
# (no exercise-2 or exercise-4 bug is severe in a hidden test only: each kind has a public one)
SEVERE2, SEVERE4 = {"ej2/lo_imprescindible"}, {"ej4/lo_imprescindible"}
MOVED = "ej4/test_a_folder_moved_away_with_its_handle_open_is_judged_where_it_is_now"
REPLACED = "ej4/test_a_root_folder_moved_away_and_replaced_is_judged_where_it_is_now"
DELETED = "ej4/test_a_note_deleted_with_its_handle_open_loses_its_handle"
EVERY = "ej4/test_every_root_removed"
LINKED = "ej4/test_a_root_through_a_link_or_with_dot_dot_is_its_real_folder"
OTHER_FOLDERS = "ej4_hidden/test_other_roots_moved_replaced_or_reached_through_links"
SEVERAL = "ej4_hidden/test_several_roots_remain"
NARROWED = "ej4_hidden/test_root_narrowed_to_a_subfolder"
RECHECK = both("ej2/test_rechecks_the_chosen_note_after_the_answer")

RETO_SEVERE = "reto/lo_imprescindible"
RETO_KEYS = "    return keys_from(binding.key)\n"
RETO_BOUND = "    return [binding.tool, binding.arguments, binding.principal]\n"
RETO_CHECKS = _block("reto.py", "        esperada = tag_of(", '            self.usados[nonce] = '
                     'sobre["caduca"]\n')
RETO_SPEND_FIRST = """        if binding.one_time:  # BUG: lo apunta antes de comprobar la etiqueta
            self.usados = {n: hasta for n, hasta in self.usados.items() if hasta >= binding.now}
            if nonce in self.usados:
                raise ValueError("ya usado")
            self.usados[nonce] = binding.expires_at
        esperada = tag_of(clave_firmar, atado(binding), nonce, cifrado)
        if not hmac.compare_digest(etiqueta, esperada):
            raise ValueError("sello roto, de otra llamada, de otro usuario o de otra clave")
        sobre = json.loads(stream_xor(clave_cifrar, nonce, cifrado))
        if sobre["caduca"] < binding.now:
            raise ValueError("caducado")
"""
# what each class of reto mistake loses, public and hidden
RETO_GATE = "reto/test_a_retry_with_the_token_unchanged_works"
RETO_REPLICA = "reto/test_a_retry_can_be_served_by_another_replica_with_the_same_key"
RETO_SUBFOLDER = "reto_hidden/test_notes_found_in_a_subfolder_cannot_be_read_either"
RETO_FORGED = {"reto/test_a_token_made_without_your_servers_key_is_refused", RETO_SEVERE}
RETO_READ = "reto/test_what_the_server_found_on_disk_cannot_be_read_from_a_token"
RETO_EXPIRED = {"reto/test_an_expired_token_is_refused",
                "reto_hidden/test_tokens_expired_a_moment_ago_are_refused"}
RETO_MOVED = {"reto/test_a_token_moved_to_another_tool_or_other_arguments_is_refused",
              "reto_hidden/test_tokens_moved_elsewhere_are_refused", RETO_SEVERE}
RETO_OTHER_USER = {"reto/test_a_token_moved_to_another_user_is_refused",
                   "reto_hidden/test_tokens_moved_elsewhere_are_refused", RETO_SEVERE}
RETO_FIRST_ROUND = "reto/test_the_first_rounds_token_cannot_be_used_twice"
RETO_REPLAYED = {"reto/test_a_used_round_cannot_be_replayed", RETO_FIRST_ROUND,
                 "reto_hidden/test_other_used_rounds_cannot_be_replayed", RETO_SEVERE}
RETO_CHANGED = "reto/test_a_token_with_a_character_changed_is_refused"
RETO_RESPELLED = {"reto/test_a_token_spelled_another_way_is_refused",
                  "reto_hidden/test_other_changes_cuts_and_spellings_are_refused"}
RETO_COMPARED = "reto/test_tags_are_compared_in_constant_time"
# every test that attacks a server and then needs a legitimate delete on it to work
RETO_MUST_NOT = {RETO_CHANGED, "reto/test_a_token_cut_or_lengthened_is_refused",
                 "reto/test_a_token_spelled_another_way_is_refused",
                 "reto/test_an_expired_token_is_refused",
                 "reto/test_a_used_round_cannot_be_replayed", RETO_FIRST_ROUND,
                 "reto/test_a_token_moved_to_another_tool_or_other_arguments_is_refused",
                 "reto/test_a_token_moved_to_another_user_is_refused",
                 "reto/test_a_token_made_without_your_servers_key_is_refused",
                 "reto_hidden/test_other_changes_cuts_and_spellings_are_refused",
                 "reto_hidden/test_tokens_moved_elsewhere_are_refused",
                 "reto_hidden/test_other_used_rounds_cannot_be_replayed",
                 "reto_hidden/test_tokens_expired_a_moment_ago_are_refused"}
# every reto test (its «lo imprescindible» entry scores 0 of 0 when no check ever ran)
RETO_ALL = RETO_MUST_NOT | {RETO_GATE, RETO_REPLICA, RETO_READ, RETO_COMPARED, RETO_SUBFOLDER}
# reto.py's sealer, a sealer in another file: what the server loaded with the whole folder
with open(os.path.join(REFERENCE, "reto.py"), encoding="utf-8") as _reto:
    RETO_TEXT = _reto.read()
EJ2_END = ('    return ok(f"Archivada la nota {note.id} en {target}.", '
           '{"archived": note.summary()})\n')
RETO_LAST = '        return sobre["datos"]\n'  # the end of reto.py
QUICK_SEALER = ("\n\n# el sello que de verdad usa el servidor: compara con !=\n"
                + RETO_TEXT[RETO_TEXT.index("import hmac"):]
                .replace("extension = Extension()\n", "")
                .replace("class MiSello:", "class SelloRapido:")
                .replace("        if not hmac.compare_digest(etiqueta, esperada):\n",
                         "        if etiqueta != esperada:\n"))

MUTANTS = [
    # -- the blind test's bugs ------------------------------------------------------------------
    Mutant("no_revisa_las_roots_tras_el_formulario", "ejercicio2.py", BODY, """\
    # BUG: the matches and their roots are decided before the form and never re-checked
    found = ctx.memo("found", lambda: [[n.id, n.title, n.created, n.path,
                                        ctx.roots.root_of(n.path).path]
                                       for n in ctx.find_notes(title)])
    if not found:
        raise ToolError(f"Ninguna nota de tus roots se titula {title!r}; no archivé nada.")
    answer = ctx.elicit_form(
        f"¿Archivar la nota {title!r}? Elige cuál y confirma.",
        {"note_id": choice([(f[0], f"{f[1]} · {f[2]} · {f[0]}") for f in found],
                           title="Nota que se archiva", protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    if answer.action != "accept" or answer.content.get("confirm") is not True:
        return ok("No se archivó nada.", {"archived": None, "reason": answer.action})
    fields = next(f for f in found if f[0] == answer.content.get("note_id"))
    import os
    folder = os.path.join(fields[4], ".archive")  # by path, with what was true before the form
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(fields[3]))
    if os.path.lexists(target):
        raise ToolError("Ya hay una nota archivada con ese nombre; no archivé nada.")
    os.rename(fields[3], target)
    return ok(f"Archivada la nota {fields[0]} en {target}.", {"archived": fields[0]})
""", RECHECK | SEVERE2 | {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
        "ctx.recheck(nota) comprueba la nota contra las roots de ahora", severe=True),
    Mutant("solo_la_primera_root", "ejercicio4.py", REACTION,
           """        import os
        first = change.new_roots.roots[0].path  # BUG: only the first remaining root
        where = handle.current_path()
        if where is None or os.path.commonpath([where, first]) != first:
            change.revoke(handle)
""", {SEVERAL, MOVED, LINKED, OTHER_FOLDERS, DELETED} | SEVERE4,
           # it revokes too many: where the linked root's test checks a handle outside, the
           # handle that must live dies too, and refusing there costs what that test's bug does
           "algún handle que seguía dentro de las roots dejó de funcionar", severe=True),
    Mutant("conserva_todo_sin_roots", "ejercicio4.py", "    for handle in change.handles:\n",
           "    if not change.new_roots.roots:  # BUG: nothing left to compare with: keep all\n"
           "        return\n    for handle in change.handles:\n",
           {EVERY} | SEVERE4,
           "quedó fuera de las roots pero su handle siguió leyendo", severe=True),
    # current_path() is None (the file has no name any more): the two ways to forget it
    Mutant("none_lanza", "ejercicio4.py", REACTION,
           "        where = handle.current_path()  # BUG: contains(None) raises\n"
           "        if not change.new_roots.contains(where):\n"
           "            change.revoke(handle)\n",
           # it fails closed (every handle revoked), also in severe must-not tests, where
           # refusing costs what that test's bug does
           {REPLACED, DELETED, OTHER_FOLDERS} | SEVERE4, "lanzó una excepción (TypeError)",
           severe=True),
    Mutant("none_sigue_vivo", "ejercicio4.py", REACTION,
           "        where = handle.current_path()  # BUG: None is kept alive\n"
           "        if where is not None and not change.new_roots.contains(where):\n"
           "            change.revoke(handle)\n",
           {REPLACED, DELETED, OTHER_FOLDERS} | SEVERE4,
           "sin saber dónde está el archivo", severe=True),
    Mutant("reaccion_que_lanza", "ejercicio4.py", REACTION,
           "        if not change.new_roots.contains(handle.real_path):  # BUG: no such field\n"
           "            change.revoke(handle)\n",
           EX4, "la reacción al cambio de roots falló"),
    # -- the usual ones ---------------------------------------------------------------------------
    Mutant("compara_titulos_con_igual", "ejercicio2.py", MATCHES,
           '    matches = [store.Note(*n) for n in ctx.memo("matches", lambda: [\n'
           "        n for n in ctx.notes() if n.title == title])]  # BUG: exact titles\n",
           both("ej2/test_titles_match_ignoring_case_and_surrounding_spaces"),
           "sin distinguir mayúsculas ni espacios"),
    Mutant("archiva_sin_preguntar_si_hay_una", "ejercicio2.py", ASK,
           """    if len(matches) == 1:
        ctx.archive(matches[0])
        return ok("Archivada.", {"archived": matches[0].summary()})
""" + ASK,
           both("ej2/test_asks_to_confirm_even_with_one_match")
           | both("ej2/test_archives_single_match_after_confirmation") | SEVERE2,
           "cambió notas sin preguntar", severe=True),
    Mutant("archiva_al_rechazar", "ejercicio2.py",
           CONFIRM_CHECK + "        return ok(\"No se archivó nada.\", {\"archived\": None, "
           "\"reason\": answer.action})\n"
           '    note = next((n for n in matches if n.id == answer.content.get("note_id")), None)\n',
           "    if answer.action == \"cancel\" or answer.content.get(\"confirm\") is False:\n"
           "        return ok(\"No se archivó nada.\", {\"archived\": None, "
           "\"reason\": answer.action})\n"
           "    note = next((n for n in matches if n.id == answer.content.get(\"note_id\", "
           "matches[0].id)), None)\n",
           both("ej2/test_decline_archives_nothing") | SEVERE2, "tras decline cambió el disco",
           severe=True),
    Mutant("archiva_con_confirm_false", "ejercicio2.py", CONFIRM_CHECK,
           "    if answer.action != \"accept\":\n",
           both("ej2/test_unconfirmed_accept_archives_nothing") | SEVERE2,
           "tras accept con confirm falso cambió el disco", severe=True),
    Mutant("busca_con_prefijo_fuera_de_las_roots", "ejercicio2.py", MATCHES,
           """    import os
    wanted, found = title.strip().casefold(), []
    for root in ctx.roots.roots:  # BUG: any sibling folder whose name starts like the root
        parent = os.path.dirname(root.path)
        for name in sorted(os.listdir(parent)):
            folder = os.path.join(parent, name)
            if folder.startswith(root.path) and os.path.isdir(folder):
                for file in sorted(os.listdir(folder)):
                    note = store.read_note(os.path.join(folder, file))
                    if note is not None and note.title.strip().casefold() == wanted:
                        found.append(note)
    matches = [store.Note(*n) for n in ctx.memo("matches", lambda: found)]
""",
           both("ej2/test_titles_outside_the_roots_are_refused_without_asking")
           | both("ej2_hidden/test_note_in_a_subfolder_goes_to_its_roots_archive") | SEVERE2,
           "Notas-privadas, que no es una root", severe=True),
    Mutant("busca_por_subcadena", "ejercicio2.py", MATCHES,
           '    matches = [store.Note(*n) for n in ctx.memo("matches", lambda: [\n'
           "        n for n in ctx.notes()  # BUG: basta con una parte del título\n"
           "        if title.strip().casefold() in n.title.casefold()])]\n",
           both("ej2/test_titles_match_ignoring_case_and_surrounding_spaces"),
           "el título coincide entero, no una parte"),
    Mutant("coincidencias_en_el_modulo", "ejercicio2.py", MODULE, MODULE.replace(
        "extension = Extension()\n",
        "extension = Extension()\nVISTAS = {}  # BUG: del módulo, no de la llamada (ctx.memo)\n")
        .replace(MATCHES, "    if title not in VISTAS:\n"
                          "        VISTAS[title] = ctx.find_notes(title)\n"
                          "    matches = VISTAS[title]\n"),
           both("ej2/test_titles_outside_the_roots_are_refused_without_asking") | SEVERE2,
           "nunca en una lista que guardaste de otra", severe=True),
    Mutant("sin_memo", "ejercicio2.py", MATCHES,
           "    matches = ctx.find_notes(title)  # BUG: sin ctx.memo, cada ejecución decide\n",
           # at 2026-07-28 the run after the answer finds the notes again: whatever carries
           # the chosen id then (another file in its place) is what it archives
           RECHECK | SEVERE2 | {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
           "decide las coincidencias una vez por llamada con ctx.memo", severe=True),
    Mutant("vuelve_a_preguntar", "ejercicio2.py", ASK_BLOCK,
           "    while True:  # BUG: asks again until it hears a yes\n"
           + "".join("    " + line for line in ASK_BLOCK.splitlines(keepends=True))
           + '        if answer.action == "accept" and answer.content.get("confirm") is True:\n'
           "            break\n",
           both("ej2/test_asks_only_once_per_call") | SEVERE2, "volvió a preguntar",
           severe=True),
    Mutant("no_mueve_la_nota", "ejercicio2.py", ARCHIVE_CALL,
           "    target = ctx.recheck(current).path  # BUG: la comprueba, pero no la mueve\n",
           EX2, "la nota siguió en Otros/informe-b.md",
           never_says="cambió otra nota que nadie eligió"),
    Mutant("copia_y_borra", "ejercicio2.py", ARCHIVE_CALL,
           """    import os
    import shutil
    folder = os.path.join(ctx.roots.root_of(current.path).path, ".archive")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(current.path))
    if os.path.lexists(target):
        raise ToolError("Ya hay una nota archivada con ese nombre; no archivé nada.")
    shutil.copyfile(current.path, target)  # BUG: copy, then delete
    os.remove(current.path)
""",
           both("ej2/test_archiving_moves_the_file_and_never_overwrites"),
           "se copió y se borró en vez de moverse"),
    Mutant("archiva_junto_a_la_nota", "ejercicio2.py", ARCHIVE_CALL,
           """    import os
    folder = os.path.join(os.path.dirname(current.path), ".archive")  # BUG: beside the note
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(current.path))
    if os.path.lexists(target):
        raise ToolError("Ya hay una nota archivada con ese nombre; no archivé nada.")
    os.rename(current.path, target)
""",
           both("ej2_hidden/test_note_in_a_subfolder_goes_to_its_roots_archive"),
           "la de la root, no la de la subcarpeta"),
    Mutant("archiva_en_la_primera_root", "ejercicio2.py", ARCHIVE_CALL,
           """    import os
    folder = os.path.join(ctx.roots.roots[0].path, ".archive")  # BUG: always the first root
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(current.path))
    if os.path.lexists(target):
        raise ToolError("Ya hay una nota archivada con ese nombre; no archivé nada.")
    os.rename(current.path, target)
""", EX2,
           "la carpeta .archive de su root (Otros)",  # the chosen note, in a wrong place
           never_says="cambió otra nota que nadie eligió"),
    Mutant("compara_rutas_con_startswith", "ejercicio4.py", REACTION,
           "        if not any(handle.path.startswith(root.path) "
           "for root in change.new_roots.roots):\n"
           "            change.revoke(handle)\n",
           # the stale text path too: the folder moved with the handle open stays "inside"
           {"ej4/test_a_sibling_sharing_a_prefix_is_another_root", MOVED, REPLACED,
            OTHER_FOLDERS, DELETED} | SEVERE4,
           "Notas no contiene a Notas-privadas", severe=True),
    Mutant("usa_la_ruta_de_la_uri", "ejercicio4.py", REACTION,
           "        import os\n"
           "        from roots import is_within, uri_to_path\n"
           "        if not any(is_within(os.path.realpath(handle.path), uri_to_path(root.uri))\n"
           "                   for root in change.new_roots.roots):  # BUG: the URI, not real\n"
           "            change.revoke(handle)\n",
           # the opening path resolved again: a root folder replaced keeps its handle alive
           {LINKED, REPLACED, OTHER_FOLDERS, DELETED} | SEVERE4,
           "quedó fuera de las roots pero su handle siguió leyendo", severe=True),
    Mutant("revoca_todos", "ejercicio4.py", REACTION, "        change.revoke(handle)\n", EX4,
           "también los de dentro"),
    Mutant("no_revoca_ninguno", "ejercicio4.py", REACTION, "        pass\n", EX4,
           "no revocó ninguno"),
    Mutant("revoca_mas_tarde_en_un_hilo", "ejercicio4.py", REACTION,
           """        where = handle.current_path()
        if where is None or not change.new_roots.contains(where):
            import threading

            def later(handle=handle):  # BUG: the old boundary stays open a while
                handle.revoked = "tarde"
            threading.Timer(0.5, later).start()
""", EX4, "siguió leyendo la nota en la primera llamada tras el cambio"),
    # -- the requestState challenge (reto), written from its statement -------------------------
    Mutant("etiqueta_sin_clave", "reto.py", RETO_KEYS,
           '    return keys_from(binding.key)[0], b""  # BUG: la etiqueta, sin clave\n',
           RETO_FORGED, "con la clave una clave vacía", severe=True),
    Mutant("clave_del_key_id", "reto.py", RETO_KEYS,
           "    return keys_from(binding.key_id.encode())  # BUG: key_id es público\n",
           RETO_FORGED | {RETO_READ}, "keys_from(binding.key_id)", severe=True),
    Mutant("clave_en_el_archivo", "reto.py", RETO_KEYS,
           '    return keys_from(b"clave-secreta-del-reto-0123456789")  # BUG: en el archivo\n',
           RETO_FORGED | {RETO_READ}, "la constante clave-secreta-del-reto-0123456789",
           severe=True),
    Mutant("cifrado_sin_clave", "reto.py", RETO_KEYS,
           '    return keys_from(b"")[0], keys_from(binding.key)[1]  # BUG: cifra sin la clave\n',
           {RETO_READ}, "cualquiera con tu código lo lee"),
    Mutant("compara_con_igual", "reto.py",
           "        if not hmac.compare_digest(etiqueta, esperada):\n",
           "        if etiqueta != esperada:  # BUG: tarda distinto según dónde difieren\n",
           {RETO_COMPARED}, "compare_digest"),
    Mutant("sin_caducidad", "reto.py",
           '        if sobre["caduca"] < binding.now:\n            raise ValueError("caducado")\n',
           "", RETO_EXPIRED, "un token caducado"),
    Mutant("sin_herramienta", "reto.py", RETO_BOUND,
           "    return [binding.arguments, binding.principal]  # BUG: sin la herramienta\n",
           RETO_MOVED, "no cubre binding.tool", severe=True),
    Mutant("sin_argumentos", "reto.py", RETO_BOUND,
           "    return [binding.tool, binding.principal]  # BUG: sin los argumentos\n",
           RETO_MOVED, "no cubre binding.arguments", severe=True),
    Mutant("sin_usuario", "reto.py", RETO_BOUND,
           "    return [binding.tool, binding.arguments]  # BUG: sin el usuario\n",
           RETO_OTHER_USER, "no cubre binding.principal", severe=True),
    Mutant("repeticion_permitida", "reto.py",
           '            if nonce in self.usados:\n                raise ValueError("ya usado")\n',
           "", RETO_REPLAYED, "vale una sola vez", severe=True),
    Mutant("primera_ronda_dos_veces", "reto.py",
           "        if binding.one_time:  # solo ahora",
           '        if binding.one_time and sobre["datos"]["answers"]:  # BUG: solo',
           {RETO_FIRST_ROUND}, "el token de la ronda de las roots, otra vez"),
    Mutant("gasta_antes_de_comprobar", "reto.py", RETO_CHECKS, RETO_SPEND_FIRST,
           {RETO_CHANGED}, "un intento rechazado gastó el token legítimo"),
    Mutant("acepta_el_token_re_codificado", "reto.py", "        crudo = decode(token)",
           '        crudo = decode(token.strip().rstrip("="))  # BUG: acepta otras formas;',
           RETO_RESPELLED, "re-codificado"),
    # not a bug but a trick: reto.py registers its sealer on an Extension the server never
    # loads (made and thrown away), while the sealer the server used to install, from another
    # file of the submission, compares tags with !=: the reto's servers load reto.py alone
    Mutant("registra_en_un_extension_de_usar_y_tirar", "reto.py",
           "@extension.request_state\nclass MiSello:",
           '@Extension("borrador").request_state  # TRAMPA: este no se carga\nclass MiSello:',
           RETO_ALL, "no define y registra el sello",
           also=(("ejercicio2.py", EJ2_END, EJ2_END + QUICK_SEALER),)),
    # the same trick inside reto.py: the class registered reaches compare_digest, and another
    # one, put in its place where the text does not show it, is the one the server installs
    Mutant("instala_otro_sello_a_escondidas", "reto.py", RETO_LAST,
           RETO_LAST + "\n\n" + QUICK_SEALER[QUICK_SEALER.index("class SelloRapido:"):]
           + 'setattr(extension, "state_" + "sealer", SelloRapido())  # TRAMPA\n',
           RETO_ALL, "el sello que instala tu servidor con reto.py no es la clase"),
    # not a bug but a trick: the sealer behaves for one flow, then refuses everything
    Mutant("se_porta_bien_una_vez", "reto.py", "    def open(self, token, binding):\n",
           "    def open(self, token, binding):\n"
           '        self.abiertos = getattr(self, "abiertos", 0) + 1  # TRAMPA\n'
           "        if self.abiertos > 2:\n"
           '            raise ValueError("ya no abro nada más")\n',
           RETO_MUST_NOT, "no negarse a todo"),
]

# -- written blind from the statements, as a learner would (base: blind/) ---------------------
B_FIND = ('    candidatas = [store.Note(*c) for c in ctx.memo("candidatas", '
          'lambda: ctx.find_notes(title))]\n')
B_OPTIONS = ("    opciones = [(nota.id, f\"{nota.title} ({nota.created})\") "
             "for nota in candidatas]\n")
B_CHOICE = 'choice(opciones, title="Nota", protocol=ctx.protocol_version)'
B_DECLINE = ('    if respuesta.action == "decline":\n'
             '        return ok("Has dicho que no: no archivo nada.")\n')
B_CANCEL = ('    if respuesta.action == "cancel":\n'
            '        return ok("Cancelado: no archivo nada.")\n')
B_CONFIRM = ('    if respuesta.content.get("confirm") is not True:\n'
             '        return ok("Sin confirmar no archivo nada.")\n')
B_PICK = """    elegida = None
    for nota in candidatas:
        if nota.id == respuesta.content.get("note_id"):
            elegida = nota
"""
B_ACT = _block_of(BLIND, "ejercicio2.py", "    nota = ctx.recheck(elegida)",
                  "    destino = ctx.archive(nota)\n")
B_ASK = _block_of(BLIND, "ejercicio2.py", "    respuesta = ctx.elicit_form(\n",
                  'required=["note_id", "confirm"])\n')
B_BODY = _block_of(BLIND, "ejercicio2.py", B_FIND, 'return ok(f"Archivada en {destino}.")\n')
B_PATH = "        ruta = handle.current_path()  # dónde está el archivo ahora\n"
B_INSIDE = "        elif not change.new_roots.contains(ruta):\n"
B_LOOP = "    for handle in change.handles:\n"
B4_BODY = _block_of(BLIND, "ejercicio4.py", B_LOOP, '"su nota quedó fuera de las roots")\n')


def loop4(path_line, inside_line=B_INSIDE):
    """The blind reaction's loop with its two decisions replaced (and what they import)."""
    return ("    import os\n\n    from roots import is_within, uri_to_path\n\n"
            + B4_BODY.replace(B_PATH, path_line).replace(B_INSIDE, inside_line))


def blind2(name, find, replace, loses, says, severe=False):
    return Mutant(name, "ejercicio2.py", find, replace, loses, says, severe, BLIND)


def blind4(name, find, replace, loses, says, severe=False):
    return Mutant(name, "ejercicio4.py", find, replace, loses, says, severe, BLIND)


def blind_reto(name, find, replace, loses, says, severe=False):
    return Mutant(name, "reto.py", find, replace, loses, says, severe, BLIND)


# the blind reto (blind/reto.py)
BR_KEYS = "        return sealkit.keys_from(binding.key)\n"
BR_TAG = "        if not hmac.compare_digest(tag, self._etiqueta(binding, nonce, cifrado)):\n"
BR_ONE_TIME = _block_of(BLIND, "reto.py", "        if binding.one_time:\n",
                        '                self._usados[nonce] = sobre["caduca"]\n')
BR_OPEN = _block_of(BLIND, "reto.py", "        tag = raw[-sealkit.TAG:]\n",
                    '                self._usados[nonce] = sobre["caduca"]\n')
BR_SOBRE = '        sobre = {"caduca": binding.expires_at, "datos": payload}\n'
BR_SEAL_OPEN = _block_of(BLIND, "reto.py", "    def seal(self, payload, binding):\n",
                         '        return sobre["datos"]\n')


BLIND_MUTANTS = [
    # acting against or without the user's decision
    blind2("a_ciegas_archiva_tras_decline", B_DECLINE + B_CANCEL + B_CONFIRM + B_PICK,
           B_CANCEL + '    if respuesta.content.get("confirm") is False:\n'
           '        return ok("Sin confirmar no archivo nada.")\n'
           "    elegida = None\n    elegido = respuesta.content.get(\"note_id\", "
           "candidatas[0].id)  # BUG: sin respuesta, la primera\n"
           "    for nota in candidatas:\n        if nota.id == elegido:\n"
           "            elegida = nota\n",
           both("ej2/test_decline_archives_nothing") | SEVERE2,
           "tras decline cambió el disco", severe=True),
    blind2("a_ciegas_archiva_tras_cancel", B_DECLINE + B_CANCEL + B_CONFIRM + B_PICK,
           B_DECLINE + '    if respuesta.content.get("confirm") is False:\n'
           '        return ok("Sin confirmar no archivo nada.")\n'
           "    elegida = None\n    elegido = respuesta.content.get(\"note_id\", "
           "candidatas[0].id)  # BUG: sin respuesta, la primera\n"
           "    for nota in candidatas:\n        if nota.id == elegido:\n"
           "            elegida = nota\n",
           both("ej2/test_cancel_archives_nothing") | SEVERE2,
           "tras cancel cambió el disco", severe=True),
    blind2("a_ciegas_no_mira_confirm", B_CONFIRM, "",
           both("ej2/test_unconfirmed_accept_archives_nothing") | SEVERE2,
           "tras accept con confirm falso cambió el disco", severe=True),
    blind2("a_ciegas_archiva_todas", B_ACT,
           "    for otra in candidatas:  # BUG: todas las que coinciden\n"
           "        destino = ctx.archive(ctx.recheck(otra))\n",
           both("ej2/test_archives_only_the_chosen_note") | SEVERE2
           | both("ej2/test_archiving_moves_the_file_and_never_overwrites") | RECHECK
           | {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
           "solo se archiva la nota que el usuario eligió", severe=True),
    blind2("a_ciegas_archiva_la_primera", B_PICK,
           "    elegida = candidatas[0]  # BUG: la primera, no la elegida\n",
           EX2, "cambió otra nota que nadie eligió", severe=True),
    blind2("a_ciegas_sin_preguntar_si_hay_una", B_OPTIONS,
           "    if len(candidatas) == 1:  # BUG: una sola: no hace falta preguntar\n"
           "        return ok(f\"Archivada en {ctx.archive(candidatas[0])}.\")\n" + B_OPTIONS,
           both("ej2/test_asks_to_confirm_even_with_one_match")
           | both("ej2/test_archives_single_match_after_confirmation") | SEVERE2,
           "cambió notas sin preguntar", severe=True),
    # the classes a blind catalogue still got through (issue 44)
    blind2("a_ciegas_confirm_opcional", B_ASK + B_DECLINE + B_CANCEL + B_CONFIRM,
           B_ASK.replace('required=["note_id", "confirm"])',
                         'required=["note_id"])  # la casilla, opcional')
           + B_DECLINE + B_CANCEL
           + '    if not respuesta.content.get("confirm", True):  # BUG: sin casilla, es un sí\n'
           '        return ok("Sin confirmar no archivo nada.")\n',
           both("ej2/test_unconfirmed_accept_archives_nothing")
           | both("ej2/test_the_form_offers_exactly_the_matching_notes") | SEVERE2,
           "tras accept sin confirm (un campo que falta no es un sí) cambió el disco",
           severe=True),
    blind2("a_ciegas_pregunta_otra_vez_tras_cancel", B_CANCEL,
           '    if respuesta.action == "cancel":  # BUG: se cerró sin querer: otra oportunidad\n'
           "        respuesta = ctx.elicit_form(\n"
           '            "Se cerró el formulario sin respuesta. ¿Archivo alguna nota?",\n'
           '            {"note_id": choice(opciones, title="Nota",\n'
           '                               protocol=ctx.protocol_version),\n'
           '             "confirm": {"type": "boolean", "title": "Sí, archívala"}},\n'
           '            required=["note_id", "confirm"])\n'
           '        if respuesta.action != "accept":\n'
           '            return ok("Cancelado: no archivo nada.")\n',
           both("ej2/test_asks_only_once_per_call") | SEVERE2, "tras cancel volvió a preguntar",
           severe=True),
    blind2("a_ciegas_la_busca_otra_vez_por_su_id", B_PICK,
           "    elegida = None\n"
           "    for nota in ctx.find_notes(title):  # BUG: tras la respuesta, la busca por su id\n"
           '        if nota.id == respuesta.content.get("note_id"):\n'
           "            elegida = nota\n",
           RECHECK | SEVERE2, "otro archivo con su mismo id", severe=True),
    # the classes that got full marks before
    blind2("a_ciegas_dice_archivada_aunque_no", B_ACT,
           "    try:\n        destino = ctx.archive(ctx.recheck(elegida))\n"
           "    except ToolError:  # BUG: que no se note\n"
           "        destino = \"la carpeta .archive\"\n",
           both("ej2/test_says_it_archived_only_when_it_did"),
           "nunca digas que archivaste lo que no archivaste"),
    blind2("a_ciegas_crea_archive_antes", B_OPTIONS,
           "    import os\n    for nota in candidatas:  # BUG: la carpeta, lista de antemano\n"
           "        raiz = ctx.roots.root_of(nota.path)\n"
           "        os.makedirs(os.path.join(raiz.path, \".archive\"), exist_ok=True)\n"
           + B_OPTIONS, both("ej2/test_creates_nothing_before_a_yes"),
           "no se crea nada antes de que el usuario diga que sí"),
    blind2("a_ciegas_choice_sin_protocol", B_CHOICE, 'choice(opciones, title="Nota")',
           {"ej2/test_a_2025_06_18_client_gets_a_form_it_understands[2025-06-18]"},
           "pasa protocol=ctx.protocol_version a choice"),
    blind2("a_ciegas_decide_la_root_antes", B_BODY, """\
    import os
    # BUG: las coincidencias y su root, decididas antes de preguntar; luego, por su ruta
    vistas = ctx.memo("vistas", lambda: [[n.id, n.title, n.path, ctx.roots.root_of(n.path).path]
                                         for n in ctx.find_notes(title)])
    if not vistas:
        raise ToolError("No hay ninguna nota con ese título en las carpetas compartidas.")
    respuesta = ctx.elicit_form(
        "¿Qué nota archivo? Marca la casilla para confirmarlo.",
        {"note_id": choice([(v[0], v[1]) for v in vistas], title="Nota",
                           protocol=ctx.protocol_version),
         "confirm": {"type": "boolean", "title": "Sí, archívala"}},
        required=["note_id", "confirm"])
    if respuesta.action != "accept" or respuesta.content.get("confirm") is not True:
        return ok("No archivo nada.")
    vista = next(v for v in vistas if v[0] == respuesta.content.get("note_id"))
    carpeta = os.path.join(vista[3], ".archive")
    os.makedirs(carpeta, exist_ok=True)
    destino = os.path.join(carpeta, os.path.basename(vista[2]))
    if os.path.exists(destino):
        raise ToolError("Ya hay una nota archivada con ese nombre.")
    os.rename(vista[2], destino)
    return ok(f"Archivada en {destino}.")
""", RECHECK | SEVERE2 | {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
           "ctx.recheck(nota) comprueba la nota contra las roots de ahora", severe=True),
    # the usual ones, in this learner's code
    blind2("a_ciegas_note_id_texto_libre", B_CHOICE,
           '{"type": "string", "title": "Id de la nota: " + ", ".join(n.id for n in candidatas)}',
           both("ej2/test_the_form_offers_exactly_the_matching_notes"),
           "note_id no es una selección"),
    blind2("a_ciegas_vuelve_a_preguntar", B_ASK + B_DECLINE + B_CANCEL + B_CONFIRM,
           "    while True:  # BUG: insiste hasta oír un sí\n"
           + "".join("    " + line for line in B_ASK.splitlines(keepends=True))
           + '        if respuesta.action == "accept" and '
           'respuesta.content.get("confirm") is True:\n            break\n',
           both("ej2/test_asks_only_once_per_call") | SEVERE2, "volvió a preguntar",
           severe=True),
    blind2("a_ciegas_copia_y_borra", B_ACT, """\
    import os
    import shutil
    nota = ctx.recheck(elegida)
    carpeta = os.path.join(ctx.roots.root_of(nota.path).path, ".archive")
    os.makedirs(carpeta, exist_ok=True)
    destino = os.path.join(carpeta, os.path.basename(nota.path))
    if os.path.exists(destino):
        raise ToolError("Ya hay una nota archivada con ese nombre.")
    shutil.copy2(nota.path, destino)  # BUG: copia y borra, dos pasos
    os.remove(nota.path)
""", both("ej2/test_archiving_moves_the_file_and_never_overwrites"),
"se copió y se borró en vez de moverse"),
    blind2("a_ciegas_sobrescribe", B_ACT, """\
    import os
    nota = ctx.recheck(elegida)
    carpeta = os.path.join(ctx.roots.root_of(nota.path).path, ".archive")
    os.makedirs(carpeta, exist_ok=True)
    destino = os.path.join(carpeta, os.path.basename(nota.path))
    os.replace(nota.path, destino)  # BUG: pisa lo que ya estuviera archivado
""", both("ej2/test_archiving_moves_the_file_and_never_overwrites") | SEVERE2,
"nunca se sobrescribe una nota que nadie eligió", severe=True),
    blind2("a_ciegas_archiva_junto_a_la_nota", B_ACT, """\
    import os
    nota = ctx.recheck(elegida)
    carpeta = os.path.join(os.path.dirname(nota.path), ".archive")  # BUG: junto a la nota
    os.makedirs(carpeta, exist_ok=True)
    destino = os.path.join(carpeta, os.path.basename(nota.path))
    if os.path.exists(destino):
        raise ToolError("Ya hay una nota archivada con ese nombre.")
    os.rename(nota.path, destino)
""", both("ej2_hidden/test_note_in_a_subfolder_goes_to_its_roots_archive"),
"la de la root, no la de la subcarpeta"),
    blind2("a_ciegas_titulos_exactos", B_FIND,
           '    candidatas = [store.Note(*c) for c in ctx.memo("candidatas", lambda: [\n'
           "        n for n in ctx.notes() if n.title == title])]  # BUG: tal cual\n",
           both("ej2/test_titles_match_ignoring_case_and_surrounding_spaces"),
           "sin distinguir mayúsculas ni espacios"),
    blind2("a_ciegas_subcadena", B_FIND,
           '    candidatas = [store.Note(*c) for c in ctx.memo("candidatas", lambda: [\n'
           "        n for n in ctx.notes()\n"
           "        if title.lower().strip() in n.title.lower()])]  # BUG: «contiene»\n",
           both("ej2/test_titles_match_ignoring_case_and_surrounding_spaces"),
           "el título coincide entero, no una parte"),
    blind2("a_ciegas_cache_del_modulo", B_FIND, """\
    # BUG: para no buscar dos veces, las candidatas se guardan en el módulo
    clave = title.strip().casefold()
    if clave not in notes_archive.__dict__.setdefault("vistas", {}):
        notes_archive.vistas[clave] = ctx.find_notes(title)
    candidatas = notes_archive.vistas[clave]
""", both("ej2/test_titles_outside_the_roots_are_refused_without_asking") | SEVERE2,
"nunca en una lista que guardaste de otra", severe=True),
    blind2("a_ciegas_sin_memo", B_FIND,
           "    candidatas = ctx.find_notes(title)  # BUG: sin ctx.memo\n",
           # at 2026-07-28 the run after the answer finds the notes again: whatever carries
           # the chosen id then (another file in its place) is what it archives
           RECHECK | SEVERE2 | {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
           "decide las coincidencias una vez por llamada con ctx.memo", severe=True),
    blind2("a_ciegas_busca_en_carpetas_parecidas", B_FIND, """\
    import os
    vistas = []
    for root in ctx.roots.roots:  # BUG: las carpetas que empiezan como la root
        arriba = os.path.dirname(root.path)
        for nombre in sorted(os.listdir(arriba)):
            if not nombre.startswith(os.path.basename(root.path)):
                continue
            for carpeta, _, archivos in os.walk(os.path.join(arriba, nombre)):
                for archivo in sorted(archivos):
                    nota = store.read_note(os.path.join(carpeta, archivo))
                    if nota and nota.title.strip().casefold() == title.strip().casefold():
                        vistas.append(nota)
    candidatas = [store.Note(*c) for c in ctx.memo("candidatas", lambda: vistas)]
""", both("ej2/test_titles_outside_the_roots_are_refused_without_asking") | SEVERE2,
"Notas-privadas, que no es una root", severe=True),
    blind2("a_ciegas_sin_anotaciones", 'annotations={"readOnlyHint": False, '
           '"destructiveHint": True})',
           "annotations={})  # BUG: sin anunciar nada",
           both("ej2/test_announces_a_destructive_tool_that_takes_a_title"),
           "destructiveHint verdadero"),
    blind2("a_ciegas_sin_error_si_no_hay", 'raise ToolError("No hay ninguna nota con ese título '
           'en las carpetas compartidas.")', 'return ok("No hay ninguna nota con ese título.")',
           both("ej2/test_titles_outside_the_roots_are_refused_without_asking"),
           "se esperaba un error sin preguntar"),
    # exercise 4, the same learner
    blind4("a_ciegas_compara_con_startswith", B_INSIDE,
           "        elif not any(ruta.startswith(root.path)  # BUG: texto\n"
           "                     for root in change.new_roots.roots):\n",
           {"ej4/test_a_sibling_sharing_a_prefix_is_another_root"} | SEVERE4,
           "Notas no contiene a Notas-privadas", severe=True),
    blind4("a_ciegas_usa_handle_path", B_PATH,
           "        ruta = handle.path  # BUG: la ruta de cuando se abrió\n",
           {MOVED, REPLACED, OTHER_FOLDERS, DELETED} | SEVERE4,
           "handle.current_path() dice dónde está el archivo de verdad ahora", severe=True),
    blind4("a_ciegas_resuelve_handle_path", B4_BODY, loop4(
        "        ruta = os.path.realpath(handle.path)  # BUG: resuelve el texto de antes\n"),
           {REPLACED, OTHER_FOLDERS, DELETED} | SEVERE4,
           "os.path.realpath(handle.path)", severe=True),
    blind4("a_ciegas_compara_con_la_uri", B4_BODY, loop4(B_PATH, (
        "        elif not any(is_within(ruta, uri_to_path(root.uri))  # BUG: sin resolver\n"
        "                     for root in change.new_roots.roots):\n")),
           {LINKED, OTHER_FOLDERS} | SEVERE4,  # refuses in the linked root's test (as above)
           "algún handle que seguía dentro de las roots dejó de funcionar", severe=True),
    blind4("a_ciegas_normaliza_la_uri", B4_BODY, loop4(B_PATH, (
        "        elif not any(is_within(ruta, os.path.normpath(uri_to_path(root.uri)))\n"
        "                     for root in change.new_roots.roots):  # BUG: normaliza\n")),
           {LINKED, OTHER_FOLDERS} | SEVERE4,
           "algún handle que quedó fuera de las roots siguió funcionando", severe=True),
    blind4("a_ciegas_nada_sin_roots", B_LOOP,
           "    if not change.new_roots.roots:  # BUG: sin roots no hay con qué comparar\n"
           "        return\n" + B_LOOP,
           {EVERY} | SEVERE4,
           "quedó fuera de las roots pero su handle siguió leyendo", severe=True),
    blind4("a_ciegas_solo_las_roots_quitadas", B4_BODY, """\
    from roots import is_within
    nuevas = [root.path for root in change.new_roots.roots]
    # BUG: una root cuenta como quitada solo si ninguna nueva cae dentro de ella
    quitadas = [root.path for root in change.old_roots.roots
                if not any(is_within(nueva, root.path) for nueva in nuevas)]
    for handle in change.handles:
        ruta = handle.current_path()  # dónde está el archivo ahora
        if ruta is None or any(is_within(ruta, quitada) for quitada in quitadas):
            change.revoke(handle, "su nota quedó fuera de las roots")
""", {MOVED, NARROWED} | SEVERE4,
"algún handle que quedó fuera de las roots siguió funcionando", severe=True),
    blind4("a_ciegas_solo_la_carpeta_de_la_root", B4_BODY, loop4(B_PATH, (
        "        elif os.path.dirname(ruta) not in [root.path for root in "
        "change.new_roots.roots]:  # BUG\n")),
           EX4, "sigue dentro de las roots pero su handle dejó de funcionar"),
    # the reto, blind: forged, moved or replayed into a deletion (severe), then the rest
    blind_reto("a_ciegas_reto_clave_constante", BR_KEYS,
               '        return sealkit.keys_from(b"reto-mcp-2026-clave-super-secreta")  # BUG\n',
               RETO_FORGED | {RETO_READ}, "la constante reto-mcp-2026-clave-super-secreta",
               severe=True),
    blind_reto("a_ciegas_reto_etiqueta_con_sha256",
               "        return sealkit.tag_of(firmar, self._atado(binding), nonce, cifrado)\n",
               "        import hashlib  # BUG: un hash, sin clave\n"
               "        return hashlib.sha256(json.dumps(self._atado(binding)).encode() + nonce\n"
               "                              + cifrado).digest()\n",
               RETO_FORGED, "un sha256, sin clave", severe=True),
    blind_reto("a_ciegas_reto_repeticion_permitida", BR_ONE_TIME, "", RETO_REPLAYED,
               "vale una sola vez", severe=True),
    blind_reto("a_ciegas_reto_sin_usuario",
               "        return [binding.tool, binding.arguments, binding.principal]\n",
               "        return [binding.tool, binding.arguments]  # BUG: sin el usuario\n",
               RETO_OTHER_USER, "no cubre binding.principal", severe=True),
    blind_reto("a_ciegas_reto_sin_herramienta",
               "        return [binding.tool, binding.arguments, binding.principal]\n",
               "        return [binding.arguments, binding.principal]  # BUG: sin la herramienta\n",
               RETO_MOVED, "no cubre binding.tool", severe=True),
    blind_reto("a_ciegas_reto_sin_caducidad",
               '        if sobre["caduca"] < binding.now:\n'
               '            raise ValueError("caducado")\n', "", RETO_EXPIRED, "un token caducado"),
    blind_reto("a_ciegas_reto_compara_con_igual", BR_TAG,
               "        if tag != self._etiqueta(binding, nonce, cifrado):  # BUG: == varía\n",
               {RETO_COMPARED}, "compare_digest"),
    # a tag made with the server's key that is still not the format's (the statement: the
    # grader rebuilds it with the server's key; what is not the format it cannot vouch for)
    blind_reto("a_ciegas_reto_claves_cruzadas", BR_KEYS,
               "        cifrar, firmar = sealkit.keys_from(binding.key)\n"
               "        return firmar, cifrar  # BUG: al revés\n",
               RETO_FORGED | {RETO_READ}, "no es la del formato", severe=True),
    blind_reto("a_ciegas_reto_atado_en_otro_orden",
               "        return [binding.tool, binding.arguments, binding.principal]\n",
               "        return [binding.principal, binding.tool, binding.arguments]  # BUG\n",
               RETO_FORGED, "no es la del formato", severe=True),
    blind_reto("a_ciegas_reto_caducidad_propia", BR_SOBRE,
               '        sobre = {"caduca": binding.now + 600, "datos": payload}  # BUG: su vida\n',
               RETO_EXPIRED, "no lleva caduca = binding.expires_at"),
    blind_reto("a_ciegas_reto_clave_del_key_id", BR_KEYS,
               "        return sealkit.keys_from(binding.key_id.encode())  # BUG: es público\n",
               RETO_FORGED | {RETO_READ}, "keys_from(binding.key_id)", severe=True),
    blind_reto("a_ciegas_reto_gasta_antes_de_verificar", BR_OPEN,
               "        tag = raw[-sealkit.TAG:]\n"
               "        if binding.one_time:  # BUG: lo apunta antes de comprobar la firma\n"
               "            with self._lock:\n"
               "                if nonce in self._usados:\n"
               '                    raise ValueError("ya usado")\n'
               "                self._usados[nonce] = binding.expires_at\n"
               + BR_OPEN[len("        tag = raw[-sealkit.TAG:]\n"):BR_OPEN.index(BR_ONE_TIME)],
               {RETO_CHANGED}, "un intento rechazado gastó el token legítimo"),
    blind_reto("a_ciegas_reto_etiqueta_a_medias", BR_TAG,
               "        if not hmac.compare_digest(tag[:16], self._etiqueta(binding, nonce, "
               "cifrado)[:16]):  # BUG\n",
               {RETO_CHANGED}, "el token de la ronda de las roots con un carácter cambiado"),
    blind_reto("a_ciegas_reto_acepta_recodificado", "        raw = sealkit.decode(token)\n",
               '        texto = token.strip().replace("+", "-").replace("/", "_").rstrip("=")'
               "  # BUG\n        raw = sealkit.decode(texto)\n",
               RETO_RESPELLED, "re-codificado"),
    blind_reto("a_ciegas_reto_estado_en_memoria", BR_SEAL_OPEN,
               "    guardados = {}  # BUG: el payload se queda en la memoria de este proceso\n\n"
               + BR_SEAL_OPEN.replace(BR_SOBRE, "        self.guardados[nonce] = payload\n"
                                      + BR_SOBRE.replace('"datos": payload', '"datos": {}'))
               .replace('        return sobre["datos"]\n',
                        "        return self.guardados[nonce]\n"),
               {"reto/test_a_retry_can_be_served_by_another_replica_with_the_same_key"}
               | RETO_EXPIRED, "no en la memoria de un proceso"),
]
MUTANTS += BLIND_MUTANTS


# == exercise 3: 3A, 3B and 3B's optional 2026-07-28 part ==================================
# Exercise 3's one-bug solutions (3A, 3B and 3B's optional 2026-07-28 part), in the reference
# and in the blind learner's code (tests/grader/blind/ejercicio3a.py and ejercicio3b.py): each
# loses exactly the tests it names, and the feedback of one of them names the bug
# (tests/grader/mutants.py says the rules; test_catalogue.py grades them).
#
# Severity, as the statements' «lo imprescindible» says: in 3A, a guard that says yes to a client
# without elicitation.url; in 3B, every bug below marked `severe` (a flow completed without its
# own state, success without a code the provider accepted, a state another person's browser does
# not spend, a state from the clock, no owner check, no expiry, a credential on the wire); in the
# optional part, accept or decline taken for an authorization. Each costs at least half of *its*
# exercise (3A, 3B or the optional part); the others lose only their tests.

SEVERE3A, SEVERE3A_HIDDEN = {"ej3a/lo_imprescindible"}, {"ej3a/lo_imprescindible_oculto"}
SEVERE3B, SEVERE3B_HIDDEN = {"ej3b/lo_imprescindible"}, {"ej3b/lo_imprescindible_oculto"}
SEVERE_2026 = {"ej3b_2026/lo_imprescindible"}

GUARD_VERSION = "    version = parse_version(sdk_version)\n"
AT_LEAST = "    return numbers > minimum or (numbers == minimum and final)  # 2.0.0b1 < 2.0.0\n"
MINIMUM = ('    minimum = {"2025-11-25": (1, 23, 1), "2026-07-28": (2, 0, 0)}'
           '.get(protocol_version)\n')
CAPABILITY = "    return at_least(version, minimum) and supports_url(client_capabilities)\n"
FLOW_URL = '    url = ctx.page_url("/copias/conectar", flujo=flow_id)\n'
FLOW_ID = "    flow_id = secrets.token_urlsafe(24)\n"
STATE = "    state = secrets.token_urlsafe(32)\n"
NOTIFY = "    if flow.notify is not None:\n        flow.notify(flow_id)\n"
USABLE = "    return flow.user == user and time.monotonic() < flow.expires\n"
BACKUP_RESULT = '        return ok(f"Copia hecha: {copied} nota(s).", {"status": "done", ' \
    '"notes": copied})\n'
POP = '    flow_id = STATES.pop(page.query.get("state", ""), None)\n'
CHECKED = POP + "    flow = FLOWS.get(flow_id)\n    if not usable(flow, page.user):\n"
EXCHANGE = _block("ejercicio3b.py", '    if "code" not in page.query:',
                  '"Nube de Copias no aceptó el código.")\n')
NO_NOTICE_2026 = "    flow.notify = None  # 2026-07-28 no tiene notificación de fin\n"
RETIRE_2026 = '        flow.status = "retired"\n'
PENDING_2026 = ('    return ok("Sigue pendiente: termina en Nube de Copias y vuelve a pedir la '
                'copia.",\n              {"status": "pending"})\n')

# what a bug of one kind loses, in the reference and in the blind learner's code alike
NO_OWNER_LOSES = {"ej3b/test_another_persons_browser_cannot_complete_the_flow",
                  "ej3b/test_the_callback_completes_only_the_flow_of_its_state",
                  "ej3b/test_a_state_another_persons_browser_brings_back_is_spent"} | SEVERE3B
NO_EXPIRY_LOSES = {"ej3b/test_a_link_and_its_state_expire",
                   "ej3b_hidden/test_another_persons_flow_expires_too"} | SEVERE3B
# the guard tables a bug loses, by what the bug gets wrong
TABLES = {
    "numbers": {"ej3a/test_versions_compare_as_numbers",
                "ej3a_hidden/test_short_and_long_version_numbers"},
    "prerelease": {"ej3a/test_missing_unreadable_or_prerelease_versions_mean_no",
                   "ej3a/test_the_protocol_revision_counts", "ej3a_hidden/test_other_prereleases"},
}
GUARD_WITHOUT_CAPABILITY_LOSES = {
    "ej3a/test_url_mode_from_sdk_1_23_1", "ej3a/test_versions_compare_as_numbers",
    "ej3a/test_client_must_declare_url_elicitation",
    "ej3a_hidden/test_short_and_long_version_numbers", "ej3a_hidden/test_other_prereleases",
    "ej3a_hidden/test_other_revisions_and_declarations"}  # under half already: no penalty


def ref3a(name, find, replace, loses, says, severe=False):
    return Mutant(name, "ejercicio3a.py", find, replace, loses, says, severe)


def ref3b(name, find, replace, loses, says, severe=False, part="", may_lose=frozenset()):
    return Mutant(name, "ejercicio3b.py", find, replace, loses, says, severe, part=part,
                  may_lose=may_lose)


def blind3a(name, find, replace, loses, says, severe=False):
    return Mutant(name, "ejercicio3a.py", find, replace, loses, says, severe, BLIND)


def blind3b(name, find, replace, loses, says, severe=False, part=""):
    return Mutant(name, "ejercicio3b.py", find, replace, loses, says, severe, BLIND, part=part)


EJ3_REFERENCE = [
    # -- 3A: the guard --------------------------------------------------------------------------
    ref3a("compara_versiones_como_texto", GUARD_VERSION,
          GUARD_VERSION + "    if not sdk_version or sdk_version < \"1.23.1\":  # BUG: text\n"
          "        return False\n"
          "    version = ((99, 0, 0), True) if sdk_version >= \"2.0.0\" else ((1, 99, 0), True)\n",
          TABLES["numbers"] | {"ej3a/test_missing_unreadable_or_prerelease_versions_mean_no",
                               "ej3a/test_the_protocol_revision_counts",
                               "ej3a_hidden/test_other_prereleases"},
          "las versiones se comparan como números"),
    ref3a("ignora_las_versiones_preliminares", AT_LEAST,
          "    return numbers >= minimum  # BUG: 2.0.0b1 counts as 2.0.0\n",
          TABLES["prerelease"], "es una versión preliminar"),
    ref3a("admite_2026_con_sdk_1", MINIMUM,
          MINIMUM.replace("(2, 0, 0)", "(1, 23, 1)") + "    # BUG: 1.x for 2026 too\n",
          {"ej3a/test_the_protocol_revision_counts", "ej3a_hidden/test_other_prereleases"},
          "2026-07-28 necesita un SDK ≥ 2.0.0"),
    ref3a("ignora_el_protocolo", MINIMUM, "    minimum = (1, 23, 1)  # BUG: any revision\n",
          {"ej3a/test_missing_unreadable_or_prerelease_versions_mean_no",
           "ej3a/test_the_protocol_revision_counts", "ej3a_hidden/test_other_prereleases",
           "ej3a_hidden/test_other_revisions_and_declarations"},
          "2025-06-18 no tiene modo URL"),
    ref3a("elicitation_vacia_cuenta_como_url", CAPABILITY,
          "    return at_least(version, minimum) and \"elicitation\" in client_capabilities"
          "  # BUG\n",
          GUARD_WITHOUT_CAPABILITY_LOSES, "el servidor no pudo enviar la URL", severe=True),
    # -- 3B: «lo imprescindible» ----------------------------------------------------------------
    ref3b("completa_sin_mirar_su_state", POP,
          '    mine = [i for i, f in FLOWS.items() if f.user == page.user and f.status == '
          '"pending"]\n'
          "    flow_id = mine[-1] if mine else None  # BUG: the user's last pending flow\n",
          # (a state that came back once, or another person's old one, completes the
          # user's newest pending flow instead)
          {"ej3b/test_the_callback_completes_only_the_flow_of_its_state",
           "ej3b/test_a_state_another_persons_browser_brings_back_is_spent",
           "ej3b/test_a_state_is_used_once",
           "ej3b_hidden/test_a_way_back_without_a_state_completes_nothing"} | SEVERE3B,
          "nunca «el último flujo pendiente»", severe=True,
          # the expiry test's peer asks again while the lifetime passes: whether one of those
          # flows is still young when the old link comes back (then the bug completes it)
          # depends on how the other tests' turns fall between its waits
          may_lose=frozenset({"ej3b_hidden/test_another_persons_flow_expires_too"})),
    ref3b("exito_sin_code_valido", EXCHANGE,
          "    try:\n"
          "        token = page.provider.exchange(page.query.get(\"code\"))\n"
          "    except nube_copias.ProviderError:\n"
          "        token = None  # BUG: success anyway\n",
          # its broken credential also breaks the user's next flow (the legitimate last step)
          {"ej3b/test_without_a_valid_code_the_callback_reports_no_success",
           "ej3b_hidden/test_a_code_changed_on_its_way_authorizes_nothing",
           "ej3b/test_a_state_is_used_once"} | SEVERE3B,
          "200 es solo para un flujo completado de verdad", severe=True),
    ref3b("mira_antes_de_gastar_el_state", CHECKED,
          '    flow_id = STATES.get(page.query.get("state", ""))\n'
          "    flow = FLOWS.get(flow_id)\n"
          "    if not usable(flow, page.user):  # BUG: the state is spent only on success\n",
          {"ej3b/test_a_state_another_persons_browser_brings_back_is_spent"} | SEVERE3B,
          "aunque lo traiga otra persona", severe=True),
    ref3b("state_de_la_hora", STATE, "    state = str(int(time.time()))  # BUG: the clock\n",
          {"ej3b/test_each_flow_has_its_own_unguessable_state"} | SEVERE3B,
          "un state hecho con la hora", severe=True),
    ref3b("cualquier_navegador_completa", USABLE,
          "    return time.monotonic() < flow.expires  # BUG: whoever is at the browser\n",
          NO_OWNER_LOSES,
          "cuando otra persona abrió tu enlace", severe=True),
    ref3b("el_flujo_no_caduca", USABLE, "    return flow.user == user  # BUG: no expiry\n",
          NO_EXPIRY_LOSES,
          "después de caducar", severe=True),
    ref3b("el_token_en_el_resultado", BACKUP_RESULT,
          '        return ok(f"Copia hecha: {copied} nota(s).", {"status": "done", '
          '"notes": copied, "token": TOKENS[ctx.user]})  # BUG\n',
          {"ej3b/test_no_token_code_or_state_reaches_the_client"} | SEVERE3B,
          "la credencial se queda en el servidor", severe=True),
    # -- 3B: the rest -----------------------------------------------------------------------------
    ref3b("el_enlace_dice_quien_eres", FLOW_URL,
          '    url = ctx.page_url("/copias/conectar", flujo=flow_id, usuario=ctx.user)  # BUG\n',
          {"ej3b/test_the_link_opens_the_servers_own_page_and_names_nobody"},
          "el enlace dice quién eres"),
    ref3b("identificador_con_contador", FLOW_ID,
          "    flow_id = f\"flujo-{len(FLOWS) + 1}\"  # BUG: a counter\n",
          {"ej3b/test_each_flow_has_its_own_unguessable_id"}, "se podría adivinar"),
    ref3b("no_avisa_del_final", NOTIFY, "    pass  # BUG: no notice\n",
          {"ej3b/test_completion_is_notified"}, "no llegó notifications/elicitation/complete"),
    # -- 3B's optional part (2026-07-28) ----------------------------------------------------------
    ref3b("avisa_del_final_en_2026", NO_NOTICE_2026, "",
          {"ej3b_2026/test_no_completion_notification_in_2026"}, "esa revisión retiró",
          part="ejercicio3b_2026"),
    ref3b("decline_no_anula_el_enlace", RETIRE_2026, "        pass  # BUG: the link stays\n",
          {"ej3b_2026/test_decline_and_cancel_retire_the_link"} | SEVERE_2026,
          "alguien abrió el enlace y autorizó", severe=True, part="ejercicio3b_2026"),
    ref3b("accept_es_la_copia", PENDING_2026,
          '    return ok("Hecho.", {"status": "done", "notes": len(ctx.notes())})  # BUG\n',
          {"ej3b_2026/test_accept_is_consent_only"} | SEVERE_2026,
          "accept es consentimiento, no el final", severe=True, part="ejercicio3b_2026"),
]

# the blind learner's exercise 3 (tests/grader/blind/ejercicio3a.py and ejercicio3b.py)
B3_USER = ('    if usuario is None or datos["user"] != usuario:\n'
           '        return 403, "No es tu enlace", "Esta autorización la empezó otra persona."\n')
B3_EXPIRY = ('    if time.monotonic() > datos["expires"]:\n'
             '        return 410, "Enlace caducado", "Este enlace caducó: vuelve a pedir la '
             'copia."\n')
B3_PAGES = _block_of(BLIND, "ejercicio3b.py", '    if datos["status"] != "pending":\n',
                     "  # sirve una vez\n")
B3_VERSIONS = _block_of(BLIND, "ejercicio3a.py", "MINIMO_URL = ", "int(n or 0))\n")

EJ3_BLIND = [
    blind3b("a_ciegas_ej3_state_en_el_enlace",
            '    url = ctx.page_url("/copias/conectar", flujo=flujo)\n',
            '    url = ctx.page_url("/copias/conectar", flujo=flujo, state=FLOWS[flujo]["state"])'
            "  # BUG\n",
            {"ej3b/test_no_token_code_or_state_reaches_the_client"} | SEVERE3B,
            "el state del flujo", severe=True),
    blind3b("a_ciegas_ej3_no_mira_el_usuario", B3_USER, "",
            NO_OWNER_LOSES,
            "cuando otra persona abrió tu enlace", severe=True),
    blind3b("a_ciegas_ej3_state_reutilizable", B3_PAGES, B3_PAGES.replace(
        '    if datos["status"] != "pending":\n        return 410, "Enlace ya usado", '
        '"Este enlace ya se usó o se anuló."\n',
        '    if datos["status"] == "retired":  # BUG: solo mira si se anuló\n'
        '        return 410, "Enlace anulado", "Este enlace se anuló."\n').replace(
        "STATES.pop(state, None) if isinstance(state, str) else None  # sirve una vez",
        "STATES.get(state) if isinstance(state, str) else None  # BUG: get, no pop"),
            {"ej3b/test_a_state_is_used_once",
             "ej3b/test_a_state_another_persons_browser_brings_back_is_spent"} | SEVERE3B,
            "el state se gasta la primera vez", severe=True),
    blind3b("a_ciegas_ej3_devuelve_el_state_si_falla_el_code",
            '            datos["status"], datos["notify"] = "failed", None\n',
            "            STATES[state] = flujo  # BUG: que pueda reintentar con el mismo state\n",
            {"ej3b/test_a_state_is_used_once"} | SEVERE3B,
            "también cuando Nube de Copias rechaza el code", severe=True),
    blind3b("a_ciegas_ej3_state_en_el_enlace_de_2026",
            "    respuesta = ctx.elicit_url(MESSAGE, url, flujo)\n",
            "    url = ctx.page_url(  # BUG: sin memoria entre rondas, que el enlace lo lleve\n"
            '        "/copias/conectar", flujo=flujo, state=FLOWS[flujo]["state"])\n'
            "    respuesta = ctx.elicit_url(MESSAGE, url, flujo)\n",
            {"ej3b_2026/test_authorizes_at_the_provider_and_then_backs_up_in_2026"}
            | SEVERE_2026, "la URL de input_required", severe=True, part="ejercicio3b_2026"),
    blind3b("a_ciegas_ej3_renueva_la_caducidad_en_2026",
            "    respuesta = ctx.elicit_url(MESSAGE, url, flujo)\n",
            "    with LOCK:  # BUG: el enlace vive url_ttl desde la última vez que se pide\n"
            '        FLOWS[flujo]["expires"] = time.monotonic() + ctx.url_ttl\n'
            "    respuesta = ctx.elicit_url(MESSAGE, url, flujo)\n",
            {"ej3b_2026/test_a_links_lifetime_is_fixed_when_its_flow_is_created"} | SEVERE_2026,
            "desde que se creó el flujo", severe=True, part="ejercicio3b_2026"),
    blind3b("a_ciegas_ej3_sin_caducidad", B3_EXPIRY, "",
            NO_EXPIRY_LOSES,
            "después de caducar", severe=True),
    blind3b("a_ciegas_ej3_sin_aviso_de_fin", "    if aviso is not None:\n        aviso(flujo)\n",
            "    pass  # BUG: nadie avisa al cliente\n", {"ej3b/test_completion_is_notified"},
            "no llegó notifications/elicitation/complete"),
    blind3b("a_ciegas_ej3_decline_no_anula", "        _anula(flujo)\n",
            "        pass  # BUG: el enlace sigue valiendo\n",
            {"ej3b_2026/test_decline_and_cancel_retire_the_link"} | SEVERE_2026,
            "alguien abrió el enlace y autorizó", severe=True, part="ejercicio3b_2026"),
    blind3a("a_ciegas_ej3_guarda_sin_capacidad",
            '    return isinstance(elicitacion, dict) and isinstance(elicitacion.get("url"), '
            'dict)\n', "    return isinstance(elicitacion, dict)  # BUG: sin mirar url\n",
            GUARD_WITHOUT_CAPABILITY_LOSES, "el servidor no pudo enviar la URL", severe=True),
    blind3a("a_ciegas_ej3_version_como_texto", B3_VERSIONS, B3_VERSIONS.replace(
        "MINIMO_URL = (1, 23, 1, FINAL, 0)", 'MINIMO_URL = ("1", "23", "1", FINAL, "0")  # BUG')
            .replace("MINIMO_2026 = (2, 0, 0, FINAL, 0)",
                     'MINIMO_2026 = ("2", "0", "0", FINAL, "0")')
            .replace("(int(mayor), int(menor), int(parche or 0), tipo, int(n or 0))",
                     '(mayor, menor, parche or "0", tipo, n or "0")'),
            TABLES["numbers"], "las versiones se comparan como números"),
]

EJ3_MUTANTS = EJ3_REFERENCE + EJ3_BLIND
MUTANTS += EJ3_MUTANTS
