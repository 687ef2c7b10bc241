"""Operator splitting: kTensorArenaSize before and after `optimize --overlap --split`, per build.

The 13 shared models of issue 23's table (those `optimize --overlap` shrinks on TFLM's reference
kernels; kws_ref_model_float32 among them is a hybrid model TFLM cannot run: listed as such, not
summed). For each build (Cortex-M7 with CMSIS-NN, the build issue 23's targets are for, and
Cortex-M7 with reference kernels): the number to declare for the model as given (the baseline
of every ratio, computed in the same run), after `optimize --overlap --kernels <library>`, and
after `optimize --overlap --kernels <library> --split`; the head after it; what was split; the
extra work (MACs recomputed in halos, as a share of the model's convolution MACs, and bytes the
slices, pads and concatenations copy); whether the written file computes bit-identical outputs
on the real TFLM wheel (3 invocations of a seed optimize did not use; not asked of a plan right
on CMSIS-NN only, since the wheel runs the reference kernels); the optimize time.
Device checks of the same files: tests/split/probes.py (cached in tests/data/split_probes.json).

Run: python benchmarks/bench_split.py [--json results.json] [--only TEXT] [--build NAME]
     python benchmarks/bench_split.py --from-json benchmarks/results/split.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from arenalens import load_model
from arenalens.builds.build import CMSIS_NN, REFERENCE
from arenalens.builds.kernel_paths import REFERENCE_PATH
from arenalens.ir import Model
from arenalens.optimization import optimize_model, prove_outputs
from arenalens.split.parts import macs_of
from benchkit import SHARED

# Issue 23's table: the shared models whose kTensorArenaSize `optimize --overlap` lowers with
# TFLM's reference kernels.
MODELS = (
    "mlperf_tiny__kws_ref_model",
    "mlperf_tiny__kws_ref_model_float32",
    "mlperf_tiny__pretrainedResnet",
    "mlperf_tiny__pretrainedResnet_large_float",
    "mlperf_tiny__pretrainedResnet_large_int8",
    "mlperf_tiny__pretrainedResnet_quant",
    "mlperf_tiny__str_ww_ref_model",
    "mlperf_tiny__vww_96_float",
    "mlperf_tiny__vww_96_int8",
    "tflite_micro__magic_wand",
    "tflite_micro__micro_speech_quantized",
    "tflite_micro__mobilenet_v2_quantized_1x3x224x224",
    "tflite_micro__person_detect",
)
BUILDS = {
    "cortex-m7/cmsis-nn": CMSIS_NN,
    "cortex-m7/reference": REFERENCE,
}
CHECK_SEED = 7  # optimize proves with seeds 0-2


@dataclass(frozen=True)
class Row:
    """One model on one build."""

    model: str
    build: str
    before: int
    overlap: int
    split: int
    head_before: int
    head: int
    largest_tensor: int
    splits: list[str]
    model_macs: int
    extra_macs: int
    copied_bytes: int
    identical: bool | None  # None: the wheel cannot run the model
    seconds: float
    runs: bool = True  # False: TFLM cannot run the model on this build (no number; not summed)
    # The kernel code paths the written plan is right on (empty: it shares no bytes, right on all).
    valid_for: list[str] = field(default_factory=list)


def model_macs(model: Model) -> int:
    """Multiply-accumulates of every convolution and depthwise convolution."""
    subgraph = model.subgraphs[0]
    total = 0
    for operator in subgraph.operators:
        if operator.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            output = subgraph.tensors[operator.outputs[0]].shape
            total += macs_of(operator.opcode, output, subgraph.tensors[operator.inputs[1]].shape)
    return total


def measure(name: str, build: str) -> Row:
    """One model, one build → its row."""
    data = (SHARED / f"{name}.tflite").read_bytes()
    model = load_model(data)
    # The build's name names its kernel library: overlaps hold on that library.
    overlap = optimize_model(model, overlap=True, build=build)
    started = time.perf_counter()
    split = optimize_model(model, overlap=True, build=build, split=True)
    seconds = time.perf_counter() - started
    identical: bool | None = None
    # The wheel runs the reference kernels: a plan right on CMSIS-NN only is checked on the
    # QEMU output probes instead (tests/split/probes.py), not here.
    on_wheel = not split.valid_for or REFERENCE_PATH in split.valid_for
    if split.chosen is not None and on_wheel:
        proof = prove_outputs(data, split.data, model, seed=CHECK_SEED)
        identical = proof.identical if proof.original_head is not None else None
    splitting = split.split
    return Row(
        model=name,
        build=build,
        before=split.original_required_bytes,
        overlap=overlap.new_required_bytes,
        split=split.new_required_bytes,
        head_before=split.original_head,
        head=split.new_head,
        largest_tensor=max(
            (t.nbytes for t in model.subgraphs[0].tensors if not t.is_constant), default=0
        ),
        splits=[s.describe() for s in splitting.splits] if splitting else [],
        model_macs=model_macs(model),
        extra_macs=splitting.extra_macs if splitting else 0,
        copied_bytes=splitting.copied_bytes if splitting else 0,
        identical=identical,
        seconds=round(seconds, 1),
        runs=split.runs,
        valid_for=[path.name for path in split.valid_for],
    )


def render(rows: list[Row], console: Console) -> None:
    """One table per build, then the sums."""
    for build in BUILDS:
        chosen = [r for r in rows if r.build == build]
        if not chosen:
            continue
        table = Table(title=f"kTensorArenaSize on {build} (bytes): as given, --overlap, +--split")
        columns = (
            "model",
            "as given",
            "--overlap",
            "--overlap --split",
            "x given",
            "head",
            "largest tensor",
            "split",
            "extra MACs",
            "copied",
            "identical",
            "s",
        )
        for column in columns:
            table.add_column(column, justify="left" if column in ("model", "split") else "right")
        for row in chosen:
            if not row.runs:
                table.add_row(row.model, "cannot run", *(["—"] * 10))
                continue
            share = f"{100 * row.extra_macs / row.model_macs:.1f}%" if row.model_macs else "—"
            table.add_row(
                row.model,
                f"{row.before:,}",
                f"{row.overlap:,}",
                f"{row.split:,}",
                f"{row.split / row.before:.3f}",
                f"{row.head:,}",
                f"{row.largest_tensor:,}",
                "; ".join(row.splits) or "—",
                share if row.extra_macs else "0",
                f"{row.copied_bytes:,}",
                {True: "yes", False: "NO", None: "—"}[row.identical],
                f"{row.seconds:.0f}",
            )
        running = [r for r in chosen if r.runs]
        before = sum(r.before for r in running)
        overlap = sum(r.overlap for r in running)
        after = sum(r.split for r in running)
        table.add_section()
        table.add_row(
            f"sum of {len(running)}",
            f"{before:,}",
            f"{overlap:,} ({overlap / before:.3f}x)",
            f"{after:,} ({after / before:.3f}x)",
            f"{after / before:.3f}",
            *([""] * 7),
        )
        console.print(table)


def main() -> int:
    """Measure (or load) every row, print the tables, optionally save the raw numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the raw rows here")
    parser.add_argument("--from-json", metavar="FILE", help="print a saved run instead")
    parser.add_argument("--only", metavar="TEXT", help="only models whose name contains TEXT")
    parser.add_argument("--build", choices=sorted(BUILDS), help="only this build")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    console = Console(width=240)
    if args.from_json:
        rows = [Row(**entry) for entry in json.loads(Path(args.from_json).read_text())["rows"]]
        render(rows, console)
        return 0
    if not SHARED.is_dir():
        print(f"the shared corpus is needed at {SHARED}", file=sys.stderr)
        return 2
    rows = []
    for build in BUILDS:
        if args.build and build != args.build:
            continue
        for name in MODELS:
            if args.only and args.only not in name:
                continue
            row = measure(name, build)
            print(f"{build} {name}: {row.before:,} -> {row.split:,}", file=sys.stderr)
            rows.append(row)
    if args.json:  # before rendering: a long run's numbers are never lost
        Path(args.json).write_text(
            json.dumps({"rows": [asdict(row) for row in rows]}, indent=1) + "\n"
        )
    render(rows, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
