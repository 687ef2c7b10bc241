"""`arenalens verify MODEL`: the prediction next to the real runtime's numbers."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from arenalens.builds.build import HOST, Build, host_build
from arenalens.builds.tflm import tflm_release
from arenalens.cli.common import (
    add_model_argument,
    add_output_options,
    add_runtime_option,
    load_model_argument,
    print_json,
    print_text,
    terminal_width,
    use_color,
)
from arenalens.declared import DeclaredArena, Status, declared_arena
from arenalens.errors import RuntimeRefusedError, RuntimeUnavailableError, UsageError
from arenalens.ir import Model
from arenalens.pipeline import Analysis, analyze
from arenalens.report.plan_output import verify_document
from arenalens.report.plan_text import render_verify
from arenalens.runtimes import get_runtime
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.verification import Prediction, VerifyResult, VerifyRow

EXIT_AGREES = 0
EXIT_MISMATCH = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `verify` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_model_argument(parser)
    add_runtime_option(parser)
    parser.add_argument(
        "--tflm",
        metavar="RELEASE",
        help="predict for this TFLite Micro release (a tflite-micro version, a date like 2025-08 "
        "or a commit) instead of the installed wheel's",
    )
    parser.add_argument(
        "--min-arena",
        action="store_true",
        help="also find the smallest working arena size by bisection (TFLM; a few seconds)",
    )
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    """Analyze, run the real runtime on the same file, print both; exit 1 on a mismatch."""
    model = load_model_argument(args.model)
    rules = get_runtime(args.runtime)
    if args.min_arena and args.runtime != "tflm":
        raise UsageError("--min-arena bisects TFLM's arena_size; LiteRT has no such size")
    build = _predicted_build(args)
    analysis = analyze(model, runtime=args.runtime, build=build)
    prediction = Prediction(
        analysis.model,
        tuple(result.arena for result in analysis.arenas),
        tuple(result.runtime_plan for result in analysis.arenas),
        analysis.runtime_build,
    )
    with _model_file(model, args.model) as path:
        try:
            result = rules.verify(path, prediction, min_arena=args.min_arena)
        except RuntimeRefusedError as refused:
            result = _refused(args.runtime, declared_arena(analysis), refused)
    # The verdict's answer for the wheel the real interpreter is: its offline plan's conflicts.
    wrong = tuple(
        conflict.reason for conflict in declared_arena(analysis).conflicts if args.runtime == "tflm"
    )
    document = verify_document(result, wrong, _heap_unsized(analysis, args.runtime))
    if args.json:
        print_json(document)
    else:
        print_text(render_verify(document, color=use_color(args), width=terminal_width()))
    return EXIT_AGREES if result.agrees and not wrong else EXIT_MISMATCH


def _heap_unsized(analysis: Analysis, runtime: str) -> str:
    """LiteRT: why the interpreter's heap gets no figure (litert_memory.heap_unsized, the
    reason plan and check give), '' when it gets one or for TFLM."""
    if runtime != "litert":
        return ""
    from arenalens.litert_memory import heap_unsized  # noqa: PLC0415 - LiteRT only

    return heap_unsized(analysis)


def _refused(runtime: str, declared: DeclaredArena, refused: RuntimeRefusedError) -> VerifyResult:
    """The real interpreter refuses the model: the prediction agrees when it is CANNOT RUN (the
    runtime's answer, not an error: seed 1100901's models TFLM refuses, which check calls CANNOT
    RUN, ended verify in exit 2), and is a mismatch when it gives a number."""
    predicted_runs = declared.status is not Status.CANNOT_RUN
    predicted = (
        "predicted: it sets up"
        if predicted_runs
        else "predicted: CANNOT RUN (" + "; ".join(r.reason for r in declared.refusals) + ")"
    )
    row = VerifyRow(
        "the model sets up",
        None,
        None,
        agrees=not predicted_runs,
        note=f"{predicted}; real: {refused.problem}",
    )
    return VerifyResult(runtime=runtime, rows=(row,), refused=refused.problem)


def _predicted_build(args: argparse.Namespace) -> Build:
    """What verify predicts for: the --tflm release, else the installed wheel's (the newest
    release arenalens models when it does not model the wheel's, or no wheel is installed:
    the verification itself then says why)."""
    if args.runtime != "tflm":
        if args.tflm is not None:
            raise UsageError(
                f"--tflm selects a TFLite Micro release; --runtime {args.runtime} has none"
            )
        return HOST
    if args.tflm is not None:
        return host_build(tflm_release(args.tflm))
    try:
        return tflm_runtime().installed_build() or HOST
    except RuntimeUnavailableError:
        return HOST


class _model_file:  # noqa: N801 - used as a context manager, named like one
    """The model as a file the runtime can open: the argument itself, or a temporary copy."""

    def __init__(self, model: Model, argument: str) -> None:
        self.model = model
        self.argument = argument
        self.temporary: Path | None = None

    def __enter__(self) -> str:
        if os.path.isfile(self.argument):
            return self.argument
        handle, name = tempfile.mkstemp(suffix=".tflite", prefix="arenalens-")
        self.temporary = Path(name)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(bytes(self.model.data))
        except BaseException:
            # __exit__ does not run when __enter__ raises: remove the partial copy here.
            self.temporary.unlink(missing_ok=True)
            raise
        return name

    def __exit__(self, *exc: object) -> None:
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)
