"""Nube de Copias, exercise 3's provider, as a solution uses it: `Provider`, `ProviderError`...

The module itself is urlflow/nube_copias.py, in its layer; this name, at the top of code/, is
the learner's: `import nube_copias` and `from nube_copias import ...` give its public names, the
very same objects. What the server keeps in that module (its limits, its state) is set on
`urlflow.nube_copias`.
"""

from urlflow.nube_copias import *  # noqa: F403
