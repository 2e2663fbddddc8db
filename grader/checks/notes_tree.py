"""A test's notes on disk: a private folder tree laid out and read back by the grader.

`lab.folders(...)` makes a `Tree` in the host's data area; `tree.add(...)` writes a note,
`tree.snapshot()` reads back what is there now (`folders=` also collects the folders, so an
empty one is seen), `tree.move(...)`, `tree.link(...)`, `tree.unlink(...)` and `tree.delete(...)`
change the layout while a server runs (a folder moved or swapped for a link with a form or a
handle open, a note deleted with its handle open), and
`describe_changes(before, after)` says in Spanish what differs. Both directions go only
through the host's data folder (in the sandbox, grader.boundary: descriptors, no links, no
FIFOs, caps); a planted link or special file is a `Broken` test and a finding in the report.

A tree is its test's alone: its folder has a random name (nothing in a root's path says which
test is running), belongs to the test's identity (with private uids, no other test's server
gets in: 0700) and is removed when the test ends (`Lab.close`), so nothing written in it is
there for a later test. Reports name what is inside it relative to it ("Notas/a.md").

Deliberate simplifications: notes are written in the lesson's own format (store.render); a
snapshot compares contents by hash and inode, not timestamps.
"""

import secrets

import store
from grader.checks.grading import Broken
from grader.errors import Full, Refused
from roots import path_to_uri


class Tree:
    """A test's private folder in the host's data area: notes written by the grader, read back
    by it, both only through the host's data folder (in the sandbox, grader.boundary: see there
    why nothing can redirect them)."""

    def __init__(self, lab):
        self.lab = lab
        host = lab.state.host
        self.name = secrets.token_hex(8)
        self.inner = f"{host.inner('data')}/{self.name}"
        self.folders = {}
        self._retired = []  # folders moved away (closed with the tree)
        self.folders[""] = self._guarded(lambda: host.data.make_dir(
            self.name, owner=lab.identity, private=True, label=""))
        self.ids = {}  # note id -> relative path

    def _guarded(self, action):
        try:
            return action()
        except Refused as exc:
            self.lab.state.dirty = True
            if not isinstance(exc, Full):
                self.lab.state.find(f"en la carpeta de datos del servidor: {exc}")
            raise Broken(f"en la carpeta de datos de tu servidor: {exc}") from None

    def _folder(self, relative):
        if relative not in self.folders:
            parent, _, name = relative.rpartition("/")
            self.folders[relative] = self._guarded(
                lambda: self._folder(parent).make_dir(name))
        return self.folders[relative]

    def add(self, folder, filename, note_id, title, created="2025-03-02", body=None):
        text = store.render(note_id, title, created, body or f"Cuerpo de {note_id}.\n")
        target = self._folder(folder)
        self._guarded(lambda: target.write_file(filename, text.encode("utf-8")))
        self.ids[note_id] = f"{folder}/{filename}"
        return self

    def link(self, name, target, anywhere=False):
        """A symbolic link `name` -> `target`, side by side in one folder ("Notes", or
        "Personal/cartas" -> "fotos": the link Personal/cartas to the folder Personal/fotos);
        with `anywhere`, `target` is a folder of this tree wherever it is ("Papelera/cartas"),
        linked by the absolute path the server sees."""
        parent, _, name = name.rpartition("/")
        target = f"{self.inner}/{target}" if anywhere else target
        self._guarded(lambda: self._folder(parent).make_link(name, target))
        return self

    def unlink(self, name):
        """Remove a link this tree made (never what it points to)."""
        parent, _, name = name.rpartition("/")
        self._guarded(lambda: self._folder(parent).remove_link(name))
        return self

    def delete(self, path):
        """Delete the note file `path` ("Personal/p.md"): a server holding it open keeps a
        descriptor on a file that has no name any more."""
        parent, _, name = path.rpartition("/")
        self._guarded(lambda: self._folder(parent).remove(name))
        self.ids = {note: where for note, where in self.ids.items() if where != path}
        return self

    def move(self, source, destination):
        """Move the folder or file `source` to `destination` (relative paths; the destination's
        folder is made when missing, the destination itself must not exist)."""
        from_parent, _, from_name = source.rpartition("/")
        to_parent, _, to_name = destination.rpartition("/")
        origin, target = self._folder(from_parent), self._folder(to_parent)
        self._guarded(lambda: origin.move(from_name, target, to_name))
        for relative in [r for r in self.folders if r == source or r.startswith(source + "/")]:
            self._retired.append(self.folders.pop(relative))  # it has another name now
        self.ids = {note: (destination + path[len(source):] if path.startswith(source + "/")
                           else path) for note, path in self.ids.items()}
        return self

    def uri(self, folder):
        return path_to_uri(f"{self.inner}/{folder}")

    def snapshot(self, folders=None):
        """{relative path: (sha256, inode)} of every file below this folder; with a set as
        `folders`, every folder below is added to it too (an empty folder holds no file)."""
        return self._guarded(lambda: self.folders[""].snapshot(folders=folders))

    def close(self):
        for folder in [*self.folders.values(), *self._retired]:
            folder.close()
        self.folders, self._retired = {}, []


def describe_changes(before, after):
    """Spanish summary of what differs between two snapshots ('' when nothing does)."""
    parts = []
    for path in sorted(set(before) - set(after)):
        parts.append(f"desapareció {path}")
    for path in sorted(set(after) - set(before)):
        parts.append(f"apareció {path}")
    for path in sorted(set(before) & set(after)):
        if before[path][0] != after[path][0]:
            parts.append(f"cambió el contenido de {path}")
    return "; ".join(parts)
