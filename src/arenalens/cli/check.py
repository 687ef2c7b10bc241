"""`arenalens check MODEL --budget SIZE | --target NAME|all [--max-input]`: will it fit, on which
boards, and how large an input can it take? Exit 0 yes, 1 no, 2 error."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from arenalens.builds.build import Build
from arenalens.cli.batch import ModelResult, add_models_argument, run_command
from arenalens.cli.common import (
    add_build_options,
    add_input_shape_option,
    add_output_options,
    add_runtime_option,
    load_with_input_shapes,
    print_json,
    print_text,
    selected_build,
    terminal_width,
    use_color,
)
from arenalens.errors import UsageError
from arenalens.fit import FitCheck, board_fits, board_row, check_fit, fit_document
from arenalens.ir import Model
from arenalens.max_input import InputSearch, search_max_input
from arenalens.pipeline import Analysis, analyze
from arenalens.report.check_output import (
    render_boards,
    render_check,
    render_input_search,
    render_targets,
)
from arenalens.target_build import target_build
from arenalens.targets import (
    ALL_TARGETS,
    BOARDS,
    CHIPS,
    Target,
    get_target,
    target_document,
)
from arenalens.units import SIZE_HELP, parse_size

EXIT_FITS = 0
EXIT_DOES_NOT_FIT = 1
# Time `optimize` gets when check asks what it would reach (only when that decides a verdict).
OPTIMIZE_SECONDS = 4.0
_COLUMNS = (
    ("required", "needs (B)"),
    ("available", "available (B)"),
    ("headroom", "headroom (B)"),
    ("verdict", "verdict"),
)


def register(subparsers: Any) -> None:
    """Add the `check` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="does the model's arena fit a RAM budget, a board, or which boards? (exit 0 / 1)",
        description="Compare the arena you must declare (TFLM: kTensorArenaSize = head + tail + "
        "setup, all inside the tensor arena; LiteRT: arenas + persistent arenas) with a budget "
        "or a board's largest static block, minus a reserve for the rest of the firmware. "
        "--target all checks every board preset at once; --max-input finds the largest input "
        "resolution that fits. Exit 0 when it fits, 1 when it does not, 2 on bad input: made "
        "for CI.",
    )
    add_models_argument(parser, required=False)
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--budget", metavar="SIZE", help=f"RAM for the arena: {SIZE_HELP}")
    budget.add_argument(
        "--target",
        metavar="NAME",
        help="a board or chip preset: its largest static block is the budget "
        "(see --list-targets); 'all' checks every board and prints one row per board",
    )
    parser.add_argument(
        "--reserve",
        metavar="SIZE",
        default="0",
        help="RAM the rest of the firmware needs, taken off the budget (default: 0; same units)",
    )
    add_runtime_option(parser)
    add_build_options(parser)
    parser.add_argument(
        "--planner",
        default=None,
        metavar="NAME",
        help="check the plan of this planner (e.g. the one `optimize` wrote) instead of the "
        "runtime's own",
    )
    parser.add_argument(
        "--max-input",
        action="store_true",
        help="search the largest input height x width (same aspect ratio and channels; shapes "
        "propagated by the real LiteRT interpreter, extra 'runtime') whose arena fits",
    )
    parser.add_argument(
        "--list-targets",
        action="store_true",
        help="list the board and chip presets with their core, RAM and sources",
    )
    add_input_shape_option(parser)
    add_output_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """List targets, or check one model (verdict / board table) or many (summary table)."""
    if args.list_targets:
        return _list_targets(args)
    if not args.models:
        raise UsageError("check: give at least one MODEL (or --list-targets)")
    _budget_options(args)  # fail fast, before any model is read
    selected_build(args)
    if _all_boards(args) and args.max_input:
        raise UsageError("--max-input needs one budget: give --target NAME or --budget SIZE")
    return run_command(args, check_worker, _single, _COLUMNS, title="arenalens check")


def _all_boards(args: argparse.Namespace) -> bool:
    return args.target is not None and args.target.strip().lower() == ALL_TARGETS


def _budget_options(args: argparse.Namespace) -> tuple[int | None, Target | None, int]:
    if args.budget is None and args.target is None:
        raise UsageError("check: give --budget SIZE or --target NAME (see --list-targets)")
    budget = None if args.budget is None else parse_size(args.budget)
    target = None if args.target is None or _all_boards(args) else get_target(args.target)
    if budget is not None and budget <= 0:
        raise UsageError(f"--budget must be positive, got '{args.budget}'")
    return budget, target, parse_size(args.reserve)


def _analysis(args: argparse.Namespace, model: Model, build: Build | None = None) -> Analysis:
    return analyze(
        model, runtime=args.runtime, build=build or selected_build(args), planner=args.planner
    )


def optimized_bytes(
    args: argparse.Namespace, model: Model, build: Build | None = None
) -> int | None:
    """The number to declare after `arenalens optimize` (TFLM, runtime plan only), else None."""
    planner = args.planner[0] if isinstance(args.planner, list) else args.planner
    if args.runtime != "tflm" or planner is not None:
        return None
    from arenalens.optimization import optimize_model  # noqa: PLC0415 - only when it decides

    return optimize_model(
        model, time_limit_s=OPTIMIZE_SECONDS, build=build or selected_build(args)
    ).new_required_bytes


