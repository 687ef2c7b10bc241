"""`arenalens optimize MODEL -o OUT.tflite`: write a model whose real TFLM head is smaller."""

from __future__ import annotations

import argparse
import os
import shlex
from typing import TYPE_CHECKING, Any

from arenalens.atomic import check_output_path, write_atomic
from arenalens.builds.kernel_paths import REFERENCE_PATH
from arenalens.cli import EXIT_FINDINGS
from arenalens.cli.common import (
    add_build_options,
    add_effort_options,
    add_input_shape_option,
    add_model_argument,
    add_output_options,
    add_target_option,
    load_with_input_shapes,
    overlap_rules_for,
    print_json,
    print_text,
    reserve_option,
    selected_build,
    single_target,
    terminal_width,
    use_color,
)
from arenalens.effort import OPTIMIZE_EFFORT
from arenalens.errors import RuntimeUnavailableError, UsageError
from arenalens.optimization import check_options, optimize_model, prove_outputs
from arenalens.report.optimize_output import optimize_document, render_optimize
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.verification import OutputProof
from arenalens.targets import get_target

if TYPE_CHECKING:
    from arenalens.fit import FitCheck
    from arenalens.ir import Model
    from arenalens.optimization import Optimization


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `optimize` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_model_argument(parser)
    add_build_options(parser)
    add_target_option(parser)
    parser.add_argument(
        "--reserve",
        metavar="SIZE",
        default=None,
        help="with --target: RAM the rest of the firmware keeps (default: the board's usual "
        "firmware's share); the written model's number is checked against what is left",
    )
    add_input_shape_option(parser)
    parser.add_argument("-o", "--output", required=True, metavar="OUT.tflite", help="output file")
    parser.add_argument("--planner", default="best", metavar="NAME", help="planner (default best)")
    parser.add_argument(
        "--reorder", action="store_true", help="also try an operator order with a lower peak"
    )
    parser.add_argument(
        "--inplace",
        action="store_true",
        help="also let safe elementwise / reshape operators write over an input only they read "
        "(kept only if real TFLM gives bit-identical outputs)",
    )
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="also let an operator's output start below an input it is consuming, as far as the "
        "kernels' access order allows: without --kernels on every kernel library the core may "
        "run (on Cortex-M: reference and CMSIS-NN on every code path), with --kernels on that "
        "library only (the model records which builds it is right on); kept only if real TFLM "
        "gives bit-identical outputs where it can run it",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="also compute large activations in parts with stock operators (bands of rows with "
        "their halo, groups of output channels; slices, pads and concatenations), kept only for "
        "the bytes they save on the selected build and only if real TFLM gives bit-identical "
        "outputs",
    )
    parser.add_argument(
        "--vela",
        action="store_true",
        help="for an Ethos-U NPU (--npu, or a --target board with one): compile the uncompiled "
        "model with Arm's Vela over its settings and write the fastest that fits the board, as "
        "`arenalens vela -o` does (extra 'npu')",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="do not run the real TFLM interpreter (not allowed with --inplace or --overlap)",
    )
    add_effort_options(parser, default=OPTIMIZE_EFFORT, what="the whole optimization")
    parser.add_argument("--seed", type=int, default=0, help="seed for randomized planners")
    add_output_options(parser)


def _tflm_target(args: argparse.Namespace) -> None:
    """optimize writes TFLite Micro's plans: a Linux device (LiteRT, which plans its own arenas
    and ignores an offline plan) is a usage error naming the command that sizes it there (the
    shared one said `use --runtime litert`, an option optimize does not have). A model that
    does not load, or an input size its network refuses, is said first: the check named would
    refuse it too (seed 1100201 flow 61); so is a model that check cannot size there (an IF or
    WHILE that runs Eval_dynamic: seed 1300201 flow 34), without the command."""
    target = single_target(args)
    if target is None or not target.runs_linux:
        return
    model = load_with_input_shapes(args.model, args)
    refused = (
        f"{target.name} runs {target.os} with LiteRT, which plans its own arenas and ignores an "
        "offline plan; optimize writes TFLite Micro's (for microcontrollers)"
    )
    from arenalens.verdict import check as check_model  # noqa: PLC0415 - the step's own answer

    try:
        check_model(model, target=target)
    except UsageError as error:
        raise UsageError(f"{refused}, and check cannot size the model there: {error}") from None
    shapes = "".join(f" --input-shape {shlex.quote(shape)}" for shape in args.input_shape or ())
    raise UsageError(
        f"{refused}: size the model there with "
        f"`arenalens check {shlex.quote(args.model)}{shapes} --target {target.name}`"
    )


