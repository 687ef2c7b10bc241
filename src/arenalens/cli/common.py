"""Options and output helpers shared by the commands."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arenalens.builds.build import (
    CPUS,
    ESP_NN_ANSI,
    ESP_NN_RELEASE,
    ESP_NN_RELEASES,
    KERNEL_LIBRARIES,
    Build,
)
from arenalens.builds.npu import npus
from arenalens.builds.tflm import TFLM_CORTEX_M_PROBES, TFLM_WHEEL, coverage
from arenalens.errors import ArenalensError, UnplacedValueError, UsageError
from arenalens.ir import Model
from arenalens.jsontext import to_json
from arenalens.target_build import (
    build_from_options,
    default_runtime,
    rewrite_rules,
    runtime_runs_on,
)
from arenalens.tflite.reader import load_model, parse_model

if TYPE_CHECKING:
    from arenalens.builds.kernel_paths import OverlapRules
    from arenalens.targets import Target

EXAMPLE_PREFIX = "example:"


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    """MODEL: a .tflite file, or example:NAME for a built-in example model."""
    parser.add_argument(
        "model",
        metavar="MODEL",
        help="a .tflite model file, or example:NAME for a built-in example "
        "(example:vww_mobilenet_v1, example:kws_ds_cnn, example:resnet8_cifar, "
        "example:fc_autoencoder, example:branchy_inception, example:mobilenet_v1_224)",
    )


def load_model_argument(text: str) -> Model:
    """A MODEL argument (path or example:NAME) → checked Model."""
    if text.startswith(EXAMPLE_PREFIX):
        from arenalens.examples import example_bytes  # noqa: PLC0415 - builds on demand

        return parse_model(example_bytes(text[len(EXAMPLE_PREFIX) :]), text)
    return load_model(text)


def add_runtime_option(parser: argparse.ArgumentParser, default: str | None = "tflm") -> None:
    """--runtime tflm|litert (default None: the command chooses by its --target)."""
    parser.add_argument(
        "--runtime",
        choices=("tflm", "litert"),
        default=default,
        help="whose memory rules to apply: TFLite Micro or LiteRT (default: "
        + (default or "litert on a Linux device (--target), else tflm")
        + ")",
    )


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """--threads N: the LiteRT interpreter's thread count (plan, check, report)."""
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="LiteRT: the interpreter heap with N threads (Interpreter(num_threads=N); "
        "default 1): XNNPACK's threadpool and the builtin kernels' thread pool",
    )


def threads_option(args: argparse.Namespace) -> int:
    """--threads, checked: at least 1, and only under LiteRT."""
    threads: int = getattr(args, "threads", 1)
    if threads < 1:
        raise UsageError(f"--threads must be >= 1, got {threads}")
    if threads != 1 and args.runtime != "litert":
        raise UsageError("--threads sizes LiteRT's interpreter heap: give --runtime litert")
    return threads


ISA_CHOICES = (
    "x86-64-avx512",
    "x86-64-v4",
    "x86-64-v3-zen",
    "x86-64-v3",
    "x86-64-v2",
    "arm64",
    "arm64-dotprod",
    "arm64-i8mm",
    "armv7",
)  # fmt: skip - runtimes/litert/isa.py's PROFILES, named here so --help imports no LiteRT model


def add_isa_option(parser: argparse.ArgumentParser) -> None:
    """--isa NAME: the instruction set LiteRT runs on (plan, check, report)."""
    parser.add_argument(
        "--isa",
        choices=ISA_CHOICES,
        default="",
        metavar="ISA",
        help="LiteRT: the interpreter heap on this instruction set: "
        + ", ".join(ISA_CHOICES)
        + " (default: a Linux device's --target, else this machine's, detected from its CPU; "
        "ARENALENS_ISA pins it. x86-64-avx512 and x86-64-v3-zen are replays checked on such "
        "CPUs; the others are estimates that err high)",
    )


