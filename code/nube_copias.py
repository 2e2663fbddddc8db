"""Nube de Copias, exercise 3's provider, as a solution uses it: `Provider`, `ProviderError`...

The module itself is urlflow/nube_copias.py; this name, at the top of code/, is the learner's:
`import nube_copias` gives that very module (the same object, so what a test or a solution sets
on it is set on the one the server uses).
"""

import sys

from urlflow import nube_copias

sys.modules[__name__] = nube_copias
