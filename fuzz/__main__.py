"""Fuzz campaign: N generated hostile inputs through every stage, with outcome counts and timing.

Each input is a mutated, truncated or spliced seed model, a hand-crafted hostile model, or junk
(see `fuzz`). It runs in a worker process under a wall-clock limit and a memory cap;
the only acceptable ends are a result (ok) or `arenalens.ModelError` (model_error). Crashes,
hangs and memory blow-ups are counted, grouped by cause, and listed with the execution number
that replays them. Exit code 1 when any input failed.

Run:   python -m fuzz --executions 100000 [--workers 2] [--seed 0]
Replay one input with a traceback:   python -m fuzz --replay 12345 [--save input.tflite]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback
from pathlib import Path

from rich.console import Console
from rich.table import Table

from arenalens.atomic import write_atomic
from fuzz.harness import (
    FAILURE_KINDS,
    GENERATORS,
    OUTCOME_KINDS,
    CampaignConfig,
    CampaignResult,
    generate_input,
    is_deep,
    run_campaign,
)
from fuzz.seeds import seed_corpus
from fuzz.stages import STAGES

# The real-model corpus next to the repository (../shared/models), when present.
SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"


def parse_arguments() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--time-limit", type=float, default=60.0, help="CPU seconds per input (wall: 4x + 10)"
    )
    parser.add_argument("--memory-limit-mb", type=int, default=3072, help="per worker (RLIMIT_AS)")
    parser.add_argument(
        "--deep-every",
        type=int,
        default=20,
        help="1 in N inputs also runs the deep tier: searches, terminal text, images, diagnose, "
        "reorder and optimize (default 20)",
    )
    parser.add_argument(
        "--corpus",
        default=str(SHARED),
        help="directory of real .tflite seeds, used when present (default: ../shared/models)",
    )
    parser.add_argument("--save-failures", metavar="DIR", help="write each failing input here")
    parser.add_argument("--replay", type=int, metavar="N", help="run input N alone, in-process")
    parser.add_argument("--save", metavar="FILE", help="with --replay: write input N to FILE")
    return parser.parse_args()


def corpus_directory(text: str) -> str | None:
    """The corpus directory when it exists (real models are optional seeds)."""
    return text if Path(text).is_dir() else None


def replay(arguments: argparse.Namespace) -> int:
    """Regenerate one input and run every stage in this process, showing any traceback."""
    corpus = seed_corpus(corpus_directory(arguments.corpus))
    data, recipe = generate_input(arguments.seed, arguments.replay, corpus)
    print(f"input {arguments.replay}: {len(data):,} bytes; {recipe}")
    if arguments.save:
        write_atomic(arguments.save, data)
        print(f"written to {arguments.save}")
    state: dict[str, object] = {"data": data}
    deep = is_deep(arguments.seed, arguments.replay, arguments.deep_every)
    for stage in STAGES:
        if stage.deep and not deep:
            continue
        started = time.perf_counter()
        try:
            stage.run(state)
        except Exception:
            traceback.print_exc()
            print(f"stage {stage.name}: raised after {time.perf_counter() - started:.3f} s")
            return 1
        print(f"stage {stage.name}: ok in {time.perf_counter() - started:.3f} s")
    return 0


class ProgressReport:
    """Called every few seconds: a status line on stderr, and a line per new failure (with the
    input number that replays it)."""

    def __init__(self) -> None:
        self.failures_shown = 0

    def __call__(self, result: CampaignResult) -> None:
        for execution in result.failures[self.failures_shown :]:
            print(
                f"  FAILED input {execution.index}: {execution.outcome.signature} "
                f"({execution.outcome.detail[:120]}) | {execution.recipe[:120]}",
                file=sys.stderr,
            )
        self.failures_shown = len(result.failures)
        done = result.executions
        rate = done / result.wall_seconds if result.wall_seconds else 0.0
        counts = ", ".join(f"{k} {result.counts[k]:,}" for k in OUTCOME_KINDS if result.counts[k])
        remaining = (result.config.executions - done) / rate if rate else 0.0
        print(
            f"  {done:,}/{result.config.executions:,} ({rate:.0f}/s, ~{remaining / 60:.0f} min "
            f"left): {counts}",
            file=sys.stderr,
        )


def print_tables(result: CampaignResult, console: Console) -> None:
    """Outcome, generator, stage, failure and timing tables."""
    total = result.executions
    config = result.config
    outcomes = Table(
        title=f"fuzz: {total:,} executions, seed {config.seed}, {config.workers} workers, "
        f"{config.time_limit_s:g} s of CPU / {config.memory_limit_bytes >> 20:,} MiB per input, "
        f"deep tier 1 in {config.deep_every}"
    )
    outcomes.add_column("outcome")
    outcomes.add_column("executions", justify="right")
    outcomes.add_column("share", justify="right")
    outcomes.add_column("of which deep tier", justify="right")
    for kind in OUTCOME_KINDS:
        count = result.counts[kind]
        outcomes.add_row(
            kind,
            f"{count:,}",
            f"{100 * count / max(total, 1):.2f}%",
            f"{result.deep_counts[kind]:,}",
        )
    console.print(outcomes)

    generators = Table(title="outcomes by input generator")
    generators.add_column("generator")
    for kind in OUTCOME_KINDS:
        generators.add_column(kind, justify="right")
    for name, _ in GENERATORS:
        generators.add_row(name, *(f"{result.by_generator[(name, k)]:,}" for k in OUTCOME_KINDS))
    console.print(generators)

    stages = Table(title="where inputs were refused (ModelError by stage)")
    stages.add_column("stage")
    stages.add_column("refused", justify="right")
    for stage in STAGES:
        stages.add_row(stage.name, f"{result.model_error_stages[stage.name]:,}")
    console.print(stages)

    seconds = sorted(result.seconds) or [0.0]
    timing = Table(title="time")
    timing.add_column("measure")
    timing.add_column("value", justify="right")
    timing.add_row(
        "wall clock", f"{result.wall_seconds:,.0f} s ({result.wall_seconds / 60:.1f} min)"
    )
    timing.add_row("executions / s", f"{total / max(result.wall_seconds, 1e-9):,.0f}")
    timing.add_row("per input: median", f"{1000 * statistics.median(seconds):.1f} ms")
    timing.add_row(
        "per input: 99th percentile", f"{1000 * seconds[int(0.99 * (len(seconds) - 1))]:.0f} ms"
    )
    timing.add_row("per input: slowest", f"{seconds[-1]:.2f} s")
    timing.add_row("worker peak RSS", f"{result.worker_peak_rss_bytes / 2**20:,.0f} MiB")
    timing.add_row("worker restarts", f"{result.worker_restarts}")
    console.print(timing)

    slowest = Table(title="slowest inputs")
    slowest.add_column("input", justify="right")
    slowest.add_column("seconds", justify="right")
    slowest.add_column("outcome")
    slowest.add_column("recipe")
    for execution in result.top_slowest(8):
        slowest.add_row(
            str(execution.index),
            f"{execution.outcome.seconds:.2f}",
            execution.outcome.kind,
            execution.recipe[:90],
        )
    console.print(slowest)

    if result.failures:
        failures = Table(title="failures by cause (replay with --replay N)")
        failures.add_column("count", justify="right")
        failures.add_column("cause")
        failures.add_column("first input", justify="right")
        failures.add_column("recipe")
        first: dict[str, int] = {}
        recipes: dict[str, str] = {}
        for execution in result.failures:
            first.setdefault(execution.outcome.signature, execution.index)
            recipes.setdefault(execution.outcome.signature, execution.recipe)
        for cause, count in result.failure_signatures().most_common():
            failures.add_row(str(count), cause, str(first[cause]), recipes[cause][:70])
        console.print(failures)


def save_failures(result: CampaignResult, directory: str) -> None:
    """Write each failing input as <number>.tflite (regenerated from its number)."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    corpus = seed_corpus(result.config.corpus_directory)
    for execution in result.failures:
        data, _ = generate_input(result.config.seed, execution.index, corpus)
        write_atomic(folder / f"{execution.index}.tflite", data)


def main() -> int:
    """Run the campaign (or one replay) and print the tables."""
    arguments = parse_arguments()
    if arguments.replay is not None:
        return replay(arguments)
    config = CampaignConfig(
        executions=arguments.executions,
        seed=arguments.seed,
        workers=arguments.workers,
        time_limit_s=arguments.time_limit,
        memory_limit_bytes=arguments.memory_limit_mb << 20,
        corpus_directory=corpus_directory(arguments.corpus),
        deep_every=arguments.deep_every,
    )
    corpus = seed_corpus(config.corpus_directory)
    print(
        f"fuzzing: {config.executions:,} inputs from {len(corpus)} seeds "
        f"({'with' if config.corpus_directory else 'without'} real models), "
        f"stages: {' -> '.join(stage.name + ('*' if stage.deep else '') for stage in STAGES)} "
        f"(* deep tier: 1 in {config.deep_every} inputs)",
        file=sys.stderr,
    )
    result = run_campaign(config, progress=ProgressReport())
    print_tables(result, Console(width=160))
    if arguments.save_failures and result.failures:
        save_failures(result, arguments.save_failures)
    failed = sum(result.counts[kind] for kind in FAILURE_KINDS)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
