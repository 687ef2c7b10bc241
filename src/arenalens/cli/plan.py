"""`arenalens plan MODEL`: where every tensor goes, under a runtime's rules and a planner."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
from typing import TYPE_CHECKING, Any

from arenalens.cli.batch import ModelResult, add_models_argument, is_batch, run_command
from arenalens.cli.common import (
    add_build_options,
    add_delegate_option,
    add_input_shape_option,
    add_isa_option,
    add_output_options,
    add_runtime_option,
    add_target_option,
    add_threads_option,
    delegate_of,
    isa_option,
    load_with_input_shapes,
    print_json,
    print_text,
    runtime_for,
    selected_build,
    single_target,
    terminal_width,
    threads_option,
    use_color,
)
from arenalens.declared import Status
from arenalens.errors import UsageError
from arenalens.pipeline import Analysis, analyze
from arenalens.planning.registry import known_planner_names
from arenalens.report.plan_output import plan_document
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:
    from arenalens.reorder.registry import ReorderResult

# --reorder and --ascii import their modules when asked: most runs need neither; the terminal
# renderer (rich) loads only when text is printed, not for --json.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `plan` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_models_argument(parser)
    add_runtime_option(parser, default=None)
    add_build_options(parser)
    add_target_option(parser)
    parser.add_argument(
        "--planner",
        metavar="NAME",
        help="planner to use (default: the runtime's own); known: "
        + ", ".join(known_planner_names()),
    )
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import a module or .py file first (it may register planners with "
        "arenalens.register_planner); repeatable",
    )
    parser.add_argument(
        "--alignment",
        type=int,
        metavar="N",
        help="TFLM: round every size up to N (default 16); LiteRT: align offsets to N (default 64)",
    )
    parser.add_argument(
        "--reorder",
        action="store_true",
        help="plan in the operator order with the lowest busiest step (as optimize --reorder)",
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        help="print TFLM's PrintMemoryPlan text (what TF_LITE_SHOW_MEMORY_USE builds print)",
    )
    add_delegate_option(parser)
    add_threads_option(parser)
    add_isa_option(parser)
    parser.add_argument(
        "--arena-base",
        type=_address,
        metavar="ADDRESS",
        help="arena start address (e.g. 0x20001000): also show absolute addresses",
    )
    add_input_shape_option(parser)
    add_output_options(parser)


def _address(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an address: {text!r} (use e.g. 0x20001000)"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"an address cannot be negative: {text!r}")
    return value


def load_plugin(name: str) -> None:
    """Import a module by dotted name, or a .py file by path (it registers its planners)."""
    try:
        if name.endswith(".py") or os.sep in name:
            # pathlib only for a plugin file: `plan` of a model never imports it (with
            # urllib.parse and ipaddress, ~16 M instructions of its start-up).
            from pathlib import Path  # noqa: PLC0415

            path = Path(name)
            spec = importlib.util.spec_from_file_location(f"arenalens_plugin_{path.stem}", path)
            if spec is None or spec.loader is None or not path.is_file():
                raise UsageError(f"--plugin {name}: no such Python file")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            importlib.import_module(name)
    except ImportError as error:
        raise UsageError(f"--plugin {name}: cannot import it ({error})") from error


_COLUMNS = (
    ("arena", "arena (B)"),
    ("lower_bound", "lower bound (B)"),
    ("overhead", "over bound"),
    ("required", "declare (B)"),
)


def run(args: argparse.Namespace) -> int:
    """One model: the plan (table, JSON or TFLM's ASCII printout); several: one row each."""
    args.runtime = runtime_for(args)  # a Linux device is LiteRT's, as check says
    if args.alignment is not None and args.alignment < 1:
        raise UsageError(f"--alignment must be >= 1, got {args.alignment}")
    threads_option(args)
    isa_option(args)
    if args.ascii and is_batch(args.models):
        raise UsageError("--ascii prints one model's plan; give a single MODEL")
    selected_build(args)  # bad --cpu / --kernels fail before any model is read
    for plugin in args.plugin:
        load_plugin(plugin)
    return run_command(args, plan_worker, _single, _COLUMNS, title="arenalens plan")


def _plan(args: argparse.Namespace, path: str) -> tuple[Analysis, ReorderResult | None]:
    """One MODEL argument → (Analysis, the reorder result or None)."""
    build = selected_build(args)
    model = load_with_input_shapes(path, args)
    reordered = None
    if args.reorder:
        from arenalens.reorder.runtime_order import (  # noqa: PLC0415 - --reorder only
            reorder_for_runtime,
        )
        from arenalens.reorder.schedule import apply_schedule  # noqa: PLC0415 - --reorder only

        schedule, reordered = reorder_for_runtime(model, args.runtime, build=build)
        model = apply_schedule(model, schedule)
    analysis = analyze(
        model, runtime=args.runtime, build=build, planner=args.planner, alignment=args.alignment
    )
    if args.runtime == "litert":
        from arenalens.litert_memory import arenas_on_device  # noqa: PLC0415 - LiteRT only

        analysis = arenas_on_device(analysis, single_target(args), args.isa)
    return analysis, reordered


def _document(
    args: argparse.Namespace, analysis: Analysis, reordered: ReorderResult | None
) -> dict[str, Any]:
    isa = args.isa
    if args.runtime == "litert":
        # A Linux device's heap is for its ISA, as check sizes it (held-out path: plan --target
        # raspberry-pi-zero-2-w gave the x86-64 heap, 10% under check's arm64 figure).
        from arenalens.litert_memory import target_isa  # noqa: PLC0415 - LiteRT only

        isa = target_isa(single_target(args), args.isa)
    document = plan_document(
        analysis,
        arena_base=args.arena_base,
        threads=args.threads,
        isa=isa,
        delegate=delegate_of(args),
    )
    if reordered is not None:
        document["reorder"] = {
            "reorderer": reordered.reorderer,
            "file_order_peak": reordered.file_order_peak,
            "peak": min(reordered.peak, reordered.file_order_peak),
            # Original operator indices of subgraph 0 in the order that was planned.
            "order": list(reordered.order)
            if reordered.peak < reordered.file_order_peak
            else list(range(len(reordered.order))),
        }
    return document


def _exit_code(document: dict[str, Any]) -> int:
    """1 when there is no number to trust: the runtime cannot run the model, its offline plan
    would corrupt tensors, or an input's size is a placeholder (the plan is printed anyway)."""
    return 0 if Status(document["declare"]["status"]).gives_a_number else 1


def _single(args: argparse.Namespace, path: str) -> int:
    analysis, reordered = _plan(args, path)
    if args.ascii:
        if args.runtime != "tflm":
            raise UsageError("--ascii prints TFLM's PrintMemoryPlan; use it with --runtime tflm")
        from arenalens.report.ascii import render_tflm_memory_plan  # noqa: PLC0415 - --ascii only

        primary = analysis.primary
        print_text(render_tflm_memory_plan(primary.arena, primary.plan))
        return 0
    document = _document(args, analysis, reordered)
    if args.json:
        print_json(document)
        return _exit_code(document)
    if reordered is not None:
        print_text(
            f"reordered operators: busiest step {reordered.file_order_peak:,} → "
            f"{format_bytes_exact(min(reordered.peak, reordered.file_order_peak))}"
        )
    from arenalens.report.plan_text import render_plan  # noqa: PLC0415 - text output only

    print_text(render_plan(document, color=use_color(args), width=terminal_width()))
    return _exit_code(document)


def plan_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → its arena numbers and plan document."""
    for plugin in args.plugin:  # a worker process starts fresh: register plugin planners again
        load_plugin(plugin)
    document = _document(args, *_plan(args, path))
    overhead = document["overhead_over_lower_bound_percent"]
    return ModelResult(
        model=path,
        exit_code=_exit_code(document),
        row={
            "arena": document["arena_bytes"],
            "lower_bound": document["lower_bound_bytes"],
            "overhead": "-" if overhead is None else f"{overhead:.1f}%",
            "required": document["required_bytes"],
        },
        document=document,
    )
