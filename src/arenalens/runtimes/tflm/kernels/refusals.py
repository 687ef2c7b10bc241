"""TFLM's failed checks → `Refusal` events carrying the runtime's own message.

TF_LITE_ENSURE and its variants print "<file>:<line> <condition> was not true." or
"<file>:<line> <left> != <right> (<a> != <b>)"; the messages here keep the file and drop the line,
which differs between the wheel's and the Cortex-M builds' sources. Every kernel rule words its
refusals through these helpers, so all of them read alike.
"""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.kernels.base import (
    INVOKE,
    SETUP,
    Event,
    KernelContext,
    Refusal,
    inputs_then_outputs,
)
from arenalens.runtimes.tflm.kernels.common import type_of, zero_point_of

KERNELS = "tensorflow/lite/micro/kernels/"
# What the weights kernels (conv, depthwise, fully connected) print when they refuse a type.
HYBRID = "Hybrid models are not supported on TFLite Micro."
UNSUPPORTED_INPUT = "Input data type not supported"
# The (input, filter) type pairs CMSIS-NN's CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED accept.
WEIGHT_TYPES = {"FLOAT32": ("FLOAT32",), "INT16": ("INT8",), "INT8": ("INT8", "INT4")}
# Top-level directories of the tflite-micro sources: a file named from one of them is printed as
# is ('signal/micro/kernels/rfft.cc', 'tensorflow/lite/kernels/kernel_util.cc').
_SOURCE_ROOTS = ("tensorflow/", "signal/")


def source_path(file: str) -> str:
    """'add.cc' → 'tensorflow/lite/micro/kernels/add.cc', the path TFLM prints (__FILE__); a
    path from the sources' root stays as it is."""
    return file if file.startswith(_SOURCE_ROOTS) else KERNELS + file


def not_true(file: str, condition: str, phase: str = SETUP, *, fix: str = "") -> Refusal:
    """TF_LITE_ENSURE(condition) failing in `file` (relative to the kernels directory, or to the
    sources' root)."""
    return Refusal(f"{source_path(file)} {condition} was not true.", phase, fix)


def aborts(file: str, check: str, detail: str, fix: str = "") -> Refusal:
    """A TFLITE_CHECK failing in `file`: abort() (the wheel's process dies with SIGABRT, a
    Cortex-M build prints "HALTED" and spins), so setup never completes. TFLM prints no message
    of its own (a device prints "HALTED"): the reason names the check and why it fails."""
    return Refusal(f"{source_path(file)} {check} fails ({detail}): TFLM aborts", SETUP, fix)


def dcheck_aborts(file: str, check: str, detail: str, fix: str = "") -> Refusal:
    """A TFLITE_DCHECK failing in `file`, on a build with DCHECKs (`Build.dchecks`): an abort
    there; a release build (NDEBUG) skips the check and computes with what it let through."""
    return Refusal(
        f"{source_path(file)} {check} fails ({detail}): TFLM aborts on builds with DCHECKs (the "
        "default build type; a release build with NDEBUG skips the check and computes wrong "
        "results)",
        SETUP,
        fix,
    )


def not_equal(
    file: str,
    left: str,
    right: str,
    left_value: object,
    right_value: object,
    *,
    phase: str = SETUP,
    fix: str = "",
) -> Refusal:
    """TF_LITE_ENSURE_EQ / TF_LITE_ENSURE_TYPES_EQ failing: both expressions and their values."""
    return Refusal(
        f"{source_path(file)} {left} != {right} ({left_value} != {right_value})", phase, fix
    )


def arity_refusals(context: KernelContext, file: str, inputs: int, outputs: int) -> list[Event]:
    """`TF_LITE_ENSURE_EQ(NumInputs(node), n)` and the same for outputs (omitted inputs count)."""
    operator = context.operator
    if len(operator.inputs) == inputs and len(operator.outputs) == outputs:
        return []  # the usual case, decided before the checks are spelled out
    found: list[Event] = []
    for what, have, want in (
        ("NumInputs", len(context.operator.inputs), inputs),
        ("NumOutputs", len(context.operator.outputs), outputs),
    ):
        if have != want:
            found.append(not_equal(file, f"{what}(node)", str(want), have, want))
    return found


