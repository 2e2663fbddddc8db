"""Elicitation helpers, as a solution uses them: `choice`, `supports_form`, `supports_url`...

The module itself is core/elicitation.py; this name, at the top of code/, is the learner's:
`import elicitation` gives that very module (the same object, so what a test or a solution sets
on it is set on the one the server uses).
"""

import sys

from core import elicitation

sys.modules[__name__] = elicitation
