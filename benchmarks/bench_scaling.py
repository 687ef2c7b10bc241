"""Scaling: every stage on generated models of 1k, 10k and 100k operators, and the largest real one.

Models: `tests/fixtures/synthetic.py` chains, wide branches and U-Net-like skips (long-lived
tensors), and
the shared corpus model with the most operators. Stages: load (reader + checker), TFLM and LiteRT
lifetimes, each runtime's rules (arena problems: scratch, temporaries, offline plans), every
registered planner on the TFLM head arena (`litert_arena` on the LiteRT arena, its own), and the
whole `analyze` per runtime, and the report (data, terminal text, HTML, chart images). For each
stage: seconds at each size, growth per doubling of the model between the two largest sizes
(2.0x is linear, 2.1-2.2x is n log n at these sizes, 4x quadratic), and the Python peak
memory it allocates (tracemalloc, measured in a second pass so it does not slow the timed one).
Each model runs in its own child process, whose peak RSS is reported too.

Beside arenalens, the real runtimes load the same model in the same run, in a child process:
LiteRT `Interpreter(...) + allocate_tensors()` and TFLM `Interpreter.from_bytes(..., arena_size)`,
whose construction plans the arena. The ratio is arenalens analyze time / runtime setup time.

Run:   python benchmarks/bench_scaling.py [--sizes 1000,10000,100000] [--shapes chain,branches,unet]
       [--planner-limit 10] [--no-runtimes] [--no-memory]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import resource
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from arenalens.atomic import write_atomic
from benchkit import synthetic_model

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
RUNTIME_TIMEOUT_SECONDS = 600


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def model_bytes(case: str) -> bytes:
    """'chain:1000' → synthetic bytes; 'file:NAME' → the corpus file."""
    kind, _, argument = case.partition(":")
    if kind == "file":
        return (SHARED / argument).read_bytes()

    return synthetic_model(kind, int(argument))


def stage_list(
    data: bytes, planner_limit: float, images: bool
) -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """(name, function of the shared state) for every measured stage, in pipeline order."""
    from arenalens import load_model
    from arenalens.pipeline import analyze
    from arenalens.planning import planner_names, run_planner
    from arenalens.report.build import build_report
    from arenalens.report.html_page import render_html
    from arenalens.report.images import render_images
    from arenalens.report.terminal import render_report_text
    from arenalens.runtimes.litert import rules as litert
    from arenalens.runtimes.litert.lifetimes import litert_timeline
    from arenalens.runtimes.tflm import arena as tflm
    from arenalens.runtimes.tflm.lifetimes import tflm_timeline

    knobs = {"optimal": {"effort": planner_limit}, "best": {"effort": planner_limit}}

    def planner(name: str) -> Callable[[dict[str, Any]], Any]:
        def run(state: dict[str, Any]) -> Any:
            arena = state["litert_arenas"][0] if name == "litert_arena" else state["tflm_arenas"][0]
            problem = arena.problem
            if name == "tflm_linear" and any(b.fixed_offset is not None for b in problem.buffers):
                return None
            return run_planner(name, problem, **knobs.get(name, {}))

        return run

    stages: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("load", lambda s: s.__setitem__("model", load_model(data))),
        ("TFLM lifetimes", lambda s: tflm_timeline(s["model"])),
        ("LiteRT lifetimes", lambda s: litert_timeline(s["model"])),
        ("TFLM rules (arenas)", lambda s: s.__setitem__("tflm_arenas", tflm.arenas(s["model"]))),
        (
            "LiteRT rules (arenas)",
            lambda s: s.__setitem__("litert_arenas", litert.arenas(s["model"])),
        ),
    ]
    stages += [(f"planner {name}", planner(name)) for name in planner_names()]
    stages += [
        ("analyze, TFLM", lambda s: s.__setitem__("tflm", analyze(s["model"], runtime="tflm"))),
        (
            "analyze, LiteRT",
            lambda s: s.__setitem__("litert", analyze(s["model"], runtime="litert")),
        ),
        ("report: data", lambda s: s.__setitem__("report", build_report(s["tflm"]))),
        ("report: terminal text", lambda s: render_report_text(s["report"])),
        ("report: HTML", lambda s: render_html([s["report"]])),
    ]
    if images:
        stages.append(("report: images (PNG+SVG)", lambda s: render_images(s["report"])))
    return stages


def measure_one(case: str, planner_limit: float, memory: bool, images: bool) -> dict[str, Any]:
    """Child process: time (and then trace) every stage on one model; returns plain data."""
    warnings.simplefilter("ignore")
    data = model_bytes(case)
    stages = stage_list(data, planner_limit, images)
    state: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    for name, run in stages:
        seconds[name], _ = timed(lambda run=run: run(state))
    peaks: dict[str, int] = {}
    if memory:
        state = {}
        tracemalloc.start()
        for name, run in stages:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            run(state)
            peaks[name] = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
    model = state["model"]
    return {
        "case": case,
        "operators": model.operator_count,
        "tensors": model.tensor_count,
        "bytes": len(data),
        "head_buffers": len(state["tflm_arenas"][0].problem.buffers),
        "tflm_required": state["tflm"].budget.required_bytes,
        "seconds": seconds,
        "peaks": peaks,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def runtime_setup(case: str, tflm_arena: int) -> dict[str, float | str]:
    """Child process: seconds the real LiteRT and TFLM take to load and plan the model."""
    warnings.simplefilter("ignore")
    data = model_bytes(case)
    result: dict[str, float | str] = {}
    try:
        from ai_edge_litert import interpreter as litert

        def litert_setup() -> None:
            interpreter = litert.Interpreter(
                model_content=data,
                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
            )
            interpreter.allocate_tensors()

        result["litert"], _ = timed(litert_setup)
    except Exception as error:  # a runtime refusing a model is a result, not a benchmark bug
        result["litert"] = f"{type(error).__name__}"
    try:
        from tflite_micro.python.tflite_micro import runtime as micro

        result["tflm"], _ = timed(
            lambda: micro.Interpreter.from_bytes(data, arena_size=tflm_arena + 65536)
        )
    except Exception as error:
        result["tflm"] = f"{type(error).__name__}"
    return result


def in_child(function: Callable[..., Any], *arguments: Any, timeout: float) -> Any:
    """Run function(*arguments) in a fresh process; its return value, or an error string."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        pending = pool.apply_async(function, arguments)
        try:
            return pending.get(timeout=timeout)
        except multiprocessing.TimeoutError:
            return f"over {timeout:g} s"


