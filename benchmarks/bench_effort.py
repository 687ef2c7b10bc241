"""Searches stop on counted work (`arenalens.effort`): what an effort unit costs, and the same
searches against another checkout that stopped them on a clock.

Two tables, every figure measured in this run (the machine's load average is printed with each):

1. **One effort unit**: each search on a problem where it runs to the end of its effort (the
   hill climb and CP-SAT on a 200-buffer problem, the beam and exact reorderers on a graph with
   1,500 operators ready at once), wall and CPU seconds per unit. The constants in
   `src/arenalens/effort.py` aim at about a second.
2. **Before/after** (`--baseline SRC`, the `src` folder of a checkout before the change, e.g.
   `git worktree add /tmp/before 6520bbe`): the same calls on both trees, taking turns, each in a
   child process: `optimize` on the built-in examples (with `--overlap` on two), the `best`
   planner on random 40-300-buffer problems, and with `--split` the README's
   `optimize --target stm32f746 --overlap --split` on mobilenet_v1_224. Each row: the figure
   (bytes to declare, or arena bytes), wall seconds on each tree and their ratio, and whether two
   runs of this tree wrote the same bytes (sha256 of the file or the offsets). Effort equals the
   baseline's seconds (optimize 10, best 4).

Run:  python benchmarks/bench_effort.py [--baseline /tmp/before/src] [--split]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchkit import REPO_ROOT

SOURCE = REPO_ROOT / "src"

# One call in a child process: argv[1] is a JSON request; prints a JSON result.
CHILD = r"""
import hashlib, inspect, json, random, sys, time
request = json.loads(sys.argv[1])
kind, effort = request["kind"], request["effort"]


def budget(function):
    # This tree stops on counted work; a tree before the change took the same number as seconds.
    takes = "effort" in inspect.signature(function).parameters
    return {"effort": effort} if takes else {"time_limit_s": effort}


