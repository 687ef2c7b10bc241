"""Overlap: real TFLM heads with outputs sliding over the inputs they consume, every shared model.

For every model of the shared corpus that the real TFLM interpreter sets up (plus the built-in
examples and the optimize fixtures, listed apart): the head TFLM's own planner gives; the disjoint
optimum (`optimize --reorder --inplace`: no two live tensors share a byte); the result with
overlaps (`optimize --reorder --inplace --overlap`, reference kernels) and with the CMSIS-NN rules
(`--kernels cmsis-nn`: safe on both libraries; heads measured on the reference interpreter); the
lower bounds of both;
the optimistic bound of issue 15 (at every operator, the bytes live less its largest dying input,
capped by its outputs); and the time to plan with overlaps. Heads are measured by running the
written files on the real interpreter, whose outputs must be bit-identical to the original's
(`prove_outputs`, 3 seeds x 3 invocations inside optimize, 3 more invocations here). The baseline
of every ratio is TFLM's own head of the same model, measured in the same run.

Run: python benchmarks/bench_overlap.py [--effort 10] [--json results.json]
     python benchmarks/bench_overlap.py --from-json benchmarks/results/overlap.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from arenalens import load_model
from arenalens.analysis.arena_problem import ArenaProblem, BufferKind
from arenalens.builds.build import HOST
from arenalens.builds.kernel_paths import overlap_rules
from arenalens.examples import EXAMPLES, example_bytes
from arenalens.optimization import Optimization, optimize_model, prove_outputs
from arenalens.runtimes import get_runtime
from benchkit import SHARED, test_fixtures


@dataclass(frozen=True)
class Row:
    """One model's numbers."""

    model: str
    group: str  # "shared" or "built-in"
    tflm_head: int
    disjoint_bound: int
    disjoint_head: int
    overlap_bound: int
    overlap_head: int
    cmsis_head: int
    optimistic_bound: int
    identical: bool
    overlaps_used: int
    plan_seconds: float
    optimize_seconds: float


def corpus() -> list[tuple[str, str, bytes]]:
    """(group, name, bytes) of the shared corpus, the built-in examples and the fixtures."""
    cases: list[tuple[str, str, bytes]] = []
    if SHARED.is_dir():
        cases.extend(("shared", p.stem, p.read_bytes()) for p in sorted(SHARED.glob("*.tflite")))
    else:
        print(f"(corpus not found at {SHARED}; shared models skipped)", file=sys.stderr)
    cases.extend(("built-in", f"example:{n}", example_bytes(n)) for n in sorted(EXAMPLES))
    fixtures = test_fixtures()
    cases.append(("built-in", "fixture:streaming_state", fixtures.streaming_state_model()))
    cases.append(("built-in", "fixture:residual_add", fixtures.residual_add_model()))
    return cases


def optimistic_bound(arena: ArenaProblem) -> int:
    """Issue 15's optimistic count: at each operator's step, the bytes live less its largest
    dying input (capped by the bytes its outputs add); the most over all steps."""
    problem = arena.problem
    best = 0
    for step in {b.start for b in problem.buffers} | {b.end for b in problem.buffers}:
        live = [b for b in problem.buffers if b.start <= step <= b.end and b.size]
        tensors = [b for b in live if arena.buffers[b.id].kind is BufferKind.TENSOR]
        dying = [b.size for b in tensors if b.end == step and b.start < step]
        born = sum(b.size for b in tensors if b.start == step and b.end > step)
        saving = min(max(dying, default=0), born)
        best = max(best, sum(b.size for b in live) - saving)
    return best


def measure(group: str, name: str, data: bytes, effort: float) -> Row | None:
    """One model → its row, or None when the real TFLM interpreter does not set it up."""
    model = load_model(data)
    arena = get_runtime("tflm").arenas(model, HOST)[0]
    given = prove_outputs(data, data, model, invocations=1)
    if given.original_head is None:
        return None
    disjoint = optimize_model(model, reorder=True, inplace=True, effort=effort)
    started = time.perf_counter()
    overlapped = optimize_model(
        model,
        reorder=True,
        inplace=True,
        overlap=overlap_rules(HOST, "reference"),
        effort=effort,
    )
    optimize_seconds = time.perf_counter() - started
    cmsis = optimize_model(
        model,
        reorder=True,
        inplace=True,
        overlap=overlap_rules(HOST, "cmsis-nn"),
        effort=effort,
    )
    disjoint_real = _real_head(data, disjoint, model)
    cmsis_real = _real_head(data, cmsis, model)
    overlap_proof = prove_outputs(data, overlapped.data, model, invocations=3, seed=7)
    chosen = overlapped.chosen
    overlap_candidates = [c for c in overlapped.candidates if c.overlaps]
    return Row(
        model=name,
        group=group,
        tflm_head=given.original_head,
        disjoint_bound=min(
            (c.lower_bound for c in disjoint.candidates), default=disjoint.original_lower_bound
        ),
        disjoint_head=disjoint_real,
        overlap_bound=min(
            (c.lower_bound for c in overlap_candidates),
            default=min((c.lower_bound for c in disjoint.candidates), default=0),
        ),
        overlap_head=overlap_proof.new_head if overlap_proof.new_head is not None else -1,
        cmsis_head=cmsis_real,
        optimistic_bound=optimistic_bound(arena),
        identical=overlap_proof.identical,
        overlaps_used=len(chosen.shared) if chosen is not None else 0,
        plan_seconds=sum(c.plan.seconds for c in overlap_candidates),
        optimize_seconds=optimize_seconds,
    )


