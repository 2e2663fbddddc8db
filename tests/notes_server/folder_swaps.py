"""The house of tests/notes_server/test_folder_swaps_are_refused.py and
test_folder_swaps_reference.py: two "dup" notes in a shared folder, copies of them outside the
roots, and the swap of a folder for a link while a form is open."""

from pathlib import Path

PICK_T1 = {"action": "accept", "content": {"note_id": "note-t1", "confirm": True}}
REPLACED = "ya no es la que aceptaste"


def note(path, note_id, title="dup", body="cuerpo"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: {note_id}\ntitle: {title}\ncreated: 2025-01-01\n\n{body}\n")


def make_house(tree):
    """Notas/ (shared) with two "dup" notes at `where`; Fuera/ (never shared) with a copy of
    each under the same name and id but another body, and a canary."""
    house = tree
    house.outside = tree.base / "Fuera"
    for folder in (tree.notes, tree.notes / "sub"):
        for name, note_id in (("t1.md", "note-t1"), ("t2.md", "note-t2")):
            note(folder / name, note_id if folder == tree.notes else note_id + "-sub")
            note(house.outside / name, note_id if folder == tree.notes else note_id + "-sub",
                 body="FUERA: no tocar")
    (house.outside / "canario.txt").write_text("canario")
    return house


def outside(house):
    return {str(p.relative_to(house.outside)): p.read_bytes()
            for p in sorted(house.outside.rglob("*")) if p.is_file()}


def swap(folder: Path, target: Path):
    """Rename `folder` away and put a link to `target` in its place."""
    folder.rename(folder.with_name(folder.name + "-movida"))
    folder.symlink_to(target)


def swapping(folder, target, answer):
    def during_the_form(params):
        swap(folder, target)
        return answer
    return during_the_form


def kept(house, *names):
    """The user's own notes, wherever the swap moved their folder."""
    return {name: (house.base / name).read_bytes() for name in names}
