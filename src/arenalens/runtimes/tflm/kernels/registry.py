"""The kernel registry: opcode + build → the rule for the kernel that build registers.

`REGISTERED` is what the `tflite_micro` wheel's PythonOpsResolver (python/tflite_micro/
python_ops_resolver.cc) registers; the Cortex-M probes register the same set. An operator outside
it has no kernel: TFLM's setup fails ("Didn't find op for builtin opcode" / "Failed to get
registration from op code"). `ethos-u` is listed by the resolver but its registration function
returns null outside Ethos-U builds, so it is not registered.

`REFERENCE_KERNELS` holds the reference kernels' rules, one per family module; `LIBRARIES` the
kernel libraries a build may select (`Build.kernels`), each a package of variant rules
(`kernels/cmsis_nn/`). A build's rule for an operator is its library's variant, else the
reference rule.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from arenalens.runtimes.tflm.build import CMSIS_NN, REFERENCE, Build
from arenalens.runtimes.tflm.kernels import (
    activations,
    arithmetic,
    batch_matmul,
    circular_buffer,
    cmsis_nn,
    compression,
    control_flow,
    conv,
    cumsum,
    detection,
    elementwise,
    embedding,
    esp_nn,
    ethos_u,
    fully_connected,
    layout,
    normalization,
    pooling,
    prelu,
    quantize,
    recurrent,
    reduce,
    shape,
    signal,
    signal_streams,
    slicing,
    softmax,
    variables,
)
from arenalens.runtimes.tflm.kernels.base import KernelRule, OptimizedKernels, rule_table

_BUILTINS = (
    "ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D",
    "BATCH_MATMUL", "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CALL_ONCE", "CAST",
    "CEIL", "CONCATENATION", "CONV_2D", "COS", "CUMSUM", "DEPTH_TO_SPACE", "DEPTHWISE_CONV_2D",
    "DEQUANTIZE", "DIV", "DYNAMIC_UPDATE_SLICE", "ELU", "EMBEDDING_LOOKUP", "EQUAL", "EXP",
    "EXPAND_DIMS", "FILL", "FLOOR", "FLOOR_DIV", "FLOOR_MOD", "FULLY_CONNECTED", "GATHER",
    "GATHER_ND", "GREATER", "GREATER_EQUAL", "HARD_SWISH", "IF", "L2_NORMALIZATION", "L2_POOL_2D",
    "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG", "LOG_SOFTMAX", "LOGICAL_AND", "LOGICAL_NOT",
    "LOGICAL_OR", "LOGISTIC", "MAX_POOL_2D", "MAXIMUM", "MEAN", "MINIMUM", "MIRROR_PAD", "MUL",
    "NEG", "NOT_EQUAL", "PACK", "PAD", "PADV2", "PRELU", "QUANTIZE", "READ_VARIABLE",
    "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RESHAPE", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "ROUND", "RSQRT", "SELECT_V2", "SHAPE", "SIN",
    "SLICE", "SOFTMAX", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "SQRT",
    "SQUARE", "SQUARED_DIFFERENCE", "SQUEEZE", "STRIDED_SLICE", "SUB", "SUM", "SVDF", "TANH",
    "TRANSPOSE", "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNPACK", "VAR_HANDLE",
    "WHILE", "ZEROS_LIKE",
)  # fmt: skip
_CUSTOMS = (
    "CIRCULAR_BUFFER", "TFLM_DECODE", "TFLite_Detection_PostProcess", "SignalDelay",
    "SignalEnergy", "SignalFftAutoScale", "SignalFilterBank", "SignalFilterBankLog",
    "SignalFilterBankSpectralSubtraction", "SignalFilterBankSquareRoot", "SignalFramer",
    "SignalIrfft", "SignalOverlapAdd", "SignalPCAN", "SignalRfft", "SignalStacker",
    "SignalWindow",
)  # fmt: skip
REGISTERED: frozenset[str] = frozenset(_BUILTINS) | frozenset(f"CUSTOM:{name}" for name in _CUSTOMS)

REFERENCE_KERNELS: Mapping[str, KernelRule] = MappingProxyType(
    rule_table(
        *activations.RULES,
        *arithmetic.RULES,
        *batch_matmul.RULES,
        *circular_buffer.RULES,
        *compression.RULES,
        *control_flow.RULES,
        *conv.RULES,
        *cumsum.RULES,
        *detection.RULES,
        *elementwise.RULES,
        *embedding.RULES,
        *ethos_u.RULES,
        *fully_connected.RULES,
        *layout.RULES,
        *normalization.RULES,
        *pooling.RULES,
        *prelu.RULES,
        *quantize.RULES,
        *recurrent.RULES,
        *reduce.RULES,
        *shape.RULES,
        *signal.RULES,
        *signal_streams.RULES,
        *slicing.RULES,
        *softmax.RULES,
        *variables.RULES,
    )
)
# Kernel libraries by the name `Build.kernels` gives them: one line per library package.
LIBRARIES: Mapping[str, OptimizedKernels] = MappingProxyType(
    {CMSIS_NN: cmsis_nn.KERNELS, esp_nn.KERNELS.name: esp_nn.KERNELS}
)


class KernelLibrary(enum.StrEnum):
    """The kernel libraries whose access orders an overlap may have to respect (the names
    `Build.kernels` uses): the reference kernels and every library of `LIBRARIES`."""

    REFERENCE = REFERENCE  # the tflite_micro pip package, TFLM's default kernels
    CMSIS_NN = CMSIS_NN  # TFLM with OPTIMIZED_KERNEL_DIR=cmsis_nn (Cortex-M)


def is_registered(opcode: str) -> bool:
    """Does the wheel (and the probes' firmware) register a kernel for this operator?"""
    return opcode in REGISTERED


def stands_in(opcode: str, build: Build) -> bool:
    """True when this build runs a library kernel for the operator but arenalens has only the
    reference kernel's rule for it (its bytes are then an estimate)."""
    library = LIBRARIES.get(build.kernels)
    return library is not None and opcode in library.replaces and opcode not in library.rules


def library_rule(opcode: str, library: str) -> KernelRule | None:
    """The rule for the kernel a build with this kernel library runs for an operator (its
    variant, else the reference kernel's); None when arenalens has none."""
    kernels = LIBRARIES.get(library)
    if kernels is not None:
        rule = kernels.rules.get(opcode)
        if rule is not None:
            return rule
    return REFERENCE_KERNELS.get(opcode)


def rule_for(opcode: str, build: Build) -> KernelRule | None:
    """The rule for the kernel this build runs for an operator; None when arenalens has none."""
    return library_rule(opcode, build.kernels)
