"""`arenalens report MODEL`: the plan in the terminal, as an interactive HTML page, as images."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from arenalens import __version__
from arenalens.alternatives import default_planners, plan_alternatives
from arenalens.atomic import check_output_path, make_folder, write_atomic
from arenalens.builds.build import Build
from arenalens.builds.kernel_paths import OverlapRules
from arenalens.cli.batch import working
from arenalens.cli.check import (
    add_npu_options,
    asked,
    fit_under,
    input_search,
    optimized,
)
from arenalens.cli.common import (
    EXAMPLE_PREFIX,
    add_build_options,
    add_delegate_option,
    add_input_shape_option,
    add_isa_option,
    add_model_argument,
    add_output_options,
    add_reserve_option,
    add_runtime_option,
    add_threads_option,
    build_after_model_refusals,
    delegate_of,
    isa_option,
    load_with_input_shapes,
    overlap_rules_for,
    print_text,
    reserve_option,
    runtime_for,
    terminal_lines,
    terminal_width,
    threads_option,
    use_color,
)
from arenalens.declared import Status, declared_arena
from arenalens.diagnostics import diagnose
from arenalens.effort import OPTIMIZE_EFFORT
from arenalens.errors import RuntimeUnavailableError, UsageError
from arenalens.jsontext import to_json
from arenalens.pipeline import Analysis, analyze
from arenalens.records import record
from arenalens.report.build import build_report
from arenalens.report.data import MemoryReport, report_document
from arenalens.report.guidance import serious_findings, with_guidance
from arenalens.report.terminal import SCREEN_LINES, render_report_text
from arenalens.targets import Target, get_target
from arenalens.units import SIZE_HELP, format_bytes_short, parse_size
from arenalens.verdict import verdict_for

TOOL = f"arenalens {__version__}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `report` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_model_argument(parser)
    parser.add_argument(
        "-o", "--output", metavar="HTML", help="write the interactive HTML report to this file"
    )
    parser.add_argument(
        "--images", metavar="DIR", help="write PNG and SVG charts into DIR (extra 'images')"
    )
    parser.add_argument(
        "--image-format",
        choices=("png", "svg", "both"),
        default="both",
        help="image formats for --images (default: both)",
    )
    parser.add_argument(
        "--compare", metavar="OTHER", help="a second model (or example:NAME) to compare against"
    )
    add_input_shape_option(parser)
    add_npu_options(parser)
    parser.add_argument(
        "--compare-input-shape",
        action="append",
        default=[],
        metavar="NAME=SHAPE",
        help="--input-shape for the compared model; without --compare, compares MODEL with "
        "itself at this input shape (e.g. 224x224 vs 128x128); repeatable",
    )
    add_planner_options(parser)
    parser.add_argument(
        "--target",
        metavar="NAME",
        help="a board or chip preset (see `arenalens check --list-targets`): the report says "
        "whether the number to declare fits its largest static block, and what to do if not",
    )
    add_reserve_option(parser)
    parser.add_argument(
        "--max-input",
        action="store_true",
        help="with --target or --budget: find the largest input height x width that fits and "
        "plot the arena against the input size (extra 'runtime')",
    )
    parser.add_argument(
        "--no-findings",
        action="store_true",
        help="leave the diagnose findings out of 'what to do next'",
    )
    add_runtime_option(parser, default=None)
    add_delegate_option(parser)
    add_threads_option(parser)
    add_isa_option(parser)
    add_overlap_options(parser)
    add_build_options(parser)
    parser.add_argument(
        "--all",
        action="store_true",
        help="print everything: every plan, every buffer and TFLM's memory plan (by default the "
        "terminal report fits one screen: the number, the verdict, what to do next)",
    )
    add_output_options(parser)


def add_planner_options(parser: argparse.ArgumentParser) -> None:
    """--planner (repeatable) and --budget, shared with `demo`."""
    parser.add_argument(
        "--planner",
        action="append",
        metavar="NAME",
        help="a planner to show (repeat for more; the first is shown first). Default: the "
        "runtime's own planner, naive, and every other cheap registered planner",
    )
    parser.add_argument(
        "--budget",
        metavar="SIZE",
        help="memory you can give the runtime (TFLM: kTensorArenaSize), checked and drawn "
        f"as a line: {SIZE_HELP}",
    )


def budget_bytes(args: argparse.Namespace) -> int | None:
    """--budget in bytes (None when not given); UsageError for text that is not a size."""
    if args.budget is None:
        return None
    nbytes = parse_size(args.budget)
    if nbytes <= 0:
        raise UsageError(f"--budget must be positive, got '{args.budget}'")
    return nbytes


def add_overlap_options(parser: argparse.ArgumentParser) -> None:
    """--overlap (TFLM): also plan outputs sliding over the inputs they consume, as far as the
    access order of the --kernels library allows (`add_build_options`)."""
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="TFLM: also plan the head letting an operator's output start below an input it "
        "consumes, as far as its kernel's access order allows on every kernel library the core "
        "may run (or the --kernels one only; shown first, shared bytes hatched; `optimize "
        "--overlap` writes and proves it)",
    )


@record()
class WrittenFile:
    """A file the command wrote, for the closing summary."""

    path: Path
    nbytes: int


def display_name(argument: str) -> str:
    """A MODEL argument → the name reports show: the example name or the file's stem."""
    if argument.startswith(EXAMPLE_PREFIX):
        return argument[len(EXAMPLE_PREFIX) :]
    return Path(argument).name.removesuffix(".tflite")


