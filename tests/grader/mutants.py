"""The catalogue of wrong solutions: the reference with exactly one bug each.

Each mutant names the reference file it changes, the exact text it replaces (which must occur
once) and the grading tests it must lose; every other test must still give full marks.
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


ARCHIVE_CALL = ("            target = store.archive(current, root.path)  "
                "# un solo movimiento, sin sobrescribir\n")
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
                    "# elicitation.url declared (code/elicitation.py)\n")
REACTION = """        if not change.new_roots.contains(os.path.realpath(handle.path)):
            change.revoke(handle, "su nota quedó fuera de las roots")
"""

MUTANTS = [
    Mutant("archiva_sin_preguntar_si_hay_una", "ejercicio2.py", ASK,
           """    if len(matches) == 1:
        with ctx.hold() as roots:
            store.archive(matches[0], roots.root_of(matches[0].path).path)
        return ok("Archivada.", {"archived": matches[0].summary()})
""" + ASK,
           both("ej2/test_asks_to_confirm_even_with_one_match")
           | both("ej2/test_archives_single_match_after_confirmation")),
    Mutant("archiva_al_rechazar", "ejercicio2.py",
           CONFIRM_CHECK + "        return ok(\"No se archivó nada.\", {\"archived\": None, "
           "\"reason\": answer.action})\n"
           '    note = next((n for n in matches if n.id == answer.content.get("note_id")), None)\n',
           "    if answer.action == \"cancel\" or answer.content.get(\"confirm\") is False:\n"
           "        return ok(\"No se archivó nada.\", {\"archived\": None, "
           "\"reason\": answer.action})\n"
           "    note = next((n for n in matches if n.id == answer.content.get(\"note_id\", "
           "matches[0].id)), None)\n",
           both("ej2/test_decline_archives_nothing")),
    Mutant("archiva_con_confirm_false", "ejercicio2.py", CONFIRM_CHECK,
           "    if answer.action != \"accept\":\n",
           both("ej2/test_unconfirmed_accept_archives_nothing")),
    Mutant("busca_con_prefijo_fuera_de_las_roots", "ejercicio2.py",
           "    matches = ctx.find_notes(title)  # solo notas dentro de las roots\n",
           """    import os
    wanted, matches = title.strip().casefold(), []
    for root in ctx.roots.roots:  # BUG: any sibling folder whose name starts like the root
        parent = os.path.dirname(root.path)
        for name in sorted(os.listdir(parent)):
            folder = os.path.join(parent, name)
            if folder.startswith(root.path) and os.path.isdir(folder):
                for file in sorted(os.listdir(folder)):
                    note = store.read_note(os.path.join(folder, file))
                    if note is not None and note.title.strip().casefold() == wanted:
                        matches.append(note)
""",
           both("ej2/test_titles_outside_the_roots_are_refused_without_asking")),
    Mutant("vuelve_a_preguntar", "ejercicio2.py", ASK_BLOCK,
           "    while True:  # BUG: asks again until it hears a yes\n"
           + "".join("    " + line for line in ASK_BLOCK.splitlines(keepends=True))
           + '        if answer.action == "accept" and answer.content.get("confirm") is True:\n'
           "            break\n",
           both("ej2/test_asks_only_once_per_call")),
    Mutant("copia_y_borra", "ejercicio2.py", ARCHIVE_CALL,
           """            import os
            import shutil
            folder = os.path.join(root.path, ".archive")
            os.makedirs(folder, exist_ok=True)
            target = os.path.join(folder, os.path.basename(current.path))
            shutil.copyfile(current.path, target)  # BUG: copy, then delete
            os.remove(current.path)
""",
           both("ej2/test_archiving_moves_the_file_and_never_overwrites")),
    Mutant("compara_versiones_como_texto", "ejercicio3.py", GUARD_VERSION,
           GUARD_VERSION + "    if not sdk_version_text or sdk_version_text < \"1.23.1\":\n"
           "        return False\n"
           "    version = ((99, 0, 0), True) if sdk_version_text >= \"2.0.0\" else "
           "((1, 99, 0), True)\n",
           {"ej3/test_versions_compare_as_numbers",
            "ej3/test_missing_unreadable_or_prerelease_versions_mean_no",
            "ej3/test_negotiated_protocol_counts"}),
    Mutant("ignora_el_protocolo", "ejercicio3.py", GUARD_PROTOCOL, "",
           {"ej3/test_negotiated_protocol_counts"}),
    Mutant("elicitation_vacia_cuenta_como_url", "ejercicio3.py", GUARD_CAPABILITY,
           "    return isinstance(client_capabilities.get(\"elicitation\"), dict)\n",
           {"ej3/test_client_must_declare_url_elicitation"}),
    Mutant("compara_rutas_con_startswith", "ejercicio4.py", REACTION,
           "        if not any(handle.path.startswith(root.path) "
           "for root in change.new_roots.roots):\n"
           "            change.revoke(handle)\n",
           {"ej4/test_a_sibling_sharing_a_prefix_is_another_root"}),
    Mutant("revoca_todos", "ejercicio4.py", REACTION, "        change.revoke(handle)\n",
           {"ej4/test_handles_under_a_removed_root_stop_working",  # the server's default: gated
            "ej4/test_handles_inside_the_new_roots_keep_working",
            "ej4/test_revocation_is_immediate",
            "ej4/test_revocation_changes_nothing_on_disk",
            "ej4/test_a_sibling_sharing_a_prefix_is_another_root",
            "ej4/test_concurrent_calls_never_see_a_half_swapped_boundary"}),
    Mutant("no_revoca_ninguno", "ejercicio4.py", REACTION, "        pass\n",
           {"ej4/test_handles_under_a_removed_root_stop_working",
            "ej4/test_handles_inside_the_new_roots_keep_working",
            "ej4/test_revocation_is_immediate",
            "ej4/test_revocation_changes_nothing_on_disk",
            "ej4/test_a_sibling_sharing_a_prefix_is_another_root",
            "ej4/test_concurrent_calls_never_see_a_half_swapped_boundary"}),
    Mutant("revoca_mas_tarde_en_un_hilo", "ejercicio4.py", REACTION,
           """        if not change.new_roots.contains(os.path.realpath(handle.path)):
            import threading

            def later(handle=handle):  # BUG: the old boundary stays open a while
                handle.revoked = "tarde"
            threading.Timer(0.5, later).start()
""",
           {"ej4/test_revocation_is_immediate"}),
]
