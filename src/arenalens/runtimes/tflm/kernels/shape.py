"""Shape and data-movement kernels: reshape-like, concatenation, split, pad, gather, ... → setup."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Scratch,
    inputs_then_outputs,
)
from arenalens.runtimes.tflm.kernels.common import op_data, shape


def _mirror_pad(context: KernelContext) -> Events:
    rank = len(shape(context.input(0)))
    return [
        *inputs_then_outputs(context),
        Scratch(4 * rank, "mirror_pad output dims"),
        Scratch(4 * rank, "mirror_pad input dims"),
    ]


RULES = (
    KernelRule("CONCATENATION", "concatenation.cc", Fixed(8, 4), op_data(80), derived=False),
    KernelRule("EXPAND_DIMS", "expand_dims.cc", derived=False),
    KernelRule("GATHER", "gather.cc", Fixed(8, 4), op_data(12), derived=False),
    KernelRule("MIRROR_PAD", "mirror_pad.cc", Fixed(4, 4), op_data(20), _mirror_pad, derived=False),
    KernelRule("PACK", "pack.cc", Fixed(8, 4), derived=False),
    KernelRule("PAD", "pad.cc, pad_common.cc", None, op_data(56), derived=False),
    KernelRule("RESHAPE", "reshape.cc, reshape_common.cc", Fixed(36, 4), derived=False),
    KernelRule("RESIZE_NEAREST_NEIGHBOR", "resize_nearest_neighbor.cc", Fixed(2, 1), derived=False),
    KernelRule("SPLIT", "split.cc", Fixed(4, 4), derived=False),
    KernelRule("SQUEEZE", "squeeze.cc", Fixed(36, 4), derived=False),
    KernelRule(
        "STRIDED_SLICE",
        "strided_slice.cc, strided_slice_common.cc",
        Fixed(24, 4),
        op_data(84),
        derived=False,
    ),
    KernelRule("TRANSPOSE", "transpose.cc, transpose_common.cc", derived=False),
    KernelRule("UNPACK", "unpack.cc", Fixed(8, 4), derived=False),
)
