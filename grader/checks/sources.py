"""What the grader reads in a submission's files as text, before any of its servers starts.

Some checks need facts that only the source shows: the challenge (reto.py) must define its own
sealer and compare digests with `hmac.compare_digest`, and an attacker who has the code knows
its constants. `read(files)` parses each file that has a reader (`READERS`: file -> function of
its text, or of None when the submission did not bring it) and returns {file: facts}; the
runner keeps that in `state.sources`, and the exercise's checks read their own entry.

Nothing here runs, imports or evaluates the learner's code: the readers use `ast.parse` only.

Deliberate simplifications: one reader per file; a file with no reader is not read here.
"""

from grader.checks import reto_source

READERS = {"reto.py": reto_source.source_facts}


def read(files):
    """{file: what its reader found} for every file with a reader (`files`: name -> text)."""
    return {name: reader(files.get(name)) for name, reader in READERS.items()}
