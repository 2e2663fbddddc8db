"""Elicitation helpers, as a solution uses them: `choice`, `supports_form`, `supports_url`...

The module itself is core/elicitation.py, in its layer; this name, at the top of code/, is the
learner's: `import elicitation` and `from elicitation import ...` give its public names, the
very same objects. What the server keeps in that module (its limits, its state) is set on
`core.elicitation`.
"""

from core.elicitation import *  # noqa: F403
