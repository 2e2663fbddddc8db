"""Roots, as the notebooks use them: `RootSet`, `RootError`, `uri_to_path`...

The module itself is notes/roots.py, in its layer; this name, at the top of code/, is the
learner's: `import roots` and `from roots import ...` give its public names, the very same
objects. What the server keeps in that module (its limits, its state) is set on `notes.roots`.
"""

from notes.roots import *  # noqa: F403
