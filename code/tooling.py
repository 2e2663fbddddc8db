"""What a tool is, as a solution uses it: `Tool`, `ok`, `ToolError`, `URLElicitationRequired`...

The module itself is core/tooling.py; this name, at the top of code/, is the learner's: `import
tooling` gives that very module (the same object, so what a test or a solution sets on it is set
on the one the server uses).
"""

import sys

from core import tooling

sys.modules[__name__] = tooling
