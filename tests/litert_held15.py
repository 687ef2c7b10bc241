"""Session 15's held-out campaign (`held15_*`, tests/litert_held15_cases.py) against the wheel:

    python -m tests.litert_held15              # the per-family table (docs/litert-heap.md)
    python -m tests.litert_held15 --threads    # 4 threads: litert_heap_held15_threads.json

The 1-thread figures are tests/data/litert_heap_avx2.json's (`python -m tests.litert_heap_measure
--cache tests/data/litert_heap_avx2.json --only held15_` remakes them on the AMD EPYC); the
4-thread ones this module's `--threads` (tests/litert_heap_threads.py's driver, both resolvers).
Per family and moment (after setup, after the first invoke, peak; builtin and XNNPACK): how many
figures are exact (within 1% and never under, but for the allowances), labelled bounds (a part
not replayed: never under, may be more than 1% over), under; and whether every arena offset is
the wheel's (tests/litert_random_graphs.disagreements_of). The wheel runs on zeros: where a model
input picks a way (heap_ways), the way all-zero inputs take is the one compared."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import REPO_ROOT, cache_document, tracer
from tests.litert_held15_cases import FAMILIES, NAMES, held15_case

AVX2 = REPO_ROOT / "tests/data/litert_heap_avx2.json"
THREADS_DATA = REPO_ROOT / "tests/data/litert_heap_held15_threads.json"
THREADS_COMMAND = "python -m tests.litert_held15 --threads"
THREADS = 4
MODES = {"builtin": "none", "xnnpack": "xnnpack"}
MOMENTS = (("after_allocate", "after_setup", ("setup",)),
           ("after_invoke", "after_first_invoke", ("setup", "first_invoke")),
           ("peak", "peak", ("setup", "first_invoke", "transient")))  # fmt: skip


def verdicts(path: Path, measured: dict[str, Any], threads: int = 1) -> dict[str, list[str]]:
    """A model and its measured figures → per resolver, per moment: 'exact', 'bound' (labelled,
    never under), 'over' (exact parts, more than 1% over), 'under', 'error' (the wheel's) or
    'unsized' (arenalens gives no figure)."""
    from arenalens.pipeline import analyze
    from arenalens.runtimes.litert.heap import interpreter_heap
    from arenalens.runtimes.litert.isa import X86_64_V3_ZEN

    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    found: dict[str, list[str]] = {}
    for mode, delegate in MODES.items():
        real = measured[mode]
        if "error" in real:
            found[mode] = ["error"] * 3
            continue
        try:
            heap = interpreter_heap(
                analysis.model, sizes, delegate=delegate, threads=threads, isa=X86_64_V3_ZEN
            )
        except ValueError:
            found[mode] = ["unsized"] * 3
            continue
        row = []
        # The wheel ran on zeros: the way all-zero inputs take, where a model input picks one
        # (heap_ways: an int4 filter's copy EvalHybridDense makes only for a non-zero input).
        measured_way = next((way for way in heap.ways if way.zero_inputs), heap)
        for key, attribute, phases in MOMENTS:
            figure, wheel = getattr(measured_way, attribute), real[key]
            parts = [part for part in measured_way.parts if part.phase in phases]
            allowances = sum(part.nbytes for part in parts if part.allowance)
            exact = all(part.exact for part in parts if not part.allowance)
            if figure < wheel:
                row.append(f"under {figure - wheel}")
            elif figure <= wheel * 1.01 + allowances:
                row.append("exact" if exact else "bound")
            else:
                row.append("over" if exact else "bound")
        found[mode] = row
    return found


def offsets_agree(path: Path) -> bool | None:
    """Whether every arena offset is the wheel's (None: the wheel refuses the model)."""
    from tests.litert_random_graphs import disagreements_of

    rows = disagreements_of(path)
    return None if rows is None else not rows


def table(folder: Path) -> list[str]:
    """The campaign's table (markdown rows, one per family), from the cached measurements:
    per resolver the count of exact / labelled-bound / under figures over the three moments
    and six models, arenalens ÷ the wheel's range, 4 threads' under count (of the figures
    arenalens gives), and the models whose every arena offset is the wheel's."""
    threads = json.loads(THREADS_DATA.read_text())["models"] if THREADS_DATA.is_file() else {}
    return campaign_table(folder, FAMILIES, NAMES, held15_case, threads)


def campaign_table(
    folder: Path,
    families: Sequence[str],
    names: Sequence[tuple[str, str, int]],
    case: Callable[[str, int], bytes],
    threads: dict[str, Any] | None = None,
    *,
    cache_file: Path = AVX2,
    thread_count: int = THREADS,
) -> list[str]:
    """A held-out campaign's table over its `families`: `names` are (model, family, n), `case`
    makes a model's bytes from (family, n), `cache_file` holds their 1-thread figures; the
    thread_count column where `threads` holds measurements at that many threads, else none."""
    import os

    from arenalens.runtimes.litert import eigen_blocking

    epyc = eigen_blocking.ZEN_EPYC
    os.environ[eigen_blocking.CACHES_VARIABLE] = f"{epyc.l1},{epyc.l2},{epyc.l3}"
    cache = json.loads(cache_file.read_text())["models"]
    head = "| family | builtin exact / bound / under | builtin ÷ wheel | XNNPACK exact / bound / "
    head += "under | XNNPACK ÷ wheel |"
    head += f" {thread_count} threads under (of sized) |" if threads else ""
    lines = [head + " arena offsets exact |", "|---" * (7 if threads else 6) + "|"]
    for family in families:
        counts = {mode: {"exact": 0, "bound": 0, "under": 0} for mode in MODES}
        ratios: dict[str, list[float]] = {mode: [] for mode in MODES}
        threaded = [0, 0]
        offsets = [0, 0]
        for name, fam, n in names:
            if fam != family or f"{name}.tflite" not in cache:
                continue
            path = folder / f"{name}.tflite"
            path.write_bytes(case(family, n))
            measured = cache[f"{name}.tflite"]
            for mode, row in verdicts(path, measured).items():
                for verdict in row:
                    key = {"over": "bound"}.get(verdict.split()[0], verdict.split()[0])
                    counts[mode][key] = counts[mode].get(key, 0) + 1
                if row[0] not in ("unsized", "error"):
                    ratios[mode] += _ratios(path, measured[mode], MODES[mode])
            if threads and f"{name}.tflite" in threads:
                for row in verdicts(path, threads[f"{name}.tflite"], thread_count).values():
                    sized = [v for v in row if v not in ("unsized", "error")]
                    threaded[0] += sum(v.startswith("under") for v in sized)
                    threaded[1] += len(sized)
            agree = offsets_agree(path)
            offsets[0 if agree else 1] += agree is not None
        cells = [family]
        for mode in MODES:
            tally = counts[mode]
            cells.append(f"{tally['exact']} / {tally['bound']} / {tally['under']}")
            found = ratios[mode]
            cells.append(f"{min(found):.4f}-{max(found):.4f}" if found else "-")
        if threads:
            cells.append(f"{threaded[0]} of {threaded[1]}")
        cells.append(f"{offsets[0]} of {sum(offsets)}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _ratios(path: Path, real: dict[str, int], delegate: str) -> list[float]:
    from arenalens.pipeline import analyze
    from arenalens.runtimes.litert.heap import interpreter_heap
    from arenalens.runtimes.litert.isa import X86_64_V3_ZEN

    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate=delegate, isa=X86_64_V3_ZEN)
    measured_way = next((way for way in heap.ways if way.zero_inputs), heap)
    return [getattr(measured_way, attribute) / real[key] for key, attribute, _ in MOMENTS]


def measure_threads() -> None:
    """Every held15 model under both resolvers at THREADS threads → THREADS_DATA."""
    from tests.litert_heap_threads import measure

    document = cache_document(THREADS_DATA, THREADS_COMMAND)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name, family, n in NAMES:
            path = folder / f"{name}.tflite"
            path.write_bytes(held15_case(family, n))
            entry = {mode: measure(library, path, mode, THREADS) for mode in MODES}
            document["models"][path.name] = entry
            print(path.name, json.dumps(entry), flush=True)
    document["models"] = dict(sorted(document["models"].items()))
    THREADS_DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", action="store_true", help="measure at 4 threads")
    arguments = parser.parse_args(argv)
    if arguments.threads:
        measure_threads()
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        for line in table(Path(scratch)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