def isa_option(args: argparse.Namespace) -> str:
    """--isa, checked: only under LiteRT."""
    isa: str = getattr(args, "isa", "") or ""
    if isa and args.runtime != "litert":
        raise UsageError("--isa sizes LiteRT's interpreter heap: give --runtime litert")
    return isa


def add_delegate_option(parser: argparse.ArgumentParser) -> None:
    """--delegate xnnpack|none: the LiteRT delegate the app runs."""
    parser.add_argument(
        "--delegate",
        choices=("xnnpack", "none"),
        default=None,
        help="LiteRT: the delegate your app runs, XNNPACK (LiteRT's default) or none (the "
        "builtin kernels, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES); the figure is the "
        "model file plus the interpreter's peak heap under it (default: xnnpack)",
    )


def delegate_of(args: argparse.Namespace) -> str:
    """--delegate as given, else XNNPACK (LiteRT's default): the one verdict every command gives
    for a LiteRT model is the one under it (`litert_memory.delegate_verdict`)."""
    delegate: str = getattr(args, "delegate", None) or "xnnpack"
    return delegate


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """--cpu CORE, --kernels LIBRARY and --tflm RELEASE: plan for TFLM built for a Cortex-M core
    or an ESP32 chip, or at another TFLM release (see `selected_build`)."""
    group = parser.add_argument_group(
        "device (TFLite Micro)",
        "figures for TFLM built for a Cortex-M core or an ESP32 chip (32-bit, the plain "
        "MicroAllocator firmware uses) instead of the x86-64 tflite_micro wheel",
    )
    group.add_argument(
        "--cpu",
        metavar="CORE",
        help="the Cortex-M core or ESP32 chip: "
        + ", ".join(CPUS)
        + " (also m0plus, m7, esp32-s3, ...)",
    )
    group.add_argument(
        "--kernels",
        metavar="LIBRARY",
        help="the kernel library the firmware links: "
        + ", ".join((*KERNEL_LIBRARIES, ESP_NN_ANSI))
        + " or esp-nn@RELEASE ("
        + ", ".join(ESP_NN_RELEASES)
        + "; default "
        + ESP_NN_RELEASE
        + "). Default: reference on a Cortex-M core, esp-nn on an ESP32 chip "
        "(esp-tflite-micro always links it); cmsis-nn and esp-nn take their code path from "
        "--cpu. With --overlap also the only library whose access order overlaps respect "
        "(without it they hold on every library the core may run)",
    )
    group.add_argument(
        "--npu",
        metavar="NPU",
        help="the Arm Ethos-U NPU the firmware drives (TFLM built with CO_PROCESSOR=ethos_u, "
        "which registers Vela's ethos-u operator), as Vela's --accelerator-config names it: "
        + ", ".join(npus())
        + "; needs --cpu (or a --target board with an NPU)",
    )
    group.add_argument(
        "--tflm",
        metavar="RELEASE",
        help="the TFLite Micro release built: a tflite-micro version (0.dev20250808035851), a "
        "date (2025-08: TFLM as of that month's end) or a TFLM commit; default: the wheel "
        f"{TFLM_WHEEL.wheel} on the host, the Cortex-M probes' commit "
        f"{TFLM_CORTEX_M_PROBES.name} with --cpu ({coverage()})",
    )
    group.add_argument(
        "--resource-variables",
        type=_table_size,
        metavar="N",
        help="the entries of the MicroResourceVariables table the firmware creates "
        "(MicroResourceVariables::Create(allocator, N)); default: one per distinct VAR_HANDLE "
        "shared_name, as the tflite_micro Python interpreter counts them. Each entry more takes "
        "sizeof(MicroResourceVariable) of the tail (20 B on 32-bit builds, 40 B on the host)",
    )


def add_target_option(parser: argparse.ArgumentParser) -> None:
    """--target NAME for the commands that size one build (plan, diagnose, export, compare,
    optimize): a board or chip preset names its core and kernels, as check --target does."""
    parser.add_argument(
        "--target",
        metavar="NAME",
        help="a board or chip preset: plan for its core and kernels (as check --target), "
        "unless --cpu / --kernels say otherwise (see `arenalens check --list-targets`)",
    )


