"""Session 17's held-out campaign (`held17_*`, tests/litert_held17_cases.py) against the wheel:

    python -m tests.litert_held17              # the per-family table (docs/litert-heap.md)
    python -m tests.litert_held17 --threads    # 2 threads: litert_heap_held17_threads.json

The 1-thread figures are tests/data/litert_heap_avx2.json's (`python -m tests.litert_heap_measure
--cache tests/data/litert_heap_avx2.json --only held17_` remakes them on the AMD EPYC; `held17b_`,
`held17c_` and `held17d_` the cases drawn after the fixes the campaign found). Per family and moment
(after setup, after the first invoke, peak; builtin and XNNPACK): exact (within 1% and never
under, but for the allowances), labelled bounds (a part not replayed: never under), under; and
whether every arena offset is the wheel's (tests/litert_random_graphs.disagreements_of)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tests.litert_heap_measure import REPO_ROOT, cache_document, tracer
from tests.litert_held15 import campaign_table
from tests.litert_held17_after import (
    INTEGER_INT4_NAMES,
    LATE_NAMES,
    SIXTEEN_NAMES,
    integer_int4_case,
    late_case,
    sixteen_case,
)
from tests.litert_held17_cases import FAMILIES, NAMES, held17_case

# The cases drawn after the campaign's fixes, as families of their own.
AFTER = (*INTEGER_INT4_NAMES, *SIXTEEN_NAMES, *LATE_NAMES)
THREADS = 2
THREADS_DATA = REPO_ROOT / "tests/data/litert_heap_held17_threads.json"
THREADS_COMMAND = "python -m tests.litert_held17 --threads"


def case(family: str, n: int) -> bytes:
    """A campaign model's bytes by family and number (the later draws included)."""
    if family == "integer_int4":
        return integer_int4_case(n)
    if family == "sixteen":
        return sixteen_case(n)
    if family == "late":
        return late_case(n)
    return held17_case(family, n)


def measure_threads() -> None:
    """Every campaign model under both resolvers at THREADS threads → THREADS_DATA (the driver
    of tests/litert_heap_threads.py)."""
    from tests.litert_heap_threads import measure

    document = cache_document(THREADS_DATA, THREADS_COMMAND)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name, family, n in (*NAMES, *AFTER):
            path = folder / f"{name}.tflite"
            path.write_bytes(case(family, n))
            entry = {mode: measure(library, path, mode, THREADS) for mode in ("builtin", "xnnpack")}
            document["models"][path.name] = entry
            print(path.name, json.dumps(entry), flush=True)
    document["models"] = dict(sorted(document["models"].items()))
    THREADS_DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", action="store_true", help=f"measure at {THREADS} threads")
    if parser.parse_args(argv).threads:
        measure_threads()
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        families = (*FAMILIES, "integer_int4", "sixteen", "late")
        for line in campaign_table(Path(scratch), families, (*NAMES, *AFTER), case):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
