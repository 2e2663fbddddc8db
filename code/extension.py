"""The extension point, as a solution imports it: `from extension import Extension`.

The module itself is lesson/extension.py, in its layer; this name, at the top of code/, is the
learner's: `import extension` and `from extension import ...` give its public names, the very
same objects. What the server keeps in that module (its limits, its state) is set on
`lesson.extension`.
"""

from lesson.extension import *  # noqa: F403
