"""CMSIS-NN kernels' access order (TFLM built with `OPTIMIZED_KERNEL_DIR=cmsis_nn`): operator →
the rule of the int8 CMSIS-NN kernel TFLM runs for it, where it differs from the reference one.

Read from TFLM's *kernels/cmsis_nn/* and ARM-software/CMSIS-NN *Source/*. One build of TFLM serves
Cortex-M0/M3 (plain C), M4/M7/M33 (DSP) and M55/M85 (MVE), and CMSIS-NN picks its loops by the
instruction set, so a rule must hold on all three. An operator's distance under this library is
the larger of this rule's and the reference rule's (`overlap.overlap_distance`): the plan is safe
on either build. Checked on real TFLM under QEMU: tests/runtimes/tflm/test_overlap_cortex_m.py.
"""

from __future__ import annotations

import numpy as np

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.access_order import Trace, padding, window_lowest_reads
from arenalens.runtimes.tflm.access_rules import (
    RULES,
    OverlapRule,
    checked,
    options_of,
    too_large,
    window_of,
)
from arenalens.runtimes.tflm.kernels.base import KernelContext

# The int8 paths:
#
# * CONV_2D, general case (arm_convolve_s8): im2col copies the windows of 2 (C, DSP) or 4 (MVE)
#   output pixels, all channels, before any of their outputs is written: every read comes at
#   least as early as in the reference loops, so the reference distance holds. Three paths
#   re-read the input after writing: 1x1 without padding (arm_nn_mat_mult_nt_t_s8 loops over
#   output-channel pairs outermost on C and DSP: the whole input again per pair), 1xN on MVE
#   (4 pixels per channel), grouped convolutions (one pass over the image per group).
# * DEPTHWISE_CONV_2D (arm_depthwise_conv_wrapper_s8): the 3x3 kernel (4 channels at a time),
#   the generic and multiplier-4 kernels (reference order) and the DSP im2col kernel read no
#   later than the reference loops. On MVE, arm_depthwise_conv_s8_opt walks the image once per
#   block of CH_IN_BLOCK_MVE (124) channels, and one input channel with several outputs becomes
#   a convolution: both re-read the input.
# * MAX_POOL_2D (arm_max_pool_s8): copies the window's first pixel into the output, then compares
#   the rest: the output pixel is written before its window is read (a chunk).
# * AVERAGE_POOL_2D (arm_avgpool_s8), SOFTMAX (arm_softmax_s8, arm_nn_softmax_common_s8), ADD and
#   MUL without broadcast (arm_elementwise_add_s8, arm_elementwise_mul_s8): a pixel's window, a
#   row, or 4 / 16 elements are read before they are written: the reference distance holds.
# * Every other CMSIS-NN kernel (int16 paths, int4 weights, MAXIMUM / MINIMUM, PAD, TRANSPOSE,
#   FULLY_CONNECTED, ...) was not analysed: no overlap under this library.

CMSIS_NN_KERNELS = frozenset(
    {
        "ADD",
        "BATCH_MATMUL",
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
        "FULLY_CONNECTED",
        "MAXIMUM",
        "MINIMUM",
        "MUL",
        "PAD",
        "AVERAGE_POOL_2D",
        "MAX_POOL_2D",
        "SOFTMAX",
        "SVDF",
        "TRANSPOSE",
        "TRANSPOSE_CONV",
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
    }
)
CH_IN_BLOCK_MVE = 124  # CMSIS-NN Include/arm_nnsupportfunctions.h


