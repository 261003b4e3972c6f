"""Entry point for `python -m textstat`."""

import sys

from textstat.cli import main

sys.exit(main())
