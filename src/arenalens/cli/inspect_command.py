"""`arenalens inspect MODEL`: what is in a model, and when each tensor lives."""

from __future__ import annotations

import argparse

from arenalens.analysis.lifetimes import Timeline
from arenalens.analysis.summary import summarize
from arenalens.cli.batch import ModelResult, add_models_argument, run_command
from arenalens.cli.common import (
    add_output_options,
    load_model_argument,
    print_json,
    print_text,
    terminal_width,
    use_color,
)
from arenalens.ir import Model
from arenalens.report.inspect_output import inspect_document, render_inspect
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.litert.lifetimes import litert_timeline

_COLUMNS = (
    ("subgraphs", "subgraphs"),
    ("operators", "operators"),
    ("tensors", "tensors"),
    ("arena_candidates", "arena candidates (B)"),
    ("constants", "constants (B)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `inspect` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_models_argument(parser)
    parser.add_argument("--tensors", action="store_true", help="list every tensor")
    parser.add_argument(
        "--lifetimes",
        action="store_true",
        help="first write / last read step of every non-constant tensor",
    )
    parser.add_argument(
        "--runtime",
        choices=("tflm", "litert"),
        default="tflm",
        help="lifetime rules for --lifetimes (default: tflm)",
    )
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    """One model: summary (and tensors / lifetimes); several: one summary row each."""
    return run_command(args, inspect_worker, _single, _COLUMNS, title="arenalens inspect")


def _load(args: argparse.Namespace, path: str) -> tuple[Model, Timeline | None]:
    model = load_model_argument(path)
    timeline = None
    if args.lifetimes:
        timeline = (
            tflm_runtime().tensor_timeline(model)
            if args.runtime == "tflm"
            else litert_timeline(model)
        )
    return model, timeline


def _single(args: argparse.Namespace, path: str) -> int:
    model, timeline = _load(args, path)
    if args.json:
        print_json(inspect_document(model, timeline))
        return 0
    print_text(
        render_inspect(
            model,
            show_tensors=args.tensors,
            timeline=timeline,
            color=use_color(args),
            width=terminal_width(),
        )
    )
    return 0


def inspect_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → counts and bytes for its summary row, and its JSON document."""
    model, timeline = _load(args, path)
    summary = summarize(model)
    return ModelResult(
        model=path,
        exit_code=0,
        row={
            "subgraphs": len(model.subgraphs),
            "operators": model.operator_count,
            "tensors": model.tensor_count,
            "arena_candidates": summary.arena_candidate_bytes,
            "constants": summary.constant_bytes,
        },
        document=inspect_document(model, timeline),
    )
