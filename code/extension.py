"""The extension point, as a solution imports it: `from extension import Extension`.

The module itself is lesson/extension.py; this name, at the top of code/, is the learner's:
`import extension` gives that very module (the same object, so what a test or a solution sets on
it is set on the one the server uses).
"""

import sys

from lesson import extension

sys.modules[__name__] = extension
