"""`python -m arenalens`: the same as the `arenalens` command."""

import sys

from arenalens.cli import main

# The guard keeps batch workers (forkserver / spawn) from running the CLI when they import this.
if __name__ == "__main__":
    sys.exit(main())
