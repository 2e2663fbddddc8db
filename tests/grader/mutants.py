"""The catalogue of wrong solutions: the reference with exactly one bug each.

Each mutant names the reference file it changes, the exact text it replaces (which must occur
once), the grading tests it must lose (every other test must still give full marks), and a
phrase that the feedback of at least one lost test must contain: the feedback names the bug.
The first ones are the bugs a blind test of the notebooks found (learners who wrote solutions
from the statements alone); the rest are the ones learners meet most often.
"""

import os
from dataclasses import dataclass

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "grader", "reference", "soluciones")
REVISIONS = ("2025-11-25", "2026-07-28")


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

    def write(self, folder):
        os.makedirs(folder)
        for name in sorted(os.listdir(REFERENCE)):
            with open(os.path.join(REFERENCE, name), encoding="utf-8") as handle:
                text = handle.read()
            if name == self.file:
                assert text.count(self.find) == 1, f"{self.name}: the text to replace moved"
                text = text.replace(self.find, self.replace)
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        return folder


ARCHIVE_CALL = ("    target = ctx.archive(current)  "
                "# lo comprueba otra vez y lo mueve en un solo paso\n")
CONFIRM_CHECK = '    if answer.action != "accept" or answer.content.get("confirm") is not True:\n'
ASK = "    answer = ctx.elicit_form(\n"


def _block(file, first, last):
    with open(os.path.join(REFERENCE, file), encoding="utf-8") as handle:
        text = handle.read()
    start = text.index(first)
    return text[start:text.index(last, start) + len(last)]


ASK_BLOCK = _block("ejercicio2.py", ASK, 'required=["note_id", "confirm"])\n')
GUARD_VERSION = "    version = sdk_version(sdk_version_text)\n"
GUARD_PROTOCOL = """    if protocol_version == "2026-07-28":
        if not at_least(version, STATELESS_SDK):
            return False
    elif protocol_version != "2025-11-25":
        return False
"""
GUARD_CAPABILITY = ("    return supports_url(client_capabilities)  "
                    "# elicitation.url declarado (un objeto)\n")
REACTION = """        where = handle.current_path()
        if where is None or not change.new_roots.contains(where):
            change.revoke(handle, "su nota quedó fuera de las roots")
"""
MATCHES = "    matches = ctx.find_notes(title)  # solo notas dentro de las roots\n"
BODY = _block("ejercicio2.py", MATCHES, '{"archived": note.summary()})\n')
FINAL = "    return tuple(int(part or 0) for part in match.groups()[:3]), match.group(4) is None\n"
STATELESS = """        if not at_least(version, STATELESS_SDK):
            return False
"""
FLOW_URL = '    url = ctx.page_url("/copias/conectar", flujo=flow_id)\n'
FLOW_IDS = "    flow_id, state = secrets.token_urlsafe(24), secrets.token_urlsafe(32)\n"
NOTIFY = "    if flow.notify is not None:\n        flow.notify(flow_id)\n"
USABLE = """    return flow is not None and flow.status == "pending" and flow.user == user \\
        and time.monotonic() < flow.expires
"""
BACKUP_RESULT = '              {"status": "done", "notes": copied})\n'
RETIRE = "        retire(flow_id)\n"
EX2 = {f"ej2/{name}" for name in (
    "test_archives_only_the_chosen_note", "test_asks_to_confirm_even_with_one_match",
    "test_archives_single_match_after_confirmation",
    "test_titles_match_ignoring_case_and_surrounding_spaces", "test_decline_archives_nothing",
    "test_cancel_archives_nothing", "test_unconfirmed_accept_archives_nothing",
    "test_answer_that_does_not_fit_archives_nothing",
    "test_titles_outside_the_roots_are_refused_without_asking", "test_asks_only_once_per_call",
    "test_archiving_moves_the_file_and_never_overwrites")}
