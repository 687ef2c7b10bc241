"""`arenalens demo`: build a built-in example model, write its report and images, say where."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arenalens.atomic import make_folder
from arenalens.cli.common import print_text, terminal_width, use_color, write_atomic
from arenalens.cli.report import (
    TOOL,
    WrittenFile,
    add_planner_options,
    budget_bytes,
    make_report,
    write_images,
    written_text,
)
from arenalens.errors import RuntimeUnavailableError
from arenalens.report.console import render_text
from arenalens.report.html_page import render_html
from arenalens.report.terminal import headline, plans_table, summary_panel

DEMO_EXAMPLE = "vww_mobilenet_v1"
DEFAULT_DIRECTORY = "arenalens-demo"


def register(subparsers: Any) -> None:
    """Add the `demo` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="build a built-in example model and write its report and images",
        description="Build a built-in int8 example model (no download), plan it with TFLite "
        "Micro's rules, and write the model, an interactive HTML report and PNG/SVG charts.",
    )
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
    add_planner_options(parser)
    parser.add_argument("--no-color", action="store_true", help="plain text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Build, analyze, write model + HTML + images, print a summary and the paths."""
    from arenalens.examples import example_bytes  # noqa: PLC0415 - builds on demand

    argument = f"example:{args.example}"
    report, _ = make_report(
        argument, runtime="tflm", planners=args.planner, budget=budget_bytes(args)
    )
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
    # The demo keeps the terminal short: the summary and the plans; `report` shows the rest.
    print_text(
        render_text(
            [*headline(report), summary_panel(report), plans_table(report)],
            color=use_color(args),
            width=terminal_width(),
        )
    )
    print(written_text(written))
    if skipped:
        print(f"images skipped: {skipped}", file=sys.stderr)
    html_path = (folder / "report.html").resolve()
    print(f"\nopen {html_path.as_uri()} in a browser, or try:")
    print(f"  arenalens report {folder / (args.example + '.tflite')} --all")
    print(f"  arenalens report example:{args.example} -o report.html --budget 64KiB")
    return 0