def growth_per_doubling(points: list[tuple[int, float]]) -> str:
    """Time ratio per doubling of operators, between the two largest sizes (the asymptote; at
    the smallest size fixed costs and caches dominate)."""
    usable = [(n, t) for n, t in points if t > 0]
    if len(usable) < 2:
        return "—"
    (n1, t1), (n2, t2) = usable[-2], usable[-1]
    exponent = math.log(t2 / t1) / math.log(n2 / n1)
    return f"{2**exponent:.2f}x"


def format_seconds(value: float) -> str:
    """Seconds in a readable unit."""
    if value < 1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def scaling_table(shape: str, results: list[dict[str, Any]], memory: bool) -> Table:
    """One table per synthetic shape: rows are stages, columns sizes, growth, peak memory."""
    table = Table(title=f"{shape}: seconds per stage (one core), growth per doubling, peak memory")
    table.add_column("stage")
    for result in results:
        table.add_column(f"{result['operators']:,} ops", justify="right")
    table.add_column("per doubling", justify="right")
    if memory:
        table.add_column(f"peak MiB @ {results[-1]['operators']:,}", justify="right")
    stages = list(dict.fromkeys(stage for r in results for stage in r["seconds"]))
    for stage in stages:
        points = [(r["operators"], r["seconds"][stage]) for r in results if stage in r["seconds"]]
        cells = [
            format_seconds(r["seconds"][stage]) if stage in r["seconds"] else "—" for r in results
        ]
        row = [stage, *cells, growth_per_doubling(points)]
        if memory:
            row.append(f"{results[-1]['peaks'].get(stage, 0) / 2**20:,.1f}")
        table.add_row(*row)
    table.add_row(
        "process peak RSS",
        *(f"{r['peak_rss'] / 2**20:,.0f} MiB" for r in results),
        "",
        *([""] if memory else []),
    )
    return table