EX2 = {f"{test}[{revision}]" for test in EX2 for revision in REVISIONS} | \
    {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"} | \
    both("ej2_hidden/test_note_in_a_subfolder_goes_to_its_roots_archive")
EX4 = {"ej4/test_handles_under_a_removed_root_die_at_once_and_the_others_keep_working",
       "ej4/test_revocation_changes_nothing_on_disk",
       "ej4/test_a_sibling_sharing_a_prefix_is_another_root",
       "ej4_hidden/test_several_roots_remain", "ej4_hidden/test_every_root_removed",
       "ej4_hidden/test_root_through_a_symlinked_folder",
       "ej4_hidden/test_root_narrowed_to_a_subfolder"}

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
""", {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
        "hay que volver a comprobar las roots"),
    Mutant("solo_la_primera_root", "ejercicio4.py", REACTION,
           """        import os
        first = change.new_roots.roots[0].path  # BUG: only the first remaining root
        where = handle.current_path()
        if where is None or os.path.commonpath([where, first]) != first:
            change.revoke(handle)
""", {"ej4_hidden/test_several_roots_remain"},
           "algún handle que seguía dentro de las roots dejó de funcionar"),
    Mutant("conserva_todo_sin_roots", "ejercicio4.py", "    for handle in change.handles:\n",
           "    if not change.new_roots.roots:  # BUG: nothing left to compare with: keep all\n"
           "        return\n    for handle in change.handles:\n",
           {"ej4_hidden/test_every_root_removed"},
           "algún handle que quedó fuera de las roots siguió funcionando"),
    Mutant("reaccion_que_lanza", "ejercicio4.py", REACTION,
           "        if not change.new_roots.contains(handle.real_path):  # BUG: no such field\n"
           "            change.revoke(handle)\n",
           EX4, "la reacción al cambio de roots falló"),
    # -- the usual ones ---------------------------------------------------------------------------
    Mutant("compara_titulos_con_igual", "ejercicio2.py", MATCHES,
           "    matches = [n for n in ctx.notes() if n.title == title]  # BUG: exact titles\n",
           both("ej2/test_titles_match_ignoring_case_and_surrounding_spaces"),
           "sin distinguir mayúsculas ni espacios"),
    Mutant("archiva_sin_preguntar_si_hay_una", "ejercicio2.py", ASK,
           """    if len(matches) == 1:
        ctx.archive(matches[0])
        return ok("Archivada.", {"archived": matches[0].summary()})
""" + ASK,
           both("ej2/test_asks_to_confirm_even_with_one_match")
           | both("ej2/test_archives_single_match_after_confirmation")
           # once the roots change leaves one match, it archives that one, which nobody chose
           | {"ej2_hidden/test_roots_change_while_the_form_is_open[2025-11-25]"},
           "no envió ningún formulario"),
    Mutant("archiva_al_rechazar", "ejercicio2.py",
           CONFIRM_CHECK + "        return ok(\"No se archivó nada.\", {\"archived\": None, "
           "\"reason\": answer.action})\n"
           '    note = next((n for n in matches if n.id == answer.content.get("note_id")), None)\n',
           "    if answer.action == \"cancel\" or answer.content.get(\"confirm\") is False:\n"
           "        return ok(\"No se archivó nada.\", {\"archived\": None, "
           "\"reason\": answer.action})\n"
           "    note = next((n for n in matches if n.id == answer.content.get(\"note_id\", "
           "matches[0].id)), None)\n",
           both("ej2/test_decline_archives_nothing"), "tras decline cambió el disco"),
    Mutant("archiva_con_confirm_false", "ejercicio2.py", CONFIRM_CHECK,
           "    if answer.action != \"accept\":\n",
           both("ej2/test_unconfirmed_accept_archives_nothing"),
           "tras accept con confirm: false cambió el disco"),
    Mutant("busca_con_prefijo_fuera_de_las_roots", "ejercicio2.py", MATCHES,
           """    import os
    wanted, matches = title.strip().casefold(), []
    for root in ctx.roots.roots:  # BUG: any sibling folder whose name starts like the root
        parent = os.path.dirname(root.path)
        for name in sorted(os.listdir(parent)):
            folder = os.path.join(parent, name)
            if folder.startswith(root.path) and os.path.isdir(folder):
                for file in sorted(os.listdir(folder)):
                    import store
                    note = store.read_note(os.path.join(folder, file))
                    if note is not None and note.title.strip().casefold() == wanted:
                        matches.append(note)
""",
           both("ej2/test_titles_outside_the_roots_are_refused_without_asking")
           | both("ej2_hidden/test_note_in_a_subfolder_goes_to_its_roots_archive"),
           "Notes-evil no es una root"),
    Mutant("vuelve_a_preguntar", "ejercicio2.py", ASK_BLOCK,
           "    while True:  # BUG: asks again until it hears a yes\n"
           + "".join("    " + line for line in ASK_BLOCK.splitlines(keepends=True))
           + '        if answer.action == "accept" and answer.content.get("confirm") is True:\n'
           "            break\n",
           both("ej2/test_asks_only_once_per_call"), "exactamente una elicitación"),
    Mutant("copia_y_borra", "ejercicio2.py", ARCHIVE_CALL,
           """    import os
    import shutil
    folder = os.path.join(ctx.roots.root_of(current.path).path, ".archive")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(current.path))
    shutil.copyfile(current.path, target)  # BUG: copy, then delete
    os.remove(current.path)
