"""The notes server, as a solution imports from it: `ok`, `ToolError`, `URLElicitationRequired`...

The module itself is lesson/server.py; this name, at the top of code/, is the learner's: `import
server` gives that very module (the same object, so what a test or a solution sets on it is set
on the one the server uses).
"""

import sys

from lesson import server

sys.modules[__name__] = server