def _real_head(data: bytes, optimization: Optimization, model: Any) -> int:
    proof = prove_outputs(data, optimization.data, model, invocations=1)
    if not proof.identical or proof.new_head is None:
        raise SystemExit(f"{model.source}: an optimize result does not run identically")
    return proof.new_head


def render(rows: list[Row], console: Console) -> None:
    """Print the per-model table and the sums."""
    table = Table(
        title="TFLM head arena (bytes, real interpreter): runtime, disjoint optimum, with overlaps"
    )
    columns = (
        "model",
        "TFLM head",
        "disjoint bound",
        "disjoint optimum",
        "overlap bound",
        "with overlaps",
        "x TFLM",
        "CMSIS-NN rules",
        "optimistic bound",
        "overlaps",
        "identical",
        "plan s",
        "optimize s",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "model" else "right")
    for group in ("shared", "built-in"):
        for row in (r for r in rows if r.group == group):
            table.add_row(
                row.model,
                f"{row.tflm_head:,}",
                f"{row.disjoint_bound:,}",
                f"{row.disjoint_head:,}",
                f"{row.overlap_bound:,}",
                f"{row.overlap_head:,}",
                f"{row.overlap_head / row.tflm_head:.3f}",
                f"{row.cmsis_head:,}",
                f"{row.optimistic_bound:,}",
                str(row.overlaps_used),
                "yes" if row.identical else "NO",
                f"{row.plan_seconds:.2f}",
                f"{row.optimize_seconds:.1f}",
            )
        table.add_section()
    console.print(table)
    sums = Table(title="Summed heads, as a ratio to TFLM's own heads (same run)")
    columns = (
        "models",
        "count",
        "TFLM",
        "disjoint optimum",
        "with overlaps",
        "CMSIS-NN rules",
        "optimistic",
        "geo-mean ratio: disjoint / overlaps",
    )
    for column in columns:
        sums.add_column(column, justify="left" if column == "models" else "right")
    for label, chosen in (
        ("shared corpus", [r for r in rows if r.group == "shared"]),
        ("shared + built-in", rows),
    ):
        tflm = sum(r.tflm_head for r in chosen)
        if not tflm:
            continue
        sums.add_row(
            label,
            str(len(chosen)),
            f"{tflm:,} (1.000x)",
            _ratio(sum(r.disjoint_head for r in chosen), tflm),
            _ratio(sum(r.overlap_head for r in chosen), tflm),
            _ratio(sum(r.cmsis_head for r in chosen), tflm),
            _ratio(sum(r.optimistic_bound for r in chosen), tflm),
            f"{_geo_mean([r.disjoint_head / r.tflm_head for r in chosen]):.3f}x / "
            f"{_geo_mean([r.overlap_head / r.tflm_head for r in chosen]):.3f}x",
        )
    console.print(sums)


def _geo_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _ratio(value: int, baseline: int) -> str:
    return f"{value:,} ({value / baseline:.3f}x)"


def main() -> int:
    """Measure (or load) every row, print the tables, optionally save the raw numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effort", type=float, default=10.0, help="search effort per run")
    parser.add_argument("--json", metavar="FILE", help="also write the raw rows here")
    parser.add_argument("--from-json", metavar="FILE", help="print a saved run instead")
    parser.add_argument("--only", metavar="TEXT", help="only models whose name contains TEXT")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    console = Console(width=220)
    if args.from_json:
        rows = [Row(**entry) for entry in json.loads(Path(args.from_json).read_text())["rows"]]
        render(rows, console)
        return 0
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        print("the real TFLM interpreter is needed: pip install '.[runtime]'", file=sys.stderr)
        return 2
    rows = []
    for group, name, data in corpus():
        if args.only and args.only not in name:
            continue
        row = measure(group, name, data, args.effort)
        if row is None:
            print(f"(skipped {name}: TFLM does not set it up)", file=sys.stderr)
            continue
        print(
            f"{name}: {row.tflm_head:,} -> {row.disjoint_head:,} -> {row.overlap_head:,}",
            file=sys.stderr,
        )
        rows.append(row)
    render(rows, console)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": [row.__dict__ for row in rows]}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