def arity_then_temps(context: KernelContext, file: str, inputs: int, outputs: int) -> list[Event]:
    """The start of most Prepares: the arity checks (`arity_refusals`), and when they hold a temp
    tensor of every input, then every output, in position order."""
    refused = arity_refusals(context, file, inputs, outputs)
    if refused:
        return refused
    # The arity holds: the slots are every input, then every output.
    return list(inputs_then_outputs(context))


def crash(what: str) -> Refusal:
    """A Prepare that dereferences a null pointer: the wheel dies with SIGSEGV, a Cortex-M build
    stops on a DCHECK or faults; either way setup never completes."""
    return Refusal(f"setup crashes: {what}")


def unsupported_at_invoke(message: str) -> Refusal:
    """Setup succeeds; Invoke fails with this message."""
    return Refusal(message, INVOKE)


def only_currently_supports(kernel: str, types: str, dtype: str) -> Refusal:
    """An Eval switch's default: "<kernel> only currently supports <types>, got <n>." with the
    input's TfLiteType number (zeros_like.cc, expand_dims.cc)."""
    number = TFLITE_TYPES.get(dtype, "?")
    return unsupported_at_invoke(f"{kernel} only currently supports {types}, got {number}.")


# TfLiteType (tensorflow/lite/core/c/c_api_types.h): the number kernels print after a type name,
# and the value a TfLiteTensor's `type` member holds.
TFLITE_TYPES = {
    "FLOAT32": 1, "INT32": 2, "UINT8": 3, "INT64": 4, "STRING": 5, "BOOL": 6, "INT16": 7,
    "COMPLEX64": 8, "INT8": 9, "FLOAT16": 10, "FLOAT64": 11, "COMPLEX128": 12, "UINT64": 13,
    "RESOURCE": 14, "VARIANT": 15, "UINT32": 16, "UINT16": 17, "INT4": 18, "BFLOAT16": 19,
}  # fmt: skip
# TfLiteTypeGetSize (tensorflow/lite/kernels/kernel_util.cc): bytes per element of a TfLiteType
# number; 0 for the others (sub-byte types, strings, resources, unknown numbers).
TFLITE_TYPE_BYTES = {
    1: 4, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 2, 11: 8, 12: 16, 13: 8, 16: 4, 17: 2,
    19: 2, 22: 1, 23: 1,
}  # fmt: skip


def numbered(dtype: str) -> str:
    """'UINT8' → 'UINT8 (3)', as TFLM prints a type with its number."""
    return f"{dtype} ({TFLITE_TYPES.get(dtype, 0)})"


def type_number(tensor: Tensor | None) -> int:
    """TfLiteType value of a tensor (kTfLiteNoType 0 when absent)."""
    return TFLITE_TYPES.get(type_of(tensor), 0)


def types_and_hybrid(
    file: str, source: Tensor | None, weights: Tensor | None, output: Tensor | None
) -> list[Refusal]:
    """The checks CMSIS-NN's CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED start with: input
    type == output type, a supported input type, and weights of the matching type."""
    # `type_of` inlined: every convolution and fully connected layer starts here.
    return kinds_and_hybrid(
        file,
        "" if source is None else source.dtype.name,
        "" if weights is None else weights.dtype.name,
        "" if output is None else output.dtype.name,
    )


def kinds_and_hybrid(file: str, kind: str, weights: str, output: str) -> list[Refusal]:
    """`types_and_hybrid` of the three type names ('' for an absent tensor)."""
    if kind != output:
        return [
            not_equal(
                file,
                "input->type",
                "output->type",
                TFLITE_TYPES.get(kind, 0),
                TFLITE_TYPES.get(output, 0),
            )
        ]
    accepted = WEIGHT_TYPES.get(kind)
    if accepted is None:
        return [Refusal(UNSUPPORTED_INPUT)]
    if weights not in accepted:
        return [Refusal(HYBRID)]
    return []


def int16_zero_points(file: str, *tensors: tuple[str, Tensor | None]) -> list[Refusal]:
    """`TF_LITE_ENSURE_EQ(x->params.zero_point, 0)` for int16 kernels, first failing one."""
    for name, tensor in tensors:
        zero_point = zero_point_of(tensor)
        if zero_point != 0:
            return [not_equal(file, f"{name}->params.zero_point", "0", zero_point, 0)]
    return []
