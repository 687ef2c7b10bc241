"""`arenalens check MODEL --budget SIZE | --target NAME`: will it fit? Exit 0 yes, 1 no, 2 error."""

from __future__ import annotations

import argparse
from typing import Any

from arenalens.cli.batch import ModelResult, add_models_argument, run_command
from arenalens.cli.common import (
    add_input_shape_option,
    add_output_options,
    add_runtime_option,
    load_with_input_shapes,
    print_json,
    print_text,
    terminal_width,
    use_color,
)
from arenalens.errors import UsageError
from arenalens.fit import FitCheck, check_fit, fit_document
from arenalens.pipeline import analyze
from arenalens.report.check import render_check, render_targets
from arenalens.targets import TARGETS, Target, get_target
from arenalens.units import SIZE_HELP, parse_size

EXIT_FITS = 0
EXIT_DOES_NOT_FIT = 1
_COLUMNS = (
    ("required", "needs (B)"),
    ("available", "available (B)"),
    ("headroom", "headroom (B)"),
    ("fits", "fits"),
)


def register(subparsers: Any) -> None:
    """Add the `check` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="does the model's arena fit a RAM budget or a target MCU? (exit 0 / 1)",
        description="Compare the arena you must declare (TFLM: kTensorArenaSize, head + tail; "
        "LiteRT: arenas + persistent arenas) with a budget or a target's documented SRAM, "
        "minus a reserve for the rest of the firmware. Exit 0 when it fits, 1 when it does "
        "not, 2 on bad input: made for CI.",
    )
    add_models_argument(parser, required=False)
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--budget", metavar="SIZE", help=f"RAM for the arena: {SIZE_HELP}")
    budget.add_argument(
        "--target",
        metavar="NAME",
        help="a target preset: its largest arena block is the budget (see --list-targets)",
    )
    parser.add_argument(
        "--reserve",
        metavar="SIZE",
        default="0",
        help="RAM the rest of the firmware needs, taken off the budget (default: 0)",
    )
    add_runtime_option(parser)
    parser.add_argument(
        "--planner",
        default=None,
        metavar="NAME",
        help="check the plan of this planner (e.g. the one `optimize` wrote) instead of the "
        "runtime's own",
    )
    parser.add_argument("--list-targets", action="store_true", help="list target presets")
    add_input_shape_option(parser)
    add_output_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """List targets, or check one model (verdict) or many (summary table)."""
    if args.list_targets:
        return _list_targets(args)
    if not args.models:
        raise UsageError("check: give at least one MODEL (or --list-targets)")
    _budget_options(args)  # fail fast, before any model is read
    return run_command(args, check_worker, _single, _COLUMNS, title="arenalens check")


def _budget_options(args: argparse.Namespace) -> tuple[int | None, Target | None, int]:
    if args.budget is None and args.target is None:
        raise UsageError("check: give --budget SIZE or --target NAME (see --list-targets)")
    budget = None if args.budget is None else parse_size(args.budget)
    target = None if args.target is None else get_target(args.target)
    if budget is not None and budget <= 0:
        raise UsageError(f"--budget must be positive, got '{args.budget}'")
    return budget, target, parse_size(args.reserve)


def fit_check(args: argparse.Namespace, path: str) -> FitCheck:
    """One model → its FitCheck under the options."""
    budget, target, reserve = _budget_options(args)
    model = load_with_input_shapes(path, args)
    analysis = analyze(model, runtime=args.runtime, planner=args.planner)
    return check_fit(analysis, budget_bytes=budget, target=target, reserve_bytes=reserve)


def _exit_code(check: FitCheck) -> int:
    return EXIT_FITS if check.fits else EXIT_DOES_NOT_FIT


def _single(args: argparse.Namespace, path: str) -> int:
    check = fit_check(args, path)
    if args.json:
        print_json(fit_document(check))
    else:
        print_text(render_check(check, color=use_color(args), width=terminal_width()))
    return _exit_code(check)


def check_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → its summary row and JSON document."""
    check = fit_check(args, path)
    return ModelResult(
        model=path,
        exit_code=_exit_code(check),
        row={
            "required": check.required_bytes,
            "available": check.available_bytes,
            "headroom": check.headroom_bytes,
            "fits": check.fits,
        },
        document=fit_document(check),
    )


def _list_targets(args: argparse.Namespace) -> int:
    if args.json:
        print_json(
            [
                {
                    "name": t.name,
                    "title": t.title,
                    "core": t.core,
                    "sram_bytes": t.sram_bytes,
                    "arena_limit_bytes": t.arena_limit_bytes,
                    "source": t.source,
                    "note": t.note,
                }
                for t in TARGETS.values()
            ]
        )
        return EXIT_FITS
    print_text(render_targets(TARGETS.values(), color=use_color(args), width=terminal_width()))
    return EXIT_FITS
