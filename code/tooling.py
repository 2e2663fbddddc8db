"""What a tool is, as a solution uses it: `Tool`, `ok`, `ToolError`, `URLElicitationRequired`...

The module itself is core/tooling.py, in its layer; this name, at the top of code/, is the
learner's: `import tooling` and `from tooling import ...` give its public names, the very same
objects. What the server keeps in that module (its limits, its state) is set on `core.tooling`.
"""

from core.tooling import *  # noqa: F403
