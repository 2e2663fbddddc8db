"""The notes server, as a solution imports from it: `ok`, `ToolError`, `URLElicitationRequired`...

The module itself is lesson/server.py, in its layer; this name, at the top of code/, is the
learner's: `import server` and `from server import ...` give its public names, the very same
objects. What the server keeps in that module (its limits, its state) is set on `lesson.server`.
"""

from lesson.server import *  # noqa: F403
