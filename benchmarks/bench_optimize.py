"""Planner quality and speed on every shared and built-in model; reordering and in-place gains.

Tables (TFLM head arena: tensors and kernel scratch, sizes rounded to 16):

1. **Quality**: per model, the lower bound and each planner's arena as a ratio to it (1.000 = at
   the bound), then the real TFLM head of the model as given and of the file `optimize` writes
   (measured by running the real interpreter, when installed).
2. **Speed**: per planner, total planning time over all models and the geometric mean of its
   time divided by the baseline's on the same model, measured in the same run. The baseline is
   `tflm_greedy`, the runtime's own planner (what TFLM spends at setup).
3. **Reordering**: file-order vs reordered busiest step, and the real heads.
4. **In-place**: heads without and with `--inplace` aliases (proven bit-exact).

Run: python benchmarks/bench_optimize.py [--repeat 3] [--effort 10] [--no-runtime]
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from typing import TypeVar

from rich.console import Console
from rich.table import Table

from arenalens import load_model
from arenalens.builds.build import HOST
from arenalens.examples import EXAMPLES, example_bytes
from arenalens.ir import Model
from arenalens.optimization import optimize_model, prove_outputs
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.problem import Buffer, Problem
from arenalens.planning.registry import get_planner, planner_names, run_planner
from arenalens.reorder.runtime_order import reorder_for_runtime
from arenalens.runtimes import get_runtime
from benchkit import SHARED, fastest_of, test_fixtures

BASELINE = "tflm_greedy"
SEARCH_PLANNERS = ("optimal", "best", "hillclimb")
T = TypeVar("T")


def corpus() -> list[tuple[str, bytes]]:
    """(name, bytes) of every shared model (when present), built-in example and fixture."""
    cases: list[tuple[str, bytes]] = []
    if SHARED.is_dir():
        cases.extend((p.stem, p.read_bytes()) for p in sorted(SHARED.glob("*.tflite")))
    else:
        print(f"(corpus not found at {SHARED}; shared models skipped)", file=sys.stderr)
    cases.extend((f"example:{name}", example_bytes(name)) for name in sorted(EXAMPLES))
    fixtures = test_fixtures()
    cases.append(("fixture:streaming_state", fixtures.streaming_state_model()))
    cases.append(("fixture:residual_add", fixtures.residual_add_model()))
    return cases


def tflm_planners() -> list[str]:
    """Planners that make sense on a TFLM arena (no replicas of other runtimes)."""
    return [n for n in planner_names() if get_planner(n).replicates_runtime in (None, "tflm")]


def real_head(
    original: bytes, rewritten: bytes, model: Model, use_runtime: bool
) -> tuple[str, str]:
    """Real TFLM head of the given and rewritten files ('—' without the runtime)."""
    if not use_runtime:
        return "—", "—"
    proof = prove_outputs(original, rewritten, model, invocations=1)
    if proof.original_head is None:
        return "no load", "no load"
    new = f"{proof.new_head:,}" if proof.new_head is not None else "fail"
    if not proof.identical:
        new += " (outputs differ!)"
    return f"{proof.original_head:,}", new


def main() -> int:
    """Print the four tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per cheap planner")
    parser.add_argument("--effort", type=float, default=10.0, help="search planner effort")
    parser.add_argument("--no-runtime", action="store_true", help="skip the real TFLM runs")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    use_runtime = not args.no_runtime
    if use_runtime:
        try:
            import tflite_micro  # noqa: F401
        except ImportError:
            print("(tflite_micro not installed: real heads skipped)", file=sys.stderr)
            use_runtime = False
    names = tflm_planners()
    # Import OR-Tools once before timing: its one-time import is not planning time.
    run_planner("optimal", Problem((Buffer(0, 0, 1, 16), Buffer(1, 1, 2, 16))), effort=1)
    console = Console(width=260)
    quality = Table(title="Quality: TFLM head arena / lower bound (1.000 = at the bound)")
    quality.add_column("model")
    quality.add_column("bound", justify="right")
    for name in names:
        quality.add_column(name, justify="right")
    quality.add_column("real head (given)", justify="right")
    quality.add_column("real head (optimize)", justify="right")
    seconds: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    at_bound: dict[str, int] = dict.fromkeys(names, 0)
    cases = corpus()
    for label, data in cases:
        model = load_model(data)
        arena = get_runtime("tflm").arenas(model, HOST)[0]
        bound = sound_lower_bound(arena.problem)
        cells: list[str] = []
        baseline_time = None
        for name in names:
            knobs: dict[str, object] = {}
            if name in SEARCH_PLANNERS:
                knobs["effort"] = args.effort
            repeat = 1 if name in SEARCH_PLANNERS else args.repeat
            try:
                spent, plan = fastest_of(
                    repeat, lambda n=name, k=knobs, p=arena.problem: run_planner(n, p, **k)
                )
            except Exception as error:  # a replica may refuse a problem (offline plans)
                cells.append(f"— ({type(error).__name__})")
                continue
            size = plan.arena_size
            cells.append(f"{size / bound:.3f}" if bound else f"{size}")
            at_bound[name] += size == bound
            seconds[name].append(spent)
            if name == BASELINE:
                baseline_time = spent
            ratios[name].append(spent)
        if baseline_time:
            for name in names:
                if ratios[name] and len(ratios[name]) == len(seconds[name]):
                    ratios[name][-1] = ratios[name][-1] / baseline_time
        optimized = optimize_model(model, effort=args.effort)
        given, new = real_head(data, optimized.data, model, use_runtime)
        quality.add_row(label, f"{bound:,}", *cells, given, new)
    console.print(quality)
    console.print(
        "models at the bound: " + ", ".join(f"{n} {at_bound[n]}/{len(cases)}" for n in names)
    )

    speed = Table(title=f"Speed: planning time, ratio to {BASELINE} on the same model, same run")
    for column in ("planner", "total", "geo-mean ratio", "max single"):
        speed.add_column(column, justify="left" if column == "planner" else "right")
    for name in names:
        if not seconds[name]:
            continue
        logs = [math.log(max(r, 1e-9)) for r in ratios[name]]
        geo = math.exp(sum(logs) / len(logs))
        speed.add_row(
            name,
            f"{sum(seconds[name]) * 1000:.1f} ms",
            f"{geo:.1f}x",
            f"{max(seconds[name]) * 1000:.1f} ms",
        )
    console.print(speed)

    reorder = Table(title="Reordering (TFLM): busiest step and real head, file order vs --reorder")
    for column in ("model", "file order", "reordered", "gain", "proven", "time",
                   "real head (given)", "real head (optimize --reorder)"):  # fmt: skip
        reorder.add_column(column, justify="left" if column == "model" else "right")
    for label, data in cases:
        model = load_model(data)
        spent, (_, result) = fastest_of(1, lambda m=model: reorder_for_runtime(m, "tflm"))
        gain = 1 - result.peak / result.file_order_peak if result.file_order_peak else 0.0
        if result.peak >= result.file_order_peak:
            continue
        optimized = optimize_model(model, reorder=True, effort=args.effort)
        given, new = real_head(data, optimized.data, model, use_runtime)
        reorder.add_row(
            label,
            f"{result.file_order_peak:,}",
            f"{result.peak:,}",
            f"{gain:.1%}",
            "yes" if result.proven_optimal else "no",
            f"{spent * 1000:.0f} ms",
            given,
            new,
        )
    console.print(reorder)
    console.print("(models not listed: no order beats the file order)")

    inplace = Table(title="In-place aliasing (TFLM, proven bit-exact on the real runtime)")
    for column in ("model", "aliases", "head", "head --inplace", "gain"):
        inplace.add_column(column, justify="left" if column == "model" else "right")
    if use_runtime:
        for label, data in cases:
            model = load_model(data)
            plain = optimize_model(model, effort=args.effort)
            aliased = optimize_model(model, inplace=True, effort=args.effort)
            if aliased.chosen is None or not aliased.chosen.aliases:
                continue
            gain = 1 - aliased.new_head / plain.new_head
            inplace.add_row(
                label,
                ", ".join(sorted({a.opcode for a in aliased.chosen.aliases})),
                f"{plain.new_head:,}",
                f"{aliased.new_head:,}",
                f"{gain:.1%}",
            )
    console.print(inplace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
