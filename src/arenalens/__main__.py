"""`python -m arenalens`: the same as the `arenalens` command."""

import sys

from arenalens.cli import main

sys.exit(main())
