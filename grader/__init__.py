"""The autograder for the lesson "Roots y Elicitación": `python -m grader PATH...`.

It turns each submission into a notes server running in a sandbox, talks MCP to it as a
scripted client, and grades what comes over the wire and what happens on disk. See
grader/README.md.

Importing the package puts code/ (the grader's trusted copy of the server code: its MCP client
and a few pure helpers) on sys.path, so every grader module can `import wire` or
`from client import Client` whatever order its imports are sorted in.
"""

import os as _os
import sys as _sys

_CODE_DIR = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), "code")
if _CODE_DIR not in _sys.path:
    _sys.path.insert(0, _CODE_DIR)