""",
           both("ej2/test_archiving_moves_the_file_and_never_overwrites"), "mismo inodo"),
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
           "la carpeta .archive de su root (Otros)"),
    Mutant("compara_versiones_como_texto", "ejercicio3.py", GUARD_VERSION,
           GUARD_VERSION + "    if not sdk_version_text or sdk_version_text < \"1.23.1\":\n"
           "        return False\n"
           "    version = ((99, 0, 0), True) if sdk_version_text >= \"2.0.0\" else "
           "((1, 99, 0), True)\n",
           {"ej3/test_versions_compare_as_numbers",
            "ej3/test_missing_unreadable_or_prerelease_versions_mean_no",
            "ej3/test_negotiated_protocol_counts",
            "ej3_hidden/test_short_and_long_version_numbers",
            "ej3_hidden/test_other_prereleases",
            "ej3/test_without_url_mode_a_safe_fallback_that_asks_nothing[2025-11-25]"},
           "las versiones se comparan como números"),
    Mutant("ignora_las_pre_releases", "ejercicio3.py", FINAL,
           "    return tuple(int(part or 0) for part in match.groups()[:3]), True  # BUG\n",
           {"ej3/test_missing_unreadable_or_prerelease_versions_mean_no",
            "ej3/test_negotiated_protocol_counts", "ej3_hidden/test_other_prereleases"},
           "es una pre-release"),
    Mutant("admite_2026_con_sdk_1", "ejercicio3.py", STATELESS,
           "        pass  # BUG: any SDK that has URL mode, 1.x too\n",
           {"ej3/test_negotiated_protocol_counts", "ej3_hidden/test_other_prereleases",
            "ej3/test_without_url_mode_a_safe_fallback_that_asks_nothing[2026-07-28]"},
           "2026-07-28 necesita un SDK ≥ 2.0.0"),
    Mutant("ignora_el_protocolo", "ejercicio3.py", GUARD_PROTOCOL, "",
           {"ej3/test_missing_unreadable_or_prerelease_versions_mean_no",
            "ej3/test_negotiated_protocol_counts", "ej3_hidden/test_other_prereleases",
            "ej3_hidden/test_other_revisions_and_declarations",
            "ej3/test_without_url_mode_a_safe_fallback_that_asks_nothing[2026-07-28]"},
           "2025-06-18 no tiene modo URL"),
    Mutant("elicitation_vacia_cuenta_como_url", "ejercicio3.py", GUARD_CAPABILITY,
           "    return isinstance(client_capabilities.get(\"elicitation\"), dict)\n",
           {"ej3/test_url_mode_from_sdk_1_23_1", "ej3/test_versions_compare_as_numbers",
            "ej3/test_client_must_declare_url_elicitation",
            "ej3_hidden/test_short_and_long_version_numbers",
            "ej3_hidden/test_other_prereleases",
            "ej3_hidden/test_other_revisions_and_declarations", "ej3/lo_imprescindible"}
           | both("ej3/test_without_url_mode_a_safe_fallback_that_asks_nothing")
           | both("ej3_hidden/test_a_capability_in_another_shape_is_not_url_mode"),
           "el servidor no pudo enviar la URL"),
    # -- exercise 3's flow: one bug each ------------------------------------------------------
    Mutant("el_enlace_dice_quien_eres", "ejercicio3.py", FLOW_URL,
           '    url = ctx.page_url("/copias/conectar", flujo=flow_id, usuario=ctx.user)  # BUG\n',
           both("ej3/test_the_link_opens_the_servers_own_page_and_names_nobody"),
           "el enlace dice quién eres"),
    Mutant("identificador_con_contador", "ejercicio3.py", FLOW_IDS,
           "    flow_id, state = f\"flujo-{len(FLOWS) + 1}\", secrets.token_urlsafe(32)  # BUG\n",
           both("ej3/test_each_flow_has_its_own_unguessable_id"), "se podría adivinar"),
    Mutant("no_avisa_del_final", "ejercicio3.py", NOTIFY, "    pass  # BUG: no notice\n",
           {"ej3/test_completion_is_notified_only_in_2025_11_25[2025-11-25]"},
           "no llegó notifications/elicitation/complete"),
    Mutant("cualquier_navegador_completa", "ejercicio3.py", USABLE,
           "    return flow is not None and flow.status == \"pending\" \\\n"
           "        and time.monotonic() < flow.expires  # BUG: whoever is at the browser\n",
           both("ej3/test_another_persons_browser_cannot_complete_the_flow")
           | {"ej3/lo_imprescindible"}, "cuando otra persona abrió tu enlace"),
    Mutant("el_token_en_el_resultado", "ejercicio3.py", BACKUP_RESULT,
           '              {"status": "done", "notes": copied, "token": TOKENS[ctx.user]})  # BUG\n',
           both("ej3/test_no_token_code_or_state_reaches_the_client")
           | {"ej3/lo_imprescindible"}, "la credencial se queda en el servidor"),
    Mutant("decline_no_anula_el_enlace", "ejercicio3.py", RETIRE,
           "        pass  # BUG: the link stays valid\n",
           {"ej3/test_decline_and_cancel_retire_the_link[2026-07-28]", "ej3/lo_imprescindible"},
           "alguien abrió el enlace y autorizó"),
    Mutant("el_flujo_no_caduca", "ejercicio3.py", USABLE,
           "    return flow is not None and flow.status == \"pending\" and flow.user == user"
           "  # BUG\n",
           both("ej3_hidden/test_a_link_and_its_state_expire")
           | {"ej3/lo_imprescindible_oculto"}, "caducar"),
    Mutant("compara_rutas_con_startswith", "ejercicio4.py", REACTION,
           "        if not any(handle.path.startswith(root.path) "
           "for root in change.new_roots.roots):\n"
           "            change.revoke(handle)\n",
           {"ej4/test_a_sibling_sharing_a_prefix_is_another_root"},
           "Notes no contiene a Notes-evil"),
    Mutant("usa_la_ruta_de_la_uri", "ejercicio4.py", REACTION,
           "        import os\n"
           "        from roots import is_within, uri_to_path\n"
           "        if not any(is_within(os.path.realpath(handle.path), uri_to_path(root.uri))\n"
           "                   for root in change.new_roots.roots):  # BUG: the URI, not real\n"
           "            change.revoke(handle)\n",
           {"ej4_hidden/test_root_through_a_symlinked_folder"},
           "algún handle que seguía dentro de las roots dejó de funcionar"),
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
]
