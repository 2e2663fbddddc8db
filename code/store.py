"""The notes on disk, as a solution uses them: `store.scan`, `store.Note`, `store.StoreError`...

The module itself is notes/store.py; this name, at the top of code/, is the learner's: `import
store` gives that very module (the same object, so what a test or a solution sets on it is set
on the one the server uses).
"""

import sys

from notes import store

sys.modules[__name__] = store
