"""`arenalens export MODEL --format json|csv|c-header|minimalloc|model-explorer [-o FILE]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arenalens.atomic import check_output_path, make_folder, write_atomic
from arenalens.cli.batch import ModelResult, add_models_argument, is_batch, run_command
from arenalens.cli.common import (
    add_alignment_option,
    add_build_options,
    add_delegate_option,
    add_input_shape_option,
    add_isa_option,
    add_runtime_option,
    add_target_option,
    add_threads_option,
    delegate_of,
    isa_option,
    load_with_input_shapes,
    runtime_for,
    selected_build,
    single_target,
    threads_option,
)
from arenalens.declared import DeclaredArena, declared_arena
from arenalens.errors import UsageError
from arenalens.exports import FORMATS, ExportOptions, export
from arenalens.exports.c_header import LiteRTMemory
from arenalens.pipeline import Analysis, analyze
from arenalens.report.labels import reason_prefix

_COLUMNS = (("file", "written"), ("bytes", "bytes"), ("required", "arena (B)"))
# LiteRT: a header's number is the app's memory (model file + peak heap); the plan's, its arenas.
_LITERT_COLUMNS = {True: "memory (B)", False: "arenas (B)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `export` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    formats = "; ".join(f"{f.name}: {f.description}" for f in FORMATS.values())
    parser.description = (parser.description or "").format(formats=formats)
    add_models_argument(parser)
    parser.add_argument(
        "--format", "-f", required=True, choices=tuple(FORMATS), help="the output format"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout"
    )
    add_runtime_option(parser, default=None)
    add_build_options(parser)
    add_target_option(parser)
    add_delegate_option(parser)
    add_threads_option(parser)
    add_isa_option(parser)
    parser.add_argument(
        "--planner",
        metavar="NAME",
        default=None,
        help="export this planner's plan (default: the runtime's own)",
    )
    add_alignment_option(parser, "plan with offsets aligned to N bytes")
    parser.add_argument(
        "--prefix", metavar="NAME", help="c-header: identifier prefix (default: the model name)"
    )
    parser.add_argument(
        "--arena", metavar="NAME", help="minimalloc: arena name or index (default: the primary)"
    )
    parser.add_argument(
        "--with-offsets",
        action="store_true",
        help="minimalloc: add the plan's offset column (MiniMalloc's output form, for its "
        "validator)",
    )
    add_input_shape_option(parser)


def run(args: argparse.Namespace) -> int:
    """Export one model (stdout or -o FILE) or many (-o FOLDER)."""
    args.runtime = runtime_for(args)  # a Linux device is LiteRT's, as check says
    threads_option(args)
    isa_option(args)
    selected_build(args)  # bad --cpu / --kernels fail before any model is read
    if is_batch(args.models):
        if args.output is None:
            raise UsageError("export: several models need -o FOLDER (one file per model)")
        folder = Path(args.output)
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"{folder}: is a file; several models need a folder (one file each)")
        make_folder(folder, what="-o")
    elif args.output is not None:
        check_output_path(args.output, what="-o")
    columns = _COLUMNS
    if args.runtime == "litert":
        columns = (*_COLUMNS[:2], ("required", _LITERT_COLUMNS[args.format in NUMBER_FORMATS]))
    return run_command(args, export_worker, _single, columns, title="arenalens export")


# A number firmware compiles in: not written for a model that has none to trust.
NUMBER_FORMATS = frozenset({"c-header"})


def render(args: argparse.Namespace, path: str) -> tuple[str, int, DeclaredArena]:
    """One model → (exported text, required bytes, the number to declare and how sure it is)."""
    build = selected_build(args)
    model = load_with_input_shapes(path, args)
    analysis = analyze(
        model, runtime=args.runtime, build=build, planner=args.planner, alignment=args.alignment
    )
    if args.runtime == "litert":
        from arenalens.litert_memory import arenas_on_device  # noqa: PLC0415 - LiteRT only

        analysis = arenas_on_device(analysis, single_target(args))
    isa = _device_isa(args)
    litert = _litert_memory(args, analysis, isa) if args.format in NUMBER_FORMATS else None
    options = ExportOptions(
        prefix=args.prefix,
        arena=args.arena,
        with_offsets=args.with_offsets,
        isa=isa,
        litert=litert,
        delegate=delegate_of(args),
    )
    text = export(analysis, args.format, options)
    if litert is not None:
        return text, litert.memory.required_bytes, litert.memory
    return text, analysis.budget.required_bytes, _declared(analysis, options.delegate)


def _declared(analysis: Analysis, delegate: str) -> DeclaredArena:
    """The number and how sure it is: LiteRT's under the app's delegate, as plan and check
    give it (`litert_memory.delegate_verdict`)."""
    if analysis.runtime != "litert":
        return declared_arena(analysis)
    from arenalens.litert_memory import delegate_verdict  # noqa: PLC0415 - LiteRT only

    return delegate_verdict(analysis, delegate).declared


def _device_isa(args: argparse.Namespace) -> str:
    """LiteRT: --isa, else a Linux device's (--target) ISA, which sizes the interpreter heap as
    check sizes it ('' elsewhere: the measuring machine's)."""
    if args.runtime != "litert":
        return ""
    from arenalens.litert_memory import target_isa  # noqa: PLC0415 - LiteRT only

    return target_isa(single_target(args), getattr(args, "isa", "") or "")


def _litert_memory(args: argparse.Namespace, analysis: Analysis, isa: str) -> LiteRTMemory | None:
    """LiteRT: the figure `check --runtime litert` gives with the same --delegate, --threads
    and ISA (the model file + the interpreter's peak heap), which a LiteRT app budgets; None
    for TFLM, whose number is the arena to declare."""
    if args.runtime != "litert":
        return None
    from arenalens.litert_memory import (  # noqa: PLC0415 - LiteRT only
        DEFAULT_DELEGATE,
        isa_profile,
        litert_memory,
    )

    delegate = getattr(args, "delegate", None) or DEFAULT_DELEGATE
    threads = getattr(args, "threads", 1)
    profile = isa_profile(isa)
    return LiteRTMemory(
        litert_memory(analysis, delegate, isa=isa, threads=threads),
        delegate=delegate,
        isa=profile.name,
        isa_title=profile.title,
        threads=threads,
    )


def _no_number(path: str, declared: DeclaredArena) -> str:
    """Why there is no number (one line), or '' when there is one."""
    if declared.status.gives_a_number:
        return ""
    why = declared.reasons[0] if declared.reasons else declared.status.value
    return f"{path}: no {declared.symbol} to trust ({reason_prefix(declared.status)}): {why}"


def _single(args: argparse.Namespace, path: str) -> int:
    text, _, declared = render(args, path)
    problem = _no_number(path, declared)
    if problem and args.format in NUMBER_FORMATS:
        print(f"arenalens: not written: {problem}", file=sys.stderr)
        return 1
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text, protect=(path,))
    if problem:
        print(f"arenalens: {problem}", file=sys.stderr)
    return 1 if problem else 0


def export_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → its file in the -o folder (none for a header without a number)."""
    text, required, declared = render(args, path)
    problem = _no_number(path, declared)
    if problem and args.format in NUMBER_FORMATS:
        return ModelResult(
            model=path,
            exit_code=1,
            row={"file": "-", "bytes": 0, "required": None},
            document={"file": None, "not_written": problem},
        )
    name = Path(path.removeprefix("example:")).name
    stem = name[: -len(".tflite")] if name.endswith(".tflite") else name
    target = Path(args.output) / f"{stem}{FORMATS[args.format].extension}"
    write_atomic(target, text, protect=(path,))
    return ModelResult(
        model=path,
        exit_code=1 if problem else 0,
        row={"file": str(target), "bytes": len(text.encode("utf-8")), "required": required},
        document={"file": str(target)},
    )
