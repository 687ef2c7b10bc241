"""Rewrite every golden output from the current code: `python -m tests.golden.regenerate`."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests import conftest  # noqa: F401 - the suite's pins (ARENALENS_ISA, the CPU's caches)
from tests.golden.cases import DATA, golden_cases, run_case


def main() -> int:
    """Regenerate all stored outputs; print how many changed."""
    DATA.mkdir(exist_ok=True)
    changed = 0
    with tempfile.TemporaryDirectory() as folder:
        for case in golden_cases():
            text = run_case(case, Path(folder))
            if not case.path.exists() or case.path.read_text() != text:
                case.path.write_text(text)
                changed += 1
                print(f"changed: {case.name}")
    print(f"{changed} of {len(golden_cases())} golden outputs changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
