"""`arenalens diagnose MODEL...`: what is wrong with this model's memory plan, and what to do."""

from __future__ import annotations

import argparse

from arenalens.cli.batch import ModelResult, add_models_argument, run_command
from arenalens.cli.common import (
    add_alignment_option,
    add_build_options,
    add_delegate_option,
    add_effort_options,
    add_input_shape_option,
    add_output_options,
    add_runtime_option,
    add_target_option,
    delegate_of,
    load_with_input_shapes,
    print_json,
    print_text,
    runtime_for,
    selected_build,
    single_target,
    terminal_width,
    use_color,
)
from arenalens.declared import DeclaredArena
from arenalens.diagnostics import RULES, Diagnosis, Severity, diagnose
from arenalens.errors import UsageError
from arenalens.report.diagnose_output import diagnosis_document, render_diagnosis

EXIT_OK = 0
EXIT_FINDINGS = 1
_FAIL_ON = ("error", "warning", "info", "never")
_COLUMNS = (("errors", "errors"), ("warnings", "warnings"), ("info", "info"), ("first", "first"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `diagnose` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_models_argument(parser, required=False)
    add_runtime_option(parser, default=None)
    add_build_options(parser)
    add_target_option(parser)
    add_alignment_option(
        parser,
        "the offset alignment your kernels need (e.g. 32 for kernels with 32-byte vector "
        "loads; default: the runtime's own, TFLM 16 / LiteRT 64)",
    )
    parser.add_argument(
        "--rule",
        action="append",
        dest="rules",
        metavar="ID",
        help="run only this rule (repeatable; see --list-rules)",
    )
    parser.add_argument(
        "--severity",
        choices=("error", "warning", "info"),
        default="info",
        help="show findings at or above this severity (default: info, all)",
    )
    parser.add_argument(
        "--fail-on",
        choices=_FAIL_ON,
        default="error",
        help="exit 1 when a finding at or above this severity exists (default: error)",
    )
    parser.add_argument(
        "--what-if",
        action="store_true",
        help="also compute hints that re-plan a changed model with the real LiteRT interpreter "
        "(the input-resolution saving)",
    )
    add_effort_options(parser, default=5.0, what="planner-waste, one budget shared by all arenas")
    parser.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    add_delegate_option(parser)
    add_input_shape_option(parser)
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    """List rules, or diagnose one model (full report) or many (summary table)."""
    args.runtime = runtime_for(args)  # a Linux device is LiteRT's, as check says
    if args.list_rules:
        return _list_rules(args)
    if not args.models:
        raise UsageError("diagnose: give at least one MODEL (or --list-rules)")
    selected_build(args)  # bad --cpu / --kernels fail before any model is read
    return run_command(args, diagnose_worker, _single, _COLUMNS, title="arenalens diagnose")


def _diagnose(args: argparse.Namespace, path: str) -> Diagnosis:
    build = selected_build(args)
    model = load_with_input_shapes(path, args)
    return diagnose(
        model,
        runtime=args.runtime,
        build=build,
        alignment=args.alignment,
        rules=args.rules,
        planner_effort=args.effort,
        planner_time_limit_s=args.time_limit,
        what_if=args.what_if,
        target=single_target(args),
        delegate=delegate_of(args),
    )


def exit_code(diagnosis: Diagnosis, fail_on: str) -> int:
    """1 when a finding at or above the fail-on severity exists, else 0."""
    if fail_on == "never" or diagnosis.worst is None:
        return EXIT_OK
    return EXIT_FINDINGS if diagnosis.worst.rank <= Severity(fail_on).rank else EXIT_OK


def _single(args: argparse.Namespace, path: str) -> int:
    diagnosis = _diagnose(args, path)
    if args.json:
        print_json(diagnosis_document(diagnosis))
    else:
        print_text(
            render_diagnosis(
                diagnosis,
                color=use_color(args),
                width=terminal_width(),
                minimum=Severity(args.severity),
                declared=_litert_memory(args, diagnosis),
            )
        )
    return exit_code(diagnosis, args.fail_on)


def _litert_memory(args: argparse.Namespace, diagnosis: Diagnosis) -> DeclaredArena | None:
    """LiteRT: the figure `check --runtime litert` gives (model file + peak heap under
    --delegate, XNNPACK by default, on the device's ISA), the one answer diagnose's cannot-run
    findings follow; without --delegate, the builtin kernels' when XNNPACK's heap is not
    modelled. None for TFLM (its arenas' figure)."""
    if diagnosis.runtime != "litert" or diagnosis.analysis is None:
        return None
    from arenalens.litert_memory import litert_memory, target_isa  # noqa: PLC0415 - LiteRT only

    isa = target_isa(single_target(args))
    try:
        return litert_memory(diagnosis.analysis, delegate_of(args), isa=isa)
    except UsageError:  # XNNPACK's heap is not modelled for one of its operators
        if args.delegate is not None:
            raise
        return litert_memory(diagnosis.analysis, "none", isa=isa)


def diagnose_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → its counts and the first finding at or above --severity."""
    diagnosis = _diagnose(args, path)
    minimum = Severity(args.severity)
    shown = [f for f in diagnosis.findings if f.severity.rank <= minimum.rank]
    first = f"{shown[0].severity.value}: {shown[0].rule}" if shown else "-"
    return ModelResult(
        model=path,
        exit_code=exit_code(diagnosis, args.fail_on),
        row={
            "errors": diagnosis.count(Severity.ERROR),
            "warnings": diagnosis.count(Severity.WARNING),
            "info": diagnosis.count(Severity.INFO),
            "first": first,
        },
        document=diagnosis_document(diagnosis),
    )


def _list_rules(args: argparse.Namespace) -> int:
    if args.json:
        print_json(
            [{"id": rule.id, "title": rule.title, "needs_plan": rule.needs_plan} for rule in RULES]
        )
        return EXIT_OK
    width = max(len(rule.id) for rule in RULES)
    print_text("\n".join(f"{rule.id:<{width}}  {rule.title}" for rule in RULES))
    return EXIT_OK