def runtime_for(args: argparse.Namespace) -> str:
    """--runtime as given; without it LiteRT on a Linux device (--target), else TFLM. A
    microcontroller under LiteRT or a Linux device under TFLM is a usage error."""
    target = single_target(args)
    runtime: str = getattr(args, "runtime", None) or default_runtime(target)
    runtime_runs_on(runtime, target)
    if runtime != "litert" and getattr(args, "delegate", None) is not None:
        raise UsageError("--delegate chooses LiteRT's delegate: give --runtime litert")
    return runtime


def selected_build(args: argparse.Namespace) -> Build:
    """The TFLM build the options select: --cpu / --kernels → a Cortex-M or ESP32 build, neither
    → the x86-64 wheel, each at the --tflm release. Every command asks here, so a board preset
    can imply a core and kernels."""
    cpu, kernels = getattr(args, "cpu", None), getattr(args, "kernels", None)
    tflm, npu = getattr(args, "tflm", None), getattr(args, "npu", None)
    target = single_target(args)
    if cpu is None and getattr(args, "overlap", False) and (target is None or not target.build_cpu):
        # --overlap --kernels cmsis-nn without a core asks only for CMSIS-NN's access order on
        # the wheel's figures (`overlap_rules_for` reads it); with a board's core, the build
        # carries the library named.
        kernels = None
    runtime = runtime_for(args)
    table = getattr(args, "resource_variables", None)
    if runtime != "tflm" and table is not None:
        raise UsageError(
            f"--resource-variables sizes TFLite Micro's table; --runtime {runtime} has none"
        )
    build = build_from_options(
        target=target, cpu=cpu, kernels=kernels, npu=npu, tflm=tflm, runtime=runtime
    )
    return with_table(build, table)


def build_after_model_refusals(args: argparse.Namespace, models: Sequence[str]) -> Build:
    """`selected_build`; when the build is refused with commands to run instead (an
    UnplacedValueError: another --tflm or --kernels), a --max-input its model cannot take is
    refused first: those commands repeat --max-input, and would exit 2 on it (flows seed 1400201
    flow 60: an audio model at --tflm 2025-10 with CMSIS-NN)."""
    try:
        return selected_build(args)
    except UnplacedValueError:
        if getattr(args, "max_input", False):
            from arenalens.max_input import image_input  # noqa: PLC0415 - this error only

            for argument in models:
                try:
                    model = load_model_argument(argument)
                except ArenalensError:
                    continue  # not a model file (a folder of a batch): its own error later
                image_input(model)
        raise


def with_table(build: Build, table: int | None) -> Build:
    """The build with the resource-variable table the firmware creates (None: unchanged)."""
    if table is None:
        return build
    from dataclasses import replace  # noqa: PLC0415

    return replace(build, resource_variables=table)


def _table_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def single_target(args: argparse.Namespace) -> Target | None:
    """The one board preset --target names (None for none, or 'all': each board has its own)."""
    name = getattr(args, "target", None)
    if name is None:
        return None
    from arenalens.targets import ALL_TARGETS, get_target  # noqa: PLC0415 - a board named only

    return None if name.strip().lower() == ALL_TARGETS else get_target(name)


def overlap_rules_for(args: argparse.Namespace, build: Build) -> OverlapRules:
    """The kernel code paths --overlap must hold on and the builds the number to declare must
    hold on, for the options given (`target_build.rewrite_rules`)."""
    return rewrite_rules(build, kernels=getattr(args, "kernels", None), target=single_target(args))


def add_reserve_option(parser: argparse.ArgumentParser) -> None:
    """--reserve, as check and report take it (read with `reserve_option`)."""
    parser.add_argument(
        "--reserve",
        metavar="SIZE",
        default=None,
        help="RAM the rest of the firmware keeps, taken off the budget or board (same units; "
        "default: with --target the board's usual firmware's share, as --list-targets shows it "
        "with its sources; with --budget 0)",
    )


