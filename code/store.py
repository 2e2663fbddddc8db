"""The notes on disk, as a solution uses them: `store.scan`, `store.Note`, `store.StoreError`...

The module itself is notes/store.py, in its layer; this name, at the top of code/, is the
learner's: `import store` and `from store import ...` give its public names, the very same
objects. What the server keeps in that module (its limits, its state) is set on `notes.store`.
"""

from notes.store import *  # noqa: F403