def run(args: argparse.Namespace) -> int:
    """Optimize, check on the real runtime when possible, write atomically, print before/after."""
    if args.inplace and args.no_verify:
        raise UsageError("--inplace needs the real-runtime proof; drop --no-verify")
    if args.overlap and args.no_verify:
        raise UsageError("--overlap needs the real-runtime proof; drop --no-verify")
    if args.split and args.no_verify:
        raise UsageError("--split needs the real-runtime proof; drop --no-verify")
    check_options(args.planner, "auto")
    _tflm_target(args)
    build = selected_build(args)
    if args.vela:
        return _vela(args)
    model_text = args.model
    protect = () if model_text.startswith("example:") else (model_text,)
    check_output_path(args.output, what="-o")
    if protect and os.path.exists(args.output):
        # Refuse early, before any work, when the output would replace the input.
        write_atomic_check(args.output, protect)
    model = load_with_input_shapes(model_text, args)
    optimization = optimize_model(
        model,
        planner=args.planner,
        reorder=args.reorder,
        inplace=args.inplace,
        overlap=overlap_rules_for(args, build) if args.overlap else False,
        effort=args.effort,
        time_limit_s=args.time_limit,
        seed=args.seed,
        build=build,
        split=args.split,
        target=None if args.target is None else get_target(args.target),
    )
    proof: OutputProof | None = None
    proof_note = ""
    runs_on_wheel = not optimization.valid_for or REFERENCE_PATH in optimization.valid_for
    if not args.no_verify and optimization.chosen is not None and not runs_on_wheel:
        proof_note = (
            "not run on real TFLM here: the plan is right on "
            + ", ".join(path.name for path in optimization.valid_for)
            + " only, and the x86-64 tflite_micro wheel runs the reference kernels"
        )
    elif not args.no_verify and optimization.chosen is not None:
        try:
            proof = prove_outputs(optimization.original_data, optimization.data, model)
        except RuntimeUnavailableError as error:
            proof_note = f"not checked on real TFLM: {error}"
    if not optimization.runs:
        accepted, reason = False, "not written: TFLM cannot run this model"
    elif optimization.chosen is None and optimization.writes:
        # Nothing beats TFLM's own plan, but the model's would corrupt tensors: the file without it
        # is the fix (the runtime plans it at setup, as arenalens predicts).
        accepted, reason = True, ""
    elif optimization.chosen is None:
        accepted, reason = False, "not written: nothing to save"
    else:
        accepted, reason = _accept(
            optimization.new_head,
            optimization.original_head,
            proof,
            same_build=tflm_runtime().is_installed_wheel(build),
        )
    if reason:
        proof_note = "; ".join(n for n in (proof_note, reason) if n)
    if accepted:
        write_atomic(args.output, optimization.data, protect=protect)
    document = optimize_document(
        optimization,
        output=args.output,
        written=accepted,
        proof=proof,
        proof_note=proof_note,
    )
    if args.target is not None and optimization.runs:
        document["fit"] = _fit(args, model, optimization if accepted else None)
    if args.json:
        print_json(document)
    else:
        print_text(render_optimize(document, color=use_color(args), width=terminal_width()))
    return 0 if accepted else EXIT_FINDINGS


