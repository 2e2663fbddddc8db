"""The sealed requestState, as the challenge uses it: `Sealer`, `Binding`, `one_time`...

The module itself is core/request_state.py, in its layer; this name, at the top of code/, is the
learner's: `import request_state` and `from request_state import ...` give its public names, the
very same objects. What the server keeps in that module (its limits, its state) is set on
`core.request_state`.
"""

from core.request_state import *  # noqa: F403
