"""`arenalens demo`: a built-in example planned for a named board (its core and kernels): the
number to declare there, the board's verdict, the report and images, and how to pick another."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from arenalens.atomic import make_folder, write_atomic
from arenalens.cli.common import print_text, selected_build, terminal_width, use_color
from arenalens.cli.report import (
    TOOL,
    WrittenFile,
    add_planner_options,
    guide,
    make_report,
    write_images,
    written_text,
)
from arenalens.errors import RuntimeUnavailableError, UsageError
from arenalens.report.console import render_text
from arenalens.report.html_page import render_html
from arenalens.report.terminal import headline, plans_table, report_steps, summary_panel
from arenalens.targets import BOARDS, get_target

DEMO_EXAMPLE = "vww_mobilenet_v1"
# An STM32 board with a Cortex-M7: TFLM built for it with CMSIS-NN kernels, a figure the Cortex-M
# probes measure exactly (README: the number for your device).
DEMO_TARGET = "nucleo-f746zg"
OTHER_TARGET = "nucleo-f401re"  # the one suggested next: a Cortex-M4 with 96 KiB
DEFAULT_DIRECTORY = "arenalens-demo"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `demo` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        default=DEFAULT_DIRECTORY,
        help=f"directory to write into (default: ./{DEFAULT_DIRECTORY})",
    )
    parser.add_argument(
        "--example",
        default=DEMO_EXAMPLE,
        metavar="NAME",
        help=f"which built-in example to use (default: {DEMO_EXAMPLE})",
    )
    parser.add_argument(
        "--target",
        default=DEMO_TARGET,
        metavar="NAME",
        help=f"the board or chip to plan for (default: {DEMO_TARGET}, an STM32F746 with a "
        "Cortex-M7 and CMSIS-NN kernels); `arenalens check --list-targets` lists them",
    )
    add_planner_options(parser)
    parser.add_argument("--no-color", action="store_true", help="plain text")


def run(args: argparse.Namespace) -> int:
    """Build, analyze for the board, write model + HTML + images, print the number, the verdict,
    the files and how to go on."""
    from arenalens.examples import EXAMPLES, example_bytes  # noqa: PLC0415 - builds on demand

    if args.example not in EXAMPLES:
        raise UsageError(f"unknown example '{args.example}' (known: {', '.join(sorted(EXAMPLES))})")
    if args.budget is not None:
        raise UsageError("demo plans for a board: give --target NAME (a budget is `report`'s)")
    target = get_target(args.target)
    argument = f"example:{args.example}"
    if target.runs_linux:
        # The demo writes a TFLM arena report; a Linux device's question is LiteRT's heap, which
        # `check` answers: name the command that does, runnable as printed.
        raise UsageError(
            f"demo plans TFLite Micro for a microcontroller board; {target.name} runs Linux: "
            f"arenalens check {argument} --target {target.name}"
        )
    options = argparse.Namespace(
        model=argument,
        target=target.name,
        budget=None,
        reserve=None,
        max_input=False,
        no_findings=False,
        runtime="tflm",
        cpu=None,
        kernels=None,
        planner=args.planner,
        input_shape=[],  # the example at its own size
    )
    build = selected_build(options)
    report, analysis = make_report(
        argument, runtime="tflm", planners=args.planner, budget=None, build=build
    )
    report = guide(options, report, analysis)
    folder = Path(args.output)
    make_folder(folder, what="-o")
    model_bytes = example_bytes(args.example)
    written = [
        WrittenFile(write_atomic(folder / f"{args.example}.tflite", model_bytes), len(model_bytes))
    ]
    page = render_html([report], tool=TOOL)
    written.append(WrittenFile(write_atomic(folder / "report.html", page), len(page)))
    skipped = None
    try:
        written.extend(write_images(report, str(folder / "images"), "both"))
    except RuntimeUnavailableError as error:
        skipped = str(error)
    # The demo keeps the terminal short: the number, the verdict and what to do next, the plans;
    # `report` shows more.
    print_text(
        render_text(
            [*headline(report), *report_steps(report), summary_panel(report), plans_table(report)],
            color=use_color(args),
            width=terminal_width(),
        )
    )
    print(written_text(written))
    if skipped:
        print(f"images skipped: {skipped}", file=sys.stderr)
    html_path = (folder / "report.html").resolve()
    model_path = shlex.quote(str(folder / f"{args.example}.tflite"))
    other = OTHER_TARGET if target.name != OTHER_TARGET else DEMO_TARGET
    # "The same for another board": the example and planners the user chose come along.
    same = "" if args.example == DEMO_EXAMPLE else f" --example {shlex.quote(args.example)}"
    same += "".join(f" --planner {shlex.quote(name)}" for name in args.planner or ())
    print(f"\nopen {html_path.as_uri()} in a browser.")
    print(f"The figures are for {target.title} ({target.core}). Another board, or all of them:")
    for command, why in (
        (
            f"arenalens demo{same} --target {other}",
            f"any of {len(BOARDS)} boards: check --list-targets",
        ),
        (f"arenalens check {argument} --target all", "every board at once"),
        (f"arenalens report {model_path} --target {target.name} --all", "everything, in text"),
    ):
        print(f"  {command:<56} # {why}")
    return 0
