"""The official conformance suite's tests (helpers in conformance_support.py, which also puts
code/ and tests/notes_server on sys.path)."""

import conformance_support  # noqa: F401