def runtime_table(rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> Table:
    """arenalens analyze time beside the real runtimes' own setup time, same run."""
    table = Table(title="arenalens analyze vs the real runtime's own load + allocation (same run)")
    for column in ("model", "ops", "LiteRT setup", "arenalens LiteRT", "ratio",
                   "TFLM setup", "arenalens TFLM", "ratio"):  # fmt: skip
        table.add_column(column, justify="left" if column == "model" else "right")
    for result, real in rows:
        cells = [result["case"], f"{result['operators']:,}"]
        for runtime, stage in (("litert", "analyze, LiteRT"), ("tflm", "analyze, TFLM")):
            ours = result["seconds"]["load"] + result["seconds"][stage]
            theirs = real.get(runtime) if isinstance(real, dict) else real
            if isinstance(theirs, float):
                cells += [format_seconds(theirs), format_seconds(ours), f"{ours / theirs:.1f}x"]
            else:
                cells += [str(theirs), format_seconds(ours), "—"]
        table.add_row(*cells)
    return table


def largest_shared_model() -> str | None:
    """'file:NAME' of the corpus model with the most operators, when the corpus is present."""
    if not SHARED.is_dir():
        return None
    from arenalens import load_model

    files = sorted(SHARED.glob("*.tflite"))
    if not files:
        return None
    best = max(files, key=lambda p: (load_model(p).operator_count, p.name))
    return f"file:{best.name}"


def main() -> int:
    """Measure every case in its own process; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--shapes", default="chain,branches,unet")
    parser.add_argument("--planner-limit", type=float, default=10.0, help="CP-SAT seconds")
    parser.add_argument("--no-runtimes", action="store_true", help="skip the real runtimes")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument(
        "--images-up-to",
        type=int,
        default=10_000,
        help="chart images only for models of at most this many operators (matplotlib)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers here")
    parser.add_argument("--from-json", metavar="FILE", help="print the tables of an earlier run")
    args = parser.parse_args()
    if args.from_json:
        return print_saved(Path(args.from_json), not args.no_memory)
    sizes = [int(s) for s in args.sizes.split(",")]
    memory = not args.no_memory
    console = Console(width=170)
    everything: list[dict[str, Any]] = []
    runtime_rows: list[tuple[dict[str, Any], dict[str, Any]]] = []
    cases = [[f"{shape}:{size}" for size in sizes] for shape in args.shapes.split(",")]
    shared = largest_shared_model()
    if shared is not None:
        cases.append([shared])
    else:
        print(f"(corpus not found at {SHARED}; real-model row skipped)", file=sys.stderr)
    for group in cases:
        results = []
        for case in group:
            print(f"measuring {case} ...", file=sys.stderr)
            images = case.startswith("file:") or int(case.split(":")[1]) <= args.images_up_to
            result = in_child(measure_one, case, args.planner_limit, memory, images, timeout=7200)
            if isinstance(result, str):
                print(f"  {case}: {result}", file=sys.stderr)
                continue
            results.append(result)
            if not args.no_runtimes:
                real = in_child(
                    runtime_setup, case, result["tflm_required"], timeout=RUNTIME_TIMEOUT_SECONDS
                )
                runtime_rows.append(
                    (result, real if isinstance(real, dict) else {"litert": real, "tflm": real})
                )
        if results:
            label = group[0].split(":")[0] if len(group) > 1 else group[0]
            console.print(scaling_table(label, results, memory))
            everything.extend(results)
    if runtime_rows:
        console.print(runtime_table(runtime_rows))
    if args.json:
        document = {"results": everything, "runtimes": [[r, real] for r, real in runtime_rows]}
        write_atomic(args.json, json.dumps(document, indent=1))
    return 0


def print_saved(path: Path, memory: bool) -> int:
    """The tables of a `--json` file, grouped as measured."""
    document = json.loads(path.read_text())
    console = Console(width=170)
    groups: dict[str, list[dict[str, Any]]] = {}
    for result in document["results"]:
        case = result["case"]
        label = case if case.startswith("file:") else case.split(":")[0]
        groups.setdefault(label, []).append(result)
    for label, results in groups.items():
        console.print(scaling_table(label, results, memory))
    rows = [(r, real) for r, real in document.get("runtimes", [])]
    if rows:
        console.print(runtime_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