def make_report(
    argument: str,
    *,
    runtime: str,
    planners: Sequence[str] | None,
    budget: int | None,
    input_shapes: Sequence[str] = (),
    overlap: OverlapRules | None = None,
    build: Build | None = None,
    delegate: str = "xnnpack",
) -> tuple[MemoryReport, Any]:
    """MODEL argument (+ NAME=SHAPE input resizes) → (MemoryReport with every requested
    planner, the Analysis); `build` is the TFLM build (None: the x86-64 wheel)."""
    model = load_with_input_shapes(argument, argparse.Namespace(input_shape=list(input_shapes)))
    chosen = list(planners) if planners else None
    analysis = analyze(
        model,
        runtime=runtime,
        build=build,
        planner=chosen[0] if chosen else None,
        overlap=overlap,
    )
    wanted = chosen if chosen is not None else default_planners(runtime)
    name = display_name(argument)
    if input_shapes:
        name += " [" + ", ".join(input_shapes) + "]"
    report = build_report(
        analysis,
        alternatives=plan_alternatives(analysis, wanted),
        budget=budget,
        name=name,
        delegate=delegate,
    )
    return report, analysis


def memory_plan_text(analysis: Any) -> str | None:
    """TFLM's PrintMemoryPlan text for the chosen plan of the head (None for LiteRT)."""
    if analysis.runtime != "tflm" or not analysis.arenas:
        return None
    from arenalens.report.ascii import render_tflm_memory_plan  # noqa: PLC0415 - TFLM only

    primary = analysis.primary
    text: str = render_tflm_memory_plan(primary.arena, primary.plan)
    return text


def write_images(report: MemoryReport, directory: str, image_format: str) -> list[WrittenFile]:
    """Render the charts into directory (created if missing) → the files written."""
    from arenalens.report.images import IMAGE_FORMATS, render_images  # noqa: PLC0415 - extra

    formats = IMAGE_FORMATS if image_format == "both" else (image_format,)
    folder = Path(directory)
    make_folder(folder, what="--images")
    prefix = safe_file_stem(report.model)
    written = []
    for file_name, data in render_images(report, formats=formats).items():
        path = write_atomic(folder / f"{prefix}.{file_name}", data)
        written.append(WrittenFile(path, len(data)))
    return written


