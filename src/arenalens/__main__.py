"""`python -m arenalens`: the same as the `arenalens` command."""

from arenalens.cli import console_main

# The guard keeps batch workers (forkserver / spawn) from running the CLI when they import this.
if __name__ == "__main__":
    console_main()
