"""The sealed requestState, as the challenge uses it: `Sealer`, `Binding`, `one_time`...

The module itself is core/request_state.py; this name, at the top of code/, is the learner's:
`import request_state` gives that very module (the same object, so what a test or a solution
sets on it is set on the one the server uses).
"""

import sys

from core import request_state

sys.modules[__name__] = request_state
