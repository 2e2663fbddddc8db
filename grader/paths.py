"""Where the grader's own files are. (code/ is put on sys.path by grader/__init__.py.)

The grader imports code/client/sync_client.py (its MCP client, with client_core.py and
simulated_user.py) and a few pure helpers (store.render, elicitation.check_schema,
url_mode.url_problems). It never imports a learner's files.
"""

import os

GRADER_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(GRADER_DIR)
CODE_DIR = os.path.join(REPO_DIR, "code")
CHECKS_DIR = os.path.join(GRADER_DIR, "checks")
REFERENCE_DIR = os.path.join(GRADER_DIR, "reference")
