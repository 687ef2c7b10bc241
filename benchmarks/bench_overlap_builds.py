"""Overlap per build: kTensorArenaSize before → after `optimize --overlap`, for the build named.

For every shared model TFLM sets up on Cortex-M (the probe reference, ../shared/models/
reference-cortex-m.json), the number to declare (minimal kTensorArenaSize, plain MicroAllocator)
before and after `arenalens optimize --overlap` on:

* Cortex-M7 with the reference kernels (`--cpu cortex-m7 --kernels reference`),
* Cortex-M7 with CMSIS-NN, DSP code path (`--cpu cortex-m7 --kernels cmsis-nn`),
* Cortex-M3 with CMSIS-NN, pure-C code path (`--cpu cortex-m3 --kernels cmsis-nn`),
* Cortex-M7 without --kernels (the default: right on the reference kernels and CMSIS-NN on every
  code path; the number holds on both of the core's builds, so it is the larger of the two).

The baseline of every ratio is the same model's number before `optimize`, computed in the same
run for the same build. The figures are arenalens' predictions, which are exact on these builds
(tests/data/device_reference.json); the written plans were run on the output probes at the
declared size (tests/overlap_proofs.py). Each optimize run proves its plan bit-identical on the
x86-64 tflite_micro wheel when the plan is right on the reference kernels.

Run: python benchmarks/bench_overlap_builds.py [--json results.json] [--only TEXT]
     python benchmarks/bench_overlap_builds.py --from-json benchmarks/results/overlap_builds.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from arenalens import load_model
from arenalens.builds.build import device_build
from arenalens.optimization import optimize_model
from benchkit import SHARED

# (column title, --cpu, --kernels): the builds of issue 23's table.
BUILDS = (
    ("Cortex-M7, reference kernels", "cortex-m7", "reference"),
    ("Cortex-M7, CMSIS-NN (DSP)", "cortex-m7", "cmsis-nn"),
    ("Cortex-M3, CMSIS-NN (no DSP)", "cortex-m3", "cmsis-nn"),
    ("Cortex-M7, no --kernels (default)", "cortex-m7", None),
)
# Operators an output may slide over an input of: models without them cannot gain.
OVERLAP_OPERATORS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"})


@dataclass(frozen=True)
class Cell:
    """One model on one build: the number before and after, and what the plan is right on."""

    before: int
    after: int
    valid_for: list[str]
    shared: int  # outputs that share bytes with an input in the written plan


@dataclass(frozen=True)
class Row:
    """One model on every build."""

    model: str
    convolutional: bool  # has an operator whose output may slide over its input
    cells: dict[str, Cell]


def models() -> list[Path]:
    """The shared models TFLM sets up on every Cortex-M probe build."""
    reference = json.loads((SHARED / "reference-cortex-m.json").read_text())["targets"]
    names = set.intersection(
        *(
            {name for name, entry in found.items() if entry.get("min_arena")}
            for found in reference.values()
        )
    )
    return [SHARED / name for name in sorted(names)]


def measure(path: Path, effort: float) -> Row:
    """One model → before/after on every build."""
    data = path.read_bytes()
    opcodes = {op.opcode for sg in load_model(data).subgraphs for op in sg.operators}
    cells = {}
    for title, cpu, kernels in BUILDS:
        build = device_build(cpu, kernels)
        optimization = optimize_model(data, overlap=True, build=build, effort=effort)
        chosen = optimization.chosen
        cells[title] = Cell(
            before=optimization.original_required_bytes,
            after=optimization.new_required_bytes,
            valid_for=[p.name for p in optimization.valid_for],
            shared=len(chosen.shared) if chosen else 0,
        )
        print(f"{path.stem} [{title}]: {cells[title]}", file=sys.stderr)
    return Row(path.stem, bool(opcodes & OVERLAP_OPERATORS), cells)


def render(rows: list[Row], console: Console) -> None:
    """The per-model table, then the sums."""
    table = Table(title="kTensorArenaSize before → after `optimize --overlap`, per build")
    table.add_column("model")
    for title, _, _ in BUILDS:
        table.add_column(title, justify="right")
    for row in rows:
        table.add_row(
            row.model,
            *(
                f"{row.cells[t].before:,} → {row.cells[t].after:,}"
                + (
                    ""
                    if row.cells[t].after == row.cells[t].before
                    else f" ({row.cells[t].after / row.cells[t].before:.3f})"
                )
                for t, _, _ in BUILDS
            ),
        )
    console.print(table)
    sums = Table(title="Summed kTensorArenaSize after / before (same run, same build)")
    sums.add_column("models")
    sums.add_column("count", justify="right")
    for title, _, _ in BUILDS:
        sums.add_column(title, justify="right")
    for label, chosen in (
        ("with a convolution or pool", [r for r in rows if r.convolutional]),
        ("every model set up", rows),
    ):
        cells = []
        for title, _, _ in BUILDS:
            before = sum(r.cells[title].before for r in chosen)
            after = sum(r.cells[title].after for r in chosen)
            cells.append(f"{after:,} / {before:,} = {after / before:.3f}")
        sums.add_row(label, str(len(chosen)), *cells)
    console.print(sums)


def main() -> int:
    """Measure (or load) every row, print the tables, optionally save the raw numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effort", type=float, default=10.0, help="search effort per run")
    parser.add_argument("--json", metavar="FILE", help="also write the raw rows here")
    parser.add_argument("--from-json", metavar="FILE", help="print a saved run instead")
    parser.add_argument("--only", metavar="TEXT", help="only models whose name contains TEXT")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    console = Console(width=200)
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())["rows"]
        rows = [
            Row(r["model"], r["convolutional"], {t: Cell(**c) for t, c in r["cells"].items()})
            for r in saved
        ]
        render(rows, console)
        return 0
    if not SHARED.is_dir():
        print(f"the shared models are not at {SHARED}", file=sys.stderr)
        return 2
    rows = [
        measure(path, args.effort) for path in models() if not args.only or args.only in path.name
    ]
    render(rows, console)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": [asdict(row) for row in rows]}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