def fit_check(args: argparse.Namespace, path: str) -> FitCheck:
    """One model → its FitCheck under the options (optimize consulted when it decides)."""
    budget, target, reserve = _budget_options(args)
    model = load_with_input_shapes(path, args)
    check = check_fit(
        _analysis(args, model),
        budget_bytes=budget,
        target=target,
        reserve_bytes=reserve,
        budget_text=args.budget or "",
    )
    if check.optimize_decides:
        check = with_optimized(check, optimized_bytes(args, model))
    return check


def with_optimized(check: FitCheck, optimized: int | None) -> FitCheck:
    """The check with the number `optimize` would reach filled in."""
    return replace(check, optimized_bytes=optimized)


def board_build(args: argparse.Namespace, board: Target) -> Build:
    """The build one board's row is for: --cpu / --kernels when given, else the board's core
    and default kernels (TFLM only; LiteRT has one figure)."""
    if args.runtime != "tflm":
        return selected_build(args)
    return target_build(board, cpu=args.cpu, kernels=args.kernels)


def board_checks(args: argparse.Namespace, path: str) -> tuple[FitCheck, ...]:
    """One model against every board, most useful first; each board with its own core's number
    (one analysis per distinct build)."""
    _, _, reserve = _budget_options(args)
    model = load_with_input_shapes(path, args)
    analyses: dict[str, Analysis] = {}
    optimized: dict[str, int | None] = {}  # computed once per build, when a board needs it

    def check_for(board: Target) -> FitCheck:
        build = board_build(args, board)
        if build.name not in analyses:
            analyses[build.name] = _analysis(args, model, build)
        check = check_fit(analyses[build.name], target=board, reserve_bytes=reserve)
        if check.optimize_decides:
            if build.name not in optimized:
                optimized[build.name] = optimized_bytes(args, model, build)
            check = with_optimized(check, optimized[build.name])
        return check

    return board_fits(check_for, BOARDS)


def input_search(args: argparse.Namespace, path: str, check: FitCheck) -> InputSearch:
    """The largest input of one model that fits the check's available bytes."""
    model = load_with_input_shapes(path, args)
    return search_max_input(
        model,
        available_bytes=check.available_bytes,
        required_at=lambda resized: _analysis(args, resized).budget.required_bytes,
    )


def _exit_code(check: FitCheck) -> int:
    return EXIT_FITS if check.fits else EXIT_DOES_NOT_FIT


def _single(args: argparse.Namespace, path: str) -> int:
    if _all_boards(args):
        return _single_boards(args, path)
    check = fit_check(args, path)
    search = input_search(args, path, check) if args.max_input else None
    if args.json:
        document = fit_document(check)
        if search is not None:
            document.update(input_search_document(search))
        print_json(document)
    else:
        text = render_check(check, color=use_color(args), width=terminal_width())
        if search is not None:
            text += render_input_search(search, color=use_color(args), width=terminal_width())
        print_text(text)
    return _exit_code(check)


def input_search_document(search: InputSearch) -> dict[str, Any]:
    """The --max-input keys of the check document."""
    largest = search.largest
    return {
        "max_input_name": search.input_name,
        "max_input_shape": None if largest is None else list(largest.shape),
        "max_input_required_bytes": None if largest is None else largest.required_bytes,
        "input_shape": list(search.original_shape),
        "input_sizes": [
            {
                "shape": list(size.shape),
                "required_bytes": size.required_bytes,
                "fits": size.fits,
                "error": size.error or None,
            }
            for size in search.sizes
        ],
    }


def _single_boards(args: argparse.Namespace, path: str) -> int:
    checks = board_checks(args, path)
    fitting = sum(1 for check in checks if check.fits)
    if args.json:
        first = checks[0]
        print_json(
            {
                "schema": "arenalens.boards",
                "schema_version": 1,
                "model": first.model,
                "file": first.source,
                "runtime": first.runtime,
                "planner": first.planner,
                "declare": first.declared.as_dict(),
                "reserve_bytes": first.reserve_bytes,
                "boards_fitting": fitting,
                "boards": [board_row(check) for check in checks],
            }
        )
    else:
        print_text(render_boards(checks, color=use_color(args), width=terminal_width()))
    return EXIT_FITS if fitting else EXIT_DOES_NOT_FIT


def check_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → its summary row and JSON document."""
    if _all_boards(args):
        checks = board_checks(args, path)
        fitting = [check for check in checks if check.fits]
        return ModelResult(
            model=path,
            exit_code=EXIT_FITS if fitting else EXIT_DOES_NOT_FIT,
            row={
                "required": checks[0].required_bytes,
                "available": None,
                "headroom": None,
                "verdict": f"{len(fitting)} of {len(checks)} boards",
            },
            document={"boards": [board_row(check) for check in checks]},
        )
    check = fit_check(args, path)
    return ModelResult(
        model=path,
        exit_code=_exit_code(check),
        row={
            "required": check.required_bytes,
            "available": check.available_bytes,
            "headroom": check.headroom_bytes,
            "verdict": check.verdict,
        },
        document=fit_document(check),
    )


def _list_targets(args: argparse.Namespace) -> int:
    if args.json:
        print_json([target_document(t) for t in (*BOARDS, *CHIPS)])
        return EXIT_FITS
    print_text(render_targets(BOARDS, CHIPS, color=use_color(args), width=terminal_width()))
    return EXIT_FITS