def problem(seed):
    from arenalens.planning import Buffer, Problem
    rng = random.Random(seed)
    n = random.Random(seed).choice([40, 80, 120, 200, 300])
    life = random.Random(seed + 1).choice([3, 6, 12])
    span = random.Random(seed + 2).choice([2, 3, 6])
    buffers = []
    for index in range(n):
        start = rng.randrange(0, max(1, n // span))
        end = start + rng.randrange(0, life)
        buffers.append(Buffer(index, start, end, 16 * rng.randrange(1, 60)))
    return Problem(tuple(buffers), alignment=16)


started, cpu = time.perf_counter(), time.process_time()
if kind == "optimize":
    from arenalens.examples import example_bytes
    from arenalens.optimization import optimize_model
    result = optimize_model(
        example_bytes(request["model"]), overlap=request["overlap"], prove_inplace=False,
        **budget(optimize_model),
    )
    figure, digest = result.new_required_bytes, hashlib.sha256(result.data).hexdigest()
elif kind == "split":
    import pathlib
    import arenalens
    sys.path.insert(0, str(pathlib.Path(arenalens.__file__).parents[2]))  # that tree's tests
    from tests.device_scenario import SPLIT_STEP, scenario_models
    data = scenario_models()[SPLIT_STEP]
    figure = arenalens.check(data, target="stm32f746").required_bytes
    digest = hashlib.sha256(data).hexdigest()
else:
    from arenalens.planning import run_planner
    from arenalens.planning.registry import get_planner
    plan = run_planner("best", problem(request["seed"]), **budget(get_planner("best").function))
    figure = plan.arena_size
    digest = hashlib.sha256(json.dumps(sorted(plan.offsets.items())).encode()).hexdigest()
print(json.dumps({
    "figure": figure, "sha256": digest,
    "seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
}))
"""

UNIT = r"""
import json, random, sys, time
from arenalens.planning import Buffer, Problem, run_planner
from arenalens.reorder.registry import run_reorderer
from arenalens.reorder.schedule import schedule_problem
from arenalens.tflite.reader import load_model
sys.path.insert(0, sys.argv[1])
from fuzz.hostile import many_live_model

rng = random.Random(4)
buffers = []
for index in range(200):
    start = rng.randrange(0, 66)
    buffers.append(Buffer(index, start, start + rng.randrange(0, 6), 16 * rng.randrange(1, 60)))
crowded = Problem(tuple(buffers), alignment=16)
wide = schedule_problem(load_model(many_live_model(1500)), 0, tensor_bytes=lambda t: t.nbytes)
rows = []
for label, run in (
    ("hillclimb (200 buffers)", lambda e: run_planner("hillclimb", crowded, effort=e,
                                                        max_iterations=10**9)),
    ("optimal, CP-SAT (200 buffers)", lambda e: run_planner("optimal", crowded, effort=e)),
    ("beam (1,500 ready)", lambda e: run_reorderer("beam", wide, effort=e)),
    ("exact (1,500 ready)", lambda e: run_reorderer("exact", wide, effort=e)),
):
    run(0.01)  # warm-up: imports, compiled problem
    started, cpu = time.perf_counter(), time.process_time()
    run(1.0)
    rows.append((label, time.perf_counter() - started, time.process_time() - cpu))
print(json.dumps(rows))
"""


def child(source: Path, script: str, *arguments: str) -> Any:
    environment = {**os.environ, "PYTHONPATH": str(source)}
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"{source}: {arguments}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


def unit_table(console: Console) -> None:
    rows = child(SOURCE, UNIT, str(REPO_ROOT))
    table = Table(title=f"1. One effort unit ({load()})")
    for column in ("search", "wall s / unit", "CPU s / unit"):
        table.add_column(column, justify="left" if column == "search" else "right")
    for label, wall, cpu in rows:
        table.add_row(label, f"{wall:.2f}", f"{cpu:.2f}")
    console.print(table)


def requests(split: bool) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for model in ("branchy_inception", "fc_autoencoder", "kws_ds_cnn", "mobilenet_v1_224"):
        found.append((f"optimize {model}", {"kind": "optimize", "model": model}))
    found.append(("optimize vww_mobilenet_v1", {"kind": "optimize", "model": "vww_mobilenet_v1"}))
    for model in ("vww_mobilenet_v1", "mobilenet_v1_224"):
        found.append(
            (f"optimize {model} --overlap", {"kind": "optimize", "model": model, "overlap": True})
        )
    for seed in (1, 2, 11, 15, 16, 18, 19, 21):
        found.append((f"best, random problem {seed}", {"kind": "best", "seed": seed, "effort": 4}))
    if split:
        found.append(("README split scenario", {"kind": "split"}))
    for _, request in found:
        request.setdefault("overlap", False)
        request.setdefault("effort", 10)
    return found


def comparison_table(console: Console, baseline: Path | None, split: bool) -> None:
    table = Table(title=f"2. Before/after ({load()} at the start)")
    for column in (
        "call",
        "figure",
        "this tree s",
        "baseline s",
        "ratio",
        "figure then",
        "same bytes twice",
    ):
        table.add_column(column, justify="left" if column == "call" else "right")
    totals = [0.0, 0.0]
    for label, request in requests(split):
        argument = json.dumps(request)
        first = child(SOURCE, CHILD, argument)
        before = child(baseline, CHILD, argument) if baseline else None
        second = child(SOURCE, CHILD, argument)
        totals[0] += first["seconds"]
        totals[1] += before["seconds"] if before else 0.0
        table.add_row(
            label,
            f"{first['figure']:,}",
            f"{first['seconds']:.1f}",
            "-" if before is None else f"{before['seconds']:.1f}",
            "-" if before is None else f"{first['seconds'] / before['seconds']:.2f}",
            "-" if before is None else f"{before['figure']:,}",
            "yes" if first["sha256"] == second["sha256"] else "NO",
        )
    table.add_row(
        "total",
        "",
        f"{totals[0]:.1f}",
        f"{totals[1]:.1f}" if baseline else "-",
        f"{totals[0] / totals[1]:.2f}" if baseline else "-",
        "",
        "",
    )
    console.print(table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="src folder of a checkout to compare with")
    parser.add_argument("--split", action="store_true", help="also the README split scenario")
    args = parser.parse_args()
    console = Console(width=140)
    started = time.perf_counter()
    unit_table(console)
    comparison_table(console, args.baseline, args.split)
    console.print(f"{time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