def safe_file_stem(name: str) -> str:
    """A model name → a file name part with only letters, digits, '.', '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def written_text(files: Sequence[WrittenFile]) -> str:
    """The closing lines: where each file went and how big it is."""
    return "\n".join(f"wrote {file.path} ({format_bytes_short(file.nbytes)})" for file in files)


def check_output_directory(output: str | None, images: str | None) -> None:
    """Fail before any work when an output cannot be written: --images naming a file, -o naming
    a folder or a place that cannot be written. Missing folders are created when the files are
    written."""
    if images is not None and Path(images).exists() and not Path(images).is_dir():
        raise UsageError(f"--images {images}: is a file; --images takes a folder for the charts")
    if images is not None:
        check_output_path(Path(images) / "chart.png", what="--images")
    if output is not None:
        check_output_path(output, what="-o")


def _fit_options(args: argparse.Namespace) -> tuple[int | None, Target | None, int | None]:
    """(--budget bytes, --target preset, --reserve bytes), checked before any work."""
    if args.budget is not None and args.target is not None:
        raise UsageError("give --budget SIZE or --target NAME, not both")
    budget = budget_bytes(args)
    target = None if args.target is None else get_target(args.target)
    if args.max_input and budget is None and target is None:
        raise UsageError("--max-input needs --target NAME or --budget SIZE")
    return budget, target, reserve_option(args)


def _overlap_written(
    args: argparse.Namespace, analysis: Analysis, target: Target | None
) -> tuple[int, str] | None:
    """What the step's `optimize --overlap` declares, and the extra whose exact search its plan
    went without ('' none: `Optimization.missing_extra`), computed as it computes it (its search at
    its effort, on the build and board the command names, its proof on the real TFLM): the
    report's own overlap plan above is one plan of that search, not its result (held-out flow
    seed 500737 flow 84: the step said 39,192 B, the command wrote 39,160 B)."""
    from arenalens.optimization import optimize_model  # noqa: PLC0415 - report --overlap only

    build = analysis.build
    if analysis.runtime != "tflm" or build is None:
        return None
    with working(args, "optimizing with overlaps to see what it writes"):
        optimization = optimize_model(
            analysis.model,
            overlap=overlap_rules_for(args, build),
            effort=OPTIMIZE_EFFORT,
            build=build,
            target=target,
        )
    return optimization.new_required_bytes, optimization.missing_extra


def guide(args: argparse.Namespace, report: MemoryReport, analysis: Analysis) -> MemoryReport:
    """The report with the verdict (--target / --budget), the findings and what to do next."""
    budget, target, reserve = _fit_options(args)
    check = None
    if budget is not None or target is not None:
        check = fit_under(
            args, analysis.model, analysis, budget=budget, target=target, reserve=reserve
        )
    optimized_bytes = None if check is None else check.optimized_bytes
    missing_extra = "" if check is None else check.optimized_missing_extra
    declared = declared_arena(analysis) if check is None else check.declared
    if check is None and analysis.runtime == "litert":  # the verdict under the delegate asked
        declared = report.declared or declared
    if check is None and analysis.runtime == "litert" and declared.status.gives_a_number:
        # LiteRT as deployed: the model file and the interpreter's peak heap, as check says.
        from arenalens.litert_memory import (  # noqa: PLC0415
            DEFAULT_DELEGATE,
            litert_memory,
            target_isa,
        )

        declared = litert_memory(
            analysis,
            args.delegate or DEFAULT_DELEGATE,
            isa=target_isa(target, args.isa),
            threads=args.threads,
        )
    usable = declared.status in (Status.EXACT, Status.ESTIMATE)
    if (
        optimized_bytes is None
        and usable
        and (check is None or check.fits)
        and _planner_wastes(analysis)
    ):
        # What `optimize` writes, computed as it computes it: a step that promises bytes.
        optimization = optimized(args, analysis.model)
        if optimization is not None:
            optimized_bytes = optimization.new_required_bytes
            missing_extra = optimization.missing_extra
    diagnosis = None
    if not args.no_findings:
        # No search time: the findings must be the same on every run (deterministic output).
        diagnosis = diagnose(
            analysis.model,
            runtime=args.runtime,
            build=analysis.build,
            planner_effort=0.0,
            what_if=False,
            # The commands findings suggest name the board as typed, as diagnose --target's do
            # (held-out path: report --target kit-pse84-eval quoted `optimize --cpu cortex-m55
            # --npu ethos-u55-128 --overlap`, the core's reference build, which writes nothing).
            target=target,
            delegate=delegate_of(args),
        )
    search = None
    if args.max_input and check is not None and usable:
        search = input_search(args, analysis.model, check)
    written = None if analysis.overlap is None else _overlap_written(args, analysis, target)
    verdict = verdict_for(
        analysis,
        asked=replace(
            asked(
                args, args.model, findings=0 if diagnosis is None else serious_findings(diagnosis)
            ),
            overlap_required_bytes=None if written is None else written[0],
            overlap_missing_extra="" if written is None else written[1],
            device_bytes=_largest_device_figure(args, analysis) if check is None else None,
            firmware=_firmware_of_rewritten(analysis),
        ),
        fit=check,
        optimized_bytes=optimized_bytes,
        optimized_missing_extra=missing_extra,
        search=search,
        name=report.model,
        declared=declared,
    )
    # The commands the report shows name the model as typed, at the size it was reported at.
    shapes = "".join(f" --input-shape {shlex.quote(value)}" for value in args.input_shape)
    report = replace(report, model_argument=shlex.quote(args.model) + shapes)
    if verdict.declared.is_process_memory:
        # The figure is LiteRT's memory under the delegate and threads asked: its heap first.
        heaps = report.interpreter_heap
        from arenalens.litert_memory import heap_documents_of, target_isa  # noqa: PLC0415

        isa = target_isa(target, args.isa)
        if args.threads != 1 or isa:
            heaps = tuple(
                heap_documents_of(analysis, threads=args.threads, isa=isa, first=delegate_of(args))
            )
        report = replace(report, declared=verdict.declared, interpreter_heap=heaps)
    return with_guidance(report, verdict=verdict, diagnosis=diagnosis)


# The builds most firmware runs, for the figure a host-build report shows beside its own.
COMMON_DEVICE_BUILDS = (
    "cortex-m0plus/cmsis-nn",
    "cortex-m4/cmsis-nn",
    "cortex-m7/cmsis-nn",
    "cortex-m33/cmsis-nn",
    "cortex-m55/cmsis-nn",
    "esp32/esp-nn",
    "esp32s3/esp-nn",
    "esp32p4/esp-nn",
)


def _firmware_of_rewritten(analysis: Analysis) -> tuple[tuple[str, ...], str] | None:
    """A model arenalens rewrote (it carries arenalens' plan record): the resolver lines its
    firmware needs and the resource-variable table the figure assumes."""
    if analysis.runtime != "tflm" or analysis.model.plan_record is None:
        return None
    from arenalens.firmware import firmware_needs  # noqa: PLC0415

    table = None if analysis.build is None else analysis.build.resource_variables
    needs = firmware_needs(analysis.model, table)
    return needs.resolver_lines, needs.resource_line.split("  //")[0]


def _largest_device_figure(args: argparse.Namespace, analysis: Analysis) -> tuple[int, str] | None:
    """Without a build the figure is the 64-bit host's: the largest number to declare over the
    common MCU builds and the build that needs it (None: a build was named, or not TFLM, or the
    model has no number there)."""
    build = analysis.build
    if args.runtime != "tflm" or build is None or not build.is_host or args.tflm:
        return None
    if declared_arena(analysis).status not in (Status.EXACT, Status.ESTIMATE):
        return None
    largest: tuple[int, str] | None = None
    for name in COMMON_DEVICE_BUILDS:
        device = analyze(analysis.model, runtime="tflm", build=name)
        declared = declared_arena(device)
        if declared.status not in (Status.EXACT, Status.ESTIMATE):
            continue
        if largest is None or declared.required_bytes > largest[0]:
            largest = (declared.required_bytes, name)
    return largest


def _planner_wastes(analysis: Analysis) -> bool:
    """True when the runtime's plan of the head is above its lower bound (TFLM): only then can
    `optimize` lower the number."""
    if analysis.runtime != "tflm" or not analysis.arenas:
        return False
    primary = analysis.primary
    return primary.runtime_plan.arena_size > primary.lower_bound


EXIT_WRONG_OUTPUTS = 1


def run(args: argparse.Namespace) -> int:
    """Analyze, print the terminal report, write images and HTML on request; exit 1 when the
    build computes wrong outputs with the model's offline plan."""
    check_output_directory(args.output, args.images)
    args.runtime = runtime_for(args)
    threads_option(args)
    isa_option(args)
    _fit_options(args)  # fail fast, before any model is read
    build = build_after_model_refusals(args, (args.model,))
    protect = tuple(a for a in (args.model, args.compare) if a)
    overlap = overlap_rules_for(args, build) if args.overlap else None
    report, analysis = make_report(
        args.model,
        runtime=args.runtime,
        planners=args.planner,
        budget=budget_bytes(args),
        input_shapes=args.input_shape,
        overlap=overlap,
        build=build,
        delegate=delegate_of(args),
    )
    report = guide(args, report, analysis)
    reports = [report]
    # --compare-input-shape alone compares MODEL with itself at another input shape.
    other_model = args.compare or (args.model if args.compare_input_shape else None)
    if other_model:
        other, _ = make_report(
            other_model,
            runtime=args.runtime,
            planners=args.planner,
            budget=report.budget,
            input_shapes=args.compare_input_shape,
            overlap=overlap,
            build=build,
            delegate=delegate_of(args),
        )
        reports.append(other)
    if args.json:
        text = to_json(report_document(reports, tool=TOOL))
    else:
        diff = None
        if len(reports) > 1:
            from arenalens.report.diff import diff_reports  # noqa: PLC0415 - two models only

            diff = diff_reports(report, reports[1])
        text = render_report_text(
            report,
            color=use_color(args),
            width=terminal_width(),
            tensor_rows=None if args.all else 20,
            memory_plan=memory_plan_text(analysis) if args.all else None,
            diff=diff,
            screen_lines=None if args.all else terminal_lines(SCREEN_LINES),
        )
    # Files first: a path that cannot be written is bad input (exit 2), and then nothing of the
    # report is printed as if it had worked.
    written: list[WrittenFile] = []
    if args.images:  # first: it creates the directory, which may also hold the HTML
        try:
            written.extend(write_images(report, args.images, args.image_format))
        except RuntimeUnavailableError as error:
            print(f"arenalens: images skipped: {error}", file=sys.stderr)
    if args.output:
        from arenalens.report.html_page import render_html  # noqa: PLC0415 - -o only

        page = render_html(reports, tool=TOOL)
        written.append(WrittenFile(write_atomic(args.output, page, protect=protect), len(page)))
    print_text(text)
    if written:
        # With --json, stdout holds only the document; the file list goes to stderr.
        stream = sys.stderr if args.json else sys.stdout
        print(written_text(written), file=stream)
    verdict = report.verdict
    code = 0 if verdict is None else verdict.exit_code
    # A plan the build computes wrong outputs with is a finding even without a budget, as in
    # check, verify and diagnose.
    declared = report.declared
    if declared is not None and declared.status is Status.WRONG_OUTPUTS:
        return max(code, EXIT_WRONG_OUTPUTS)
    return code
