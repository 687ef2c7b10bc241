"""`arenalens vela MODEL --target BOARD | --cpu CORE --npu NPU [--budget SIZE]`: compile an
uncompiled model with Vela over its settings and show which one fits, fastest first."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arenalens.atomic import write_atomic
from arenalens.cli.common import (
    add_build_options,
    add_model_argument,
    add_output_options,
    load_with_input_shapes,
    print_json,
    print_text,
    selected_build,
    terminal_width,
    use_color,
)
from arenalens.errors import UsageError
from arenalens.targets import get_target
from arenalens.units import SIZE_HELP, parse_size

# Vela's memory modes (vela/compiler.py's, spelled here so the parser imports nothing heavy).
MEMORY_MODES = ("Shared_Sram", "Sram_Only", "Dedicated_Sram")

EXIT_FITS = 0
EXIT_NONE_FITS = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `vela` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_model_argument(parser)
    parser.add_argument(
        "--target",
        metavar="NAME",
        help="a board with an Ethos-U NPU (see check --list-targets): its core, NPU and RAM",
    )
    parser.add_argument(
        "--budget",
        metavar="SIZE",
        help="the RAM block for all the model puts in SRAM (the arena, and the fast memory or "
        f"the Sram_Only weights): {SIZE_HELP}; default: --target's largest block",
    )
    parser.add_argument(
        "--memory-mode",
        action="append",
        choices=MEMORY_MODES,
        help="only this Vela memory mode (repeatable; default: every one the NPU supports: "
        "Dedicated_Sram on Ethos-U65 and U85 only)",
    )
    add_build_options(parser)
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the compiled model of the fastest setting that fits here",
    )
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    """Sweep the settings, print the table (or JSON), write the chosen model."""
    return sweep_and_write(args, args.output)


def sweep_and_write(args: argparse.Namespace, output: str | None) -> int:
    """The sweep for the options (`vela`, `optimize --vela`): table or JSON, and the fastest
    setting that fits written to `output` when given. Exit 0 when one fits, 1 when none does."""
    from arenalens.builds.build import build_title  # noqa: PLC0415
    from arenalens.report.vela_output import render_vela, vela_document  # noqa: PLC0415
    from arenalens.vela.compiled import is_vela_compiled  # noqa: PLC0415
    from arenalens.vela.compiler import vela_version  # noqa: PLC0415
    from arenalens.vela.settings import candidate_settings, sweep_settings  # noqa: PLC0415

    build = selected_build(args)
    if build.npu is None:
        raise UsageError("vela: give --target with a board that has an Ethos-U NPU, or --npu")
    vela_version()  # fail before reading anything when Vela is missing
    # `optimize --vela --input-shape` compiles the model at that size (the file at it).
    model = load_with_input_shapes(args.model, args)
    if is_vela_compiled(model):
        raise UsageError(
            f"{args.model}: already compiled by Vela (it has ethos-u operators); give the model "
            "from before Vela"
        )
    memories = _memories(args)
    settings = [
        setting
        for setting in candidate_settings(build.npu)
        if not getattr(args, "memory_mode", None) or setting.memory_mode in args.memory_mode
    ]
    source = _uncompiled_source(model)
    sweep = sweep_settings(
        source,
        build.npu,
        build,
        memories=memories,
        settings=settings,
        name=_stem(args.model),
    )
    # Vela reads files: its command names the user's file when that is what it compiled; else
    # (an example, another input size, an offline plan dropped) the file of the bytes it
    # compiled, written beside the output (none without -o: then no command reproduces it).
    target = None if args.target is None else get_target(args.target)
    own = not args.model.startswith("example:") and source == bytes(model.data)
    vela_input = None if own or not output else _vela_input_path(output)
    vela_file = args.model if own else None if vela_input is None else str(vela_input)
    document = vela_document(sweep, args.model, target, vela_file=vela_file)
    if output and sweep.chosen is not None:
        chosen = sweep.candidates[sweep.chosen].compilation
        if chosen is not None:
            if vela_input is not None:
                write_atomic(vela_input, source, protect=(args.model,))
                document["vela_input"] = str(vela_input)
            write_atomic(output, chosen.model, protect=(args.model,))
            document["written"] = output
    if args.json:
        print_json(document)
    else:
        print_text(
            render_vela(document, build_title(build), color=use_color(args), width=terminal_width())
        )
        if document.get("written"):
            print_text(f"wrote {output}")
        if document.get("vela_input"):
            print_text(f"wrote {document['vela_input']} (the model Vela compiled, for its command)")
    return EXIT_FITS if sweep.chosen is not None else EXIT_NONE_FITS


def _uncompiled_source(model: Any) -> bytes:
    """The bytes Vela compiles: the file as given; at the --input-shape sizes, and without an
    offline plan (a `optimize --split` or `--overlap` file's), which names the uncompiled
    tensors: Vela carried it into the compiled model, whose tensors it no longer matches, and
    TFLM refused that plan (held-out flow 99 of seed 700401, --wide)."""
    from arenalens.analysis.placeholders import resized_inputs  # noqa: PLC0415
    from arenalens.tflite.rewriter import model_bytes  # noqa: PLC0415

    if model.offline_plan is None and not resized_inputs(model):
        return bytes(model.data)
    return model_bytes(model, drop_offline_plan=True)


def _vela_input_path(output: str) -> Path:
    """Where the bytes Vela compiled go when they are not the user's file: beside the output
    ('chosen.tflite' → 'chosen_vela_input.tflite')."""
    path = Path(output)
    return path.with_name(f"{path.stem}_vela_input.tflite")


def _stem(text: str) -> str:
    """The name Vela's output files take: the file's stem, or the example's name."""
    return text.split(":", 1)[1] if text.startswith("example:") else Path(text).stem


def _memories(args: argparse.Namespace) -> Any:
    from arenalens.vela.placement import Memories, board_memories  # noqa: PLC0415

    if getattr(args, "budget", None) is not None:
        return Memories(parse_size(args.budget))
    if args.target is not None:
        # The banks the NPU is documented to reach, less what firmware already takes there.
        return board_memories(get_target(args.target))
    return None
