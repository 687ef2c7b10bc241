"""Session 18's held-out campaign (`held18_*`, tests/litert_held18_cases.py) against the wheel:

    python -m tests.litert_held18              # the per-family table (docs/litert-heap.md)
    python -m tests.litert_held18 --threads    # 2 threads: litert_heap_held18_threads.json

The 1-thread figures are tests/data/litert_heap_held18.json's (`python -m
tests.litert_heap_measure --cache tests/data/litert_heap_held18.json --only held18_` remakes
them on the AMD EPYC). Per family and moment (after setup, after the first invoke, peak; builtin
and XNNPACK): exact (within 1% and never under, but for the allowances), labelled bounds (a
part not replayed, or more than 1% over), under; the 2-thread unders; and whether every arena
offset is the wheel's (tests/litert_random_graphs.disagreements_of)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tests.litert_heap_measure import REPO_ROOT, cache_document, tracer
from tests.litert_held15 import campaign_table
from tests.litert_held18_after import NAMES as AFTER
from tests.litert_held18_after import held18b_case
from tests.litert_held18_cases import FAMILIES, NAMES, held18_case

DATA = REPO_ROOT / "tests/data/litert_heap_held18.json"
THREADS = 2
THREADS_DATA = REPO_ROOT / "tests/data/litert_heap_held18_threads.json"
THREADS_COMMAND = "python -m tests.litert_held18 --threads"


def case(family: str, n: int) -> bytes:
    """A campaign model's bytes by family and number (the later draws, `held18b`, included)."""
    return held18b_case(n) if family == "held18b" else held18_case(family, n)


def measure_threads(only: str = "") -> None:
    """Every campaign model under both resolvers at THREADS threads → THREADS_DATA (the driver
    of tests/litert_heap_threads.py)."""
    from tests.litert_heap_threads import measure

    document = cache_document(THREADS_DATA, THREADS_COMMAND)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name, family, n in (*NAMES, *AFTER):
            if only not in name:
                continue
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
    parser.add_argument("--only", default="", help="with --threads: names containing this")
    arguments = parser.parse_args(argv)
    if arguments.threads:
        measure_threads(arguments.only)
        return 0
    threads = json.loads(THREADS_DATA.read_text())["models"] if THREADS_DATA.is_file() else None
    with tempfile.TemporaryDirectory() as scratch:
        lines = campaign_table(
            Path(scratch),
            (*FAMILIES, "held18b"),
            (*NAMES, *AFTER),
            case,
            threads,
            cache_file=DATA,
            thread_count=THREADS,
        )
        for line in lines:
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
