"""`arenalens inspect MODEL`: what is in a model, and when each tensor lives."""

from __future__ import annotations

import argparse
from typing import Any

from arenalens.analysis.lifetimes import litert_timeline, tflm_timeline
from arenalens.cli.common import (
    add_model_argument,
    add_output_options,
    load_model_argument,
    print_json,
    print_text,
    terminal_width,
    use_color,
)
from arenalens.report.inspect import inspect_document, render_inspect


def register(subparsers: Any) -> None:
    """Add the `inspect` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "inspect",
        help="summarize a model: subgraphs, operators, tensors, bytes, lifetimes",
        description="Summarize a .tflite model: subgraphs, operator histogram, tensors by kind, "
        "bytes in constants vs arena candidates vs variables, inputs and outputs.",
    )
    add_model_argument(parser)
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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Load, summarize, print."""
    model = load_model_argument(args.model)
    timeline = None
    if args.lifetimes:
        timeline = tflm_timeline(model) if args.runtime == "tflm" else litert_timeline(model)
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