def reserve_option(args: argparse.Namespace) -> int | None:
    """--reserve in bytes; None when not given (a target then keeps its firmware's share)."""
    from arenalens.units import parse_size  # noqa: PLC0415

    text = getattr(args, "reserve", None)
    return None if text is None else parse_size(text)


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """--json and --no-color."""
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument(
        "--no-color", action="store_true", help="plain text (also when not a terminal or NO_COLOR)"
    )


def use_color(args: argparse.Namespace) -> bool:
    """Colour only on a terminal, unless --no-color or NO_COLOR is set."""
    if getattr(args, "no_color", False) or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def terminal_width() -> int:
    """Width to render for: the terminal's, or 120 when piped."""
    if sys.stdout.isatty():
        return max(80, os.get_terminal_size().columns)
    return 120


def terminal_lines(default: int) -> int:
    """Lines the one-screen views may take: the terminal's height, or `default` when piped."""
    if sys.stdout.isatty():
        return max(20, os.get_terminal_size().lines - 1)
    return default


def print_json(document: Any) -> None:
    """Print a JSON document (stable key order, as built)."""
    sys.stdout.write(to_json(document))


def print_text(text: str) -> None:
    """Print renderer output as is."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def add_input_shape_option(parser: argparse.ArgumentParser) -> None:
    """--input-shape NAME=1x128x128x3 (repeatable): re-plan with LiteRT-propagated shapes."""
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=SHAPE",
        help="what if an input had this shape: NAME is an input tensor name, signature input "
        "name or input position, SHAPE like 1x128x128x3; every tensor's shape is propagated by "
        "the real LiteRT interpreter (extra 'runtime') and the model re-planned; repeatable",
    )


def input_shapes(args: argparse.Namespace) -> dict[str | int, tuple[int, ...]]:
    """The parsed --input-shape values: {input name or position: shape} (UsageError if bad)."""
    texts = getattr(args, "input_shape", None) or []
    if not texts:
        return {}
    from arenalens.runtimes.litert.shapes import parse_input_shape  # noqa: PLC0415 - only then

    shapes: dict[str | int, tuple[int, ...]] = {}
    for text in texts:
        name, shape = parse_input_shape(text)
        if name in shapes:
            raise UsageError(f"--input-shape names '{name}' twice")
        shapes[name] = shape
    return shapes


def load_with_input_shapes(path: str, args: argparse.Namespace) -> Model:
    """Load a MODEL argument (path or example:NAME), apply --input-shape → the Model to plan."""
    shapes = input_shapes(args)
    model = load_model_argument(path)
    if not shapes:
        return model
    from arenalens.runtimes.litert.shapes import resize_model_inputs  # noqa: PLC0415

    return resize_model_inputs(model, shapes)


def add_alignment_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """--alignment N (a power of two)."""
    parser.add_argument("--alignment", type=_alignment, default=None, metavar="N", help=help_text)


def _alignment(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1 or value & (value - 1):
        raise argparse.ArgumentTypeError(f"{value} is not a power of two")
    return value


def add_effort_options(parser: argparse.ArgumentParser, *, default: float, what: str) -> None:
    """--effort UNITS (the search's counted work: same output on every machine) and
    --time-limit SECONDS (an optional wall-clock cap: the one option that can make the output
    depend on the machine's speed and load; none by default)."""
    parser.add_argument(
        "--effort",
        type=_positive_number("--effort"),
        default=default,
        metavar="UNITS",
        help=f"search effort for {what}, counted work of about a second a unit; the same "
        f"effort gives the same output on every machine (default: {default:g})",
    )
    parser.add_argument(
        "--time-limit",
        type=_positive_number("--time-limit"),
        default=None,
        metavar="SECONDS",
        help="also stop the search after this many seconds of wall clock (default: no cap); "
        "the output may then differ between machines and runs",
    )


def _positive_number(option: str) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{option} must be > 0, got {text}")
        return value

    return parse