def _fit(args: argparse.Namespace, model: Model, written: Optimization | None) -> dict[str, Any]:
    """`optimize --target`: does the written model fit the board after its firmware's reserve?
    The check's own verdict (`fit.check_fit`: the largest block, the banks' placement), for the
    written model and for the model as given, so that a saving that moves the activations out of
    external RAM, or into a faster bank, is said. `required_bytes` None: nothing was written."""
    from arenalens.fit import check_fit, written_check  # noqa: PLC0415
    from arenalens.pipeline import analyze  # noqa: PLC0415
    from arenalens.placement import placement_document  # noqa: PLC0415

    target = get_target(args.target)
    reserve = reserve_option(args)
    build = selected_build(args)
    given = check_fit(analyze(model, build=build), target=target, reserve_bytes=reserve)
    # The check of the written model as `check` answers it and the step that promised it says.
    after = None if written is None else written_check(given, written.data, build)
    checked = after or given
    placement = checked.placement
    return {
        "target": target.name,
        "where": f"{target.title} ({target.core})",
        "reserve_bytes": checked.reserve_bytes,
        "reserve_from": "firmware" if reserve is None else "given",
        "available_bytes": checked.available_bytes,
        "required_bytes": None if after is None else after.required_bytes,
        "headroom_bytes": None if after is None else after.spare_bytes,
        "margin_bytes": checked.margin_bytes,
        "fits": None if after is None else after.fits,
        "tight": None if after is None else after.tight,
        "placement": None if placement is None else placement_document(placement),
        "moved": None if after is None else _moved(given, after),
    }


def _moved(given: FitCheck, after: FitCheck) -> str | None:
    """'psram (external) → internal-dram (on-chip)': where the activations (the one arena or the
    non-persistent buffer) go on the board before and after, when the written model's run from a
    faster bank; else None."""
    before = None if given.placement is None else given.placement.best
    now = None if after.placement is None else after.placement.best
    if before is None or now is None:
        return None
    old, new = before.activations.block, now.activations.block
    if new.speed_rank >= old.speed_rank:
        return None
    return f"{old.name} ({old.speed}) → {new.name} ({new.speed})"


def _vela(args: argparse.Namespace) -> int:
    """optimize --vela: Vela's settings swept, the fastest that fits written."""
    others = [flag for flag in ("reorder", "inplace", "overlap", "split") if getattr(args, flag)]
    if others:
        raise UsageError(
            f"--vela compiles for the NPU; --{others[0]} plans for the CPU: give one of them"
        )
    from arenalens.cli.vela import sweep_and_write  # noqa: PLC0415 - Vela only when asked

    check_output_path(args.output, what="-o")
    return sweep_and_write(args, args.output)


def _accept(
    predicted: int, original: int, proof: OutputProof | None, *, same_build: bool = True
) -> tuple[bool, str]:
    """Whether to write: the real runtime (when it ran) must confirm outputs, and the head too
    when it is the build planned for (the wheel's heads say nothing about a device's)."""
    if proof is None:
        return True, ""
    if proof.original_head is None:
        # arenalens predicts it runs, the real interpreter disagrees: nothing checks the result,
        # and a command that says it failed writes nothing.
        return False, f"not written: real TFLM cannot set up the model as given ({proof.detail})"
    if not proof.identical:
        return False, f"refused: {proof.detail or 'outputs differ'} on real TFLM"
    if not same_build:
        return True, (
            "outputs checked on the x86-64 tflite_micro wheel (reference kernels); the head is "
            "the prediction for the selected build (the wheel's kernels request other scratch "
            "buffers)"
        )
    if proof.new_head is None or proof.new_head > proof.original_head:
        return False, "refused: the real head would grow"
    if proof.new_head != predicted:
        return True, (
            f"note: real head {proof.new_head:,} differs from the predicted {predicted:,} "
            f"(original {original:,})"
        )
    return True, ""


def write_atomic_check(output: str, protect: tuple[str, ...]) -> None:
    """Raise UsageError when output is one of the protected input files."""
    from pathlib import Path  # noqa: PLC0415

    for protected in protect:
        if Path(output).resolve() == Path(protected).resolve():
            raise UsageError(f"{output}: refusing to overwrite the input file")
