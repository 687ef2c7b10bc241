"""`arenalens compare MODEL`: every planner on the runtime's arena, side by side."""

from __future__ import annotations

import argparse

from arenalens.cli.common import (
    add_build_options,
    add_effort_options,
    add_input_shape_option,
    add_model_argument,
    add_output_options,
    add_runtime_option,
    add_target_option,
    load_with_input_shapes,
    overlap_rules_for,
    print_json,
    print_text,
    runtime_for,
    selected_build,
    terminal_width,
    use_color,
)
from arenalens.comparison import compare_planners
from arenalens.declared import declared_arena
from arenalens.pipeline import analyze
from arenalens.report.compare_output import compare_document, render_compare


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `compare` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_model_argument(parser)
    add_runtime_option(parser, default=None)
    add_build_options(parser)
    add_target_option(parser)
    parser.add_argument(
        "--reorder",
        action="store_true",
        help="first reorder operators to lower the busiest step (the bound itself moves)",
    )
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="also run every planner with TFLM's allowed overlaps (an output may start below an "
        "input it consumes, as far as the kernel's access order allows), side by side",
    )
    parser.add_argument(
        "--planners",
        metavar="A,B,...",
        help="only these planners (default: all registered ones)",
    )
    add_effort_options(parser, default=10.0, what="each search planner (optimal, best, hillclimb)")
    parser.add_argument("--seed", type=int, default=0, help="seed for randomized planners")
    add_input_shape_option(parser)
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    """Load, compare, print the table or JSON."""
    args.runtime = runtime_for(args)  # a Linux device is LiteRT's, as check says
    planners = None
    if args.planners:
        planners = [name.strip() for name in args.planners.split(",") if name.strip()]
    build = selected_build(args)
    model = load_with_input_shapes(args.model, args)
    comparison = compare_planners(
        model,
        runtime=args.runtime,
        build=build,
        planners=planners,
        effort=args.effort,
        time_limit_s=args.time_limit,
        seed=args.seed,
        reorder=args.reorder,
        overlap=overlap_rules_for(args, build) if args.overlap else False,
    )
    # The verdict, as plan and check give it: no number to trust (the runtime cannot run the
    # model, its input size is a placeholder, its offline plan corrupts tensors) leads and
    # exits 1, whatever the planners find for its arena.
    declared = declared_arena(analyze(model, runtime=args.runtime, build=build))
    document = compare_document(comparison, declared)
    code = 0 if declared.status.gives_a_number else 1
    if args.json:
        print_json(document)
        return code
    print_text(
        render_compare(document, color=use_color(args), width=terminal_width(), declared=declared)
    )
    return code
