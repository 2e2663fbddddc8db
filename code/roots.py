"""Roots, as the notebooks use them: `RootSet`, `RootError`, `uri_to_path`...

The module itself is notes/roots.py; this name, at the top of code/, is the learner's: `import
roots` gives that very module (the same object, so what a test or a solution sets on it is set
on the one the server uses).
"""

import sys

from notes import roots

sys.modules[__name__] = roots