def _never(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    return None


def _cmsis_none(opcode: str, why: str) -> OverlapRule:
    return OverlapRule(opcode, f"CMSIS-NN: {why}", "ARM-software/CMSIS-NN", None, _never)


def _cmsis_same_as_reference(opcode: str, source: str) -> OverlapRule:
    reference = RULES[opcode]
    return OverlapRule(opcode, "CMSIS-NN: reads no later", source, None, reference.distance)


def _cmsis_max_pool_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_max_pool_s8: per output pixel a chunk (written, then its window compared into it)."""
    source, target = view.input(0), view.output(output)
    if source is None or target is None or too_large(source, target):
        return None
    if len(source.shape) != 4 or len(target.shape) != 4:
        return None
    options = options_of(view)
    window = window_of(
        view, int(options.get("filter_height", 1) or 1), int(options.get("filter_width", 1) or 1)
    )
    pixels = window_lowest_reads(source.shape, target.shape, window, 1)
    channels = target.shape[3]
    writes = (np.arange(len(pixels), dtype=np.int64) + 1) * channels - 1
    return checked(Trace(writes, pixels, reads_may_follow_write=True), source.nbytes)


def cmsis_nn_rule(view: KernelContext) -> OverlapRule | None:
    """The CMSIS-NN kernel's rule for this operator, or None where TFLM runs the reference one."""
    opcode = view.operator.opcode
    if opcode not in CMSIS_NN_KERNELS:
        return None
    source, weights, target = view.input(0), view.input(1), view.output(0)
    data_type = source.dtype.name if source is not None else ""
    if data_type == "FLOAT32":
        return None  # TFLM's cmsis_nn kernels call the reference float kernels
    if data_type != "INT8" or source is None or target is None:
        return _cmsis_none(opcode, f"{data_type or 'this'} path not analysed")
    if opcode == "CONV_2D":
        return _cmsis_conv_rule(view, source, weights)
    if opcode == "DEPTHWISE_CONV_2D":
        return _cmsis_depthwise_rule(view, source, weights, target)
    if opcode == "MAX_POOL_2D":
        return OverlapRule(
            opcode,
            "CMSIS-NN: pixel written, then its window compared in",
            "arm_max_pool_s8.c",
            (0,),
            _cmsis_max_pool_distance,
        )
    if opcode == "AVERAGE_POOL_2D":
        return _cmsis_same_as_reference(opcode, "arm_avgpool_s8.c")
    if opcode == "SOFTMAX":
        return _cmsis_same_as_reference(opcode, "arm_softmax_s8.c, arm_nn_softmax_common_s8.c")
    if opcode in ("ADD", "MUL"):
        return _cmsis_same_as_reference(
            opcode, "arm_elementwise_add_s8.c, arm_elementwise_mul_s8.c (broadcast: reference)"
        )
    return _cmsis_none(opcode, "kernel not analysed")


def _cmsis_conv_rule(view: KernelContext, source: Tensor, weights: Tensor | None) -> OverlapRule:
    opcode = "CONV_2D"
    if weights is None or weights.dtype.name != "INT8":
        return _cmsis_none(opcode, "int4 weights not analysed")
    if len(weights.shape) != 4 or len(source.shape) != 4:
        return _cmsis_none(opcode, "not a 4-D convolution")
    _, filter_h, filter_w, filter_depth = weights.shape
    window = window_of(view, filter_h, filter_w)
    in_h, in_w, channels = source.shape[1], source.shape[2], source.shape[3]
    pad_h = padding(
        in_h, filter_h, window.stride_height, window.dilation_height, window.same_padding
    )
    pad_w = padding(in_w, filter_w, window.stride_width, window.dilation_width, window.same_padding)
    dilated = (window.dilation_height, window.dilation_width) != (1, 1)
    if channels != filter_depth:
        return _cmsis_none(opcode, "grouped convolution: one pass over the image per group")
    if (filter_h, filter_w) == (1, 1) and (pad_h, pad_w) == (0, 0) and not dilated:
        return _cmsis_none(opcode, "1x1: output channels outermost, the input re-read per pair")
    one_by_n = (
        in_h == 1
        and window.dilation_width == 1
        and filter_h == 1
        and (window.stride_width * channels) % 4 == 0
    )
    if one_by_n:
        return _cmsis_none(opcode, "1xN on MVE: 4 pixels per output channel, re-read")
    return _cmsis_same_as_reference(opcode, "arm_convolve_s8.c (im2col before writing)")


def _cmsis_depthwise_rule(
    view: KernelContext, source: Tensor, weights: Tensor | None, target: Tensor
) -> OverlapRule:
    opcode = "DEPTHWISE_CONV_2D"
    if weights is None or weights.dtype.name != "INT8":
        return _cmsis_none(opcode, "int4 weights not analysed")
    in_channels = source.shape[-1] if source.shape else 0
    out_channels = target.shape[-1] if target.shape else 0
    multiplier = out_channels // in_channels if in_channels else 0
    options = options_of(view)
    dilations = (options.get("dilation_hfactor", 1), options.get("dilation_wfactor", 1))
    batches = source.shape[0] if source.shape else 1
    if in_channels == 1 and out_channels > 1:
        return _cmsis_none(opcode, "one input channel runs as a convolution on MVE")
    if multiplier == 1 and batches == 1 and dilations == (1, 1) and in_channels > CH_IN_BLOCK_MVE:
        return _cmsis_none(opcode, "MVE walks the image once per 124-channel block")
    return _cmsis_same_as_reference(opcode, "arm_depthwise_conv_wrapper_s8 and its kernels")
