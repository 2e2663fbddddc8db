"""`python -m grader ...`: see grader/cli.py and grader/README.md."""

import sys

from grader.cli import main

sys.exit(main())
