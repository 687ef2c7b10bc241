"""Pooling kernels: AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D → setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): pooling.cc, pooling_common.cc
(`PoolingPrepare`), pooling.h (`OpDataPooling`), l2_pool_2d.cc (`L2Prepare`); kernel_util.cc
(`CreateWritableTensorDimsWithCopy`).
"""

from __future__ import annotations

from arenalens.builds.tflm import POOLING_KEEPS_QUANTIZATION
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import (
    Window,
    checked,
    options_of,
    too_large,
    window_of,
    window_per_channel_trace,
)
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import UNARY, op_data, scale_of, zero_point_of
from arenalens.runtimes.tflm.kernels.conv import PADDING_VALUES
from arenalens.runtimes.tflm.kernels.quantization import f32
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true, numbered

POOL_PARAMS = struct(
    "TfLitePoolParams",
    ("padding", "enum"),
    ("stride_width", "int"),
    ("stride_height", "int"),
    ("filter_width", "int"),
    ("filter_height", "int"),
    ("activation", "enum"),
    ("computed", struct("computed", ("padding", PADDING_VALUES))),
)
OP_DATA_POOLING = struct(
    "OpDataPooling",
    ("padding", PADDING_VALUES),
    ("activation_min", "int32"),
    ("activation_max", "int32"),
    ("activation_min_f32", "float"),
    ("activation_max_f32", "float"),
)


def _pooling(context: base.KernelContext) -> base.Events:
    # PoolingPrepare: input, output; int8/int16 need the output's scale and zero point; no
    # buffer beyond the OpData Init allocated.
    found: list[base.Event] = base.temps(context, ("in", 0), ("out", 0))
    kind = context.input_type(0)
    if kind in ("INT8", "INT16") and context.build.has(POOLING_KEEPS_QUANTIZATION):
        # The float32 difference of TfLiteTensor.params.scale, compared in double. The fused
        # activation's range comes after, its status ignored: it never refuses here.
        source, output = context.input(0), context.output(0)
        if not abs(f32(scale_of(source) - scale_of(output))) <= 1.0e-6:
            return [
                *found,
                not_true(
                    "pooling_common.cc",
                    "scale_diff <= 1.0e-6",
                    fix=f"a {context.opcode} keeps its input's quantization: convert so that its "
                    "output has the input's scale and zero point",
                ),
            ]
        if zero_point_of(source) != zero_point_of(output):
            return [
                *found,
                not_true(
                    "pooling_common.cc", "input->params.zero_point == output->params.zero_point"
                ),
            ]
    elif kind not in ("FLOAT32", "INT8", "INT16"):
        return [*found, base.Refusal(f"Type {numbered(kind)} not supported.")]
    return found


def _l2_pool(context: base.KernelContext) -> base.Events:
    # L2Prepare: output, then input; rank-4 float only; a writable copy of the output's dims,
    # filled (over the live temps) through output->dims, which must survive, and read again
    # later in setup. The copy holds the computed output shape: for a consistent model the
    # flatbuffer's.
    file = "l2_pool_2d.cc"
    found: list[base.Event] = base.temps(context, ("out", 0), ("in", 0))
    source, output = context.input(0), context.output(0)
    for name, tensor in (("input", source), ("output", output)):
        rank = 0 if tensor is None else len(tensor.shape)
        if rank != 4:
            return [*found, not_equal(file, f"NumDimensions({name})", "kTensorShapeRank", rank, 4)]
    kind, out = context.input_type(0), context.output_type(0)
    if kind != out:
        return [*found, not_equal(file, "input->type", "output->type", kind, out)]
    if kind != "FLOAT32":
        return [*found, not_equal(file, "input->type", "kTfLiteFloat32", kind, "FLOAT32")]
    dims_copy = base.OverTemps(keep=(base.TempField("dims", 0),), read_later=True)
    found.append(base.Persistent(4 + 4 * 4, "output dims copy", written=dims_copy))
    return found


def pool_window(view: base.KernelContext) -> Window:
    """The pool's window: filter size, strides and padding from its options."""
    options = options_of(view)
    return window_of(
        view, int(options.get("filter_height", 1) or 1), int(options.get("filter_width", 1) or 1)
    )


def _pool_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    if source is None or target is None or too_large(source, target):
        return None
    trace = window_per_channel_trace(source, target, pool_window(view), depth_multiplier=1)
    return checked(trace, source.nbytes)


# Batch, out_y, out_x, channel; each output element reads its own channel of the window.
_POOL_LOOPS = "pooling_common.cc, reference/pooling.h, integer_ops/pooling.h"
POOL_ACCESS = base.AccessOrder("window, per channel", _POOL_LOOPS, (0,), _pool_distance)

RULES = (
    # pooling.cc registers both pools with one Init and one Prepare.
    *(
        base.KernelRule(
            opcode,
            "pooling.cc, pooling_common.cc",
            POOL_PARAMS,
            op_data(OP_DATA_POOLING),
            _pooling,
            access=POOL_ACCESS,
            operands=UNARY,
            applies_fused_activation=True,
        )
        for opcode in ("AVERAGE_POOL_2D", "MAX_POOL_2D")
    ),
    base.KernelRule(
        "L2_POOL_2D",
        "l2_pool_2d.cc",
        POOL_PARAMS,
        prepare=_l2_pool,
        access=base.AccessOrder(
            "window, per channel", "l2_pool_2d.cc, reference/pooling.h", (0,), _pool_distance
        ),
        operands=UNARY,
    ),
)
