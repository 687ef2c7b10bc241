"""Planner speed and quality: every registered planner on the TFLM head of two models.

Models: the shared corpus model with the most planned buffers, and a generated chain of 20,000
operators (`tests/fixtures/synthetic.py`). For each planner: planning time (best of N runs),
arena bytes,
and both as ratios to `naive` measured in the same run, next to the lower bound. The Problem is
built once per model (lifetimes, scratch, rounding) and its build time is shown separately.

Run: python benchmarks/bench_planners.py [--operators 20000] [--repeat 3] [--planners a,b]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from rich.console import Console
from rich.table import Table

from arenalens import load_model
from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.errors import PlanError
from arenalens.ir import Model
from arenalens.planning import planner_names, run_planner
from arenalens.runtimes.tflm.arena import arenas
from benchkit import SHARED, best_of, synthetic_model


def largest_shared_model() -> tuple[str, Model] | None:
    """(name, model) of the corpus model with the most TFLM head buffers, if the corpus is here."""
    if not SHARED.is_dir():
        return None
    candidates = []
    for path in sorted(SHARED.glob("*.tflite")):
        model = load_model(path)
        candidates.append((len(arenas(model)[0].problem.buffers), path.name, model))
    if not candidates:
        return None
    _, name, model = max(candidates, key=lambda item: (item[0], item[1]))
    return name, model


def planner_rows(head: ArenaProblem, planners: list[str], repeat: int) -> list[list[str]]:
    """One row per planner: seconds, bytes, and ratios to naive from this same run."""
    bound = head.problem.lower_bound()
    measured: dict[str, tuple[float, int] | str] = {}
    for name in dict.fromkeys(["naive", *planners]):
        try:
            size = run_planner(name, head.problem).arena_size
        except PlanError as error:
            measured[name] = f"n/a: {str(error)[:60]}"
            continue
        measured[name] = (best_of(repeat, lambda n=name: run_planner(n, head.problem)), size)
    naive = measured["naive"]
    assert isinstance(naive, tuple)
    naive_seconds, naive_bytes = naive
    rows = []
    for name in planners:
        result = measured[name]
        if isinstance(result, str):
            rows.append([name, "—", "—", "—", "—", "—", result])
            continue
        seconds, size = result
        over = 100.0 * (size - bound) / bound if bound else 0.0
        rows.append(
            [
                name,
                f"{seconds * 1000:.1f} ms",
                f"{seconds / naive_seconds:.1f}x" if naive_seconds else "—",
                f"{size:,}",
                f"{size / naive_bytes:.4g}" if naive_bytes else "—",
                f"+{over:,.1f}%",
                "runtime planner" if name == head.runtime_planner else "",
            ]
        )
    return rows


def main() -> int:
    """Print one table per model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operators", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--planners", help="comma-separated names (default: all registered)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    planners = args.planners.split(",") if args.planners else planner_names()
    cases: list[tuple[str, Model]] = []
    shared = largest_shared_model()
    if shared is not None:
        cases.append(shared)
    else:
        print(f"(corpus not found at {SHARED}; shared-model table skipped)", file=sys.stderr)
    chain = load_model(synthetic_model("chain", args.operators))
    cases.append((f"synthetic chain, {args.operators:,} ops", chain))
    console = Console(width=140)
    for name, model in cases:
        started = time.perf_counter()
        head = arenas(model)[0]
        build = time.perf_counter() - started
        table = Table(
            title=f"{name}: TFLM head, {len(head.problem.buffers):,} buffers, lower bound "
            f"{head.problem.lower_bound():,} B (problem built in {build * 1000:.0f} ms; "
            f"best of {args.repeat} runs, one core)",
            title_justify="left",
        )
        for column in ("planner", "time", "time / naive", "arena B", "arena / naive",
                       "over bound", "note"):  # fmt: skip
            table.add_column(column, justify="left" if column in ("planner", "note") else "right")
        for row in planner_rows(head, planners, args.repeat):
            table.add_row(*row)
        console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
